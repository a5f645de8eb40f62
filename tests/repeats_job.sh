#!/usr/bin/env bash
# `cmlbed run --repeats N`: N seeds in one mpirun, one results file each (NAME.seedS.h5),
# every file checked before the first run, and `cmlbed-report summary` grouping them
# into one row with n and 95% intervals.
# Usage: repeats_job.sh CMLBED MPIEXEC SOURCE_DIR PYTHON
set -u
cmlbed=$1 mpiexec=$2 source_dir=$3 python=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

small=(--experiment.method=sfl --model.name=lenet --model.split=2 --data.dataset=synthetic
       --data.synthetic_shape=1x28x28 --data.synthetic_train=600 --data.synthetic_test=100
       --train.local_iterations=3 --experiment.rounds=2 --network.uplink_rate=50mbit
       --network.downlink_rate=50mbit)
mpi=("$mpiexec" --oversubscribe --mca odls_base_sigkill_timeout 0 -np 3)

# Three seeds from experiment.seed = 5: files .seed5/.seed6/.seed7, no plain r.h5.
"${mpi[@]}" "$cmlbed" run "${small[@]}" --experiment.seed=5 --output.file="$work/r.h5" --repeats 3 \
  >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "--repeats 3 run failed"; }
for seed in 5 6 7; do
  [[ -f $work/r.seed$seed.h5 ]] || fail "no $work/r.seed$seed.h5"
  grep -q "^cmlbed: repeat $((seed - 4)) of 3: experiment.seed = $seed, writing $work/r.seed$seed.h5" "$work/run.out" ||
    fail "no progress line for seed $seed"
done
[[ ! -e $work/r.h5 ]] || fail "--repeats 3 also wrote the unsuffixed r.h5"

"$python" - "$work" <<'PY' || failures=$((failures + 1))
import configparser, sys
import h5py
import numpy as np
work = sys.argv[1]
bad, losses = [], []
for seed in (5, 6, 7):
    with h5py.File(f"{work}/r.seed{seed}.h5", "r") as f:
        config = configparser.ConfigParser()
        config.read_string(f.attrs["config"])
        if config["experiment"]["seed"] != str(seed):
            bad.append(f"seed{seed}: stored experiment.seed = {config['experiment']['seed']}")
        if config["output"]["file"] != f"{work}/r.seed{seed}.h5":
            bad.append(f"seed{seed}: stored output.file = {config['output']['file']}")
        losses.append(float(f["rounds"]["test_loss"][0]))
# Another seed is another initialisation and partition: the losses differ.
if len(set(losses)) != 3:
    bad.append(f"the three seeds gave equal first-round losses {losses}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# The report groups the three into one row: n = 3 and an interval on the round time.
"$python" "$source_dir/scripts/cmlbed-report" summary "$work"/r.seed{5,6,7}.h5 --csv "$work/summary.csv" \
  >"$work/summary.out" 2>&1 || { cat "$work/summary.out"; fail "cmlbed-report summary failed"; }
"$python" - "$work/summary.csv" <<'PY' || failures=$((failures + 1))
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
if len(rows) != 1:
    bad.append(f"{len(rows)} rows, want 1 group")
else:
    row = rows[0]
    if row.get("n") != "3":
        bad.append(f"n = {row.get('n')}, want 3")
    half = row.get("mean_round_s_ci95", "")
    if not half or not math.isfinite(float(half)) or float(half) <= 0:
        bad.append(f"mean_round_s_ci95 = {half!r}, want a positive half-width")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# Every repeat's file is checked before the first run: an existing .seed7 file stops the
# job at once, and the first two seeds write nothing.
rm -f "$work"/r.seed*.h5
touch "$work/r.seed7.h5"
"${mpi[@]}" "$cmlbed" run "${small[@]}" --experiment.seed=5 --output.file="$work/r.h5" --output.overwrite=false \
  --repeats 3 >"$work/exists.out" 2>&1
status=$?
[[ $status -eq 2 ]] && grep -q "r.seed7.h5" "$work/exists.out" || { cat "$work/exists.out"; fail "existing seed file: status $status"; }
[[ ! -e $work/r.seed5.h5 ]] || fail "a refused --repeats job wrote seed 5's file"

echo "$failures failed"
[[ $failures -eq 0 ]]
