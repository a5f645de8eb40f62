#!/usr/bin/env bash
# Does the planner choose well? (issue 11, "Choice quality"). For each config (default: the
# main job's pipar, configs/quickstart/pipar.ini, and configs/heterogeneous.ini): one
# `cmlbed profile`, then measured pipar runs of a grid of uniform hand choices (split P in
# SPLITS, micro-batches m in MICRO_BATCHES), of the planner's choice (model.split = auto,
# pipar.micro_batches = auto, from the same profile; once free, once kept to splits >= the
# grid's smallest) and of the PiPar authors' closed form (its m at the planner's uniform
# split). The grid's best pair, the planner's choices and the closed form are then run
# REPEATS - 1 more times; scripts/studies/choice_quality.py writes docs/choice-quality.md and JSON.
#
#   scripts/studies/choice-quality.sh [--configs "A.ini B.ini"] [--results DIR] [--doc FILE] [-- OVERRIDES...]
#
# Environment: CMLBED (default build/cmlbed), SPLITS (default "2 3 4 5"), MICRO_BATCHES
# (default "1 2 4 8 16"), ROUNDS (default 3; rounds 2.. are compared), REPEATS (default 3),
# PYTHON. A run whose results file exists is not run again.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
cd "$root"
source scripts/mpi-env.sh
source scripts/dev/tool-checks.sh

configs="configs/quickstart/pipar.ini configs/heterogeneous.ini" results=results/choice-quality
doc=docs/choice-quality.md
while [[ $# -gt 0 ]]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --doc) doc=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "choice-quality.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
overrides=("$@")
cmlbed_binary choice-quality.sh
h5py_python choice-quality.sh
splits=${SPLITS:-2 3 4 5} micro_batches=${MICRO_BATCHES:-1 2 4 8 16} repeats=${REPEATS:-3}
mkdir -p "$results"

# The [device.K] sections of a config that set `key`: their K, one a line.
devices_setting() {
  awk -v key="$2" '/^[[:space:]]*\[device\.[0-9]+\]/ { gsub(/[^0-9]/, ""); k = $0; next }
                   /^[[:space:]]*\[/ { k = ""; next }
                   k != "" && $0 ~ "^[[:space:]]*" key "[[:space:]]*=" { print k }' "$1" | sort -u
}

# run NAME RANKS OPTIONS...: a measured run into $base.NAME.h5 (skipped when it exists).
run() {
  local name=$1 ranks=$2
  shift 2
  [[ -f $base.$name.h5 ]] && return 0
  echo "   $name $(date -u +%H:%M:%S)" >&2
  mpirun --oversubscribe -np "$ranks" "$cmlbed" run "${common[@]}" "$@" --output.file="$base.$name.h5" \
    >"$base.$name.out" 2>&1 || { cat "$base.$name.out" >&2; exit 1; }
  rm -f "$base.$name.h5.ckpt"
}

listed=()
for config in $configs; do
  ranks=$(sed -n '1s/^# ranks: *\([0-9]*\).*/\1/p' "$config")
  base=$results/$(echo "${config#configs/}" | sed 's|/|_|g; s|\.ini$||')
  listed+=("$config:$base:$ranks")
  common=(--config "$config" --experiment.method=pipar --experiment.rounds="${ROUNDS:-3}"
          --output.progress=false --output.overwrite=true "${overrides[@]}")
  echo "== $config ($ranks ranks) $(date -u +%H:%M:%S)" >&2
  [[ -f $base.profile.json ]] || mpirun --oversubscribe -np "$ranks" "$cmlbed" profile "${common[@]}" \
    -o "$base.profile.json" >"$base.profile.out" 2>&1 || { cat "$base.profile.out" >&2; exit 1; }
  # Per-device splits and micro-batch counts follow the uniform choice (or auto).
  uniform() {
    local p=$1 m=$2 k options
    options=(--model.split="$p" --pipar.micro_batches="$m")
    for k in $(devices_setting "$config" split); do options+=(--device."$k".split="$p"); done
    for k in $(devices_setting "$config" micro_batches); do options+=(--device."$k".micro_batches="$m"); done
    echo "${options[@]}"
  }
  for p in $splits; do
    for m in $micro_batches; do
      # shellcheck disable=SC2046
      run "grid-$p-$m-1" "$ranks" $(uniform "$p" "$m")
    done
  done
  least=$(echo "$splits" | tr ' ' '\n' | sort -n | head -1)
  # shellcheck disable=SC2046
  run "auto-1" "$ranks" $(uniform auto auto) --plan.profile="$base.profile.json"
  # shellcheck disable=SC2046
  run "autogrid-1" "$ranks" $(uniform auto auto) --plan.profile="$base.profile.json" --plan.min_split="$least"
  read -r closed_split closed_m < <("$python" -c "
import h5py, sys
a = h5py.File(sys.argv[1], 'r')['plan'].attrs
print(int(a['chosen_split']), int(a['closed_form_micro_batches']))" "$base.autogrid-1.h5")
  best=$("$python" scripts/studies/choice_quality.py best --splits "$splits" --micro-batches "$micro_batches" "$base")
  for ((r = 2; r <= repeats; r++)); do
    # shellcheck disable=SC2046
    run "grid-${best// /-}-$r" "$ranks" $(uniform $best)
    # shellcheck disable=SC2046
    run "auto-$r" "$ranks" $(uniform auto auto) --plan.profile="$base.profile.json"
    # shellcheck disable=SC2046
    run "autogrid-$r" "$ranks" $(uniform auto auto) --plan.profile="$base.profile.json" --plan.min_split="$least"
    # shellcheck disable=SC2046
    run "closed-$r" "$ranks" $(uniform "$closed_split" "$closed_m")
  done
  # shellcheck disable=SC2046
  run "closed-1" "$ranks" $(uniform "$closed_split" "$closed_m")
done
"$python" scripts/studies/choice_quality.py report --doc "$doc" --repeats "$repeats" --splits "$splits" \
  --micro-batches "$micro_batches" --machine "$(nproc) cores, $(uptime | sed 's/.*load/load/')" "${listed[@]}"
