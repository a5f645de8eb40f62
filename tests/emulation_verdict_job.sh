#!/usr/bin/env bash
# The emulation verdict end to end: the quickstart pipar job paced far beyond what this
# host can compute (2000 GFLOP/s) is `broken` with a reason, the report's CSV says so and
# --require-faithful refuses it (exit 2); the same job at 2 GFLOP/s is `faithful` and
# passes; a devices.slowdown run with more ranks than cores whose stretch leaves no room
# for the waits is `broken`, one with room `faithful`.
# Usage: emulation_verdict_job.sh CMLBED MPIEXEC PYTHON REPORT SOURCE_DIR
set -u
cmlbed=$1 mpiexec=$2 python=$3 report=$4 source=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

run() {  # NAME RANKS OPTIONS...
  local name=$1 ranks=$2
  shift 2
  "$mpiexec" --oversubscribe -np "$ranks" "$cmlbed" run --output.file="$work/$name.h5" "$@" \
    >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: the run failed"; return 1; }
  grep "^emulation" "$work/$name.out"
}

verdict() {  # NAME -> the root attribute
  "$python" - "$work/$1.h5" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    print(f.attrs.get("emulation", "absent"))
    reasons = f.attrs.get("emulation_reasons", "")
    rounds = f["rounds"][:]
    print(" ".join(str(v) for v in rounds["emulation"]))
    print("reasons" if reasons else "no reasons")
PY
}

expect() {  # NAME LEVEL
  local got
  got=$(verdict "$1")
  echo "$1: $(echo "$got" | tr '\n' '|')"
  [[ $(sed -n 1p <<<"$got") == "$2" ]] || fail "$1: emulation $(sed -n 1p <<<"$got"), expected $2"
  if [[ $2 == faithful ]]; then
    [[ $(sed -n 3p <<<"$got") == "no reasons" ]] || fail "$1: faithful with reasons"
  else
    [[ $(sed -n 3p <<<"$got") == reasons ]] || fail "$1: $2 without a reason"
  fi
}

quickstart=(--config "$source/configs/quickstart/pipar.ini" --experiment.rounds=2)
run fast 4 "${quickstart[@]}" --devices.flops=2000GFLOP/s && expect fast broken
grep -q "^  emulation broken: held stages ran past" "$work/fast.out" || fail "fast: no progress line named the breach"
run paced 4 "${quickstart[@]}" --devices.flops=2GFLOP/s && expect paced faithful

if [[ -f $work/fast.h5 && -f $work/paced.h5 ]]; then
  "$python" "$report" summary --brief "$work/fast.h5" "$work/paced.h5" --csv "$work/runs.csv" >"$work/summary.txt" ||
    fail "summary failed"
  "$python" - "$work/runs.csv" <<'PY' || fail "the summary's CSV lacks the verdicts"
import csv, sys
table = list(csv.DictReader(open(sys.argv[1])))
rows = {row["run"]: row["emulation"] for row in table}
# Beside each accuracy, the trivial rate: Fashion-MNIST's first 1000 test images, the most
# common class's share (about a tenth).
trivial = [float(row["trivial_accuracy"]) for row in table]
print("csv:", rows, "trivial:", trivial)
sys.exit(0 if rows == {"fast": "broken", "paced": "faithful"} and all(0.1 <= t < 0.2 for t in trivial) else 1)
PY
  grep -q "emulation broken: fast: held stages" "$work/summary.txt" || fail "the summary's footnote lacks the breach"
  "$python" "$report" summary --brief --require-faithful "$work/fast.h5" "$work/paced.h5" >/dev/null 2>"$work/refused"
  status=$?
  [[ $status == 2 && $(wc -l <"$work/refused") == 1 ]] || fail "--require-faithful: exit $status, $(cat "$work/refused")"
  "$python" "$report" summary --brief --require-faithful "$work/paced.h5" >/dev/null || fail "--require-faithful refused a faithful run"
  # The trace marks the rounds and ranks that did not hold; the faithful run's has no mark
  # but for the few tiny stages that overran by a wake-up.
  "$python" "$report" perfetto "$work/fast.h5" -o "$work/fast.json" >/dev/null || fail "perfetto failed"
  "$python" - "$work/fast.json" <<'PY' || fail "the trace does not mark the breach"
import json, sys
document = json.load(open(sys.argv[1]))
marks = [e for e in document["traceEvents"] if e.get("cat") == "emulation"]
rounds = [e for e in marks if e["name"] == "round emulation broken"]
overran = [e for e in marks if e["name"].startswith("held stages overran")]
# ... and each stage that ran past its length: every paced device stage here, none of the server's.
stages = [e for e in document["traceEvents"] if e.get("ph") == "X" and e["args"].get("held") == "overran"]
named = all(e["name"].endswith("(overran)") and e["args"]["rank"] > 0 for e in stages)
print("trace marks:", len(rounds), "rounds,", len(overran), "ranks' overruns,", len(stages), "stages;",
      document["otherData"]["emulation"])
sys.exit(0 if len(rounds) == 2 and len(overran) == 6 and len(stages) >= 6 and named
         and document["otherData"]["emulation"] == "broken" else 1)
PY
fi
# The check before round 1 predicts the breach: --strict-emulation refuses the fast run.
"$cmlbed" run "${quickstart[@]}" --dry-run --ranks 4 --devices.flops=2000GFLOP/s --strict-emulation \
  >"$work/strict.out" 2>&1
status=$?
[[ $status == 2 ]] && grep -q "cannot keep the devices' pace" "$work/strict.out" ||
  { cat "$work/strict.out"; fail "--strict-emulation: exit $status"; }
grep -q "^emulation check: this host keeps the devices' pace" "$work/paced.out" ||
  fail "the paced run's check did not say it keeps the pace"
grep -q "^emulation check: this host cannot keep" "$work/fast.out" || fail "the fast run's check did not warn"

# FL with every device computing at once: 5 devices and the server on this host's cores.
# Stretched to 1.05x their CPU time, the devices' stages have no room for waiting their
# turn on a core; stretched to 8x (one device), they have.
slow=(--config "$source/configs/quickstart/fl.ini" --experiment.rounds=2 --devices.flops=)
cores=$(nproc)
run crowded $((2 * cores + 2)) "${slow[@]}" --devices.slowdown=1.05 && expect crowded broken
run roomy 2 "${slow[@]}" --devices.slowdown=8 && expect roomy faithful

((failures == 0)) || exit 1
echo "PASS"
