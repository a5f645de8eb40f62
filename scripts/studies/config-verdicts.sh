#!/usr/bin/env bash
# Runs configs on this host for a few rounds and tells, for each, whether the emulation
# held: the verdict cmlbed writes (docs/explanation/fidelity.md) with the figures behind
# it. A verdict needs a few mini-batches per round, not a config's whole round: each run
# trains at most ITERATIONS mini-batches per round (train.local_iterations, default 4),
# so that the heavy networks fit. Writes results/config-verdicts/<name>.h5,
# results/config-verdicts.json and a Markdown table results/config-verdicts.md (printed).
# Usage: scripts/studies/config-verdicts.sh [--rounds R] [--iterations N] [--timeout S] [CONFIG.ini ...]
#   default: every configs/**/*.ini, 2 rounds each, at most 600 s each; each runs with
#   the rank count of its "# ranks: N" header.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
source scripts/tools/ini-value.sh
source scripts/mpi-env.sh
rounds=2 iterations=4 timeout=600 configs=()
while (($# > 0)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "config-verdicts: unknown option $1" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
  esac
done
((${#configs[@]} > 0)) || mapfile -t configs < <(find configs -name '*.ini' | sort)
source scripts/tools/h5py-python.sh
h5py_python config-verdicts
test -x build/cmlbed || { echo "config-verdicts: build/cmlbed is missing: run scripts/setup.sh" >&2; exit 1; }
out=results/config-verdicts
mkdir -p "$out"
files=()
for config in "${configs[@]}"; do
  ranks=$(config_ranks "$config")
  [[ -n $ranks ]] || { echo "config-verdicts: $config has no '# ranks: N' header; skipped" >&2; continue; }
  name=$(echo "${config%.ini}" | sed 's|^configs/||; s|/|-|g')
  own=$(ini_value "$config" train local_iterations)
  cap=()
  [[ -z $own || $own -gt $iterations ]] && cap=(--train.local_iterations="$iterations")
  echo "config-verdicts: $config ($ranks ranks, $rounds rounds${cap:+, $iterations mini-batches each})" >&2
  if timeout "$timeout" mpirun -np "$ranks" build/cmlbed run --config "$config" --experiment.rounds="$rounds" "${cap[@]}" \
       --output.file="$out/$name.h5" --output.overwrite=true >"$out/$name.out" 2>&1; then
    files+=("$config=$out/$name.h5")
  else
    echo "config-verdicts: $config failed or timed out (log: $out/$name.out)" >&2
    files+=("$config=")
  fi
done
"$python" - "$out" "${files[@]}" <<'PY'
import json, sys
import h5py
import numpy as np

out, rows = sys.argv[1], []
for item in sys.argv[2:]:
    config, path = item.split("=", 1)
    if not path:
        rows.append({"config": config, "emulation": "failed"})
        continue
    with h5py.File(path, "r") as f:
        r = f["rounds"][:]
        wall = float(r["wall_s"].sum())
        paced, overrun = r["paced_s"].sum(axis=0), r["paced_overrun_s"].sum(axis=0)
        held = paced > 0
        share = np.where(held, overrun / np.where(held, paced, 1), np.nan)
        runqueue = r["runqueue_s"].sum(axis=0) / wall
        rows.append({
            "config": config,
            "method": str(f.attrs["method"]),
            "placement": str(f.attrs.get("emulation_placement", "")),
            "emulation": str(f.attrs.get("emulation", "unknown")),
            "reasons": str(f.attrs.get("emulation_reasons", "")),
            "round_s": float(np.mean(r["wall_s"])),
            "worst_overrun_share": float(np.nanmax(share)) if held.any() else None,
            "server_runqueue_share": float(runqueue[0]),
            "worst_unheld_runqueue_share": float(np.max(np.where(held, 0, runqueue))),
        })
json.dump(rows, open(out + ".json", "w"), indent=1)

def pct(v):
    return "-" if v is None else "%.2f%%" % (100 * v)

lines = ["| config | method | ranks on cores | round s | worst overrun / held | server run-queue / wall "
         "| worst unheld rank's run-queue / wall | verdict |",
         "|---|---|---|---|---|---|---|---|"]
for row in rows:
    if row["emulation"] == "failed":
        lines.append("| %s | | | | | | | failed |" % row["config"])
        continue
    lines.append("| %s | %s | %s | %.2f | %s | %s | %s | %s |" % (
        row["config"], row["method"], row["placement"].split(": ", 1)[-1], row["round_s"],
        pct(row["worst_overrun_share"]), pct(row["server_runqueue_share"]),
        pct(row["worst_unheld_runqueue_share"]), row["emulation"]))
text = "\n".join(lines) + "\n"
open(out + ".md", "w").write(text)
print(text)
PY
