#!/usr/bin/env python3
"""The AdaSplit comparison run until accuracy settles: per method (runs grouped by
cmlbed-report's rule, runs that differ only in experiment.seed), the accuracy after the
last round and averaged over the last 10 rounds (mean ± 95% interval over the seeds,
Student t), the accuracy after round 10 (what the 10-round table shows), how far the
accuracy moved over the last 5 rounds (largest minus smallest, in points, the worst
seed) and whether that is under 0.5 points, total traffic and client compute.

  /usr/bin/python3 scripts/studies/adasplit_settling.py results/adasplit-50/*.seed*.h5 [--markdown]

Accuracy is the results file's test_accuracy: with evaluation.scope = per-device, the
mean over the devices of each device's accuracy on the test samples of its own classes."""

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/: cmlbed_report
from cmlbed_report import stats  # noqa: E402
from cmlbed_report.c3 import cumulative_client_flops, cumulative_traffic  # noqa: E402
from cmlbed_report.results import load_runs  # noqa: E402
from cmlbed_report.summary import group_runs  # noqa: E402

SETTLED_POINTS = 0.5  # issue 38: settled when the accuracy moves less than this over 5 rounds
WINDOW = 5
TAIL = 10


def accuracies(run):
    values = run.rounds["test_accuracy"].astype(float)
    return values[~np.isnan(values)]


def group_row(group):
    runs = group.runs
    first = runs[0]
    curves = [accuracies(r) for r in runs]
    swings = [100 * float(c[-WINDOW:].max() - c[-WINDOW:].min()) for c in curves]
    client = [cumulative_client_flops(r) for r in runs]
    label = group.method + (" personalised" if first.option("train.personalised") == "true" else "")
    return {
        "label": label,
        "n": len(runs),
        "rounds": len(first.rounds),
        "final": stats.mean_ci([c[-1] for c in curves]),
        "tail": stats.mean_ci([float(c[-TAIL:].mean()) for c in curves]),
        "round10": stats.mean_ci([c[min(9, len(c) - 1)] for c in curves]),
        "swing": max(swings),
        "gb": float(np.mean([cumulative_traffic(r)[-1] for r in runs])) / 1e9,
        "tflops": (float(np.mean([c[-1] for c in client])) / 1e12 if all(c is not None for c in client)
                   else math.nan),
    }


def interval(ci):
    mean, half, _ = ci
    return "%.3f" % mean if math.isnan(half) else "%.3f ± %.3f" % (mean, half)


def table(rows):
    lines = ["| method | n | rounds | accuracy, last round | mean of last %d rounds | after round 10 "
             "| moved over last %d rounds | settled (< %.1f pt) | GB | client TFLOPs |" % (TAIL, WINDOW, SETTLED_POINTS),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %d | %d | %s | %s | %s | %.1f pt | %s | %.3f | %.3f |" % (
            r["label"], r["n"], r["rounds"], interval(r["final"]), interval(r["tail"]), interval(r["round10"]),
            r["swing"], "yes" if r["swing"] < SETTLED_POINTS else "no", r["gb"], r["tflops"]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    groups = group_runs(load_runs(args.files))
    order = ["fl", "sl", "sl personalised", "sfl", "sfl personalised", "pipar", "pipar personalised", "adasplit"]
    rows = sorted((group_row(g) for g in groups),
                  key=lambda r: order.index(r["label"]) if r["label"] in order else len(order))
    sys.stdout.write(table(rows))
    runs = [r for g in groups for r in g.runs]
    started = sorted(r.started_at for r in runs)
    binaries = sorted({str(r.attrs.get("git_revision", "unknown")) for r in runs})
    print("\n%d runs from %s to %s, cmlbed %s" % (len(runs), started[0], started[-1], ", ".join(binaries)))


if __name__ == "__main__":
    main()
