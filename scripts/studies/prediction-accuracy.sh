#!/usr/bin/env bash
# The simulator's predictions against measured runs, config by config (issue 11, "Prediction
# accuracy"): for every config under configs/ whose experiment.method is fl, sfl or pipar,
# `cmlbed profile` (all of its ranks), `cmlbed simulate` with that profile, and a measured
# `mpirun cmlbed run`, all with the same settings; then scripts/studies/prediction_accuracy.py
# compares the mean round (rounds 2.., the first starts with full token buckets) and the
# server's idle share, and writes the table (docs/prediction-accuracy.md) and JSON.
# The simulation that is compared shares this machine's cores among the ranks
# (--plan.host_cores=$(nproc), as mpirun places them here, with this host's scheduler slice,
# --plan.host_slice: scripts/tools/host-slice.sh); a second one with a core per rank
# (plan.host_cores = 0) is shown beside it. An override --plan.host_cores=C replaces both
# with one simulation on C cores.
#
#   scripts/studies/prediction-accuracy.sh [--configs "A.ini B.ini" | --random N --seed S [--generator G]]
#                                  [--results DIR] [--doc FILE] [--quick] [--check ROUND_PCT IDLE_POINTS]
#                                  [--steady PCT TRIES] [--repeats N] [--force] [--archive DIR|none]
#                                  [--table-only] [-- OVERRIDES...]
#
# --random N --seed S: instead of configs/, N configurations drawn by scripts/tools/random-configs.py
# (written to DIR/random-S/, rows named random-S-K: rerun one with --random K --seed S, the
# first K draws being the same); the table goes to docs/prediction-random-S.md unless --doc.
# --generator crowded: the draws of scripts/tools/crowded-configs.py instead (more ranks than
# cores, Fashion-MNIST, longer rounds), rows crowded-S-K, table docs/prediction-crowded-S.md.
# Rounds: the config's, at most 3, except for configs with rate traces (their point is the
# change, which needs every round). --quick: 2 rounds of 3 mini-batches (the ctest).
# --check: exit 1 unless every row is within ROUND_PCT % and IDLE_POINTS points.
# --steady: after the measured run, the profile is taken again; when the two profiles'
# compute differs by more than PCT % (default 5: this shared machine's speed moved while
# the row was measured), the row is measured again, at most TRIES times in all (default 3;
# --quick: 1). The table shows each row's drift and tries, and the share of the CPU time
# during the measured run that the hypervisor gave to other guests (steal, /proc/stat).
# --repeats N: every row is measured N times in a row (N profiles, simulations, measured
# runs and second profiles, each pair seconds apart, files NAME.rep1.* .. NAME.repN.*);
# the table shows the medians over the N and each one's error: one run that the machine
# slowed (or sped) does not decide a row. The drift retries are then off unless --steady
# gives TRIES.
# --archive DIR (default docs/reproduction-data/prediction/TABLE, TABLE the doc's name
# without .md; none with --quick): every row's files are kept there (digests of the .h5
# files, which git keeps) and a row whose files are gone from the results folder is read
# from there. --table-only writes the table from what the results folder and the archive
# hold, running nothing: on a fresh checkout it rebuilds the committed tables.
# A config whose three files exist is not run again, but simulated again when the cmlbed
# binary is newer than its simulation (--force runs everything again).
# Environment: CMLBED (default build/cmlbed), PYTHON (default: python3 with h5py, else
# /usr/bin/python3).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
cd "$root"
source scripts/mpi-env.sh
source scripts/dev/tool-checks.sh
source scripts/tools/ini-value.sh
source scripts/tools/host-slice.sh

configs="" results=results/prediction-accuracy doc=docs/prediction-accuracy.md quick=false force=false check=()
steady=5 tries="" repeats=1 random_count="" random_seed="" doc_given=false generator=random
archive="" table_only=false
while [[ $# -gt 0 ]]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --doc) doc=$2 doc_given=true; shift 2 ;;
    --random) random_count=$2; shift 2 ;;
    --seed) random_seed=$2; shift 2 ;;
    --generator) generator=$2; shift 2 ;;
    --quick) quick=true; shift ;;
    --force) force=true; shift ;;
    --check) check=(--check "$2" "$3"); shift 3 ;;
    --steady) steady=$2 tries=$3; shift 3 ;;
    --repeats) repeats=$2; shift 2 ;;
    --archive) archive=${2:?--archive needs a folder or none}; shift 2 ;;
    --table-only) table_only=true; shift ;;
    --) shift; break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "prediction-accuracy.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
overrides=("$@")
[[ $generator == random || $generator == crowded ]] ||
  { echo "prediction-accuracy.sh: --generator is random or crowded, not '$generator'" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "prediction-accuracy.sh: --repeats N: a count >= 1" >&2; exit 2; }
if [[ -z $tries ]]; then if $quick || ((repeats > 1)); then tries=1; else tries=3; fi; fi
[[ $tries =~ ^[1-9][0-9]*$ && $steady =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "prediction-accuracy.sh: --steady PCT TRIES: a percentage and a count >= 1" >&2; exit 2; }
cmlbed_binary prediction-accuracy.sh
h5py_python prediction-accuracy.sh
if [[ -n $random_count || -n $random_seed ]]; then
  [[ $random_count =~ ^[1-9][0-9]*$ && $random_seed =~ ^[0-9]+$ && -z $configs ]] ||
    { echo "prediction-accuracy.sh: --random N --seed S: a count >= 1 and a seed >= 0, without --configs" >&2; exit 2; }
  $doc_given || doc=docs/prediction-$generator-$random_seed.md
  configs=$("$python" "scripts/tools/$generator-configs.py" --count "$random_count" --seed "$random_seed" \
    --out "$results/$generator-$random_seed" --cmlbed "$cmlbed" | tr '\n' ' ') || exit 1
fi

if [[ -z $configs ]]; then
  for file in $(find configs -name '*.ini' | sort); do
    case $(ini_value "$file" experiment method) in fl|sfl|pipar) configs+=" $file" ;; esac
  done
fi
# simulate BASE SETTINGS...: BASE.sim.h5 on this machine's cores shared (or the override's),
# BASE.own-cores.sim.h5 with a core per rank.
simulate() {
  local base=$1
  shift
  local shared=(--plan.host_cores="$(nproc)" --plan.host_slice="$(host_slice)")
  [[ " ${overrides[*]} " == *" --plan.host_cores="* ]] && shared=()
  "$cmlbed" simulate "$@" "${shared[@]}" --profile "$base.profile.json" --output.file="$base.sim.h5" \
    >"$base.sim.out" 2>&1 || { cat "$base.sim.out" >&2; exit 1; }
  rm -f "$base.own-cores.sim.h5"
  if ((${#shared[@]} == 0)); then return; fi
  "$cmlbed" simulate "$@" --plan.host_cores=0 --profile "$base.profile.json" \
    --output.file="$base.own-cores.sim.h5" >"$base.own-cores.sim.out" 2>&1 ||
    { cat "$base.own-cores.sim.out" >&2; exit 1; }
}

# stolen_pct BEFORE AFTER: of the CPU time between two readings of /proc/stat's first
# line (all CPUs: user nice system idle iowait irq softirq steal ...), the share the
# hypervisor gave to other guests while this one wanted to run (steal), in percent.
stolen_pct() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x); split(b, y); total = 0
    for (i = 2; i <= 9; i++) total += y[i] - x[i]
    printf "%.1f\n", (total > 0 ? 100 * (y[9] - x[9]) / total : 0) }'
}

# measure_row BASE: profile, simulate, measure and profile again the row of $config
# ($ranks ranks, ${settings[@]}) into BASE.*, again while the host drifted (--steady).
measure_row() {
  local base=$1 try drift
  for ((try = 1; try <= tries; try++)); do
    echo "== $config ($ranks ranks, ${settings[*]:2}) $(date -u +%H:%M:%S)$( ((try > 1)) && echo ", try $try")" >&2
    mpirun --oversubscribe -np "$ranks" "$cmlbed" profile "${settings[@]}" -o "$base.profile.json" \
      >"$base.profile.out" 2>&1 || { cat "$base.profile.out" >&2; exit 1; }
    simulate "$base" "${settings[@]}"
    cpu_before=$(head -1 /proc/stat)
    mpirun --oversubscribe -np "$ranks" "$cmlbed" run "${settings[@]}" --output.file="$base.run.h5" \
      >"$base.run.out" 2>&1 || { cat "$base.run.out" >&2; exit 1; }
    stolen_pct "$cpu_before" "$(head -1 /proc/stat)" >"$base.steal"
    rm -f "$base.run.h5.ckpt"
    # The same profile again: did the machine's speed move while this row was measured?
    mpirun --oversubscribe -np "$ranks" "$cmlbed" profile "${settings[@]}" -o "$base.after.profile.json" \
      >"$base.after.profile.out" 2>&1 || { cat "$base.after.profile.out" >&2; exit 1; }
    echo "$try" >"$base.tries"
    drift=$("$python" scripts/studies/prediction_accuracy.py --drift "$base.profile.json" "$base.after.profile.json")
    awk -v d="$drift" -v s="$steady" 'BEGIN { exit !(d <= s) }' && break
    if ((try < tries)); then echo "   host drift ${drift}% (over ${steady}%): measuring the row again" >&2; fi
  done
}

mkdir -p "$results"
listed=()
for config in $configs; do
  [[ -f $config ]] || { echo "prediction-accuracy.sh: no config $config" >&2; exit 2; }
  ranks=$(sed -n '1s/^# ranks: *\([0-9]*\).*/\1/p' "$config")
  [[ -n $ranks ]] || { echo "prediction-accuracy.sh: $config has no '# ranks: R' first line" >&2; exit 2; }
  rounds=$(ini_value "$config" experiment rounds)
  rounds=${rounds:-3}
  if ! grep -Eq '^[[:space:]]*(uplink|downlink)_trace[[:space:]]*=' "$config" && ((rounds > 3)); then rounds=3; fi
  settings=(--config "$config" --output.progress=false --output.overwrite=true)
  if $quick; then rounds=2 settings+=(--train.local_iterations=3); fi
  # (an option may be given once: OVERRIDES' rounds win)
  [[ " ${overrides[*]} " == *" --experiment.rounds="* ]] || settings+=(--experiment.rounds="$rounds")
  settings+=("${overrides[@]}")
  # a row's name: its path under configs/ (a drawn config: its file name)
  case $config in
    configs/*) name=$(echo "${config#configs/}" | sed 's|/|_|g; s|\.ini$||') ;;
    *) name=$(basename "$config" .ini) ;;
  esac
  listed+=("$config:$name:$ranks")
  $table_only && continue
  # A row is measured once (NAME.*) or --repeats times (NAME.rep1.* ..): one layout at a
  # time. Without --repeats or --force, a row measured with repeats before is kept so.
  bases=("$results/$name")
  if ((repeats > 1)); then
    bases=()
    for ((repeat = 1; repeat <= repeats; repeat++)); do bases+=("$results/$name.rep$repeat"); done
  elif ! $force && [[ -f $results/$name.rep1.run.h5 ]]; then
    bases=()
    for run_file in "$results/$name".rep[0-9]*.run.h5; do bases+=("${run_file%.run.h5}"); done
  fi
  for base in "${bases[@]}"; do
    if ! $force && [[ -f $base.profile.json && -f $base.run.h5 ]]; then
      if [[ -f $base.sim.h5 && $base.sim.h5 -nt $cmlbed ]]; then
        echo "== $config: done before ($base.*)" >&2
      else
        echo "== $config: simulating again (the profile and the measured run are kept)" >&2
        simulate "$base" "${settings[@]}"
      fi
      continue
    fi
    if [[ $base == "$results/$name" ]]; then
      rm -f "$results/$name".rep[0-9]*.*
    else
      rm -f "$results/$name".{profile,after.profile}.{json,out} "$results/$name".{run,sim,own-cores.sim}.{h5,out} \
        "$results/$name".{tries,steal}
      echo "== $config: measurement ${base##*.rep} of ${#bases[@]}" >&2
    fi
    measure_row "$base"
  done
  # (fewer repeats than the last time: the extra ones go)
  for extra in "$results/$name".rep[0-9]*.run.h5; do
    [[ -e $extra ]] || continue
    repeat=${extra%.run.h5} repeat=${repeat##*.rep}
    ((repeats == 1 || repeat <= repeats)) || rm -f "$results/$name.rep$repeat".*
  done
done
if [[ -n $random_count ]]; then
  chosen=""
  [[ $generator == random ]] || chosen=" --generator $generator"
  described=(--title "Prediction accuracy on $random_count $generator configurations (seed $random_seed)"
             --command "scripts/studies/prediction-accuracy.sh --random $random_count --seed $random_seed$chosen"
             --intro "The configurations are drawn by \`scripts/tools/$generator-configs.py --count $random_count --seed $random_seed\` (row $generator-$random_seed-K is its draw K, with the draw's method, model, device count and timed or paced devices in the file's second line); the command above draws them again into $results/$generator-$random_seed/, so any row can be measured again: \`scripts/studies/prediction-accuracy.sh --random K --seed $random_seed$chosen --force\` measures the first K.")
else
  described=()
fi
if [[ -z $archive ]]; then
  if $quick; then archive=none; else archive=docs/reproduction-data/prediction/$(basename "$doc" .md); fi
fi
kept=()
[[ $archive == none ]] || kept=(--archive "$archive")
"$python" scripts/studies/prediction_accuracy.py --results "$results" --doc "$doc" "${check[@]}" --steady "$steady" "${described[@]}" "${kept[@]}" \
  --machine "$(nproc) cores, $(uptime | sed 's/.*load/load/')" "${listed[@]}"
