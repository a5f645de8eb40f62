#!/usr/bin/env bash
# What micro-batching does to the mathematics: PiPar at micro-batches of 2, 4, 8 and 16
# samples (a mini-batch of 32 cut into m = 16, 8, 4, 2) against SplitFed (m = 1, the same
# update with whole mini-batches), on three models: VGG-5 split 4 (batch norm after the
# device's convolutions: over the micro-batch and the image's positions), a small CNN
# whose device part ends in batch norm over a dense layer (scripts/tools/models/bn_dense_cnn.py,
# TorchScript, split 8: over the micro-batch's samples alone) and LeNet split 2 (no batch
# norm); Fashion-MNIST, 3 devices, SEEDS seeds each (default 3), 5 rounds of 10
# mini-batches. Devices unpaced and links unshaped: only the accuracy is compared, so the
# runs are as short as this host allows. Writes results/micro-batch/*.h5 and the table
# (final accuracy, mean ± 95% half-width over the seeds) to results/micro-batch.md; it
# chose pipar.min_micro_batch's default (docs/explanation/fidelity.md).
# Usage: scripts/studies/micro-batch-study.sh [SEEDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source scripts/mpi-env.sh
seeds=${1:-3}
out=results/micro-batch
mkdir -p "$out"
test -x build/cmlbed || { echo "micro-batch-study: build/cmlbed is missing: run scripts/setup.sh" >&2; exit 1; }
common=(--config configs/quickstart/pipar.ini --devices.flops= --network.uplink_rate= --network.downlink_rate=
        --experiment.rounds=5 --repeats "$seeds" --output.progress=false)
files=()
PYTHONPATH=scripts/tools/models python3 scripts/tools/export-model.py --module bn_dense_cnn:bn_dense_cnn --input 1x28x28 \
  "$out/bn_dense_cnn.pt" >/dev/null
for model in vgg5:4 bn_dense_cnn:8 lenet:2; do
  name=${model%%:*} split=${model##*:}
  own=(--model.name="$name")
  # The small CNN and LeNet learn with Adam (SGD at the quickstart's 0.05 left LeNet at chance).
  [[ $name != vgg5 ]] && own=(--model.name="$name" --train.optimizer=adam --train.lr=1e-3 --train.momentum=0)
  [[ $name == bn_dense_cnn ]] && own=(--model.name=torchscript --model.file="$out/bn_dense_cnn.pt"
                                      --train.optimizer=adam --train.lr=1e-3 --train.momentum=0)
  for m in 1 2 4 8 16; do
    method=pipar
    ((m == 1)) && method=sfl
    file="$out/$name-m$m.h5"
    echo "micro-batch-study: $name split $split, $method, m = $m ($((32 / m)) samples), $seeds seeds" >&2
    mpirun -np 4 build/cmlbed run "${common[@]}" "${own[@]}" --model.split="$split" \
      --experiment.method="$method" --pipar.micro_batches="$m" --output.file="$file" >"${file%.h5}.out"
    for ((s = 1; s <= seeds; ++s)); do files+=("${file%.h5}.seed$s.h5"); done
  done
done
scripts/cmlbed-report summary --brief "${files[@]}" --baseline sfl --csv "$out.csv" >/dev/null
# The report's CSV into a Markdown table: any python3 (csv only).
python3 - "$out.csv" <<'PY' | tee "$out.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| model | method | micro-batch (samples) | final accuracy | best accuracy | n |")
print("|---|---|---|---|---|---|")
for r in rows:
    m = 1 if r["micro_batches"] in ("", "-") else int(r["micro_batches"])
    size = 32 // m
    print("| %s | %s | %d | %.4f ± %.4f | %.4f ± %.4f | %s |" % (
        r["model"], r["method"], size, float(r["final_accuracy"]), float(r["final_accuracy_ci95"] or 0),
        float(r["best_accuracy"]), float(r["best_accuracy_ci95"] or 0), r["n"]))
PY
