#!/usr/bin/env bash
# Submits a methods x uplink-bandwidth sweep (jobs/sweep.sbatch, one array element per
# pair) and its report (jobs/report.sbatch, which starts only if every element
# succeeded: --dependency=afterok), and prints both job ids and the results folder.
#
#   jobs/submit-sweep.sh [sbatch options...] [-- cmlbed overrides...]
#   METHODS="fl sfl pipar" RATES="10mbit 100mbit" jobs/submit-sweep.sh --partition=gpu -- --experiment.rounds=10
#   SEEDS="1 2 3" jobs/submit-sweep.sh        # every pair with 3 seeds: means with 95% intervals
#
# sbatch options go to both jobs (e.g. --partition, --account, --time); overrides go to
# every cmlbed run. METHODS, RATES, SEEDS, CONFIG and SWEEP_DIR are read as sweep.sbatch
# describes; the environment is exported to the jobs (sbatch's default). It submits from
# the repository (found from this script's path) so the jobs find it too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sbatch_options=()
while [[ $# -gt 0 && $1 != -- ]]; do sbatch_options+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
overrides=("$@")

read -ra methods <<<"${METHODS:-fl sfl pipar}"
read -ra rates <<<"${RATES:-10mbit 50mbit 100mbit}"
read -ra seeds <<<"${SEEDS:-}"
count=$(( ${#methods[@]} * ${#rates[@]} * (${#seeds[@]} > 0 ? ${#seeds[@]} : 1) ))
[[ $count -gt 0 ]] || { echo "submit-sweep.sh: METHODS and RATES must not be empty" >&2; exit 2; }
# Paths given relative to where this runs, made absolute before moving to the repository.
if [[ -n ${CONFIG:-} && $CONFIG != /* && -e $CONFIG ]]; then export CONFIG=$PWD/$CONFIG; fi
if [[ -n ${SWEEP_DIR:-} && $SWEEP_DIR != /* ]]; then export SWEEP_DIR=$PWD/$SWEEP_DIR; fi
export CMLBED_ROOT=${CMLBED_ROOT:-$root}
cd "$CMLBED_ROOT"

# --parsable prints "jobid" or "jobid;cluster".
sweep=$(sbatch --parsable --array=0-$((count - 1)) "${sbatch_options[@]}" \
  jobs/sweep.sbatch "${overrides[@]}")
sweep=${sweep%%;*}
dir=${SWEEP_DIR:-${CMLBED_RESULTS:-$CMLBED_ROOT/results}/sweep-$sweep}
report=$(sbatch --parsable --dependency=afterok:"$sweep" "${sbatch_options[@]}" \
  jobs/report.sbatch "$dir")
report=${report%%;*}
echo "sweep: job $sweep, $count runs (${methods[*]} x ${rates[*]}${SEEDS:+ x seeds $SEEDS})"
echo "report: job $report (after the sweep succeeds)"
echo "results: $dir"
