#!/usr/bin/env bash
# The AdaSplit comparison (issue 12): runs configs/adasplit/{fl,sl,sfl,pipar,adasplit}.ini
# and the personalised split baselines {sl,sfl,pipar}-personalised.ini (train.personalised:
# each device keeps its device part and is scored with it, as AdaSplit's are; issue 38), a
# sweep of AdaSplit's local fraction (kappa) and of its selected devices per iteration
# (eta) with the UCB and the random orchestrator, and a learning-rate sweep of the
# baselines (as the AdaSplit paper tunes its baselines), all into one folder, then writes per
# group a table (Markdown), a picture (accuracy against GB and against client TFLOPs,
# one point per run) and the budget accounting of every run (cmlbed-report c3).
#
#   scripts/studies/adasplit-comparison.sh [--results DIR] [--only GROUPS] [--repeats N] [-- OVERRIDES...]
#   scripts/studies/adasplit-comparison.sh --report-only [--results DIR]   # tables of what DIR holds
#   scripts/studies/adasplit-comparison.sh --list [--only GROUPS] [-- OVERRIDES...]   # the runs, one a line
#
# GROUPS (comma-separated, default methods,kappa,eta; lr on request):
#   methods  ADASPLIT_METHODS (default "fl sl sfl pipar adasplit sl-personalised
#            sfl-personalised pipar-personalised"), configs/adasplit/M.ini
#   kappa    adasplit.ini with adasplit.local_fraction in KAPPAS (default "0.3 0.45 0.6 0.75 0.9")
#   eta      adasplit.ini with adasplit.selected in ETAS (default "1 3 5") x
#            adasplit.orchestrator in ORCHESTRATORS (default "ucb random")
#   lr       the baselines LR_BASELINES (default "fl sl-personalised sfl-personalised";
#            pipar trains sfl's weights, sfl fl's) x LR_SETTINGS, OPTIMIZER:LR pairs
#            (default "sgd:0.003 sgd:0.01 sgd:0.03 adam:3e-4 adam:1e-3 adam:3e-3"; sgd
#            with momentum 0.9), named lr-BASELINE-OPTIMIZER-LR, over 1 gbit links: the
#            sweep compares accuracy only. configs/adasplit/ carries the choice.
# OVERRIDES (--section.key=value) go to every run, e.g. --experiment.rounds=2 for a try.
# --repeats N (default 1) runs every run with N seeds (`cmlbed run --repeats N`:
# NAME.seedS.h5 for experiment.seed = S..S+N-1); the tables list each seed's file.
# Results (default results/adasplit): NAME.h5 per run (fl, ..., kappa-0.3, eta1-ucb, ...);
# comparison.{md,png,json,txt}, kappa.*, eta.*, lr.* per group with runs.
# Budgets for the accounting: BANDWIDTH_BUDGET (default 10GB, 10^9 bytes a GB) and
# COMPUTE_BUDGET (default 5TFLOP). Binary: CMLBED_BIN (default build/cmlbed); launcher:
# MPIEXEC (default mpirun, with --oversubscribe: 6 ranks on a small machine).
#
# Should the binary refuse experiment.method = adasplit (a cmlbed older than the method:
# exit 2), the AdaSplit runs are skipped with a message and the rest runs and is compared.
# jobs/submit-adasplit.sh runs the same list as a Slurm array.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

results=results/adasplit groups=methods,kappa,eta mode=run overrides=() repeats=1
needs_value() {
  [[ $# -ge 2 && $2 != -* ]] ||
    { echo "adasplit-comparison.sh: $1 needs a value" >&2; usage >&2; exit 2; }
}
while [[ $# -gt 0 ]]; do
  case $1 in
    --results) needs_value "$@"; results=$2; shift 2 ;;
    --results=*) results=${1#--results=}; shift ;;
    --only) needs_value "$@"; groups=$2; shift 2 ;;
    --only=*) groups=${1#--only=}; shift ;;
    --repeats) needs_value "$@"; repeats=$2; shift 2 ;;
    --repeats=*) repeats=${1#--repeats=}; shift ;;
    --report-only) mode=report; shift ;;
    --list) mode=list; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; overrides=("$@"); break ;;
    *) echo "adasplit-comparison.sh: unknown argument '$1' (overrides go after --)" >&2
       usage >&2; exit 2 ;;
  esac
done
IFS=, read -ra group_list <<<"$groups"
for g in "${group_list[@]}"; do
  case $g in methods|kappa|eta|lr) ;; *)
    echo "adasplit-comparison.sh: unknown group '$g' in --only; groups: methods, kappa, eta, lr" >&2
    exit 2 ;;
  esac
done
wants() { [[ ",$groups," == *",$1,"* ]]; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] ||
  { echo "adasplit-comparison.sh: --repeats '$repeats' is not a positive integer" >&2; exit 2; }

configs=configs/adasplit
read -ra methods <<<"${ADASPLIT_METHODS:-fl sl sfl pipar adasplit sl-personalised sfl-personalised pipar-personalised}"
read -ra kappas <<<"${KAPPAS:-0.3 0.45 0.6 0.75 0.9}"
read -ra etas <<<"${ETAS:-1 3 5}"
read -ra orchestrators <<<"${ORCHESTRATORS:-ucb random}"
read -ra lr_baselines <<<"${LR_BASELINES:-fl sl-personalised sfl-personalised}"
read -ra lr_settings <<<"${LR_SETTINGS:-sgd:0.003 sgd:0.01 sgd:0.03 adam:3e-4 adam:1e-3 adam:3e-3}"

if wants methods; then
  for m in "${methods[@]}"; do
    [[ -f $root/$configs/$m.ini ]] ||
      { echo "adasplit-comparison.sh: no $configs/$m.ini (ADASPLIT_METHODS='${methods[*]}')" >&2; exit 2; }
  done
fi
if wants lr; then
  for m in "${lr_baselines[@]}"; do
    [[ -f $root/$configs/$m.ini ]] ||
      { echo "adasplit-comparison.sh: no $configs/$m.ini (LR_BASELINES='${lr_baselines[*]}')" >&2; exit 2; }
  done
  for setting in "${lr_settings[@]}"; do
    [[ $setting =~ ^(sgd|adam):[0-9.]+(e-?[0-9]+)?$ ]] ||
      { echo "adasplit-comparison.sh: LR_SETTINGS entry '$setting' is not OPTIMIZER:LR (sgd:0.01, adam:1e-3)" >&2; exit 2; }
  done
fi

# The runs, one a line: NAME CONFIG [--section.key=value ...] (no spaces in values).
emit() { local IFS=' '; echo "$*"; }
list_runs() {
  local m k e o
  if wants methods; then
    for m in "${methods[@]}"; do
      emit "$m" "$configs/$m.ini" "${overrides[@]}"
    done
  fi
  if wants kappa; then
    for k in "${kappas[@]}"; do
      emit "kappa-$k" "$configs/adasplit.ini" --adasplit.local_fraction="$k" "${overrides[@]}"
    done
  fi
  if wants eta; then
    for e in "${etas[@]}"; do
      for o in "${orchestrators[@]}"; do
        emit "eta$e-$o" "$configs/adasplit.ini" --adasplit.selected="$e" \
          --adasplit.orchestrator="$o" "${overrides[@]}"
      done
    done
  fi
  if wants lr; then
    for m in "${lr_baselines[@]}"; do
      for o in "${lr_settings[@]}"; do emit_lr_run "$m" "${o%%:*}" "${o#*:}"; done
    done
  fi
}
# emit_lr_run BASELINE OPTIMIZER LR: one run of the learning-rate sweep. SGD gets
# momentum 0.9 (0 would handicap it against Adam); the links are fast because only the
# accuracy is compared.
emit_lr_run() {
  local momentum=()
  [[ $2 == sgd ]] && momentum=(--train.momentum=0.9)
  emit "lr-$1-$2-$3" "$configs/$1.ini" --train.optimizer="$2" --train.lr="$3" "${momentum[@]}" \
    --network.uplink_rate=1gbit --network.downlink_rate=1gbit "${overrides[@]}"
}

cd "$root"
if [[ $mode == list ]]; then list_runs; exit; fi
[[ $results == /* ]] || results=$root/$results
report=$root/scripts/cmlbed-report
budgets=(--bandwidth-budget "${BANDWIDTH_BUDGET:-10GB}" --compute-budget "${COMPUTE_BUDGET:-5TFLOP}")

# compare GROUP TITLE FILES...: the group's table, picture, JSON and text, if it has runs.
compare() {
  local group=$1 title=$2
  shift 2
  local files=() f
  for f in "$@"; do [[ -f $f ]] && files+=("$f"); done
  [[ ${#files[@]} -gt 0 ]] || return 0
  echo
  echo "== $group: $report c3 ${files[*]##*/} ${budgets[*]}"
  "$report" c3 "${files[@]}" "${budgets[@]}" --markdown "$results/$group.md" \
    --plot "$results/$group.png" --json "$results/$group.json" --title "$title" \
    | tee "$results/$group.txt"
  echo
  cat "$results/$group.md"
}

write_report() {
  [[ -d $results ]] || { echo "adasplit-comparison.sh: no results folder $results" >&2; exit 1; }
  local method_files=() m
  shopt -s nullglob
  for m in "${methods[@]}"; do method_files+=("$results/$m.h5" "$results/$m".seed*.h5); done
  compare comparison "methods on configs/adasplit (Fashion-MNIST, 5 devices, 2 classes each)" \
    "${method_files[@]}"
  compare kappa "AdaSplit: local fraction kappa" "$results"/kappa-*.h5
  compare eta "AdaSplit: selected devices eta x orchestrator" "$results"/eta*-*.h5
  compare lr "baselines: optimizer and learning rate" "$results"/lr-*.h5
  shopt -u nullglob
}

if [[ $mode == report ]]; then write_report; exit; fi

cmlbed=${CMLBED_BIN:-$root/build/cmlbed}
[[ -x $cmlbed ]] || { echo "adasplit-comparison.sh: no cmlbed binary at $cmlbed (bash scripts/setup.sh builds it)" >&2; exit 1; }
mpiexec=${MPIEXEC:-mpirun}
source "$root/scripts/mpi-env.sh"
source "$root/scripts/tools/ini-value.sh"
mapfile -t runs < <(list_runs)
[[ ${#runs[@]} -gt 0 ]] || { echo "adasplit-comparison.sh: no runs selected" >&2; exit 2; }
mkdir -p "$results"

# Is AdaSplit built? Asked once, and only when the list holds an AdaSplit run.
adasplit_refusal=""
if printf '%s\n' "${runs[@]}" | grep -q " $configs/adasplit.ini"; then
  if adasplit_refusal=$(bash "$root/scripts/dev/method-refusal.sh" "$cmlbed" adasplit "$mpiexec"); then
    echo "adasplit-comparison.sh: skipping the AdaSplit runs: this cmlbed refuses the method"
    echo "  ($adasplit_refusal)"
  else
    adasplit_refusal=""
  fi
fi

timings=()
for line in "${runs[@]}"; do
  read -ra words <<<"$line"
  name=${words[0]} config=${words[1]} extra=("${words[@]:2}")
  if [[ -n $adasplit_refusal && $config == "$configs/adasplit.ini" ]]; then
    echo "== $name: skipped (experiment.method = adasplit is not built in this cmlbed)"
    timings+=("$name skipped")
    continue
  fi
  ranks=$(config_ranks "$config")
  [[ -n $ranks ]] || { echo "adasplit-comparison.sh: $config has no '# ranks: N' first line" >&2; exit 1; }
  command=("$mpiexec" --oversubscribe -np "$ranks" "$cmlbed" run --config "$config"
           --output.file="$results/$name.h5" --output.overwrite=true "${extra[@]}")
  ((repeats > 1)) && command+=(--repeats "$repeats")
  echo
  echo "== $name: ${command[*]}"
  start=$(date +%s.%N)
  "${command[@]}"
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  timings+=("$name ${seconds}s")
done

write_report
echo
echo "== run times (mpirun start to exit, under this machine's load at the time)"
printf '  %s\n' "${timings[@]}"
echo "results: $results"
