#!/usr/bin/env bash
# data.dataset = arrays end to end: files written by NumPy (numpy.savez, savez_compressed)
# and h5py through scripts/tools/export-dataset.py run every method; an .npz of Fashion-MNIST's
# first samples trains exactly as data.dataset = fashion-mnist with the same limits does
# (uint8 and float32 alike); bad files exit 2 with one line before any rank trains.
# Usage: arrays_job.sh CMLBED MPIEXEC SOURCE_DIR PYTHON
set -u
cmlbed=$1 mpiexec=$2 source_dir=$3 python=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

export_dataset() { "$python" "$source_dir/scripts/tools/export-dataset.py" "$@" >/dev/null || fail "export-dataset.py $*"; }
export_dataset "$work/fm.npz" --limit 1200
export_dataset "$work/fm-deflate.npz" --limit 1200 --compressed
export_dataset "$work/fm.h5" --limit 1200
export_dataset "$work/fm-gz.h5" --limit 1200 --compressed
export_dataset "$work/fm-f32.npz" --limit 1200 --float32

# 3 devices: adasplit selects 3 per iteration by default.
mpi=("$mpiexec" --oversubscribe --mca odls_base_sigkill_timeout 0 -np 4)
small=(--model.name=lenet
       --network.uplink_rate=100mbit --network.downlink_rate=100mbit --output.overwrite=true)

# Every method of the method table, on the deflated .npz (fl and sfl also on the .h5).
# (transfer, the runtime smoke job, trains no model.)
methods=$("$cmlbed" info --methods | awk 'NR > 1 && $1 != "transfer" {print $1}')
[[ -n $methods ]] || fail "cmlbed info --methods listed no method"
for method in $methods; do
  file=$work/fm-deflate.npz
  "${mpi[@]}" "$cmlbed" run "${small[@]}" --experiment.rounds=1 --train.local_iterations=2 --model.split=2 --experiment.method="$method" \
    --data.dataset=arrays --data.file="$file" --output.file="$work/$method.h5" >"$work/$method.out" 2>&1 ||
    { tail -5 "$work/$method.out"; fail "$method on $file"; }
done
for run in fl:fm.h5 sfl:fm-gz.h5; do
  method=${run%%:*} file=${run#*:}
  "${mpi[@]}" "$cmlbed" run "${small[@]}" --experiment.rounds=1 --train.local_iterations=2 --model.split=2 --experiment.method="$method" \
    --data.dataset=arrays --data.file="$work/$file" --output.file="$work/$method-h5.h5" >"$work/$method-h5.out" 2>&1 ||
    { tail -5 "$work/$method-h5.out"; fail "$method on $file"; }
done

# Partitions, `auto` and the simulator take an arrays file as any other data set.
"${mpi[@]}" "$cmlbed" run "${small[@]}" --experiment.rounds=1 --train.local_iterations=2 --experiment.method=pipar \
  --model.split=auto --data.partition=shards --data.classes_per_device=4 --data.dataset=arrays --data.file="$work/fm.npz" \
  --output.file="$work/pipar-auto.h5" >"$work/pipar-auto.out" 2>&1 ||
  { tail -5 "$work/pipar-auto.out"; fail "pipar, split auto, shards, on fm.npz"; }
"$cmlbed" simulate "${small[@]}" --experiment.rounds=1 --train.local_iterations=2 --model.split=2 --experiment.method=pipar \
  --data.partition=dirichlet --data.dataset=arrays --data.file="$work/fm.h5" --devices 3 \
  --output.file="$work/sim-pipar.h5" >"$work/sim-pipar.out" 2>&1 ||
  { tail -5 "$work/sim-pipar.out"; fail "simulate pipar on fm.h5"; }

# The same samples through both readers: the same losses and accuracies, bit for bit.
same=(--experiment.method=sfl --experiment.rounds=3 --train.local_iterations=20 --model.split=2
      --train.optimizer=adam --train.lr=0.002)
"${mpi[@]}" "$cmlbed" run "${small[@]}" "${same[@]}" --data.dataset=fashion-mnist --data.train_limit=1200 \
  --data.test_limit=200 --output.file="$work/idx.h5" >"$work/idx.out" 2>&1 || { tail -5 "$work/idx.out"; fail "idx run"; }
for variant in fm fm-f32; do
  "${mpi[@]}" "$cmlbed" run "${small[@]}" "${same[@]}" --data.dataset=arrays --data.file="$work/$variant.npz" \
    --output.file="$work/same-$variant.h5" >"$work/same-$variant.out" 2>&1 ||
    { tail -5 "$work/same-$variant.out"; fail "$variant run"; }
done
"$python" - "$work" $methods <<'PY' || failures=$((failures + 1))
import sys
import h5py
import numpy as np
work, methods = sys.argv[1], sys.argv[2:]
bad = []
for name in [m for m in methods] + ["fl-h5", "sfl-h5", "pipar-auto", "sim-pipar"]:
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        rounds = f["rounds"]
        trained = not name.startswith("sim-")  # a simulated round has times, not losses
        if len(rounds) != 1 or (trained and not np.isfinite(rounds["test_loss"][0])):
            bad.append(f"{name}: {len(rounds)} rounds, test loss {rounds['test_loss'][:]}")
with h5py.File(f"{work}/idx.h5", "r") as f:
    reference = f["rounds"][:]
for variant in ("fm", "fm-f32"):
    with h5py.File(f"{work}/same-{variant}.h5", "r") as f:
        rounds = f["rounds"][:]
    for column in ("test_loss", "test_accuracy"):
        if not np.array_equal(rounds[column], reference[column]):
            bad.append(f"{variant}: {column} {rounds[column]} differs from fashion-mnist's {reference[column]}")
if reference["test_accuracy"][-1] < 0.4:
    bad.append(f"fashion-mnist's first 1200 samples trained to {reference['test_accuracy'][-1]} (chance 0.1)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# Bad files: status 2 and one line, before any rank trains.
"$python" - "$work" <<'PY' || fail "writing the bad files"
import sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(1)
good = dict(train_images=rng.integers(0, 255, (20, 1, 28, 28), dtype=np.uint8), train_labels=np.arange(20) % 10,
            test_images=rng.integers(0, 255, (10, 1, 28, 28), dtype=np.uint8), test_labels=np.arange(10) % 10)
def bad(name, **change):
    arrays = dict(good, **change)
    np.savez(f"{work}/{name}.npz", **{k: v for k, v in arrays.items() if v is not None})
bad("missing", test_labels=None)
bad("shapes", test_images=good["test_images"][:, :, :, :27])
bad("labels", train_labels=np.arange(20) - 1)
bad("empty", test_images=good["test_images"][:0], test_labels=good["test_labels"][:0])
bad("dtype", train_images=good["train_images"].astype(np.float64))
PY
expect_refusal() {
  local pattern=$1
  shift
  timeout 120 "${mpi[@]}" "$cmlbed" run --dry-run --model.name=lenet --data.dataset=arrays "$@" >"$work/out" 2>"$work/err"
  local status=$?
  local lines
  lines=$(grep -c '^cmlbed: error' "$work/err")
  if [[ $status -ne 2 || $lines -ne 1 ]] || ! grep -q -- "$pattern" "$work/err"; then
    fail "$* -> status $status, $lines error line(s), want /$pattern/"
    sed 's/^/  | /' "$work/err" | head -5
  fi
}
expect_refusal "no array 'test_labels'" --data.file="$work/missing.npz"
expect_refusal "same type and sample shape" --data.file="$work/shapes.npz"
expect_refusal "train_labels\[0\] is -1" --data.file="$work/labels.npz"
expect_refusal "the test split is empty" --data.file="$work/empty.npz"
expect_refusal "images must be uint8 or float32" --data.file="$work/dtype.npz"
expect_refusal "must end in .npz" --data.file="$work/fm.txt"
expect_refusal "data.dataset = arrays needs data.file"

echo "arrays_job: $failures failure(s)"
[[ $failures -eq 0 ]]
