#!/usr/bin/env bash
# The main job. Until the training methods land, it shows what is built: the model zoo
# with per-layer costs, a checked plan of a 1 server + 3 device run, and a real run of
# the transfer smoke job over emulated 10 mbit / 25 mbit links with its HDF5 file.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
source "$root/scripts/mpi-env.sh"
cmlbed=$root/build/cmlbed
mkdir -p "$root/results"

echo; "$cmlbed" info --input 1x28x28
echo; "$cmlbed" info --model vgg5 --input 1x28x28
echo; mpirun -np 4 "$cmlbed" run --config "$root/configs/example.ini" --dry-run
echo; echo "transfer smoke job: 3 devices each send 2 MiB up a 10 mbit link and get 2 MiB back over 25 mbit"
mpirun -np 4 "$cmlbed" run --config "$root/configs/example.ini" --experiment.method=transfer \
  --transfer.bytes=2MiB --transfer.compute=50ms --experiment.rounds=3 --output.overwrite=true \
  --output.file="$root/results/main-job-transfer.h5"
