#!/usr/bin/env bash
# What a checkpoint (output.checkpoint) costs: each CONFIG runs ROUNDS rounds with a
# checkpoint after every round; the results file's /checkpoints table holds what each
# took on rank 0 (every rank saving its state, gathered, written to <file>.ckpt.tmp,
# synced, renamed) and its bytes. Prints, per config, the median checkpoint seconds and
# bytes, the median round wall time and their ratio; the first checkpoint is a warm-up,
# left out of the medians. JSON: results/bench-checkpoint.json (or --json FILE).
# Default configs: the main job's (configs/quickstart/{fl,sfl,pipar}.ini, VGG-5). Each
# config runs with the rank count of its first line (# ranks: N).
# usage: scripts/bench/bench-checkpoint.sh [--rounds N] [--json FILE] [CONFIG ...] [-- OVERRIDES...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rounds=5 json=$root/results/bench-checkpoint.json
configs=() overrides=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --) shift; overrides=("$@"); break ;;
    *) configs+=("$1"); shift ;;
  esac
done
[[ ${#configs[@]} -gt 0 ]] || configs=(configs/quickstart/fl.ini configs/quickstart/sfl.ini configs/quickstart/pipar.ini)
source "$root/scripts/mpi-env.sh"
source "$root/scripts/tools/ini-value.sh"
cd "$root"
[[ -x build/cmlbed ]] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

files=()
for config in "${configs[@]}"; do
  ranks=$(config_ranks "$config")
  [[ -n $ranks ]] || { echo "$config: no '# ranks: N' first line" >&2; exit 2; }
  name=$(basename "$(dirname "$config")")-$(basename "$config" .ini)
  echo "== $config ($ranks ranks, $rounds rounds, a checkpoint after each)"
  mpirun -np "$ranks" build/cmlbed run --config "$config" --experiment.rounds="$rounds" \
    --output.checkpoint=1 --output.progress=false --output.overwrite=true \
    --output.file="$out/$name.h5" "${overrides[@]}" >/dev/null
  files+=("$out/$name.h5")
done

/usr/bin/python3 - "$json" "${files[@]}" <<'EOF'
import json, os, statistics, sys
import h5py
path, files = sys.argv[1], sys.argv[2:]
rows = []
print(f"{'run':<22}{'ranks':>6}{'ckpt MB':>9}{'ckpt s':>9}{'round s':>9}{'ckpt/round':>11}")
for file in files:
    with h5py.File(file, "r") as f:
        checkpoints = f["checkpoints"][()]
        walls = f["rounds"]["wall_s"]
        kept = checkpoints[1:] if len(checkpoints) >= 3 else checkpoints  # first: warm-up
        seconds = statistics.median(kept["seconds"])
        megabytes = statistics.median(kept["bytes"]) / 1e6
        wall = statistics.median(walls)
        name = os.path.basename(file)[:-3]
        ranks = int(f.attrs["mpi_size"])
    rows.append({"run": name, "ranks": ranks, "checkpoints": len(checkpoints), "median_seconds": float(seconds),
                 "median_bytes": float(statistics.median(kept["bytes"])), "median_round_wall_s": float(wall),
                 "ratio": float(seconds / wall), "seconds": [float(s) for s in checkpoints["seconds"]]})
    print(f"{name:<22}{ranks:>6}{megabytes:>9.2f}{seconds:>9.3f}{wall:>9.3f}{100 * seconds / wall:>10.1f}%")
os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
with open(path, "w") as out:
    json.dump({"benchmark": "checkpoint", "runs": rows}, out, indent=1)
print(f"json: {path}")
EOF
