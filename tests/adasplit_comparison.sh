#!/usr/bin/env bash
# scripts/studies/adasplit-comparison.sh end to end on a small problem: its run list (the five
# methods and the three personalised split baselines, the kappa sweep, eta x orchestrator,
# the baselines' learning-rate sweep), bad arguments (exit 2), a real run of
# sfl and of AdaSplit plus one kappa point and one learning-rate point with 6 ranks (synthetic data, 2 rounds of 2
# mini-batches), and the group tables, pictures and JSON it writes, again with
# --report-only. While this cmlbed refuses experiment.method = adasplit the AdaSplit runs
# must be skipped with a message (and the comparison still written); once it is built
# they must run.
# Usage: adasplit_comparison.sh CMLBED SOURCE_DIR [MPIEXEC]
set -u
cmlbed=$(realpath "$1") source_dir=$(realpath "$2") mpiexec=${3:-mpirun}
script=$source_dir/scripts/studies/adasplit-comparison.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 checks=0
check() {
  checks=$((checks + 1))
  if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; failures=$((failures + 1)); fi
}

# --- the run list ------------------------------------------------------------------------
unset ADASPLIT_METHODS KAPPAS ETAS ORCHESTRATORS LR_BASELINES LR_SETTINGS
bash "$script" --list >"$work/list" 2>&1
check '[[ $(cut -d" " -f1 "$work/list" | xargs) == "fl sl sfl pipar adasplit sl-personalised sfl-personalised pipar-personalised kappa-0.3 kappa-0.45 kappa-0.6 kappa-0.75 kappa-0.9 eta1-ucb eta1-random eta3-ucb eta3-random eta5-ucb eta5-random" ]]' \
  "--list: 5 methods and 3 personalised split baselines, 5 kappas, 3 etas x 2 orchestrators ($(wc -l <"$work/list") runs)"
check 'grep -qx "kappa-0.45 configs/adasplit/adasplit.ini --adasplit.local_fraction=0.45" "$work/list"' \
  "--list: a kappa run sets adasplit.local_fraction"
check 'grep -qx "eta5-random configs/adasplit/adasplit.ini --adasplit.selected=5 --adasplit.orchestrator=random --experiment.rounds=3" <(bash "$script" --list --only eta -- --experiment.rounds=3)' \
  "--list --only eta -- OVERRIDE: eta x orchestrator, the override on every line"
bash "$script" --list --only lr >"$work/lr" 2>&1
check '[[ $(wc -l <"$work/lr") -eq 18 ]] && grep -qx "lr-sfl-personalised-sgd-0.01 configs/adasplit/sfl-personalised.ini --train.optimizer=sgd --train.lr=0.01 --train.momentum=0.9 --network.uplink_rate=1gbit --network.downlink_rate=1gbit" "$work/lr" && grep -qx "lr-fl-adam-1e-3 configs/adasplit/fl.ini --train.optimizer=adam --train.lr=1e-3 --network.uplink_rate=1gbit --network.downlink_rate=1gbit" "$work/lr"' \
  "--list --only lr: 3 baselines x 6 settings, sgd with momentum, fast links"
LR_SETTINGS="sgd:0.01 rmsprop:1" bash "$script" --list --only lr >"$work/out" 2>&1
status=$?
check '[[ $status -eq 2 ]] && grep -q "rmsprop:1.*is not OPTIMIZER:LR" "$work/out"' "a bad LR_SETTINGS entry exits 2 and names it"
for bad in "--only nothing" "--frobnicate" "--only"; do
  # shellcheck disable=SC2086
  bash "$script" $bad >"$work/out" 2>&1
  status=$?
  check '[[ $status -eq 2 ]] && grep -q "adasplit-comparison.sh" "$work/out"' "'$bad' exits 2 with a message"
done
ADASPLIT_METHODS="fl nosuch" bash "$script" --list >"$work/out" 2>&1
status=$?
check '[[ $status -eq 2 ]] && grep -q "no configs/adasplit/nosuch.ini" "$work/out"' "an unknown method exits 2"
bash "$script" --report-only --results "$work/none" >"$work/out" 2>&1
status=$?
check '[[ $status -eq 1 ]] && grep -q "no results folder" "$work/out"' "--report-only on a missing folder exits 1"

# --- a real comparison -------------------------------------------------------------------
if refusal=$(bash "$source_dir/scripts/dev/method-refusal.sh" "$cmlbed" adasplit "$mpiexec"); then
  built=false; echo "adasplit is refused by this build: expecting its runs to be skipped"
else
  built=true; echo "adasplit is built: expecting its runs to run"
fi
results=$work/results
start=$(date +%s)
ADASPLIT_METHODS="sfl adasplit" KAPPAS=0.3 LR_BASELINES=sfl LR_SETTINGS=sgd:0.01 \
  CMLBED_BIN=$cmlbed MPIEXEC=$mpiexec bash "$script" --only methods,kappa,lr --results "$results" -- --data.dataset=synthetic \
  --data.synthetic_train=600 --data.synthetic_test=100 --experiment.rounds=2 \
  --train.local_iterations=2 --output.progress=false >"$work/run.out" 2>&1
status=$?
echo "comparison took $(( $(date +%s) - start )) s"
check '[[ $status -eq 0 ]]' "the comparison exits 0 (status $status)"
check '[[ -f $results/sfl.h5 ]]' "sfl ran into the results folder"
rows() { grep -c '^| [a-z]' "$1" 2>/dev/null; }  # table rows after the heading
if $built; then
  check '[[ -f $results/adasplit.h5 && -f $results/kappa-0.3.h5 ]]' "the AdaSplit runs ran"
  check '[[ $(rows "$results/comparison.md") -eq 3 ]]' "comparison.md: a heading and 2 runs"
  check '[[ $(rows "$results/kappa.md") -eq 2 ]] && grep -q "^| adasplit |" "$results/kappa.md"' "kappa.md: the kappa run"
else
  check 'grep -q "skipping the AdaSplit runs: this cmlbed refuses the method" "$work/run.out"' \
    "a clear message says the AdaSplit runs are skipped"
  check 'grep -q "== adasplit: skipped" "$work/run.out" && grep -q "== kappa-0.3: skipped" "$work/run.out"' \
    "each AdaSplit run says it was skipped"
  check '[[ ! -e $results/adasplit.h5 && ! -e $results/kappa-0.3.h5 && ! -e $results/kappa.md ]]' \
    "no AdaSplit file and no kappa table"
  check '[[ $(rows "$results/comparison.md") -eq 2 ]] && grep -q "^| sfl |" "$results/comparison.md"' \
    "comparison.md: a heading and the sfl run"
fi
check 'grep -q "| method | accuracy | GB up+down | client TFLOPs | mean round s | server idle % |" "$results/comparison.md"' \
  "comparison.md has the table's columns"
check '[[ $(rows "$results/lr.md") -eq 2 ]] && grep -q "^| sfl |" "$results/lr.md" && [[ -f $results/lr-sfl-sgd-0.01.h5 ]]' \
  "lr.md: the learning-rate point ran and is tabled"
check '[[ $(head -c 4 "$results/comparison.png" | tail -c 3) == PNG ]]' "comparison.png is a PNG"
check '/usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert [r[\"method\"] for r in d[\"runs\"]][0] == \"sfl\"" "$results/comparison.json"' \
  "comparison.json holds the runs"
check 'grep -q "authors'"'"' notebook ratio (not the paper'"'"'s C3-Score)" "$results/comparison.txt"' \
  "comparison.txt: the budget accounting, ratio labelled"
check 'grep -q "^  sfl [0-9.]*s$" "$work/run.out"' "the run time of each run is printed"

rm -f "$results"/comparison.*
bash "$script" --report-only --results "$results" >"$work/report.out" 2>&1
status=$?
check '[[ $status -eq 0 && -f $results/comparison.md && -f $results/comparison.png ]]' \
  "--report-only writes the tables and pictures again"

[[ $failures -eq 0 ]] || { echo "--- comparison output"; tail -40 "$work/run.out"; }
echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
