#!/usr/bin/env bash
# Start-up and memory at scale on one machine. For each rank count N (default 9 33 65
# 129), once each (they are big; no repeats):
#  1. the baseline: mpirun -np N build/cmlbed-bench-idle-rank (load, MPI, LibTorch; no
#     work), resident memory and start-up of a rank that does nothing;
#  2. a short run: configs/scale/16-devices.ini with N-1 devices, 1 round of 2
#     iterations: each rank's start-up to round 1 by phase (wall and CPU seconds) and its
#     resident memory (/process in the results file), mpirun's wall time, and the
#     machine's memory in use during the run (MemAvailable from /proc/meminfo, sampled
#     every 0.2 s: its lowest point below its level before the run; other users of the
#     machine move it too; the ranks' Pss, which they record, does not), and how many
#     cores the rest of the machine kept busy meanwhile (wall times stretch with it; CPU
#     seconds per rank much less).
# Before each N it waits (up to 10 minutes) for N x 100 MiB + 1 GiB of available memory.
# Prints medians over ranks; writes results/bench-startup.json (the per-N files stay in
# results/bench-startup/). Oversubscribed: set nothing, mpi-env.sh allows it.
# usage: scripts/bench/bench-startup.sh [N ...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/scripts/mpi-env.sh"
cd "$root"
[[ -x build/cmlbed && -x build/cmlbed-bench-idle-rank ]] ||
  { echo "build first: cmake --build build --target cmlbed cmlbed-bench-idle-rank" >&2; exit 2; }
ranks=("$@")
[[ ${#ranks[@]} -gt 0 ]] || ranks=(9 33 65 129)
out=results/bench-startup
mkdir -p "$out"

available_kib() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }
# CPU time the whole machine spent busy (not idle, not waiting for I/O), in clock ticks.
busy_jiffies() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
# Sets $cpu_s to the CPU seconds (user + system) of this shell's finished children
# (mpirun and its ranks). `times` must run in this shell, not in a $(...) subshell.
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
children_cpu_s() {
  times >"$times_file"
  cpu_s=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; ++i) { split($i, t, /[ms]/); total += t[1] * 60 + t[2] }
    print total }' "$times_file")
}

wait_for_memory() {  # wait_for_memory KIB
  local needed=$1 waited=0
  while (($(available_kib) < needed)); do
    if ((waited >= 600)); then
      echo "bench-startup: only $(($(available_kib) / 1024)) MiB available, $((needed / 1024)) MiB needed; try later" >&2
      exit 1
    fi
    echo "bench-startup: waiting for $((needed / 1024)) MiB of available memory ($(($(available_kib) / 1024)) MiB now)"
    sleep 30
    waited=$((waited + 30))
  done
}

for n in "${ranks[@]}"; do
  wait_for_memory $((n * 100 * 1024 + 1024 * 1024))
  echo "== $n ranks: idle baseline"
  mpirun -np "$n" build/cmlbed-bench-idle-rank --json "$out/idle-$n.json"

  echo "== $n ranks: 1 round of 2 iterations (configs/scale/16-devices.ini, $((n - 1)) devices)"
  before=$(available_kib)
  load=$(cut -d' ' -f1 /proc/loadavg)
  lowest_file=$(mktemp)
  (
    lowest=$before
    while true; do
      now=$(available_kib)
      ((now < lowest)) && lowest=$now && echo "$lowest" >"$lowest_file"
      sleep 0.2
    done
  ) &
  sampler=$!
  busy_before=$(busy_jiffies)
  children_cpu_s
  ours_before=$cpu_s
  start=$(date +%s.%N)
  status=0
  mpirun -np "$n" build/cmlbed run --config configs/scale/16-devices.ini --experiment.rounds=1 \
    --train.local_iterations=2 --output.file="$out/run-$n.h5" --output.overwrite=true \
    --output.progress=false >"$out/run-$n.log" 2>&1 || status=$?
  end=$(date +%s.%N)
  busy_after=$(busy_jiffies)
  children_cpu_s
  ours_after=$cpu_s
  # Cores the rest of the machine kept busy during the run: all busy CPU time less ours.
  others=$(awk -v b0="$busy_before" -v b1="$busy_after" -v o0="$ours_before" -v o1="$ours_after" \
    -v t0="$start" -v t1="$end" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { c = ((b1 - b0) / hz - (o1 - o0)) / (t1 - t0); printf "%.2f", c < 0 ? 0 : c }')
  kill "$sampler" && wait "$sampler" 2>/dev/null || true
  lowest=$(cat "$lowest_file" 2>/dev/null || echo "$before")
  rm -f "$lowest_file"
  if ((status != 0)); then
    echo "bench-startup: the $n-rank run failed (status $status); see $out/run-$n.log" >&2
    tail -5 "$out/run-$n.log" >&2
    exit 1
  fi
  printf '{"ranks": %d, "mpirun_wall_s": %s, "available_before_kib": %d, "available_lowest_kib": %d, "loadavg_before": %s, "cpu_s": %s, "others_busy_cores": %s}\n' \
    "$n" "$(awk "BEGIN {print $end - $start}")" "$before" "$lowest" "$load" \
    "$(awk "BEGIN {print $ours_after - $ours_before}")" "$others" >"$out/run-$n.json"
done

/usr/bin/python3 scripts/bench/bench-startup-summary.py "$out" "${ranks[@]}" --json results/bench-startup.json
