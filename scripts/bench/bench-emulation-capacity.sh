#!/usr/bin/env bash
# How many devices, at which speed, this host can emulate faithfully: PiPar (the
# quickstart's schedule, 4 micro-batches, links 10 mbit up / 25 mbit down) with DEVICES
# devices (default 3 7 15 31 63) paced at RATES (default 0.5 2 8 GFLOP/s), for two
# models: VGG-5 split 4 (batch norm on the device) and LeNet split 2; 2 rounds of 2
# mini-batches each, Fashion-MNIST. Every cell is one real run under mpirun (devices + 1
# ranks on this host's cores); its verdict and the figures behind it (worst overrun /
# held, the server's run-queue wait / wall; docs/explanation/fidelity.md) go to the JSON
# (default results/emulation-capacity.json) and a Markdown table beside it (.md). Before
# each run, the same cell's `--dry-run` pacing check (the simulator's view of this host,
# plan.check_pacing) is recorded too: its predicted overrun against the measured verdict.
# Usage: scripts/bench/bench-emulation-capacity.sh [OUT.json]
#   DEVICES="3 7" RATES="2" MODELS="vgg5:4" narrow the grid; CELL_TIMEOUT (s, default 900).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
source scripts/mpi-env.sh
out=${1:-results/emulation-capacity.json}
devices_list=${DEVICES:-3 7 15 31 63}
rates=${RATES:-0.5 2 8}
models=${MODELS:-vgg5:4 lenet:2}
source scripts/tools/h5py-python.sh
h5py_python bench-emulation-capacity
test -x build/cmlbed || { echo "bench-emulation-capacity: build/cmlbed is missing: run scripts/setup.sh" >&2; exit 1; }
work=results/emulation-capacity
mkdir -p "$work" "$(dirname "$out")"
cells=()
for model in $models; do
  name=${model%%:*} split=${model##*:}
  for devices in $devices_list; do
    for rate in $rates; do
      file="$work/$name-d$devices-r$rate.h5"
      echo "bench-emulation-capacity: $name, $devices devices at $rate GFLOP/s" >&2
      cell=(--config configs/quickstart/pipar.ini --model.name="$name" --model.split="$split"
            --devices.flops="${rate}GFLOP/s" --experiment.rounds=2 --train.local_iterations=2)
      predicted=$(build/cmlbed run "${cell[@]}" --dry-run --ranks $((devices + 1)) 2>&1 |
                  sed -n 's/^emulation check: this host \(keeps\|cannot keep\).*predicted overrun \([^ ]*\) of.*/\1 \2/p')
      if timeout "${CELL_TIMEOUT:-900}" mpirun -np $((devices + 1)) build/cmlbed run "${cell[@]}" \
           --output.progress=false --output.file="$file" --output.overwrite=true >"${file%.h5}.out" 2>&1; then
        cells+=("$name:$split:$devices:$rate:${predicted// /=}:$file")
      else
        echo "bench-emulation-capacity: the cell failed or timed out (${file%.h5}.out)" >&2
        cells+=("$name:$split:$devices:$rate:${predicted// /=}:")
      fi
    done
  done
done
"$python" - "$out" "$(uname -n), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null)" "${cells[@]}" <<'PY'
import json, sys
import h5py
import numpy as np

out, provenance, rows = sys.argv[1], sys.argv[2], []
for cell in sys.argv[3:]:
    model, split, devices, rate, predicted, path = cell.split(":", 5)
    row = {"model": model, "split": int(split), "devices": int(devices), "gflops": float(rate),
           # The dry run's check: "keeps 0.043%" or "cannot keep 28%" ("" if none printed).
           "predicted": predicted.replace("=", " ")}
    if not path:
        row["emulation"] = "failed"
        rows.append(row)
        continue
    with h5py.File(path, "r") as f:
        r = f["rounds"][:]
        held = r["paced_s"].sum(axis=0)
        overrun = r["paced_overrun_s"].sum(axis=0)
        shares = overrun[1:] / np.where(held[1:] > 0, held[1:], np.nan)
        row.update(emulation=str(f.attrs["emulation"]), reasons=str(f.attrs["emulation_reasons"]),
                   placement=str(f.attrs["emulation_placement"]),
                   round_s=float(r["wall_s"].mean()),
                   worst_overrun_share=float(np.nanmax(shares)),
                   server_runqueue_share=float(r["runqueue_s"][:, 0].sum() / r["wall_s"].sum()))
    rows.append(row)
json.dump({"host": provenance, "cells": rows}, open(out, "w"), indent=1)
models = sorted({(r["model"], r["split"]) for r in rows}, key=lambda m: m[0] != "vgg5")
rates = sorted({r["gflops"] for r in rows})
lines = ["Host: %s. Cell: measured verdict (worst device overrun / held; server run-queue wait / "
         "wall; the check before the run: keeps the pace?, predicted overrun)." % provenance, ""]
for model, split in models:
    lines += ["%s, split %d:" % (model, split), "",
              "| devices | " + " | ".join("%g GFLOP/s" % g for g in rates) + " |",
              "|---|" + "---|" * len(rates)]
    for devices in sorted({r["devices"] for r in rows}):
        cells = []
        for g in rates:
            found = [r for r in rows if (r["model"], r["split"], r["devices"], r["gflops"]) == (model, split, devices, g)]
            if not found:
                cells.append("")
            elif found[0]["emulation"] == "failed":
                cells.append("failed")
            else:
                c = found[0]
                cells.append("%s (%.1f%%; %.1f%%; predicted %s)" % (
                    c["emulation"], 100 * c["worst_overrun_share"], 100 * c["server_runqueue_share"],
                    c["predicted"].replace("cannot keep", "no").replace("keeps", "yes") or "-"))
        lines.append("| %d | %s |" % (devices, " | ".join(cells)))
    lines.append("")
text = "\n".join(lines)
open(out[:-5] + ".md" if out.endswith(".json") else out + ".md", "w").write(text)
print(text)
PY
