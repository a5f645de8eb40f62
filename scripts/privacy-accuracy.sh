#!/usr/bin/env bash
# What differential privacy costs in accuracy on the main job's settings: fl (DP-FedAvg)
# and pipar (noise on each sample's uploaded activation; sfl trains the same weights)
# with DP off and at several noise multipliers, each with several seeds, then a table of
# final accuracy (mean ± 95% interval), its difference to DP off (Welch interval) and
# the recorded epsilon under both adjacency relations (docs/explanation/privacy.md).
#
#   bash scripts/privacy-accuracy.sh                       # writes docs/privacy-accuracy.md
#   bash scripts/privacy-accuracy.sh --repeats 2 --sigmas "0.1 1" --doc /tmp/dp.md
#   bash scripts/privacy-accuracy.sh --report-only         # the table from the files there
#
# Options: --repeats N (seeds per cell, default 3), --sigmas "S ..." (noise multipliers,
# default "0 0.01 0.1 0.3 1 3"; 0 clips without noise), --methods "fl pipar", --results DIR (default
# results/privacy-accuracy), --doc FILE (default docs/privacy-accuracy.md), --report-only,
# and after -- extra overrides for every run. Clipping norms as in docs/reproduction.md:
# C = 5 for an activation (split methods), C = 1 for an fl update. Accuracy alone is
# compared, so the devices compute at 100 GFLOP/s over 1 gbit links (faster runs; the
# arithmetic is the main job's: same data, model, split, batches and rounds).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
invocation="bash scripts/privacy-accuracy.sh${*:+ $*}"
repeats=3 sigmas="0 0.01 0.1 0.3 1 3" methods="fl pipar" results=results/privacy-accuracy
doc=docs/privacy-accuracy.md report_only=false
needs_value() { [[ $# -ge 2 && -n $2 ]] || { echo "privacy-accuracy.sh: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --repeats) needs_value "$@"; repeats=$2; shift 2 ;;
    --sigmas) needs_value "$@"; sigmas=$2; shift 2 ;;
    --methods) needs_value "$@"; methods=$2; shift 2 ;;
    --results) needs_value "$@"; results=$2; shift 2 ;;
    --doc) needs_value "$@"; doc=$2; shift 2 ;;
    --report-only) report_only=true; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "privacy-accuracy.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
extra=("$@")
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "privacy-accuracy.sh: --repeats '$repeats' is not a positive integer" >&2; exit 2; }
python=/usr/bin/python3
[[ -x build/cmlbed ]] || { echo "privacy-accuracy.sh: no build/cmlbed; run bash scripts/setup.sh first" >&2; exit 2; }

if [[ $report_only == false ]]; then
  source scripts/mpi-env.sh
  mkdir -p "$results"
  fast=(--devices.flops=100GFLOP/s --network.uplink_rate=1gbit --network.downlink_rate=1gbit
        --output.checkpoint=0 --output.overwrite=true)
  cells=()
  for method in $methods; do
    cells+=("$method off")
    for sigma in $sigmas; do cells+=("$method $sigma"); done
  done
  done_cells=0
  for cell in "${cells[@]}"; do
    method=${cell% *} sigma=${cell#* } privacy=()
    if [[ $sigma != off ]]; then
      clip=5
      [[ $method == fl ]] && clip=1
      privacy=(--privacy.mechanism=gaussian --privacy.clip="$clip" --privacy.noise_multiplier="$sigma")
    fi
    done_cells=$((done_cells + 1))
    echo "privacy-accuracy: cell $done_cells of ${#cells[@]}: $method, DP ${privacy:+on, sigma }$sigma, $repeats seed(s)"
    mpirun --oversubscribe -np 4 build/cmlbed run --config "configs/quickstart/$method.ini" "${fast[@]}" \
      "${privacy[@]}" "${extra[@]}" --output.progress=false --repeats "$repeats" \
      --output.file="$results/$method-dp-$sigma.h5" >"$results/$method-dp-$sigma.log" 2>&1 ||
      { tail -20 "$results/$method-dp-$sigma.log" >&2; echo "privacy-accuracy.sh: $method, DP $sigma failed" >&2; exit 1; }
  done
fi
shopt -s nullglob
files=("$results"/*-dp-*.h5)
((${#files[@]} > 0)) || { echo "privacy-accuracy.sh: no results in $results" >&2; exit 2; }
"$python" scripts/privacy_accuracy.py --doc "$doc" --command "$invocation" "${files[@]}"
