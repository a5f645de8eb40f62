#!/usr/bin/env bash
# SIGTERM to mpirun (as Slurm's time limit or scancel sends it) ends a run cleanly: every
# rank stops at its next safe point, rank 0 marks the results file and says what it
# keeps, and the file holds every completed round. Also when the signal comes before the
# first round ends. Usage: interrupt_job.sh CMLBED MPIEXEC PYTHON
set -u
cmlbed=$1 mpiexec=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

# Rounds of about 2 s on any machine: devices paced to 35 MFLOP/s (a devices.slowdown
# would shrink with the machine's speed).
run=(--experiment.method=pipar --data.dataset=synthetic --data.synthetic_train=1200
     --data.synthetic_test=100 --model.name=lenet --train.local_iterations=6
     --devices.flops=35MFLOP/s --experiment.rounds=6)

# interrupt NAME WAIT_FOR: starts the run, sends SIGTERM to mpirun once stdout shows
# WAIT_FOR (empty: once the results file exists, i.e. the ranks are up and round 1 is
# about to start), and checks the run's end.
interrupt() {
  local name=$1 wait_for=$2 file="$work/$1.h5"
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${run[@]}" --output.file="$file" \
    >"$work/$name.out" 2>"$work/$name.err" &
  local pid=$! waited=0
  while (( waited < 600 )); do
    if [[ -z $wait_for ]]; then [[ -e $file ]] && break
    elif grep -q "$wait_for" "$work/$name.out" 2>/dev/null; then break; fi
    sleep 0.1; waited=$((waited + 1))
  done
  local sent=$SECONDS
  kill -TERM "$pid"
  wait "$pid"
  local status=$? took=$((SECONDS - sent))
  echo "$name: mpirun exit status $status, $took s after SIGTERM"
  sed 's/^/  | /' "$work/$name.err" | grep -v '^  | *$' | head -8
  (( status != 0 )) || fail "$name: mpirun exited 0 after SIGTERM"
  (( took <= 20 )) || fail "$name: took $took s to stop"
  grep -q "^cmlbed: interrupted by SIGTERM" "$work/$name.err" || fail "$name: no 'interrupted' line"
  grep -q "^cmlbed: failed" "$work/$name.err" && fail "$name: a rank reported a failure"
  "$python" - "$file" <<'PY' || fail "$name: the results file is not as expected"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    kept = int(f.attrs["rounds_complete"])
    assert f.attrs["interrupted"] in ("SIGTERM", b"SIGTERM"), f.attrs["interrupted"]
    assert len(f["rounds"]) == kept, (len(f["rounds"]), kept)
    assert kept < 6, kept
    print("  file: interrupted by SIGTERM, %d round(s) kept" % kept)
PY
}

interrupt early ""             # in round 1 (or just before it)
interrupt later "round 1/6"    # after round 1 was written
grep -q "keeps round 1\b\|keeps rounds 1-" "$work/later.err" || fail "later: the line does not say which rounds are kept"
grep -q "cmlbed run --resume $work/later.h5" "$work/later.err" || fail "later: the line does not say how to continue"

echo "$failures failure(s)"
(( failures == 0 ))
