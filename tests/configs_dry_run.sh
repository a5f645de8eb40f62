#!/usr/bin/env bash
# Every experiment config under configs/ must stay valid: each is checked with
# `cmlbed run --config F --dry-run --ranks N`, N read from the file's own header line
# `# ranks: N` (the rank count the config is written for: 1 server + N-1 devices).
# The header is required, so a new config without one fails here instead of being
# skipped; a `mpirun -np M` in its comments must say the same N. The plan must show N-1
# devices and the method the file names. One config is also checked under a real
# `mpirun -np 4 ... --dry-run`, whose plan must equal the --ranks plan.
# A config written ahead of its method (configs/adasplit/adasplit.ini before
# experiment.method = adasplit is built) is skipped, not failed, if and only if its dry
# run fails AND this binary, asked to really run that method, refuses it with "is not
# available in this build": once the method lands, the config is checked like any other.
# Runs from SOURCE_DIR, as the configs' relative paths (rate traces) expect.
# Usage: configs_dry_run.sh CMLBED SOURCE_DIR [MPIEXEC]
set -u
cmlbed=$1 source_dir=$2 mpiexec=${3:-mpirun}
[[ $cmlbed == */* ]] && cmlbed=$(cd "$(dirname "$cmlbed")" && pwd)/$(basename "$cmlbed")
refusal_probe=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/dev/method-refusal.sh
cd "$source_dir" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 checks=0 skipped=0
declare -A refusal=()

fail() {
  failures=$((failures + 1))
  echo "FAIL: $1: $2"
  [[ -s "$work/err" ]] && sed 's/^/  | /' "$work/err" | head -10
  return 0
}

source "$(dirname "$refusal_probe")/../tools/ini-value.sh"

# check_plan CONFIG DEVICES METHOD: the dry run's plan in $work/out shows them.
check_plan() {
  local config=$1 devices=$2 method=$3
  grep -q "^plan: $method, .*server = rank 0, $devices device(s) = ranks 1\.\.$devices\$" "$work/out" ||
    { fail "$config" "plan does not show method $method with $devices device(s): $(head -1 "$work/out")"; return; }
  # One row per device in the table between its header and the blank line after it.
  local rows
  rows=$(awk '/^device +split/ { table = 1; next } table && /^$/ { exit } table { n++ } END { print n + 0 }' "$work/out")
  [[ $rows -eq $devices ]] || fail "$config" "plan table has $rows device row(s), want $devices"
}

# method_refusal METHOD: cmlbed's error line if this build refuses METHOD in a real run,
# else "" (scripts/dev/method-refusal.sh; asked only when a config of METHOD failed its dry
# run, once per method).
method_refusal() {
  local method=$1
  if [[ -z ${refusal[$method]+set} ]]; then
    refusal[$method]=$(bash "$refusal_probe" "$cmlbed" "$method" "$mpiexec")
  fi
  printf '%s' "${refusal[$method]}"
}

mapfile -t configs < <(find configs -name '*.ini' | sort)
[[ ${#configs[@]} -gt 0 ]] || { echo "FAIL: no configs/**/*.ini under $source_dir"; exit 1; }

for config in "${configs[@]}"; do
  checks=$((checks + 1))
  : >"$work/err"
  mapfile -t headers < <(grep -E '^#[[:space:]]*ranks:' "$config")
  if [[ ${#headers[@]} -ne 1 ]] || ! [[ ${headers[0]} =~ ^#\ ranks:\ ([0-9]+)[[:space:]]*$ ]]; then
    fail "$config" "needs exactly one header line '# ranks: N' (N = 1 server + devices), got ${#headers[@]}: ${headers[*]:-none}"
    continue
  fi
  ranks=${BASH_REMATCH[1]}
  if [[ $ranks -lt 2 ]]; then fail "$config" "'# ranks: $ranks': a run needs at least 2 ranks"; continue; fi
  bad_np=$(grep -oE 'mpirun -np [0-9]+' "$config" | grep -v -x "mpirun -np $ranks" | head -1)
  if [[ -n $bad_np ]]; then fail "$config" "its comment says '$bad_np' but its header '# ranks: $ranks'"; continue; fi
  method=$(ini_value "$config" experiment method)
  if [[ -z $method ]]; then fail "$config" "names no [experiment] method (experiment configs should say what they run)"; continue; fi

  # plan.check_pacing = off: the configs' validity is checked here, not this host's pace
  # (a profile of each network would take minutes; emulation_verdict_job checks the check).
  timeout 120 "$cmlbed" run --config "$config" --dry-run --ranks "$ranks" --plan.check_pacing=off >"$work/out" 2>"$work/err"
  status=$?
  if [[ $status -ne 0 ]]; then
    refused=$(method_refusal "$method")
    if [[ -n $refused ]]; then
      skipped=$((skipped + 1)) checks=$((checks - 1))
      echo "skip: $config: written for method $method, which this cmlbed does not build yet"
      echo "  | $refused"
      echo "  | (its dry run: $(head -1 "$work/err"))"
      continue
    fi
    fail "$config" "dry run with --ranks $ranks exited with status $status"; continue
  fi
  before=$failures
  check_plan "$config" $((ranks - 1)) "$method"
  [[ $failures -eq $before ]] && echo "ok: $config ($method, $ranks ranks)"
done

# The same check under mpirun: every rank validates; the plan equals the --ranks one.
checks=$((checks + 1))
config=configs/quickstart/pipar.ini
"$cmlbed" run --config "$config" --dry-run --ranks 4 --plan.check_pacing=off >"$work/expected" 2>"$work/err"
timeout 120 "$mpiexec" --oversubscribe -np 4 "$cmlbed" run --config "$config" --dry-run --plan.check_pacing=off \
  >"$work/out" 2>"$work/err"
status=$?
if [[ $status -ne 0 ]]; then
  fail "mpirun -np 4 $config" "dry run exited with status $status"
elif ! diff -q "$work/expected" "$work/out" >/dev/null; then
  fail "mpirun -np 4 $config" "plan differs from the --ranks 4 plan:"
  diff "$work/expected" "$work/out" | head -10
else
  before=$failures
  check_plan "mpirun -np 4 $config" 3 pipar
  [[ $failures -eq $before ]] && echo "ok: mpirun -np 4 $config"
fi

echo "$((checks - failures)) passed, $failures failed, $skipped skipped (method not built yet)"
[[ $failures -eq 0 ]]
