#!/usr/bin/env bash
# Long runs on Slurm: jobs/run.sbatch stopped part-way finishes all its rounds in one
# results file, on a private one-node cluster (tests/slurm/local-cluster.sh):
#   - requeued by `scontrol requeue` (what an administrator, a preemption or a node
#     failure does): the job restarts with SLURM_RESTART_COUNT=1 and resumes its file;
#   - signalled the way `--signal=B:TERM@grace` warns of the time limit (SIGTERM to the
#     batch shell only, here sent with `scancel --signal=TERM --batch`): the script passes
#     it to cmlbed's ranks (launched by srun, and by mpirun), which stop cleanly, and the
#     job requeues itself.
# Each file must then hold every round once, no `interrupted` mark, the final weights and
# `resumed_after_rounds`; the jobs end COMPLETED with a restart count of at least 1.
# Usage: slurm_requeue.sh CMLBED SOURCE_DIR   (as root; skipped, status 77, otherwise)
set -u
cmlbed=$(realpath "$1") source_dir=$(realpath "$2")
if [[ $(id -u) -ne 0 ]]; then echo "skipped: needs root (the test cluster's daemons run as root)"; exit 77; fi
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*"; }

work=$(mktemp -d /tmp/cmlbed-requeue.XXXXXX)
cluster=$source_dir/tests/slurm/local-cluster.sh
cleanup() { bash "$cluster" stop "$work"; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP  # so that the EXIT trap stops the daemons then too
say "starting a local Slurm cluster in $work"
bash "$cluster" start "$work" || { tail -20 "$work"/log/*.log 2>/dev/null; exit 1; }
source "$work/env.sh"
export CMLBED_BIN=$cmlbed CMLBED_RESULTS=$work/results
mkdir -p "$work/logs"
rounds=16
cat >"$work/long.ini" <<EOF
# Rounds of about 1.4 s on any machine (devices paced to 25 MFLOP/s; a slowdown would
# shrink with the machine's speed, and the runs could end before the signals): 16 of them.
[experiment]
method = pipar
rounds = $rounds
[model]
name = lenet
split = 2
[data]
dataset = synthetic
synthetic_train = 1200
synthetic_test = 100
[train]
batch_size = 16
local_iterations = 6
[devices]
flops = 25MFLOP/s
[pipar]
micro_batches = 2
EOF
cd "$source_dir" || exit 1

field() { scontrol show job -o "$1" 2>/dev/null | grep -o "\b$2=[^ ]*" | cut -d= -f2-; }
# rounds_in FILE: the rounds the file holds now (it may be open for writing).
rounds_in() {
  HDF5_USE_FILE_LOCKING=FALSE /usr/bin/python3 -c '
import sys, h5py
try:
    with h5py.File(sys.argv[1], "r") as f: print(len(f["rounds"]))
except Exception: print(0)' "$1" 2>/dev/null
}
# wait_for ID SECONDS CONDITION: until CONDITION (a command) succeeds; 1 on timeout.
wait_for() {
  local deadline=$(( $(date +%s) + $2 ))
  until eval "$3"; do
    [[ $(date +%s) -gt $deadline ]] && return 1
    sleep 0.5
  done
}
failures=0 checks=0
check() {
  checks=$((checks + 1))
  if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; failures=$((failures + 1)); fi
}
show() {
  local id=$1
  echo "--- job $id: $(scontrol show job -o "$id" 2>/dev/null | grep -o '\b\(JobState\|Restarts\|ExitCode\|Reason\)=[^ ]*' | xargs)"
  sed 's/^/  | /' "$work/logs/$id.out" 2>/dev/null | tail -40
  echo "--- job $id in the cluster's logs (errors, and the job's starts and ends):"
  grep -h -E "(JobId=$id |JobId=$id\$|\[$id\.|job_id $id |StepId=$id\.)" "$work/log/slurmctld.log" "$work/log/slurmd.log" 2>/dev/null |
    grep -E "error|Launching batch|_job_complete|Requeu|Started|sched: Allocate|exit" | sed 's/^/  # /' | tail -30
}
# complete_file FILE: every round once, in order, no interrupted mark, the final
# weights, and the resume recorded.
complete_file() {
  /usr/bin/python3 - "$1" "$rounds" <<'EOF'
import sys, h5py
path, rounds = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    got = list(f["rounds"]["round"])
    problems = []
    if got != list(range(rounds)): problems.append(f"rounds {got}")
    if "interrupted" in f.attrs: problems.append("still marked interrupted")
    if "model" not in f or "model" not in f["model"]: problems.append("no /model/model")
    if "resumed_after_rounds" not in f.attrs: problems.append("no resumed_after_rounds")
    else: print(f"  {path}: resumed after rounds {list(f.attrs['resumed_after_rounds'])}, "
                f"checkpoints {list(f['checkpoints']['rounds'])}")
    if problems:
        print(f"  {path}: " + "; ".join(problems)); sys.exit(1)
EOF
}

# Three jobs at once, each stopped once its file holds 2 rounds (14 rounds, about 20 s,
# before it would end; with 8 rounds a CI run under load signalled a job 14 s after its
# second round, when it had ended: scontrol and the h5py checks took seconds each):
# 1. by scontrol requeue;
# 2. by SIGTERM to the batch shell only, as --signal=B:TERM@grace sends it; once with
#    srun (the default launcher), once with mpirun, which pass it on differently.
submit() {  # LAUNCHER: prints the job id
  CMLBED_LAUNCHER=$1 sbatch --parsable --output="$work/logs/%j.out" jobs/run.sbatch "$work/long.ini"
}
requeued=$(submit srun) && signalled_srun=$(submit srun) && signalled_mpirun=$(submit mpirun) || exit 1
jobs_all=("$requeued" "$signalled_srun" "$signalled_mpirun")
declare -A stop=(["$requeued"]="scontrol requeue" ["$signalled_srun"]="scancel --signal=TERM --batch"
                 ["$signalled_mpirun"]="scancel --signal=TERM --batch")
say "jobs $requeued (to requeue), $signalled_srun (srun) and $signalled_mpirun (mpirun, both to signal):" \
  "waiting for 2 rounds in each one's results/slurm-ID/long.h5"
stop_ready() {  # stops each job whose file holds 2 rounds; true once all are stopped
  local id
  for id in "${!stop[@]}"; do
    [[ $(rounds_in "$CMLBED_RESULTS/slurm-$id/long.h5") -ge 2 ]] || continue
    say "job $id: ${stop[$id]}"
    ${stop[$id]} "$id" || { say "FAIL: ${stop[$id]} $id refused"; show "$id"; exit 1; }
    unset "stop[$id]"
  done
  [[ ${#stop[@]} -eq 0 ]]
}
wait_for "" 180 stop_ready || { say "FAIL: no 2 rounds in job(s) ${!stop[*]}"; for id in "${!stop[@]}"; do show "$id"; done; exit 1; }

say "waiting for the jobs to complete (at most 300 s)"
# Slurm holds a requeued job for 120 s (Reason=BeginTime) before it may start again; here
# that would only make the test wait, so a held job is made eligible (what an
# administrator may do) once its last start has no process left (a job that requeues
# itself is pending while its batch script and ranks are still ending, and a second start
# beside them would find its results file still open) and at least 3 s after the hold was
# first seen. The pause is Slurm's rule, not a guess: a requeue revokes the job's
# credential, and slurmd refuses a start whose new credential was issued within the same
# second as that revocation ("Job N already killed, do not launch batch job"; slurmctld:
# "Killing non-startable batch JobId=N: Job credential revoked"), which ends the job
# FAILED, exit 1, before its script prints a line. Released at once, the mpirun job hit
# it whenever its first start ended slowly (under load or a sanitizer build).
declare -A held_since=()
release_held() {
  local id now
  now=$(date +%s)
  for id in "${jobs_all[@]}"; do
    if [[ $(field "$id" JobState) == PENDING && $(field "$id" Reason) == BeginTime ]]; then
      [[ -n ${held_since[$id]:-} ]] || held_since[$id]=$now
      if ((now - held_since[$id] >= 3)) && ! pgrep -f "results/slurm-$id/" >/dev/null; then
        scontrol update JobId="$id" StartTime=now 2>/dev/null && say "job $id: held after its requeue; released"
      fi
    fi
  done
}
done_jobs() {
  local id state
  release_held
  for id in "${jobs_all[@]}"; do
    state=$(field "$id" JobState)
    [[ $state == COMPLETED || $state == FAILED || $state == CANCELLED || $state == TIMEOUT ]] || return 1
  done
}
wait_for "" 300 done_jobs || say "FAIL: jobs not done after 300 s"

for id in "${jobs_all[@]}"; do
  check '[[ $(field "$id" JobState) == COMPLETED ]]' "job $id completed ($(field "$id" JobState))"
  check '[[ $(field "$id" Restarts) -ge 1 ]]' "job $id was restarted ($(field "$id" Restarts) time(s))"
  check 'grep -q "cmlbed: resuming" "$work/logs/$id.out"' "job $id resumed its file (log)"
  check 'complete_file "$CMLBED_RESULTS/slurm-$id/long.h5"' \
    "job $id: its file holds rounds 0-$((rounds - 1)) once, the weights, no interrupted mark"
done
for id in "$signalled_srun" "$signalled_mpirun"; do
  check 'grep -q "requeueing" "$work/logs/$id.out"' "job $id requeued itself after the SIGTERM"
done
# Under srun every rank gets the SIGTERM itself and rank 0 says what it kept. mpirun
# inside an allocation ends its daemons (and their output) within a second of passing the
# signal on, so its line may be lost; its checkpoints keep the run (checked above).
for id in "$requeued" "$signalled_srun"; do
  check 'grep -q "cmlbed: interrupted by SIGTERM" "$work/logs/$id.out"' "job $id: cmlbed stopped cleanly"
done

[[ $failures -eq 0 ]] || for id in "${jobs_all[@]}"; do show "$id"; done
say "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
