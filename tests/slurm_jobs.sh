#!/usr/bin/env bash
# The Slurm jobs in jobs/ on a real Slurm: a private one-node cluster
# (tests/slurm/local-cluster.sh, which installs slurm-wlm and munge if missing) runs
#   - jobs/run.sbatch with srun --mpi=pmix (the default) and with CMLBED_LAUNCHER=mpirun,
#   - jobs/submit-sweep.sh: a 4-element array (fl, pipar at 50mbit, seeds 2 and 3) and its
#     report job, which groups each method's two seeds into one row (n = 2),
#   - jobs/submit-adasplit.sh: the AdaSplit comparison's sfl and adasplit runs (6 ranks;
#     a binary that refused the method would have its adasplit element skipped, not failed)
#     and its report job,
# all on a tiny synthetic problem, then checks the results files, the report's outputs
# and that the report started only after the whole array had ended (afterok).
# Usage: slurm_jobs.sh CMLBED SOURCE_DIR   (as root; skipped, status 77, otherwise)
set -u
cmlbed=$(realpath "$1") source_dir=$(realpath "$2")
if [[ $(id -u) -ne 0 ]]; then echo "skipped: needs root (the test cluster's daemons run as root)"; exit 77; fi
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*"; }

work=$(mktemp -d /tmp/cmlbed-slurm.XXXXXX)
cluster=$source_dir/tests/slurm/local-cluster.sh
cleanup() { bash "$cluster" stop "$work"; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP  # so that the EXIT trap stops the daemons then too
say "starting a local Slurm cluster in $work"
bash "$cluster" start "$work" || { tail -20 "$work"/log/*.log 2>/dev/null; exit 1; }
source "$work/env.sh"

# The jobs find the binary here and put default results folders under $work, not the
# repository; CMLBED_ROOT is left unset so run.sbatch finds the repository the default
# way, through the directory sbatch ran from.
export CMLBED_BIN=$cmlbed CMLBED_RESULTS=$work/results
mkdir -p "$work/logs"
cat >"$work/tiny.ini" <<'EOF'
# A few seconds per run: synthetic data, LeNet, 2 rounds of 3 mini-batches.
[experiment]
method = sfl
rounds = 2
[model]
name = lenet
split = 2
[data]
dataset = synthetic
synthetic_train = 200
synthetic_test = 50
[train]
batch_size = 16
local_iterations = 3
[pipar]
micro_batches = 2
[output]
progress = false
EOF
cd "$source_dir" || exit 1
logs=(--output="$work/logs/%x-%j.out")

say "submitting jobs/run.sbatch (srun --mpi=pmix, 2 CPUs per task)"
run_srun=$(sbatch --parsable "${logs[@]}" --cpus-per-task=2 jobs/run.sbatch "$work/tiny.ini") || exit 1
say "submitting jobs/run.sbatch with CMLBED_LAUNCHER=mpirun"
run_mpirun=$(CMLBED_LAUNCHER=mpirun sbatch --parsable "${logs[@]}" jobs/run.sbatch "$work/tiny.ini" \
  --experiment.method=fl --output.file="$work/mpirun/fl.h5") || exit 1
say "submitting jobs/submit-sweep.sh (METHODS='fl pipar' RATES=50mbit SEEDS='2 3')"
METHODS="fl pipar" RATES="50mbit" SEEDS="2 3" CONFIG=$work/tiny.ini \
  jobs/submit-sweep.sh "${logs[@]}" -- --train.local_iterations=2 | tee "$work/submit.out" || exit 1
sweep=$(sed -n 's/^sweep: job \([0-9]*\).*/\1/p' "$work/submit.out")
report=$(sed -n 's/^report: job \([0-9]*\).*/\1/p' "$work/submit.out")
[[ -n $sweep && -n $report ]] || { echo "FAIL: no job ids from submit-sweep.sh"; exit 1; }
say "submitting jobs/submit-adasplit.sh (ADASPLIT_METHODS='sfl adasplit', 6 ranks each)"
ADASPLIT_GROUPS=methods ADASPLIT_METHODS="sfl adasplit" ADASPLIT_DIR=$work/adasplit \
  jobs/submit-adasplit.sh "${logs[@]}" -- --data.dataset=synthetic --data.synthetic_train=600 \
  --data.synthetic_test=100 --experiment.rounds=2 --train.local_iterations=2 \
  | tee "$work/submit-adasplit.out" || exit 1
ada=$(sed -n 's/^adasplit: job \([0-9]*\).*/\1/p' "$work/submit-adasplit.out")
ada_report=$(sed -n 's/^report: job \([0-9]*\).*/\1/p' "$work/submit-adasplit.out")
[[ -n $ada && -n $ada_report ]] || { echo "FAIL: no job ids from submit-adasplit.sh"; exit 1; }

# field ID NAME: NAME=value from `scontrol show job -o ID`, one line per job (an array
# job shows each element that has started, or one line while all are pending).
field() { scontrol show job -o "$1" 2>/dev/null | grep -o "\b$2=[^ ]*" | cut -d= -f2-; }
show_logs() {
  local id out
  for id in "$@"; do
    for out in $(field "$id" StdOut | sort -u); do
      echo "--- $out"; tail -30 "$out" 2>/dev/null | sed 's/^/  | /'
    done
  done
  echo "--- slurmctld log"; tail -15 "$work/log/slurmctld.log" | sed 's/^/  | /'
}

jobs_all=("$run_srun" "$run_mpirun" "$sweep" "$report" "$ada" "$ada_report")
say "waiting for jobs ${jobs_all[*]} (at most 420 s)"
deadline=$(( $(date +%s) + 420 ))
while :; do
  states=$(for id in "${jobs_all[@]}"; do field "$id" JobState; done | sort | uniq -c | xargs)
  # A report whose dependency can never be met stays PENDING for ever: a failure.
  if field "$report" Reason | grep -q DependencyNeverSatisfied ||
     field "$ada_report" Reason | grep -q DependencyNeverSatisfied; then
    say "FAIL: the report's dependency can never be met (a sweep element failed)"; show_logs "${jobs_all[@]}"; exit 1
  fi
  if ! grep -qE 'PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUE' <<<"$states"; then break; fi
  if [[ $(date +%s) -gt $deadline ]]; then
    say "FAIL: jobs not done after 420 s ($states)"; show_logs "${jobs_all[@]}"; exit 1
  fi
  sleep 1
done
say "jobs ended: $states"

failures=0 checks=0
check() {
  checks=$((checks + 1))
  if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; failures=$((failures + 1)); fi
}
# h5check FILE METHOD ROUNDS MPI_SIZE [CONFIG_LINE...]: the results file has that method,
# round count and rank count, and its recorded configuration has those lines.
h5check() {
  /usr/bin/python3 - "$@" <<'EOF'
import sys, h5py
path, method, rounds, size, *lines = sys.argv[1:]
with h5py.File(path, "r") as f:
    got = (f.attrs["method"], len(f["rounds"]), int(f.attrs["mpi_size"]))
    config = f.attrs["config"].splitlines()
want = (method, int(rounds), int(size))
missing = [l for l in lines if l not in config]
if got != want or missing:
    print(f"  {path}: (method, rounds, ranks) = {got}, want {want}; missing config lines {missing}")
    sys.exit(1)
EOF
}

for id in "${jobs_all[@]}"; do
  check '[[ -z $(field "$id" JobState | grep -v COMPLETED) ]]' "job $id completed ($(field "$id" JobState | xargs))"
done
out=$CMLBED_RESULTS/slurm-$run_srun/tiny.h5
check 'h5check "$out" sfl 2 4 "server_threads = 2" "device_threads = 2"' \
  "run.sbatch (srun): default results path, 4 ranks, 2 rounds, threads from --cpus-per-task"
check 'h5check "$work/mpirun/fl.h5" fl 2 4 "server_threads = 1"' \
  "run.sbatch (mpirun): --output.file honoured, 4 ranks, 2 rounds"
dir=$CMLBED_RESULTS/sweep-$sweep
for method in fl pipar; do
  for seed in 2 3; do
    check 'h5check "$dir/$method-50mbit.seed$seed.h5" $method 2 4 "uplink_rate = 50mbit" "seed = $seed" "local_iterations = 2"' \
      "sweep: $method-50mbit.seed$seed.h5 in one folder, rate, seed and extra override applied"
  done
done
check '[[ $(ls "$dir"/*.h5 | wc -l) -eq 4 ]]' "sweep: exactly 4 results files"
for ext in txt csv md; do
  check 'grep -qw fl "$dir/summary.$ext" && grep -qw pipar "$dir/summary.$ext"' "report: summary.$ext names fl and pipar"
done
check '/usr/bin/python3 -c "import csv, sys; n = sorted(r[\"n\"] for r in csv.DictReader(open(sys.argv[1]))); sys.exit(n != [\"2\", \"2\"])" "$dir/summary.csv"' \
  "report: summary.csv has one row per method, each n = 2"
for png in timeline-fl-50mbit.seed2 timeline-pipar-50mbit.seed3 idle accuracy; do
  check '[[ $(head -c 4 "$dir/$png.png" 2>/dev/null | tail -c 3) == PNG ]]' "report: $png.png is a PNG"
done
for name in fl-50mbit.seed2 pipar-50mbit.seed3; do
  check '/usr/bin/python3 -m json.tool "$dir/trace-$name.json" >/dev/null' "report: trace-$name.json is valid JSON"
done
# afterok: the report started no earlier than the last array element ended (scontrol
# times are ISO 8601 to the second, so string order is time order).
last_end=$(field "$sweep" EndTime | sort | tail -1)
report_start=$(field "$report" StartTime)
check '[[ -n $last_end && ! $report_start < $last_end ]]' \
  "report started ($report_start) after the array's last element ended ($last_end)"

# The AdaSplit comparison: sfl ran with the configs' 6 ranks; adasplit ran, or (while
# this build refuses it) its element said so and succeeded; the report wrote the table.
ada_dir=$work/adasplit
check 'h5check "$ada_dir/sfl.h5" sfl 2 6 "partition = shards" "scope = per-device"' \
  "adasplit array: sfl.h5 from configs/adasplit/sfl.ini, 6 ranks, overrides applied"
if refusal=$(bash "$source_dir/scripts/dev/method-refusal.sh" "$cmlbed" adasplit mpirun); then
  check 'grep -rqF "adasplit skipped: this cmlbed refuses the method" "$work/logs" && [[ ! -e $ada_dir/adasplit.h5 ]]' \
    "adasplit array: the adasplit element says it is skipped (method not built) and writes nothing"
else
  check 'h5check "$ada_dir/adasplit.h5" adasplit 2 6' "adasplit array: adasplit.h5, 6 ranks"
fi
check 'grep -q "^| sfl |" "$ada_dir/comparison.md" && [[ $(head -c 4 "$ada_dir/comparison.png" | tail -c 3) == PNG ]]' \
  "adasplit report: comparison.md names sfl, comparison.png is a PNG"
check 'grep -qw sfl "$ada_dir/summary.txt"' "adasplit report: summary.txt"
last_end=$(field "$ada" EndTime | sort | tail -1)
report_start=$(field "$ada_report" StartTime)
check '[[ -n $last_end && ! $report_start < $last_end ]]' \
  "adasplit report started ($report_start) after the array's last element ended ($last_end)"

[[ $failures -eq 0 ]] || show_logs "${jobs_all[@]}"
say "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
