#!/usr/bin/env bash
# Submits the reproduction report's heavy parts (jobs/reproduction.sbatch, one array
# element per line of `scripts/studies/reproduction.sh --list-jobs`) and the report after them
# (the same job script with --report, --dependency=afterany: a failed element leaves its
# cell simulated or its accuracy group pending, and the report says so), and prints both
# job ids and the results folder. Every measured run runs REPEATS seeds (default 3), or
# N with a leading --repeats N.
#
#   jobs/submit-reproduction.sh [--repeats N] [sbatch options...]
#   ACCURACY_ROUNDS=40 jobs/submit-reproduction.sh --partition=long --time=06:00:00
set -euo pipefail
if [[ ${1:-} == --repeats ]]; then
  [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "submit-reproduction.sh: --repeats needs a positive integer" >&2; exit 2; }
  export REPEATS=$2
  shift 2
fi
export REPEATS=${REPEATS:-3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CMLBED_ROOT=${CMLBED_ROOT:-$root}
cd "$CMLBED_ROOT"
count=$(bash scripts/studies/reproduction.sh --list-jobs | wc -l)
[[ $count -gt 0 ]] || { echo "submit-reproduction.sh: no jobs listed" >&2; exit 2; }
if [[ -n ${REPRODUCTION_RESULTS:-} && $REPRODUCTION_RESULTS != /* ]]; then
  export REPRODUCTION_RESULTS=$PWD/$REPRODUCTION_RESULTS
fi
array=$(sbatch --parsable --array=0-$((count - 1)) "$@" jobs/reproduction.sbatch)
array=${array%%;*}
report=$(sbatch --parsable --dependency=afterany:"$array" --ntasks=1 "$@" jobs/reproduction.sbatch --report)
report=${report%%;*}
echo "reproduction: job $array, $count elements, $REPEATS seeds per measured run"
echo "report: job $report (after the array)"
echo "results: ${REPRODUCTION_RESULTS:-${CMLBED_RESULTS:-$CMLBED_ROOT/results}/reproduction}"
