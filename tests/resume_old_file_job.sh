#!/usr/bin/env bash
# A results file written before an option existed resumes with the value its run had,
# not today's default: a file whose stored configuration lacks train.optimizer_state
# (cmlbed before it kept every optimizer's state) continues with `keep`, and ends with the
# weights of the same run never stopped.
# Usage: resume_old_file_job.sh CMLBED MPIEXEC PYTHON
set -u
cmlbed=$1 mpiexec=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

# fl with Adam, 2 devices: the optimizer state is what differs between keep and reset.
# Stopped after round 2 and resumed to 4: round 3 starts from the checkpoint's state, and
# whether it is renewed after round 3's average decides round 4.
settings=(--experiment.method=fl --model.name=lenet --data.dataset=synthetic --data.synthetic_shape=1x28x28
          --data.synthetic_train=400 --data.synthetic_test=50 --train.optimizer=adam --train.lr=1e-3
          --train.local_iterations=3 --output.checkpoint=1)
run() {  # NAME ARGS...
  local name=$1; shift
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "$@" >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name failed"; }
}
run whole "${settings[@]}" --experiment.rounds=4 --train.optimizer_state=keep --output.file="$work/whole.h5"
run reset "${settings[@]}" --experiment.rounds=4 --train.optimizer_state=reset --output.file="$work/reset.h5"
run first "${settings[@]}" --experiment.rounds=2 --train.optimizer_state=keep --output.file="$work/old.h5"
# Make it a file of an older cmlbed: no train.optimizer_state in its stored configuration.
"$python" - "$work/old.h5" <<'PY' || fail "could not rewrite the stored configuration"
import sys
import h5py
with h5py.File(sys.argv[1], "a") as f:
    lines = f.attrs["config"].splitlines(keepends=True)
    kept = [l for l in lines if not l.startswith("optimizer_state")]
    assert len(kept) == len(lines) - 1, "the stored configuration has no optimizer_state line"
    f.attrs["config"] = "".join(kept)
PY
run resumed --resume "$work/old.h5" --experiment.rounds=4

"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
import numpy as np
work = sys.argv[1]
def weights(name):
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        return f["model/model"][:]
bad = []
if np.array_equal(weights("whole"), weights("reset")):
    bad.append("keep and reset gave the same weights: the test cannot tell them apart")
if not np.array_equal(weights("whole"), weights("old")):
    bad.append("the resumed older file did not continue with keep (its weights differ from the run never stopped)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "$failures failed"
[[ $failures -eq 0 ]]
