#!/usr/bin/env bash
# The main job: a small, real comparison of FL, SplitFed and PiPar on Fashion-MNIST
# with 1 server + 3 devices (VGG-5, uplink 10 mbit / downlink 25 mbit, devices 4x
# slower than this machine; configs/quickstart/*.ini). It sets up and builds if needed,
# runs the three under mpirun (results/quickstart-*.h5) and prints one table.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
source "$root/scripts/mpi-env.sh"
cd "$root"
mkdir -p results
files=()
for method in fl sfl pipar; do
  echo
  echo "== $method: mpirun -np 4 build/cmlbed run --config configs/quickstart/$method.ini"
  mpirun -np 4 build/cmlbed run --config "configs/quickstart/$method.ini"
  files+=("results/quickstart-$method.h5")
done
echo
echo "== comparison (build/cmlbed compare ${files[*]})"
build/cmlbed compare "${files[@]}"
