#!/usr/bin/env bash
# Submits the AdaSplit comparison (jobs/adasplit.sbatch, one array element per run of
# `scripts/studies/adasplit-comparison.sh --list`) and its report (jobs/adasplit-report.sbatch,
# which starts only if every element succeeded: --dependency=afterok), and prints both
# job ids and the results folder.
#
#   jobs/submit-adasplit.sh [sbatch options...] [-- cmlbed overrides...]
#   ADASPLIT_GROUPS=methods jobs/submit-adasplit.sh --partition=short -- --experiment.rounds=20
#
# sbatch options go to both jobs; overrides go to every cmlbed run. ADASPLIT_GROUPS,
# ADASPLIT_METHODS, KAPPAS, ETAS, ORCHESTRATORS, ADASPLIT_DIR, BANDWIDTH_BUDGET and
# COMPUTE_BUDGET are read as adasplit.sbatch and adasplit-report.sbatch describe; the
# environment is exported to the jobs (sbatch's default). AdaSplit elements succeed
# without running while this cmlbed refuses the method, so the report still runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sbatch_options=()
while [[ $# -gt 0 && $1 != -- ]]; do sbatch_options+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
overrides=("$@")

count=$(bash "$root/scripts/studies/adasplit-comparison.sh" --list \
  --only "${ADASPLIT_GROUPS:-methods,kappa,eta}" | wc -l)
[[ $count -gt 0 ]] || { echo "submit-adasplit.sh: no runs listed" >&2; exit 2; }
if [[ -n ${ADASPLIT_DIR:-} && $ADASPLIT_DIR != /* ]]; then export ADASPLIT_DIR=$PWD/$ADASPLIT_DIR; fi
export CMLBED_ROOT=${CMLBED_ROOT:-$root}
cd "$CMLBED_ROOT"

# --parsable prints "jobid" or "jobid;cluster".
sweep=$(sbatch --parsable --array=0-$((count - 1)) "${sbatch_options[@]}" \
  jobs/adasplit.sbatch "${overrides[@]}")
sweep=${sweep%%;*}
dir=${ADASPLIT_DIR:-${CMLBED_RESULTS:-$CMLBED_ROOT/results}/adasplit-$sweep}
report=$(sbatch --parsable --dependency=afterok:"$sweep" "${sbatch_options[@]}" \
  jobs/adasplit-report.sbatch "$dir")
report=${report%%;*}
echo "adasplit: job $sweep, $count runs"
echo "report: job $report (after the array succeeds)"
echo "results: $dir"
