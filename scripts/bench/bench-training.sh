#!/usr/bin/env bash
# The training benchmarks, on the main job's settings (configs/quickstart):
#  1. speedups: fl, sfl, pipar once each -> `scripts/cmlbed-report summary` table;
#  2. pipeline efficiency: pipar's measured iteration time / ideal pipeline time;
#  3. logging overhead: pipar with the timeline on and off, alternating, REPEATS each;
#  4. LibTorch vs PyTorch: one server-side step of the same server part (needs Debian's
#     python3-torch for the PyTorch half; skipped with a message without it).
# Prints medians; JSON goes to results/bench-training-*.json. Run on a quiet machine.
# usage: scripts/bench/bench-training.sh [REPEATS (default 3)]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
repeats=${1:-3}
source "$root/scripts/mpi-env.sh"
cd "$root"
bench=build/cmlbed-bench-training
[[ -x $bench && -x build/cmlbed ]] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
mkdir -p results/bench
run() {  # run METHOD OUTPUT [options...]
  local method=$1 out=$2
  shift 2
  mpirun -np 4 build/cmlbed run --config "configs/quickstart/$method.ini" --output.progress=false \
    --output.file="$out" "$@" >/dev/null
}

echo "== 1. speedups on the main job"
for method in fl sfl pipar; do run "$method" "results/bench/$method.h5"; done
scripts/cmlbed-report summary --brief results/bench/fl.h5 results/bench/sfl.h5 results/bench/pipar.h5 |
  tee results/bench-training-speedups.txt

echo "== 2. pipeline efficiency (pipar)"
"$bench" pipeline results/bench/pipar.h5 --json results/bench-training-pipeline.json

echo "== 3. logging overhead (pipar, timeline on/off, $repeats each, alternating)"
on=() off=()
for ((i = 0; i < repeats; i++)); do
  run pipar "results/bench/on-$i.h5" --output.timeline=true
  run pipar "results/bench/off-$i.h5" --output.timeline=false
  on+=("results/bench/on-$i.h5") off+=("results/bench/off-$i.h5")
done
"$bench" overhead --on "${on[@]}" --off "${off[@]}" --json results/bench-training-overhead.json

echo "== 4. one server-side step: LibTorch vs PyTorch (vgg5 split 4, batch 32, 1 thread)"
"$bench" step --model vgg5 --input 1x28x28 --split 4 --batch 32 --threads 1 \
  --json results/bench-training-step-libtorch.json
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 scripts/bench/bench-step-pytorch.py --batch 32 --threads 1 \
    --json results/bench-training-step-pytorch.json
else
  echo "PyTorch half skipped: apt-get install python3-torch to compare"
fi
