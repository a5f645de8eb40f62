#!/usr/bin/env bash
# The reproduction report of the PiPar and AdaSplit papers (issue 14): runs what this
# machine can measure, simulates the rest from profiles measured here, and writes
# docs/reproduction.md with its pictures (docs/images/reproduction-*.png).
#
#   scripts/studies/reproduction.sh                 # default: profiles, simulated grid, measured cells, round lengths, DP, heterogeneity, report
#   scripts/studies/reproduction.sh --full          # also the heavy parts (every network measured, accuracy)
#   scripts/studies/reproduction.sh --repeats N     # seeds per measured run (default 3; --quick: 2)
#   scripts/studies/reproduction.sh --report-only   # fold whatever results/reproduction holds into the report
#   scripts/studies/reproduction.sh --archive DIR   # where run digests are kept (default docs/reproduction-data)
#   scripts/studies/reproduction.sh --only PARTS    # comma-separated: profiles,simulate,measured,rounds,dp,heterogeneity,accuracy,adasplit,report
#   scripts/studies/reproduction.sh --quick --results DIR --doc FILE --images DIR   # tiny settings, no DP (the ctest)
#   scripts/studies/reproduction.sh --list-jobs     # the heavy parts, one a line (jobs/reproduction.sbatch)
#   scripts/studies/reproduction.sh --job SPEC      # one of those lines (an array element runs one)
#
# Parts:
#   profiles   `cmlbed profile` of each network (server + 1 device, configs/reproduction/grid.ini)
#   simulate   the whole grid, networks x uplink rates x {fl, sfl, pipar}, with `cmlbed plan`
#              choosing sfl's split and pipar's (split, micro-batches) from the profile and
#              `cmlbed simulate` predicting the rounds
#   measured   real runs of the cells in MEASURED (default "vgg5:5,10,25,50,100
#              mobilenetv3-small:5,100"; --full: every network at every rate), sfl and
#              pipar with model.split = auto (pipar.micro_batches = auto) and the same profile
#   rounds     the round-length curve: the cell's runs at ROUND_LENGTHS mini-batches per
#              device and round (default "4 16 64 390"; 390 = a CIFAR-10 epoch of 12,500
#              samples per device) on ROUND_NETWORKS (default "vgg5 mobilenetv3-large") at
#              uplink ROUND_RATE mbit (default 5): simulated at every length, measured at
#              ROUND_MEASURED (default "4 16 64")
#   dp         the main job (configs/quickstart/{fl,sfl,pipar}.ini) with DP off and on, one
#              pass per seed (the second pass in reverse order, and so on: the devices are
#              paced by devices.slowdown, so the host's load drifts into every figure)
#   heterogeneity  the runs `scripts/studies/heterogeneity-comparison.sh --list` names (FL, SFL,
#              PiPar by hand and planned per device, and re-planned where links follow
#              traces) on configs/heterogeneous.ini and configs/changing-bandwidth.ini
#              (HETEROGENEITY_EXPERIMENTS), into heterogeneity/NAME.seedS.h5
#   accuracy   configs/reproduction/accuracy.ini: two networks x {fashion-mnist, synthetic}
#              x {fl, sfl, pipar} x DP {off, on}, enough rounds for accuracy to settle
#   adasplit   the AdaSplit comparison: the runs `scripts/studies/adasplit-comparison.sh --list`
#              names (configs/adasplit/: fl, sl, sfl, pipar, adasplit, the kappa and the
#              eta x orchestrator sweeps, the baselines' learning-rate sweep; its
#              ADASPLIT_METHODS, KAPPAS, ETAS, ORCHESTRATORS, LR_BASELINES, LR_SETTINGS
#              apply), about 100 minutes a seed here, into adasplit/NAME.seedS.h5
#   report     scripts/studies/reproduction_report.py: docs/reproduction.md and the pictures; it
#              first keeps a digest of every run that succeeded (every table of its results
#              file but the timeline, a few KB) and copies of the profiles and plans in
#              docs/reproduction-data/, which git keeps, and reads a run from there when its
#              results file is gone: the report survives a fresh checkout, and one new run
#              adds one cell (commit docs/reproduction-data/ with the report)
# Every grid cell (and every point of the round-length curve) is four runs: fl, sfl,
# pipar, and sfl at pipar's split (NAME-sfl-atp), so that the speedup over FL splits into
# splitting (FL / SFL) and pipelining (SFL / PiPar, at PiPar's split and at SFL's own).
# Sittings: SITTING (default 1) labels this invocation's runs in their provenance; a second
# sitting, hours or days later, takes one more seed of every measured cell:
#   SITTING=2 FIRST_SEED=4 REPEATS=1 scripts/studies/reproduction.sh --only measured,report
# and the report says how far the two sittings' round times differ (the grid's figures
# pool every seed).
# Seeds: every measured run (measured, rounds, dp, heterogeneity, accuracy, adasplit) runs N seeds
# (--repeats N, or REPEATS; default 3, --quick 2), experiment.seed = F..F+N-1 (F =
# FIRST_SEED, default 1), each into NAME.seedS.h5 with its provenance NAME.seedS.h5.run.json.
# Timed runs interleave: a cell (or a heterogeneity experiment) runs seed 1 of each
# method, then seed 2 of each, and so on (A B C D A B C D), so that the host's drift spreads over every method instead of
# landing on one method's seeds (dp: one pass per seed, see above); accuracy and
# adasplit use `cmlbed run --repeats` for the seeds not done yet. The
# report groups the seeds of a run (cmlbed-report summary's groups) and gives n, mean and
# 95% interval, every time figure over rounds 2.. of each run. Simulated cells are
# deterministic: simulated once (NAME.h5). A measured run made before seeds (NAME.h5, as
# older digests hold them) counts, as n = 1 with a warning, only while no NAME.seedS.h5
# exists.
# A run whose results file and provenance (FILE.h5.run.json) exist is not run again (--force
# runs it again), so the script resumes, and results from the Slurm array (written to the
# same folder) are folded in by the next report.
#
# Environment: CMLBED (binary, default build/cmlbed), MPIEXEC (default mpirun; runs get
# --oversubscribe), PYTHON (default /usr/bin/python3: h5py, numpy, matplotlib), NICE
# (default "nice -n 5"; empty: none), NETWORKS, RATES (uplink mbit; downlink = 2.5x),
# MEASURED, ACCURACY_NETWORKS, ACCURACY_DATASETS, ACCURACY_ROUNDS, REPEATS, FIRST_SEED,
# ADASPLIT_GROUPS (default methods,kappa,eta,lr: the groups of scripts/studies/adasplit-comparison.sh
# --list to run; lr is the baselines' learning-rate sweep) and ADASPLIT_EXTRA (options added to every AdaSplit-comparison run, e.g.
# "--experiment.rounds=50 --network.uplink_rate=1gbit --network.downlink_rate=1gbit" to run
# until accuracy settles in a fraction of the time; the report states the runs' rounds and links).
# --full and the Slurm array run the heavy parts, accuracy and adasplit; the default run
# does not (their kept digests still make their sections). ROUND_NETWORKS, ROUND_RATE,
# ROUND_LENGTHS and ROUND_MEASURED set the round-length curve; HETEROGENEITY_EXPERIMENTS
# (default "heterogeneous changing-bandwidth") and HETEROGENEITY_EXTRA (options added to
# every heterogeneity run) the heterogeneity part.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
cd "$root"
# Root may run mpirun (containers, CI); more ranks than cores need --oversubscribe.
source scripts/mpi-env.sh
source scripts/tools/host-slice.sh

results=results/reproduction doc=docs/reproduction.md images=docs/images archive=""
parts=profiles,simulate,measured,rounds,dp,heterogeneity,report mode=run quick=false full=false force=false job=""
repeats=${REPEATS:-}
needs_value() {
  [[ $# -ge 2 && $2 != -* ]] || { echo "reproduction.sh: $1 needs a value" >&2; usage >&2; exit 2; }
}
while [[ $# -gt 0 ]]; do
  case $1 in
    --results) needs_value "$@"; results=$2; shift 2 ;;
    --doc) needs_value "$@"; doc=$2; shift 2 ;;
    --images) needs_value "$@"; images=$2; shift 2 ;;
    --archive) needs_value "$@"; archive=$2; shift 2 ;;
    --only) needs_value "$@"; parts=$2; shift 2 ;;
    --repeats) needs_value "$@"; repeats=$2; shift 2 ;;
    --full) full=true; parts=profiles,simulate,measured,rounds,dp,heterogeneity,accuracy,adasplit,report; shift ;;
    --quick) quick=true; shift ;;
    --force) force=true; shift ;;
    --report-only) parts=report; shift ;;
    --list-jobs) mode=list; shift ;;
    --job) needs_value "$@"; mode=job; job=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "reproduction.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
IFS=, read -ra part_list <<<"$parts"
for p in "${part_list[@]}"; do
  case $p in profiles|simulate|measured|rounds|dp|heterogeneity|accuracy|adasplit|report) ;; *)
    echo "reproduction.sh: unknown part '$p' in --only; parts: profiles, simulate, measured, rounds, dp, heterogeneity, accuracy, adasplit, report" >&2
    exit 2 ;;
  esac
done
wants() { [[ ",$parts," == *",$1,"* ]]; }
if [[ -z $repeats ]]; then
  repeats=3
  $quick && repeats=2
fi
first_seed=${FIRST_SEED:-1}
sitting=${SITTING:-1}
[[ $sitting =~ ^[1-9][0-9]*$ ]] || { echo "reproduction.sh: SITTING must be a positive integer (got '$sitting')" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ && $first_seed =~ ^[0-9]+$ ]] ||
  { echo "reproduction.sh: --repeats (REPEATS) must be a positive integer and FIRST_SEED an integer (got '$repeats', '$first_seed')" >&2; exit 2; }

cmlbed=${CMLBED:-build/cmlbed}
mpiexec=${MPIEXEC:-mpirun}
python=${PYTHON:-/usr/bin/python3}
read -ra nice_cmd <<<"${NICE-nice -n 5}"
grid_config=configs/reproduction/grid.ini
accuracy_config=configs/reproduction/accuracy.ini
read -ra networks <<<"${NETWORKS:-vgg5 vgg11 vgg16 resnet18 mobilenetv3-small mobilenetv3-large}"
read -ra rates <<<"${RATES:-5 10 25 50 100}"
methods=(fl sfl pipar)
cell_methods=(fl sfl pipar sfl-atp)  # a grid cell's runs; sfl-atp: sfl at pipar's split
measured_default="vgg5:5,10,25,50,100 mobilenetv3-small:5,100"
read -ra accuracy_networks <<<"${ACCURACY_NETWORKS:-vgg5 mobilenetv3-small}"
read -ra accuracy_datasets <<<"${ACCURACY_DATASETS:-fashion-mnist synthetic}"
accuracy_rounds=${ACCURACY_ROUNDS:-20}
read -ra round_networks <<<"${ROUND_NETWORKS:-vgg5 mobilenetv3-large}"
round_rate=${ROUND_RATE:-5}
read -ra round_lengths <<<"${ROUND_LENGTHS:-4 16 64 390}"
read -ra round_measured <<<"${ROUND_MEASURED:-4 16 64}"
grid_ranks=5 profile_args=(--repeats 3 --warmup 1) grid_extra=() dp_extra=() accuracy_extra=()
adasplit_groups=${ADASPLIT_GROUPS:-methods,kappa,eta,lr}
read -ra adasplit_extra <<<"${ADASPLIT_EXTRA:-}"
read -ra heterogeneity_experiments <<<"${HETEROGENEITY_EXPERIMENTS:-heterogeneous changing-bandwidth}"
read -ra heterogeneity_extra <<<"${HETEROGENEITY_EXTRA:-}"
# DP settings of the report (docs/explanation/privacy.md): the split methods clip each sample's
# activation to L2 norm 5 and add N(0, (0.5 x 5)^2); fl (DP-FedAvg) clips each update to 1
# and adds N(0, (0.3 x 1 / devices)^2) to the average. As tests/privacy_job.sh uses them.
dp_split=(--privacy.mechanism=gaussian --privacy.clip=5 --privacy.noise_multiplier=0.5)
dp_fl=(--privacy.mechanism=gaussian --privacy.clip=1 --privacy.noise_multiplier=0.3)
# The accuracy runs' DP: at the settings above the noise's norm is 40x the clipped
# activation's (0.5 x sqrt(6272 elements) for VGG-5 split 2) and every method stays at
# chance (measured: pipar 0.097-0.127 after 6 rounds), so they use noise about as large
# as the signal: sigma 0.01 for the split methods (0.8x for VGG-5 split 2, 0.3x for
# MobileNetV3-Small), 0.005 for fl (noise norm 0.005 x sqrt(weights) / 3 devices = 1.1x
# the clip for VGG-5's 458,730 weights, 2.1x for MobileNetV3-Small's 1,527,818 on 28x28).
# Their epsilon is recorded and is far too large to protect anything.
dp_acc_split=(--privacy.mechanism=gaussian --privacy.clip=5 --privacy.noise_multiplier=0.01)
dp_acc_fl=(--privacy.mechanism=gaussian --privacy.clip=1 --privacy.noise_multiplier=0.005)
if $quick; then
  # The ctest: one network, one rate, 2 devices, 1 round of 2 mini-batches, no DP part
  # unless asked for (--only), so that it ends within a minute.
  read -ra networks <<<"${NETWORKS:-vgg5}"
  read -ra rates <<<"${RATES:-100}"
  # Two AdaSplit-comparison runs (sfl and adasplit, 2 rounds of 2 mini-batches) stand for
  # that part's 16.
  [[ $parts == profiles,simulate,measured,rounds,dp,heterogeneity,report ]] &&
    parts=profiles,simulate,measured,rounds,heterogeneity,adasplit,report
  measured_default="vgg5:100"
  # The round-length curve: two lengths of one cell, the shorter also measured.
  read -ra round_networks <<<"${ROUND_NETWORKS:-vgg5}"
  round_rate=${ROUND_RATE:-100}
  read -ra round_lengths <<<"${ROUND_LENGTHS:-1 2}"
  read -ra round_measured <<<"${ROUND_MEASURED:-1}"
  export ADASPLIT_METHODS=${ADASPLIT_METHODS:-sfl adasplit}
  adasplit_groups=methods
  adasplit_extra=(--experiment.rounds=2 --train.local_iterations=2 --data.train_limit=300 --data.test_limit=50)
  # One heterogeneity experiment, 2 rounds of 2 mini-batches.
  read -ra heterogeneity_experiments <<<"${HETEROGENEITY_EXPERIMENTS:-heterogeneous}"
  heterogeneity_extra=(--experiment.rounds=2 --train.local_iterations=2 --data.train_limit=300 --data.test_limit=50)
  grid_ranks=3 profile_args=(--repeats 1 --warmup 0)
  grid_extra=(--experiment.rounds=1 --train.local_iterations=2 --data.synthetic_train=200 --data.synthetic_test=20)
  dp_extra=(--experiment.rounds=1 --train.local_iterations=2 --data.train_limit=300 --data.test_limit=50)
  accuracy_extra=()
  # Never the committed archive: the ctest's runs are not the report's.
  archive=${archive:-$results/kept}
fi
archive=${archive:-docs/reproduction-data}
$full && measured_default=$(for n in "${networks[@]}"; do printf '%s:%s ' "$n" "$(IFS=,; echo "${rates[*]}")"; done)
read -ra measured_cells <<<"${MEASURED:-$measured_default}"


# provenance FILES START SECONDS STATUS COMMAND...: FILE.run.json says what produced FILE,
# when, where, under what load and in which sitting (SITTING); the report quotes it beside
# every number (cmlbed_report.archive.write_provenance writes it).
# With several files (the seeds of one `cmlbed run --repeats`), each gets the command's
# provenance with "repeats" (how many files the command wrote; "seconds" is the whole
# command's) and its own "seed".
provenance() {
  local files=$1 start=$2 seconds=$3 status=$4
  shift 4
  "$python" - "$files" "$start" "$seconds" "$status" "$(hostname)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    "$(nproc)" "$("$cmlbed" --version 2>/dev/null | head -1)" "$sitting" "$@" <<'PY'
import sys
sys.path.insert(0, "scripts")
from cmlbed_report.archive import write_provenance
files, start, seconds, status, host, load, cores, version, sitting, *command = sys.argv[1:]
write_provenance(files.split("\n"), {
    "command": command, "started": start, "seconds": float(seconds), "status": int(status),
    "host": host, "load_after": load, "cores": int(cores), "cmlbed": version, "sitting": int(sitting)})
PY
}
done_already() { ! $force && [[ -s $1 && -s $1.run.json ]] && grep -q '"status": 0' "$1.run.json"; }

# record FILES LOG COMMAND...: runs the command (niced), its output in LOG, and writes
# FILE.run.json for each of FILES (newline-separated); a failure is reported and recorded
# (for every file of the command: a failed `--repeats` run is run again whole), and the
# script goes on.
failures=0
record() {
  local file=$1 log=$2
  shift 2
  local start status=0 t0 t1
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  t0=$(date +%s.%N)
  "${nice_cmd[@]}" "$@" >"$log" 2>&1 || status=$?
  t1=$(date +%s.%N)
  provenance "$file" "$start" "$(echo "$t1 - $t0" | bc)" "$status" "$@"
  if ((status != 0)); then
    failures=$((failures + 1))
    echo "reproduction.sh: FAILED ($status): $* (log: $log)" >&2
    tail -5 "$log" >&2
  fi
  return 0
}

# seed_file BASE S: the results file of seed S of BASE.h5, as `cmlbed run --repeats` names it.
seed_file() { echo "${1%.h5}.seed$2.h5"; }

# record_seeds LABEL BASE.h5 COMMAND...: runs the `cmlbed run` COMMAND (without
# --output.file) for every seed first_seed..first_seed+repeats-1 whose BASE.seedS.h5 is
# not done yet: one command per block of consecutive missing seeds, with
# --experiment.seed=S and --repeats K (K = the block's length; for one seed the file name
# is given in full, since --repeats 1 would not add .seedS). Logs: BASE.seedS.log (S the
# block's first seed). Prints "LABEL (seeds S..T)" before each block.
record_seeds() {
  local label=$1 base=$2
  shift 2
  local s last=$((first_seed + repeats - 1)) block=()
  for ((s = first_seed; s <= last + 1; s++)); do
    if ((s <= last)) && ! done_already "$(seed_file "$base" $s)"; then
      block+=("$s")
      continue
    fi
    ((${#block[@]} > 0)) || continue
    local first=${block[0]} count=${#block[@]} files="" out seed_args
    for out in "${block[@]}"; do files+="${files:+$'\n'}$(seed_file "$base" "$out")"; done
    if ((count == 1)); then
      seed_args=(--experiment.seed="$first" --output.file="$(seed_file "$base" "$first")")
      echo "$label (seed $first)"
    else
      seed_args=(--experiment.seed="$first" --repeats "$count" --output.file="$base")
      echo "$label (seeds $first..$((first + count - 1)))"
    fi
    record "$files" "${base%.h5}.seed$first.log" "$@" "${seed_args[@]}"
    block=()
  done
}

profile_of() { echo "$results/profiles/$1.json"; }
run_profiles() {
  local net
  for net in "${networks[@]}"; do
    local out
    out=$(profile_of "$net")
    done_already "$out" && continue
    echo "profile: $net"
    record "$out" "$results/profiles/$net.log" "$mpiexec" --oversubscribe -np 2 "$cmlbed" profile \
      --config "$grid_config" --model.name="$net" "${grid_extra[@]}" -o "$out" "${profile_args[@]}"
  done
}

# cell_args NET RATE: the overrides of one grid cell (downlink = 2.5 x uplink).
cell_args() {
  local down
  down=$(echo "$2 * 2.5" | bc | sed 's/\.0*$//; s/\(\.[0-9]*[1-9]\)0*$/\1/')
  echo "--model.name=$1 --network.uplink_rate=${2}mbit --network.downlink_rate=${down}mbit"
}

# simulate_one FOLDER NAME METHOD PROFILE CELL_ARGS... -- CHOICE...: `cmlbed simulate` of
# one run of a cell into FOLDER/NAME.h5 (skipped when done), its ranks sharing this
# machine's cores as a measured cell's do (the settings docs/prediction-accuracy.md
# validates). The choice comes from `cmlbed plan` without them, as `auto` in a measured
# cell makes it.
simulate_one() {
  local folder=$1 name=$2 method=$3 profile=$4
  shift 4
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  local out=$results/$folder/$name.h5
  done_already "$out" && return 0
  echo "simulate: $folder/$name $*"
  record "$out" "$results/$folder/$name.log" "$cmlbed" simulate --config "$grid_config" \
    --profile "$profile" --devices $((grid_ranks - 1)) --experiment.method=$method "${args[@]}" \
    --plan.host_cores="$(nproc)" --plan.host_slice="$(host_slice)" "$@" \
    --output.file="$out" --output.overwrite=true
}

# simulate_cell FOLDER PREFIX NET RATE EXTRA...: the simulated runs of one cell, PREFIX-M.h5
# for M = fl, sfl, pipar (the planner's choices, as `auto` makes them in a run) and
# sfl-atp (sfl at pipar's split); EXTRA: options every run gets (grid_extra, a length).
simulate_cell() {
  local folder=$1 prefix=$2 net=$3 rate=$4
  shift 4
  local extra=("$@") profile method
  profile=$(profile_of "$net")
  [[ -s $profile ]] || { echo "simulate: $net skipped: no profile ($profile)" >&2; return 0; }
  read -ra cell <<<"$(cell_args "$net" "$rate")"
  for method in "${methods[@]}"; do
    local name=$prefix-$method
    if [[ $method == fl ]]; then
      simulate_one "$folder" "$name" fl "$profile" "${cell[@]}" "${extra[@]}" --
      continue
    fi
    local plan=$results/$folder/$name.plan.txt auto=(--model.split=auto) chosen
    [[ $method == pipar ]] && auto+=(--pipar.micro_batches=auto)
    if $force || ! grep -q "^chosen: split" "$plan" 2>/dev/null; then
      "$cmlbed" plan --config "$grid_config" --profile "$profile" --devices $((grid_ranks - 1)) \
        --experiment.method=$method "${cell[@]}" "${extra[@]}" "${auto[@]}" >"$plan" 2>&1 ||
        { echo "plan failed: $folder/$name (log: $plan)" >&2; failures=$((failures + 1)); continue; }
    fi
    chosen=$(sed -n 's/^chosen: split \([0-9]*\), \([0-9]*\) micro-batch.*/\1 \2/p' "$plan")
    [[ -n $chosen ]] || { echo "plan: no choice for $folder/$name (log: $plan)" >&2; failures=$((failures + 1)); continue; }
    local choice=(--model.split="${chosen% *}")
    [[ $method == pipar ]] && choice+=(--pipar.micro_batches="${chosen#* }")
    simulate_one "$folder" "$name" $method "$profile" "${cell[@]}" "${extra[@]}" -- "${choice[@]}"
    [[ $method == pipar ]] || continue
    # Pipelining's own gain: sfl at pipar's split (SFL's schedule = PiPar's with one micro-batch).
    simulate_one "$folder" "$prefix-sfl-atp" sfl "$profile" "${cell[@]}" "${extra[@]}" -- \
      --model.split="${chosen% *}"
    # Split 0 sends the raw samples to the server, which split learning exists to
    # avoid: also the fastest candidate with at least one layer on the device, from the
    # same plan table (P, m, round s, ...), as PREFIX-pipar-p1.h5.
    [[ ${chosen% *} == 0 ]] || continue
    local p1
    p1=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $1 >= 1 && (best == "" || $3 + 0 < best + 0) {
                best = $3; choice = $1 " " $2 } END { print choice }' "$plan")
    [[ -n $p1 ]] || continue
    simulate_one "$folder" "$name-p1" pipar "$profile" "${cell[@]}" "${extra[@]}" -- \
      --model.split="${p1% *}" --pipar.micro_batches="${p1#* }"
  done
}

run_simulate() {
  local net rate
  for net in "${networks[@]}"; do
    for rate in "${rates[@]}"; do
      simulate_cell simulated "$net-${rate}mbit" "$net" "$rate" "${grid_extra[@]}"
    done
  done
}

source "$root/scripts/tools/ini-value.sh"

# run_option FILE KEY: a resolved option of a results file.
run_option() {
  "$python" - "$1" "$2" <<'PY'
import sys
sys.path.insert(0, "scripts")
from cmlbed_report.results import Run
print(Run(sys.argv[1]).option(sys.argv[2]))
PY
}

# measure_cell FOLDER PREFIX NET RATE EXTRA...: the measured runs of one cell,
# FOLDER/PREFIX-M.seedS.h5 for M = fl, sfl, pipar (model.split = auto, and
# pipar.micro_batches = auto, from the network's profile; each seed plans on its own) and
# sfl-atp (sfl at the split pipar's run of the same seed chose), interleaved: seed 1 of
# each, then seed 2 of each, and so on. EXTRA: options every run gets.
measure_cell() {
  local folder=$1 prefix=$2 net=$3 rate=$4
  shift 4
  local extra=("$@") profile seed method sfl_choice pipar_choice
  profile=$(profile_of "$net")
  read -ra cell <<<"$(cell_args "$net" "$rate")"
  if [[ -s $profile ]]; then
    sfl_choice=(--model.split=auto --plan.profile="$profile")
    pipar_choice=("${sfl_choice[@]}" --pipar.micro_batches=auto)
  else
    # No profile (cmlbed profile fails on this network, or it was not run): no `auto`
    # either (it would profile), so the split and micro-batch count of the network's
    # config in configs/pipar-networks/, which the report marks as fixed.
    local fixed=configs/pipar-networks/$net.ini
    [[ -f $fixed ]] || { echo "measured: $net skipped: no profile and no $fixed" >&2; return 0; }
    sfl_choice=(--model.split="$(ini_value "$fixed" model split)")
    pipar_choice=("${sfl_choice[@]}" --pipar.micro_batches="$(ini_value "$fixed" pipar micro_batches)")
  fi
  for ((seed = first_seed; seed < first_seed + repeats; seed++)); do
    for method in "${cell_methods[@]}"; do
      local out choice=()
      out=$(seed_file "$results/$folder/$prefix-$method.h5" "$seed")
      done_already "$out" && continue
      case $method in
        sfl) choice=("${sfl_choice[@]}") ;;
        pipar) choice=("${pipar_choice[@]}") ;;
        sfl-atp)
          local pipar_run split
          pipar_run=$(seed_file "$results/$folder/$prefix-pipar.h5" "$seed")
          done_already "$pipar_run" && split=$(run_option "$pipar_run" model.split) || split=""
          [[ -n $split ]] || { echo "measured: $folder/$prefix-$method seed $seed skipped: pipar's run of that seed did not finish" >&2
                               failures=$((failures + 1)); continue; }
          choice=(--model.split="$split") ;;
      esac
      echo "measured: $folder/$prefix-$method (seed $seed)"
      record "$out" "${out%.h5}.log" "$mpiexec" --oversubscribe -np $grid_ranks "$cmlbed" run \
        --config "$grid_config" --experiment.method="${method%-atp}" "${cell[@]}" "${extra[@]}" \
        "${choice[@]}" --experiment.seed="$seed" --output.file="$out" --output.overwrite=true
    done
  done
}
run_measured_cell() { measure_cell measured "$1-${2}mbit" "$1" "$2" "${grid_extra[@]}"; }
run_measured() {
  local spec
  for spec in "${measured_cells[@]}"; do
    local net=${spec%%:*} rate
    IFS=, read -ra cell_rates <<<"${spec#*:}"
    for rate in "${cell_rates[@]}"; do run_measured_cell "$net" "$rate"; done
  done
}

# The round-length curve: each network of ROUND_NETWORKS at ROUND_RATE, with
# train.local_iterations = each length (in place of the grid's), simulated at every
# length and measured at those of ROUND_MEASURED, into rounds-simulated/ and
# rounds-measured/ as NET-RATEmbit-bLEN-METHOD.
round_extra() {  # LEN: grid_extra with the length in place of its local_iterations
  local a
  for a in "${grid_extra[@]}"; do [[ $a == --train.local_iterations=* ]] || printf '%s\n' "$a"; done
  echo "--train.local_iterations=$1"
}
run_rounds_one() {  # NET LEN
  local extra prefix=$1-${round_rate}mbit-b$2
  mapfile -t extra < <(round_extra "$2")
  simulate_cell rounds-simulated "$prefix" "$1" "$round_rate" "${extra[@]}"
  [[ " ${round_measured[*]} " == *" $2 "* ]] || return 0
  measure_cell rounds-measured "$prefix" "$1" "$round_rate" "${extra[@]}"
}
run_rounds() {
  local net len
  for net in "${round_networks[@]}"; do
    if [[ ! -s $(profile_of "$net") ]]; then
      local grid_networks=("${networks[@]}")
      networks=("$net")
      run_profiles
      networks=("${grid_networks[@]}")
    fi
    for len in "${round_lengths[@]}"; do run_rounds_one "$net" "$len"; done
  done
}

# The main job with DP off and on, one pass per seed: its devices are paced by
# devices.slowdown, so a round follows this machine's load (one pass here gave FL rounds
# of 11.0 s with DP off and 6.5 s with DP on, the load moving in between). So each pass
# runs the six configurations with one seed, every second pass in reverse order, rather
# than `--repeats` (which would run one configuration's seeds back to back); the files
# are named as --repeats names them (main-M-dpX.seedS.h5), and the report groups them.
run_dp() {
  local method dp seed pass=0
  for ((seed = first_seed; seed < first_seed + repeats; seed++)); do
    pass=$((pass + 1))
    local order=()
    for method in "${methods[@]}"; do for dp in off on; do order+=("$method $dp"); done; done
    ((pass % 2 == 0)) && mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
    local pair
    for pair in "${order[@]}"; do
      method=${pair% *} dp=${pair#* }
      local out privacy=()
      out=$(seed_file "$results/dp/main-$method-dp$dp.h5" $seed)
      done_already "$out" && continue
      if [[ $dp == on ]]; then
        if [[ $method == fl ]]; then privacy=("${dp_fl[@]}"); else privacy=("${dp_split[@]}"); fi
      fi
      echo "dp: main job, $method, DP $dp, seed $seed (pass $pass)"
      record "$out" "${out%.h5}.log" "$mpiexec" --oversubscribe -np 4 "$cmlbed" run \
        --config configs/quickstart/$method.ini --output.checkpoint=0 "${dp_extra[@]}" "${privacy[@]}" \
        --experiment.seed="$seed" --output.file="$out" --output.overwrite=true
    done
  done
}

run_accuracy_one() {  # DATASET NET
  local dataset=$1 net=$2 method dp data=()
  [[ $dataset == fashion-mnist ]] && data=(--data.dataset=fashion-mnist)
  [[ $dataset == synthetic ]] && data=(--data.dataset=synthetic --data.synthetic_shape=3x32x32)
  for method in "${methods[@]}"; do
    for dp in off on; do
      local out=$results/accuracy/$dataset-$net-$method-dp$dp.h5 privacy=()
      if [[ $dp == on ]]; then
        if [[ $method == fl ]]; then privacy=("${dp_acc_fl[@]}"); else privacy=("${dp_acc_split[@]}"); fi
      fi
      record_seeds "accuracy: $dataset, $net, $method, DP $dp" "$out" "$mpiexec" --oversubscribe -np 4 \
        "$cmlbed" run --config "$accuracy_config" --experiment.method=$method --model.name="$net" \
        --experiment.rounds="$accuracy_rounds" "${data[@]}" "${accuracy_extra[@]}" "${privacy[@]}" \
        --output.overwrite=true
    done
  done
}
run_accuracy() {
  local dataset net
  for dataset in "${accuracy_datasets[@]}"; do
    for net in "${accuracy_networks[@]}"; do run_accuracy_one "$dataset" "$net"; done
  done
}

# The heterogeneity runs of one experiment (scripts/studies/heterogeneity-comparison.sh --list:
# NAME CONFIG OVERRIDES..., one a line), interleaved seed by seed across the runs, each
# into heterogeneity/NAME.seedS.h5 with its provenance.
run_heterogeneity_one() {  # EXPERIMENT
  local lines line seed words out ranks
  mapfile -t lines < <(bash scripts/studies/heterogeneity-comparison.sh --list --only "$1" -- "${heterogeneity_extra[@]}")
  ((${#lines[@]} > 0)) || { echo "heterogeneity: no runs for '$1'" >&2; failures=$((failures + 1)); return 0; }
  for ((seed = first_seed; seed < first_seed + repeats; seed++)); do
    for line in "${lines[@]}"; do
      read -ra words <<<"$line"
      out=$(seed_file "$results/heterogeneity/${words[0]}.h5" "$seed")
      done_already "$out" && continue
      ranks=$(config_ranks "${words[1]}")
      echo "heterogeneity: ${words[0]} (seed $seed)"
      record "$out" "${out%.h5}.log" "$mpiexec" --oversubscribe -np "$ranks" "$cmlbed" run \
        --config "${words[1]}" "${words[@]:2}" --output.checkpoint=0 --experiment.seed="$seed" \
        --output.file="$out" --output.overwrite=true
    done
  done
}
run_heterogeneity() {
  local experiment
  for experiment in "${heterogeneity_experiments[@]}"; do run_heterogeneity_one "$experiment"; done
}

# The AdaSplit comparison's runs (scripts/studies/adasplit-comparison.sh --list: NAME CONFIG
# OVERRIDES..., one a line), each seed into adasplit/NAME.seedS.h5 with its provenance.
# The report tables them with cmlbed-report c3's definitions, as adasplit-comparison.sh
# does, and the seeds' means and intervals.
run_adasplit_one() {  # LINE
  local words name config ranks
  read -ra words <<<"$1"
  name=${words[0]} config=${words[1]}
  local out=$results/adasplit/$name.h5
  ranks=$(config_ranks "$config")
  [[ -n $ranks ]] || { echo "adasplit: $config has no '# ranks: N' first line" >&2; failures=$((failures + 1)); return 0; }
  record_seeds "adasplit: $name" "$out" "$mpiexec" --oversubscribe -np "$ranks" "$cmlbed" run \
    --config "$config" --output.checkpoint=0 "${adasplit_extra[@]}" "${words[@]:2}" \
    --output.overwrite=true
}
adasplit_runs() { bash scripts/studies/adasplit-comparison.sh --list --only "$adasplit_groups"; }
run_adasplit() {
  local lines line
  mapfile -t lines < <(adasplit_runs)  # read first: mpirun would read the rest of a pipe
  for line in "${lines[@]}"; do run_adasplit_one "$line"; done
}

run_report() {
  local mode_text=default
  $quick && mode_text=quick
  $full && mode_text=full
  mkdir -p "$(dirname "$doc")" "$images"
  "$python" scripts/studies/reproduction_report.py --results "$results" --doc "$doc" --images "$images" \
    --mode "$mode_text" --grid-config "$grid_config" --accuracy-config "$accuracy_config" \
    --networks "${networks[*]}" --rates "${rates[*]}" --measured "${measured_cells[*]}" \
    --accuracy-networks "${accuracy_networks[*]}" --accuracy-datasets "${accuracy_datasets[*]}" \
    --accuracy-rounds "$accuracy_rounds" --dp-split "${dp_split[*]}" --dp-fl "${dp_fl[*]}" \
    --dp-accuracy-split "${dp_acc_split[*]}" --dp-accuracy-fl "${dp_acc_fl[*]}" \
    --adasplit-methods "${ADASPLIT_METHODS:-fl sl sfl pipar adasplit sl-personalised sfl-personalised pipar-personalised}" \
    --repeats "$repeats" --from-round 2 --cmlbed "$cmlbed" --archive "$archive"
}

# The heavy parts as independent jobs (one Slurm array element each): the measured cells
# of every network but the default ones, each point of the round-length curve, each
# accuracy (dataset, network), each heterogeneity experiment and each run of the AdaSplit
# comparison.
default_cell() {  # NET RATE: is it among the default measured cells?
  local spec r
  for spec in $measured_default; do
    [[ ${spec%%:*} == "$1" ]] || continue
    IFS=, read -ra spec_rates <<<"${spec#*:}"
    for r in "${spec_rates[@]}"; do [[ $r == "$2" ]] && return 0; done
  done
  return 1
}
list_jobs() {
  local net rate dataset
  for net in "${networks[@]}"; do
    for rate in "${rates[@]}"; do
      default_cell "$net" "$rate" && continue
      echo "measured $net $rate"
    done
  done
  for net in "${round_networks[@]}"; do
    for rate in "${round_lengths[@]}"; do echo "rounds $net $rate"; done
  done
  for dataset in "${accuracy_datasets[@]}"; do
    for net in "${accuracy_networks[@]}"; do echo "accuracy $dataset $net"; done
  done
  printf 'heterogeneity %s\n' "${heterogeneity_experiments[@]}"
  adasplit_runs | awk '{ print "adasplit " $1 }'
}

[[ $mode == list ]] && { list_jobs; exit 0; }
[[ -x $cmlbed ]] || { echo "reproduction.sh: no cmlbed binary at $cmlbed (build it, or set CMLBED)" >&2; exit 2; }
mkdir -p "$results"/{profiles,simulated,measured,rounds-simulated,rounds-measured,dp,heterogeneity,accuracy,adasplit}
case $mode in
  job)
    read -ra words <<<"$job"
    case ${words[0]:-} in
      # Profile first unless done or tried (a failed profile is recorded and not retried
      # here: the cell is then measured at its config's fixed split).
      measured) [[ -s $(profile_of "${words[1]}") || -s $(profile_of "${words[1]}").run.json ]] ||
                  { networks=("${words[1]}"); run_profiles; }
                run_measured_cell "${words[1]}" "${words[2]}" ;;
      rounds) [[ -s $(profile_of "${words[1]}") ]] || { networks=("${words[1]}"); run_profiles; }
              run_rounds_one "${words[1]}" "${words[2]}" ;;
      accuracy) run_accuracy_one "${words[1]}" "${words[2]}" ;;
      heterogeneity) [[ -f configs/${words[1]:-}.ini ]] ||
                       { echo "reproduction.sh: --job '$job': no configs/${words[1]:-}.ini" >&2; exit 2; }
                     run_heterogeneity_one "${words[1]}" ;;
      adasplit)
        line=$(adasplit_runs | awk -v name="${words[1]:-}" '$1 == name')
        [[ -n $line ]] || { echo "reproduction.sh: --job '$job': no such AdaSplit-comparison run (scripts/studies/adasplit-comparison.sh --list)" >&2; exit 2; }
        run_adasplit_one "$line" ;;
      *) echo "reproduction.sh: --job '$job': expected 'measured NET RATE', 'rounds NET LENGTH', 'accuracy DATASET NET', 'heterogeneity EXPERIMENT' or 'adasplit NAME'" >&2; exit 2 ;;
    esac
    exit $((failures > 0)) ;;
esac

main() {
  local t_start
  t_start=$(date +%s)
  wants profiles && run_profiles
  wants simulate && run_simulate
  wants measured && run_measured
  wants rounds && run_rounds
  wants dp && run_dp
  wants heterogeneity && run_heterogeneity
  wants accuracy && run_accuracy
  wants adasplit && run_adasplit
  if wants report; then run_report || failures=$((failures + 1)); fi
  echo "reproduction.sh: done in $(( $(date +%s) - t_start )) s, $failures failure(s)$(wants report && echo "; report: $doc")"
  return $((failures > 0))
}
# One line, so that bash has read all of this file before any run starts: editing the
# script while a long run of it goes on cannot change what that run executes next.
main; exit $?
