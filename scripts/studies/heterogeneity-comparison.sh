#!/usr/bin/env bash
# Heterogeneous devices and changing bandwidth (issue 14, part 2): FL, SFL and PiPar on
# configs/heterogeneous.ini (4 devices differing in speed, links and delay) and on
# configs/changing-bandwidth.ini (every link drops and partly recovers mid-run), PiPar
# once with one hand choice for every device (split 4, 4 micro-batches) and once with
# the planner's per-device choice (model.split = auto and pipar.micro_batches = auto for
# every device, planned before round 1), and, where the config's links follow rate traces,
# once more planned again whenever a link has changed (plan.replan = on_change).
# One table per experiment (cmlbed-report summary: round time, server and device idle,
# accuracy, speedup and idle reduction against FL) and the planner's lines.
#
#   scripts/studies/heterogeneity-comparison.sh [--results DIR] [--only heterogeneous|changing-bandwidth] [--repeats N] [-- OVERRIDES...]
#   scripts/studies/heterogeneity-comparison.sh --list [--only ...] [-- OVERRIDES...]   # the runs, one a line
#
# --repeats N (default 3) runs every run with N seeds (cmlbed run --repeats: experiment.seed
# S..S+N-1, one results file each, EXPERIMENT-RUN.seedS.h5); the table gives each figure's
# mean and 95% interval over the seeds, with n (cmlbed-report summary's groups).
# OVERRIDES (--section.key=value) go to every run (e.g. --experiment.rounds=2 for a try).
# --list prints the runs as NAME CONFIG OVERRIDES..., one a line (scripts/studies/reproduction.sh
# runs the same list, seed by seed across the runs, into its own folder).
# Results (default results/heterogeneity): EXPERIMENT-RUN.seedS.h5, EXPERIMENT.md (tables),
# EXPERIMENT-plan.txt (the planner's output), EXPERIMENT-replan.txt (the re-planning run's). Binary: CMLBED_BIN (default build/cmlbed);
# launcher: MPIEXEC (default mpirun, with --oversubscribe).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
results=results/heterogeneity only="heterogeneous changing-bandwidth" overrides=() repeats=3 mode=run
while [[ $# -gt 0 ]]; do
  case $1 in
    --results) results=${2:?--results needs a folder}; shift 2 ;;
    --only) only=${2:?--only needs an experiment}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs a count}; shift 2 ;;
    --list) mode=list; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; overrides=("$@"); break ;;
    *) echo "heterogeneity-comparison.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] ||
  { echo "heterogeneity-comparison.sh: --repeats needs a positive integer, got '$repeats'" >&2; exit 2; }
cd "$root"
for experiment in $only; do
  [[ -f configs/$experiment.ini ]] ||
    { echo "heterogeneity-comparison.sh: no configs/$experiment.ini (experiments: heterogeneous, changing-bandwidth)" >&2; exit 2; }
done

# The runs of one experiment, one a line: EXPERIMENT-RUN CONFIG OVERRIDES... (no spaces
# in values): fl, sfl, pipar-hand, pipar-auto and, with rate traces, pipar-replan.
list_experiment() {
  local experiment=$1 config=configs/$1.ini d run
  # Every [device.K] split in the config, made uniform (hand) or left to the planner (auto).
  local device_splits hand=(--model.split=4 --pipar.micro_batches=4)
  local auto=(--model.split=auto --pipar.micro_batches=auto)
  device_splits=$(awk '/^\[device\.[0-9]+\]/ { d = $0; gsub(/[^0-9]/, "", d) } /^split *=/ && d { print d }' "$config")
  for d in $device_splits; do hand+=("--device.$d.split=4"); auto+=("--device.$d.split=auto"); done
  local runs="fl sfl pipar-hand pipar-auto"
  grep -q '^[a-z]*link_trace *=' "$config" && runs+=" pipar-replan"
  for run in $runs; do
    local extra=()
    case $run in
      pipar-hand) extra=("${hand[@]}") ;;
      pipar-auto) extra=("${auto[@]}") ;;
      pipar-replan) extra=("${auto[@]}" --plan.replan=on_change) ;;
    esac
    local line=("$experiment-$run" "$config" --experiment.method="${run%%-*}" "${extra[@]}" "${overrides[@]}")
    local IFS=' '
    echo "${line[*]}"
  done
}
if [[ $mode == list ]]; then
  for experiment in $only; do list_experiment "$experiment"; done
  exit 0
fi

source scripts/mpi-env.sh
source scripts/tools/ini-value.sh
cmlbed=${CMLBED_BIN:-build/cmlbed}
[[ -x $cmlbed ]] || { echo "heterogeneity-comparison.sh: no $cmlbed (build first: scripts/setup.sh)" >&2; exit 2; }
read -r -a mpiexec <<<"${MPIEXEC:-mpirun --oversubscribe}"
mkdir -p "$results"

for experiment in $only; do
  mapfile -t lines < <(list_experiment "$experiment")  # read first: mpirun would read a pipe
  files=()
  for line in "${lines[@]}"; do
    read -ra words <<<"$line"
    name=${words[0]} config=${words[1]} out=$results/${words[0]}.h5
    ranks=$(config_ranks "$config")
    rm -f "${out%.h5}".seed*.h5  # the table takes every seed file of the run: none left from before
    echo "== $name: ${mpiexec[*]} -np $ranks $cmlbed run --config $config ${words[*]:2} --repeats $repeats"
    "${mpiexec[@]}" -np "$ranks" "$cmlbed" run --config "$config" "${words[@]:2}" \
      --repeats "$repeats" --output.file="$out" --output.overwrite=true --output.progress=false \
      >"$results/$name.txt" 2>&1 ||
      { cat "$results/$name.txt" >&2; echo "heterogeneity-comparison.sh: $name failed" >&2; exit 1; }
    case $name in
      *-pipar-auto) grep "^plan:" "$results/$name.txt" | tee "$results/$experiment-plan.txt" ;;
      *-pipar-replan) grep "^plan:" "$results/$name.txt" | tee "$results/$experiment-replan.txt" ;;
    esac
    files+=("${out%.h5}".seed*.h5)
  done
  scripts/cmlbed-report summary --brief "${files[@]}" --markdown "$results/$experiment.md"
done
