#!/usr/bin/env bash
# Dropout on the server side is repeatable: MobileNetV3-Small keeps its dropout in the
# classifier, which sfl's and pipar's server replicas run for every device in the order
# the devices' activations arrive. Two runs with one seed end with the same weights, bit
# for bit (each Dense layer draws its masks from its own generator, not LibTorch's
# default one). Usage: dropout_repeatable.sh CMLBED MPIEXEC PYTHON
set -u
cmlbed=$1 mpiexec=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

# 3 devices, the split in front of the classifier (layers 12 and 13 on the server),
# 2 rounds of 3 mini-batches; pipar in 2 micro-batches.
settings=(--data.dataset=synthetic --data.synthetic_shape=3x32x32 --data.synthetic_train=600
          --data.synthetic_test=40 --model.name=mobilenetv3-small --model.split=12
          --train.local_iterations=3 --experiment.rounds=2 --output.checkpoint=0 --output.progress=false)
for method in sfl pipar; do
  for run in 1 2; do
    "$mpiexec" --oversubscribe -np 4 "$cmlbed" run "${settings[@]}" --experiment.method=$method \
      --pipar.micro_batches=2 --output.file="$work/$method-$run.h5" >"$work/$method-$run.out" 2>&1 ||
      { cat "$work/$method-$run.out"; fail "$method run $run failed"; }
  done
done
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
import numpy as np
work = sys.argv[1]
bad = []
for method in ("sfl", "pipar"):
    with h5py.File(f"{work}/{method}-1.h5", "r") as a, h5py.File(f"{work}/{method}-2.h5", "r") as b:
        first, second = a["model/model"][:], b["model/model"][:]
        print(f"{method}: {first.size} weights, largest difference {np.abs(first - second).max()}")
        if not np.array_equal(first, second):
            bad.append(f"{method}: two runs with one seed end with other weights")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
((failures == 0)) && echo "dropout_repeatable: ok"
exit $((failures > 0))
