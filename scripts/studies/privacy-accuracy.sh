#!/usr/bin/env bash
# What differential privacy costs in accuracy on the main job's settings, fl (DP-FedAvg)
# and pipar (noise on each sample's uploaded activation; sfl trains the same weights),
# in two phases (docs/privacy-accuracy.md, docs/explanation/privacy.md):
#   1. clipping alone: DP off, and sigma 0 at each clip of --fl-clips / --split-clips; per
#      method the smallest clip whose mean accuracy is within 2 points of DP off is chosen
#      (none is: the best, and the page says the goal is not met);
#   2. noise: each sigma of --sigmas at the chosen clip.
# Each cell runs --repeats seeds of --rounds rounds; the page gives per cell the final
# accuracy (mean ± 95% interval) beside the trivial rate, its difference to DP off
# (Welch), whether it settled (the last 5 rounds moved by less than 2 points), epsilon
# under add-remove and replace-one, the accuracy-against-epsilon picture
# (docs/images/privacy-accuracy.png) and per method and relation the smallest epsilon at
# which accuracy stays within 5 points of DP off (or "none up to epsilon = 10").
#
#   bash scripts/studies/privacy-accuracy.sh                  # the study: writes docs/privacy-accuracy.md
#   bash scripts/studies/privacy-accuracy.sh --report-only    # the page again, from the kept digests
#   bash scripts/studies/privacy-accuracy.sh --rounds 5 --repeats 2 --fl-clips 30 --split-clips 1 \
#     --sigmas "0.1 1" --results results/dp-try --doc /tmp/dp.md
#
# Options: --rounds R (default 25; a cell of 3 seeds of 25 rounds took 2.7 minutes on a
# 2-core host: the default study, 15 cells, 41 minutes), --repeats N (seeds per cell,
# default 3), --fl-clips "C ..." (DP-FedAvg's update clip, default "3 10 30"),
# --split-clips "C ..." (the split methods' activation clip, default "1 5"), --sigmas
# "S ..." (noise multipliers > 0, at the chosen clip, default "0.01 0.1 1 3"), --methods
# "fl pipar" (fl, sfl, sfl2, pipar: those with a configs/quickstart/METHOD.ini), --results
# DIR (default results/privacy-accuracy; runs in DIR/runs, progress in DIR/study.log),
# --doc FILE (default docs/privacy-accuracy.md), --image FILE (default
# docs/images/privacy-accuracy.png with the default page, else the page's name with
# .png), --archive DIR|none (where each run's digest and provenance are kept, so that
# --report-only works without the .h5 files; default docs/reproduction-data/privacy-accuracy
# with the default page, else none), --allow-mixed-binaries (write the page, flagged, from
# runs of several binaries; else refused), --report-only, and after -- extra overrides
# for every run.
# Every run uses configs/quickstart/METHOD.ini with its devices at 100 GFLOP/s over 1
# gbit links (faster runs; accuracy depends on neither). A study with another --rounds
# than the kept digests: the page refuses the mix; remove the stale digests first.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
invocation="bash scripts/studies/privacy-accuracy.sh${*:+ $*}"
rounds=25 repeats=3 fl_clips="3 10 30" split_clips="1 5" sigmas="0.01 0.1 1 3"
methods="fl pipar" results=results/privacy-accuracy doc=docs/privacy-accuracy.md image="" archive=""
report_only=false mixed=()
fail() { echo "privacy-accuracy.sh: $*" >&2; exit 2; }
needs_value() { [[ $# -ge 2 && -n $2 ]] || fail "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) needs_value "$@"; rounds=$2; shift 2 ;;
    --repeats) needs_value "$@"; repeats=$2; shift 2 ;;
    --fl-clips) needs_value "$@"; fl_clips=$2; shift 2 ;;
    --split-clips) needs_value "$@"; split_clips=$2; shift 2 ;;
    --sigmas) needs_value "$@"; sigmas=$2; shift 2 ;;
    --methods) needs_value "$@"; methods=$2; shift 2 ;;
    --results) needs_value "$@"; results=$2; shift 2 ;;
    --doc) needs_value "$@"; doc=$2; shift 2 ;;
    --image) needs_value "$@"; image=$2; shift 2 ;;
    --archive) needs_value "$@"; archive=$2; shift 2 ;;
    --allow-mixed-binaries) mixed=(--allow-mixed-binaries); shift ;;
    --report-only) report_only=true; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument '$1' (--help lists them)" ;;
  esac
done
extra=("$@")
python=/usr/bin/python3
positive_integer() { [[ $2 =~ ^[1-9][0-9]*$ ]] || fail "$1 '$2' is not a positive integer"; }
positive_numbers() {
  local word
  for word in $2; do
    if ! [[ $word =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] ||
       ! awk -v x="$word" 'BEGIN { exit !(x > 0) }'; then
      fail "$1: '$word' is not a number above 0${3:+ ($3)}"
    fi
  done
}
positive_integer --rounds "$rounds"
positive_integer --repeats "$repeats"
positive_numbers --fl-clips "$fl_clips"
positive_numbers --split-clips "$split_clips"
positive_numbers --sigmas "$sigmas" "sigma 0, clipping alone, is the clip phase's"
for method in $methods; do
  [[ $method =~ ^(fl|sl|sfl|sfl2|pipar)$ && -f configs/quickstart/$method.ini ]] ||
    fail "--methods: '$method' is not fl or a split method (sl, sfl, sfl2, pipar) with a configs/quickstart/$method.ini"
done
[[ -n ${methods// /} ]] || fail "--methods is empty"
((rounds >= 5)) || echo "privacy-accuracy.sh: note: with $rounds round(s) no cell can be judged settled (that takes 5)" >&2
if [[ $doc == docs/privacy-accuracy.md ]]; then
  image=${image:-docs/images/privacy-accuracy.png} archive=${archive:-docs/reproduction-data/privacy-accuracy}
else
  image=${image:-${doc%.md}.png} archive=${archive:-none}
fi
where=(--results "$results" --archive "$archive")

clips_of() { if [[ $1 == fl ]]; then echo "$fl_clips"; else echo "$split_clips"; fi; }
log() { echo "privacy-accuracy: $(date -u +%H:%M:%S) $*" | tee -a "$results/study.log"; }

# run_cell METHOD CLIP|off SIGMA: one cell, $repeats seeds into $results/runs/NAME.seedS.h5
# (NAME: METHOD-off or METHOD-cCLIP-sSIGMA), each with its provenance FILE.run.json.
run_cell() {
  local method=$1 clip=$2 sigma=$3 name label privacy=() start t0 status=0 files=() f
  if [[ $clip == off ]]; then
    name=$method-off label="$method, DP off"
  else
    name=$method-c$clip-s$sigma label="$method, clip $clip, sigma $sigma"
    privacy=(--privacy.mechanism=gaussian --privacy.clip="$clip" --privacy.noise_multiplier="$sigma")
  fi
  local command=(mpirun --oversubscribe -np 4 build/cmlbed run --config "configs/quickstart/$method.ini"
    --devices.flops=100GFLOP/s --network.uplink_rate=1gbit --network.downlink_rate=1gbit
    --output.checkpoint=0 --output.overwrite=true --output.progress=false --experiment.rounds="$rounds"
    "${privacy[@]}" "${extra[@]}" --repeats "$repeats" --output.file="$results/runs/$name.h5")
  local left=""
  ((cell > 0)) && left=", about $(( (SECONDS * (cells - cell) / cell + 59) / 60 )) min left"
  cell=$((cell + 1))
  log "cell $cell of $cells: $label, $repeats seed(s) of $rounds rounds ($((SECONDS / 60)) min in$left)"
  rm -f "$results/runs/$name".h5 "$results/runs/$name".seed*.h5 "$results/runs/$name".*run.json
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ) t0=$(date +%s.%N)
  "${command[@]}" >"$results/runs/$name.log" 2>&1 || status=$?
  for f in "$results/runs/$name".h5 "$results/runs/$name".seed*.h5; do [[ -e $f ]] && files+=(--file "$f"); done
  ((${#files[@]} == 0)) ||
    "$python" scripts/studies/privacy_accuracy.py provenance --start "$start" --seconds "$(echo "$(date +%s.%N) - $t0" | bc)" \
      --status "$status" --cmlbed build/cmlbed --study "$invocation" "${files[@]}" -- "${command[@]}"
  if ((status != 0)); then
    tail -20 "$results/runs/$name.log" >&2
    echo "privacy-accuracy.sh: $label failed (status $status; log: $results/runs/$name.log)" >&2
    exit 1
  fi
}

if [[ $report_only == false ]]; then
  [[ -x build/cmlbed ]] || fail "no build/cmlbed; run bash scripts/setup.sh first"
  source scripts/mpi-env.sh
  shopt -s nullglob
  mkdir -p "$results/runs"
  cell=0 cells=0 SECONDS=0
  for method in $methods; do cells=$((cells + 1 + $(wc -w <<<"$(clips_of "$method")") + $(wc -w <<<"$sigmas"))); done
  log "$invocation: $cells cells, $repeats seed(s) of $rounds rounds each, on $(build/cmlbed --version | head -1)"
  for method in $methods; do
    run_cell "$method" off -
    for clip in $(clips_of "$method"); do run_cell "$method" "$clip" 0; done
  done
  declare -A chosen
  for method in $methods; do
    chosen[$method]=$("$python" scripts/studies/privacy_accuracy.py choose-clip "${where[@]}" --method "$method" \
      --rounds "$rounds" 2> >(tee -a "$results/study.log" >&2)) || fail "no clip chosen for $method"
  done
  for sigma in $sigmas; do
    for method in $methods; do run_cell "$method" "${chosen[$method]}" "$sigma"; done
  done
  log "all $cells cells done"
fi
"$python" scripts/studies/privacy_accuracy.py report "${where[@]}" --doc "$doc" --image "$image" \
  --command "$invocation" "${mixed[@]}"
