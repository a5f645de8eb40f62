# shellcheck shell=bash
# Sourced by the jobs/*.sbatch scripts (not a job itself): finds the repository, and
# cmlbed_launch runs one cmlbed run inside the allocation (run.sbatch, sweep.sbatch).
#
# Environment (all optional):
#   CMLBED_ROOT      the repository; default $SLURM_SUBMIT_DIR (sbatch runs a spooled copy
#                    of the job script, so the script's own path says nothing)
#   CMLBED_BIN       the binary; default $CMLBED_ROOT/build/cmlbed
#   CMLBED_RESULTS   where default results folders go; default $CMLBED_ROOT/results
#   CMLBED_LAUNCHER  srun (default) or mpirun
#   CMLBED_SRUN_MPI  srun's --mpi plugin; default pmix (Debian's Open MPI works with
#                    pmix; pmi2 does not)
#   CMLBED_REQUEUE   1 (default): after a SIGTERM to the batch shell while the job is still
#                    running (sbatch --signal=B:TERM@SECONDS before the time limit), the
#                    job requeues itself; 0: it just ends

CMLBED_ROOT=${CMLBED_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}
[[ -d $CMLBED_ROOT/jobs ]] ||
  { echo "cmlbed job: CMLBED_ROOT=$CMLBED_ROOT is not the cmlbed repository; set CMLBED_ROOT" >&2; exit 2; }
CMLBED_ROOT=$(cd "$CMLBED_ROOT" && pwd)
CMLBED_BIN=${CMLBED_BIN:-$CMLBED_ROOT/build/cmlbed}
CMLBED_RESULTS=${CMLBED_RESULTS:-$CMLBED_ROOT/results}
# Root may run mpirun (containers, CI); more ranks than cores is fine for emulated devices.
source "$CMLBED_ROOT/scripts/mpi-env.sh"

# cmlbed_abspath PATH: PATH made absolute against the current directory if it exists
# there, else against CMLBED_ROOT (the launch runs from CMLBED_ROOT).
cmlbed_abspath() {
  if [[ $1 == /* ]]; then echo "$1"
  elif [[ -e $1 ]]; then echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
  else echo "$CMLBED_ROOT/$1"; fi
}

# cmlbed_config_output CONFIG: the [output] file = ... value of an INI file, if any.
cmlbed_config_output() {
  awk -F= '/^[[:space:]]*\[/ { section = $0; gsub(/[][[:space:]]/, "", section) }
           section == "output" && $1 ~ /^[[:space:]]*file[[:space:]]*$/ {
             value = substr($0, index($0, "=") + 1); gsub(/^[[:space:]]+|[[:space:]]+$/, "", value)
             print value }' "$1" | tail -1
}

# cmlbed_job_state: this job's state as slurmctld sees it (RUNNING, CANCELLED, ...).
cmlbed_job_state() {
  scontrol show job -o "${SLURM_JOB_ID:-}" 2>/dev/null | grep -o '\bJobState=[^ ]*' | cut -d= -f2
}

# cmlbed_run_forwarding LAUNCHER COMMAND...: runs the command in the background and waits
# for it; a SIGTERM to this shell (Slurm's --signal=B:TERM@grace warning, or scancel)
# goes on to cmlbed's ranks, which stop at their next safe point (the file marked, the
# last round checkpointed). mpirun passes a SIGTERM to its ranks; srun takes one as an
# order to kill the step, so under srun the ranks get it from `scancel --signal=TERM`
# (every step of this job, not the batch shell). Sets cmlbed_status to the command's
# exit status and cmlbed_terminated=true if TERM came.
cmlbed_run_forwarding() {
  local launcher=$1
  shift
  cmlbed_terminated=false
  "$@" &
  local pid=$!
  local forward="kill -TERM $pid"
  # Only a running job: one being requeued or cancelled has its steps signalled by Slurm
  # itself, and scancel would retry "Job can not be altered now" for half a minute while
  # this shell, stuck in the trap, keeps the job from ending until KillWait's SIGKILL.
  [[ $launcher == srun && -n ${SLURM_JOB_ID:-} ]] &&
    forward="[[ \$(cmlbed_job_state) != RUNNING ]] || scancel --signal=TERM $SLURM_JOB_ID"
  # shellcheck disable=SC2064  # the pid is fixed now
  trap "cmlbed_terminated=true; $forward 2>/dev/null || true" TERM
  while :; do
    cmlbed_status=0
    wait "$pid" || cmlbed_status=$?
    # A wait that a trapped signal interrupts returns above 128 with the command still
    # running: wait again for its own end.
    if (( cmlbed_status > 128 )) && kill -0 "$pid" 2>/dev/null; then continue; fi
    break
  done
  trap - TERM
}

# cmlbed_launch CONFIG DEFAULT_OUTPUT [--section.key=value ...]
# Runs `cmlbed run --config CONFIG OVERRIDES...` with one MPI rank per Slurm task, from
# CMLBED_ROOT (relative paths in configs are relative to the repository). It adds
#   --train.server_threads/--train.device_threads = $SLURM_CPUS_PER_TASK (each unless
#     given in the overrides), and
#   --output.file=DEFAULT_OUTPUT unless the overrides or the config name a file,
# and creates the results file's directory. On a requeued start (SLURM_RESTART_COUNT > 0)
# with the results file there, it continues that run instead: `cmlbed run --resume FILE`
# with the same overrides (a resumed run accepts those that repeat its stored values).
# After a SIGTERM to the batch shell while the job is still running (the time-limit
# warning of sbatch --signal=B:TERM@grace), the job requeues itself if this allocation
# wrote a new checkpoint (progress) and CMLBED_REQUEUE is not 0; after scancel (job
# CANCELLED) or scontrol requeue it does not.
cmlbed_launch() {
  local config output=$2 threads=${SLURM_CPUS_PER_TASK:-1} arg
  config=$(cmlbed_abspath "$1")
  shift 2
  [[ -f $config ]] || { echo "cmlbed job: no config file $config" >&2; return 2; }
  local args=("$@") explicit_output="" has_output=false previous=""
  for arg in "$@"; do
    # cmlbed takes both --output.file=X and --output.file X.
    if [[ $arg == --output.file=* ]]; then has_output=true; explicit_output=${arg#--output.file=}
    elif [[ $previous == --output.file ]]; then has_output=true; explicit_output=$arg; fi
    previous=$arg
  done
  [[ " $* " == *" --train.server_threads"* ]] || args+=("--train.server_threads=$threads")
  [[ " $* " == *" --train.device_threads"* ]] || args+=("--train.device_threads=$threads")
  if ! $has_output; then
    local from_config
    from_config=$(cmlbed_config_output "$config")
    if [[ -n $from_config ]]; then output=$from_config
    else args+=("--output.file=$output"); fi
  else
    output=$explicit_output
  fi
  cd "$CMLBED_ROOT" || return 1
  [[ $output == /* ]] || output=$CMLBED_ROOT/$output
  mkdir -p "$(dirname "$output")"

  # Configs name the rank count they are written for in a first line "# ranks: N".
  local written_for
  written_for=$(sed -n '1s/^# ranks: *\([0-9][0-9]*\) *$/\1/p' "$config")
  if [[ -n $written_for && -n ${SLURM_NTASKS:-} && $written_for != "$SLURM_NTASKS" ]]; then
    echo "cmlbed job: note: $config is written for $written_for ranks; this job has" \
         "$SLURM_NTASKS tasks (sbatch --ntasks=$written_for to match)" >&2
  fi

  local launcher
  case ${CMLBED_LAUNCHER:-srun} in
    # Since Slurm 22.05 srun no longer takes --cpus-per-task from the job: pass it on.
    srun) launcher=(srun "--mpi=${CMLBED_SRUN_MPI:-pmix}" "--cpus-per-task=$threads") ;;
    # mpirun finds the allocation itself (Open MPI's Slurm support): one rank per task.
    mpirun) launcher=(mpirun -np "${SLURM_NTASKS:?not inside a Slurm allocation}") ;;
    *) echo "cmlbed job: CMLBED_LAUNCHER must be srun or mpirun, not '$CMLBED_LAUNCHER'" >&2; return 2 ;;
  esac
  local cmd=("${launcher[@]}" "$CMLBED_BIN" run --config "$config" "${args[@]}")
  if [[ ${SLURM_RESTART_COUNT:-0} -gt 0 && -e $output ]]; then
    cmd=("${launcher[@]}" "$CMLBED_BIN" run --resume "$output" "${args[@]}")
    echo "cmlbed job ${SLURM_JOB_ID:-?}: restart ${SLURM_RESTART_COUNT}, continuing $output"
  fi
  echo "cmlbed job ${SLURM_JOB_ID:-?} on ${SLURM_JOB_NODELIST:-?}: ${SLURM_NTASKS:-?} ranks, $threads threads each"
  echo "results: $output"
  printf '+'; printf ' %q' "${cmd[@]}"; echo
  # The checkpoint as it is now (modification time to the nanosecond, inode): a requeue
  # is only worth it if this allocation wrote a newer one.
  local checkpoint_before
  checkpoint_before=$(stat -c '%y %i' "$output.ckpt" 2>/dev/null || true)
  cmlbed_run_forwarding "${CMLBED_LAUNCHER:-srun}" "${cmd[@]}"
  if $cmlbed_terminated && [[ ${CMLBED_REQUEUE:-1} == 1 && -n ${SLURM_JOB_ID:-} ]]; then
    local state
    state=$(cmlbed_job_state)
    if [[ $state != RUNNING ]]; then
      echo "cmlbed job $SLURM_JOB_ID: stopped by SIGTERM, job $state: not requeueing"
    elif [[ $(stat -c '%y %i' "$output.ckpt" 2>/dev/null || true) == "$checkpoint_before" ]]; then
      # Requeued, it would run the same rounds again and be stopped again, for ever.
      echo "cmlbed job $SLURM_JOB_ID: stopped by SIGTERM with no new checkpoint in this allocation" \
           "(a time limit too short for start-up and one round, or output.checkpoint = 0): not requeueing" >&2
    else
      echo "cmlbed job $SLURM_JOB_ID: stopped by SIGTERM while running (time limit near): requeueing"
      scontrol requeue "$SLURM_JOB_ID" || echo "cmlbed job: scontrol requeue $SLURM_JOB_ID failed" >&2
    fi
  fi
  return "$cmlbed_status"
}
