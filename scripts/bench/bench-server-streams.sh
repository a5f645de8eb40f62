#!/usr/bin/env bash
# train.server_streams (issue 11, §4): the round time of pipar on configs/scale/16-devices.ini
# (17 ranks, oversubscribed) for k = 1, 2, 4 server streams, and k = 1 with
# train.server_threads = 2 for comparison (threads are not the lever: one stream still
# serves one micro-batch at a time). Runs the variants in turn, REPEATS times (A B C D A B
# C D ...), and prints each variant's median over the repeats of its mean round wall
# (rounds 2.., the first starts with full token buckets), its server idle, and the
# simulator's prediction for it (one `cmlbed profile` on 2 ranks first). Writes JSON.
#
#   scripts/bench/bench-server-streams.sh [OUT.json] [-- OVERRIDES...]      (REPEATS=3)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=results/bench-server-streams.json
if [[ $# -gt 0 && $1 != -- ]]; then out=$1; shift; fi
if [[ ${1:-} == -- ]]; then shift; fi
cd "$root"
source scripts/mpi-env.sh
source scripts/dev/tool-checks.sh
cmlbed_binary bench-server-streams.sh CMLBED_BIN
h5py_python bench-server-streams.sh
config=configs/scale/16-devices.ini
ranks=17
repeats=${REPEATS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
settings=(--config "$config" --experiment.rounds=3 --output.progress=false --output.overwrite=true "$@")
variants=("streams1:--train.server_streams=1" "streams2:--train.server_streams=2"
          "streams4:--train.server_streams=4" "threads2:--train.server_threads=2")
echo "== profile (mpirun -np 2 $cmlbed profile)" >&2
mpirun --oversubscribe -np 2 "$cmlbed" profile "${settings[@]}" -o "$work/profile.json" >"$work/profile.out" 2>&1 ||
  { cat "$work/profile.out"; exit 1; }
for variant in "${variants[@]}"; do
  name=${variant%%:*}
  "$cmlbed" simulate "${settings[@]}" "${variant#*:}" --devices $((ranks - 1)) --profile "$work/profile.json" \
    --output.file="$work/sim-$name.h5" >"$work/sim-$name.out" 2>&1 || { cat "$work/sim-$name.out"; exit 1; }
done
for ((r = 1; r <= repeats; r++)); do
  for variant in "${variants[@]}"; do
    name=${variant%%:*}
    echo "== repeat $r/$repeats: $name (mpirun -np $ranks, ${variant#*:})" >&2
    mpirun --oversubscribe -np $ranks "$cmlbed" run "${settings[@]}" "${variant#*:}" \
      --output.file="$work/run-$name-$r.h5" >"$work/run-$name-$r.out" 2>&1 || { cat "$work/run-$name-$r.out"; exit 1; }
  done
done
mkdir -p "$(dirname "$out")"
"$python" - "$work" "$out" "$(uptime)" "$(nproc)" "$repeats" "${variants[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, "scripts")
from cmlbed_report.results import Run
work, out, load, cores, repeats, variants = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:]

def rounds(path):
    run = Run(path)
    return run.steady_round_s(), run.steady_server_idle()

rows, base = [], None
print("variant    option                        round s (median)  runs            server idle  simulated s")
for variant in variants:
    name, option = variant.split(":", 1)
    runs = [rounds(f"{work}/run-{name}-{r}.h5") for r in range(1, repeats + 1)]
    walls = [w for w, _ in runs]
    median = statistics.median(walls)
    idle = statistics.median(i for _, i in runs)
    sim, sim_idle = rounds(f"{work}/sim-{name}.h5")
    base = base or median
    rows.append({"variant": name, "option": option, "round_s_median": median, "round_s_runs": walls,
                 "server_idle_median": idle, "speedup_vs_one_stream": base / median,
                 "simulated_round_s": sim, "simulated_server_idle": sim_idle})
    print(f"{name:<10} {option:<29} {median:8.3f} ({base / median:4.2f}x)  "
          f"{' '.join(f'{w:.2f}' for w in walls):<15} {idle:6.1%}      {sim:.3f}")
json.dump({"benchmark": "server-streams", "config": "configs/scale/16-devices.ini", "cores": int(cores),
           "load": load.strip(), "repeats": repeats, "rows": rows}, open(out, "w"), indent=1)
print(f"(JSON: {out}; {cores} cores; {load.strip()})")
PY
