#!/usr/bin/env bash
# The main job: a small, real comparison of FL, SplitFed and PiPar on Fashion-MNIST
# with 1 server + 3 devices (VGG-5, uplink 10 mbit / downlink 25 mbit, devices 4x
# slower than this machine; configs/quickstart/*.ini). It sets up and builds if needed,
# runs the three under mpirun (results/quickstart-*.h5), prints one table and draws
# the timeline, idle-time and accuracy pictures next to them.
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

# Tables and pictures: scripts/cmlbed-report (Python with h5py, numpy, matplotlib), the
# one definition of every figure (idle time per round against the fl run).
report=scripts/cmlbed-report
echo
echo "== comparison ($report summary --brief --idle-causes ${files[*]})"
"$report" summary --brief --idle-causes "${files[@]}" --markdown results/quickstart-summary.md \
  --csv results/quickstart-summary.csv
echo
echo "== pictures and trace: results/quickstart-*"
"$report" timeline "${files[@]}" --rounds 1 -o results/quickstart-timeline.png
"$report" idle "${files[@]}" -o results/quickstart-idle.png
"$report" accuracy "${files[@]}" -o results/quickstart-accuracy.png
"$report" perfetto results/quickstart-pipar.h5 -o results/quickstart-pipar-trace.json
echo "(tables: results/quickstart-summary.{md,csv}; the trace opens in ui.perfetto.dev)"
