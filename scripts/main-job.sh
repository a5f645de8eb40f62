#!/usr/bin/env bash
# The main job. Until the training methods land, it shows what the foundation can do:
# the model zoo with per-layer costs, and a checked plan of a 1 server + 3 device run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
source "$root/scripts/mpi-env.sh"
cmlbed=$root/build/cmlbed

echo; "$cmlbed" info --input 1x28x28
echo; "$cmlbed" info --model vgg5 --input 1x28x28
echo; mpirun -np 4 "$cmlbed" run --config "$root/configs/example.ini" --dry-run
