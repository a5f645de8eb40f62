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
#   scripts/heterogeneity-comparison.sh [--results DIR] [--only heterogeneous|changing-bandwidth] [--repeats N] [-- OVERRIDES...]
#
# --repeats N (default 3) runs every run with N seeds (cmlbed run --repeats: experiment.seed
# S..S+N-1, one results file each, EXPERIMENT-RUN.seedS.h5); the table gives each figure's
# mean and 95% interval over the seeds, with n (cmlbed-report summary's groups).
# OVERRIDES (--section.key=value) go to every run (e.g. --experiment.rounds=2 for a try).
# Results (default results/heterogeneity): EXPERIMENT-RUN.seedS.h5, EXPERIMENT.md (tables),
# EXPERIMENT-plan.txt (the planner's output), EXPERIMENT-replan.txt (the re-planning run's). Binary: CMLBED_BIN (default build/cmlbed);
# launcher: MPIEXEC (default mpirun, with --oversubscribe).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
results=results/heterogeneity only="heterogeneous changing-bandwidth" overrides=() repeats=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --results) results=${2:?--results needs a folder}; shift 2 ;;
    --only) only=${2:?--only needs an experiment}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs a count}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; overrides=("$@"); break ;;
    *) echo "heterogeneity-comparison.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] ||
  { echo "heterogeneity-comparison.sh: --repeats needs a positive integer, got '$repeats'" >&2; exit 2; }
cd "$root"
source scripts/mpi-env.sh
cmlbed=${CMLBED_BIN:-build/cmlbed}
[[ -x $cmlbed ]] || { echo "heterogeneity-comparison.sh: no $cmlbed (build first: scripts/setup.sh)" >&2; exit 2; }
read -r -a mpiexec <<<"${MPIEXEC:-mpirun --oversubscribe}"
mkdir -p "$results"

for experiment in $only; do
  config=configs/$experiment.ini
  [[ -f $config ]] || { echo "heterogeneity-comparison.sh: no $config" >&2; exit 2; }
  ranks=$(sed -n '1s/^# ranks: //p' "$config")
  # Every [device.K] split in the config, made uniform (hand) or left to the planner (auto).
  device_splits=$(awk '/^\[device\.[0-9]+\]/ { d = $0; gsub(/[^0-9]/, "", d) } /^split *=/ && d { print d }' "$config")
  hand=(--model.split=4 --pipar.micro_batches=4) auto=(--model.split=auto --pipar.micro_batches=auto)
  for d in $device_splits; do hand+=("--device.$d.split=4"); auto+=("--device.$d.split=auto"); done
  files=() runs="fl sfl pipar-hand pipar-auto"
  grep -q '^[a-z]*link_trace *=' "$config" && runs+=" pipar-replan"
  for run in $runs; do
    method=${run%%-*} extra=()
    [[ $run == pipar-hand ]] && extra=("${hand[@]}")
    [[ $run == pipar-auto ]] && extra=("${auto[@]}")
    [[ $run == pipar-replan ]] && extra=("${auto[@]}" --plan.replan=on_change)
    out=$results/$experiment-$run.h5
    rm -f "${out%.h5}".seed*.h5  # the table takes every seed file of the run: none left from before
    echo "== $experiment $run: ${mpiexec[*]} -np $ranks $cmlbed run --config $config --experiment.method=$method ${extra[*]} --repeats $repeats ${overrides[*]}"
    "${mpiexec[@]}" -np "$ranks" "$cmlbed" run --config "$config" --experiment.method="$method" "${extra[@]}" \
      --repeats "$repeats" --output.file="$out" --output.overwrite=true --output.progress=false "${overrides[@]}" \
      >"$results/$experiment-$run.txt" 2>&1 ||
      { cat "$results/$experiment-$run.txt" >&2; echo "heterogeneity-comparison.sh: $experiment $run failed" >&2; exit 1; }
    if [[ $run == pipar-auto ]]; then
      grep "^plan:" "$results/$experiment-$run.txt" | tee "$results/$experiment-plan.txt"
    elif [[ $run == pipar-replan ]]; then
      grep "^plan:" "$results/$experiment-$run.txt" | tee "$results/$experiment-replan.txt"
    fi
    files+=("${out%.h5}".seed*.h5)
  done
  scripts/cmlbed-report summary --brief "${files[@]}" --markdown "$results/$experiment.md"
done
