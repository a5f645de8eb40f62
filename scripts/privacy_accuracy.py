#!/usr/bin/env python3
"""The table of scripts/privacy-accuracy.sh: per method and noise multiplier, the final
test accuracy over the seeds (mean ± 95% interval, Student t), its difference to the
same method without DP (Welch's 95% interval), and the epsilon of the run's releases
under both adjacency relations (docs/explanation/privacy.md). Runs are grouped by cmlbed-report's
own rule (runs that differ only in experiment.seed)."""

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cmlbed_report import stats  # noqa: E402
from cmlbed_report import emulation  # noqa: E402
from cmlbed_report.results import load_runs  # noqa: E402
from cmlbed_report.summary import group_runs, run_numbers  # noqa: E402

CHANCE = 0.1  # Fashion-MNIST's 10 classes, evaluated on the global test set


def gaussian_epsilon(sigma, releases, delta, sensitivity):
    """The recorded figure's formula (src/train/privacy.cpp): Renyi DP of `releases`
    Gaussian releases of L2 sensitivity `sensitivity` clips, minimised over alpha."""
    if sigma <= 0:
        return math.inf
    r = releases * sensitivity ** 2 / (2 * sigma ** 2)
    return r + 2 * math.sqrt(r * math.log(1 / delta))


def welch(a, b):
    """mean(a) - mean(b) with Welch's 95% interval (Welch-Satterthwaite df): (difference,
    low, high); no interval when a side has one run."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    difference = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return difference, math.nan, math.nan
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return difference, difference, difference
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = stats.t_quantile(0.975, df) * se
    return difference, difference - half, difference + half


def cell(group):
    run = group.runs[0]
    private = run.option("privacy.mechanism") != "none"
    sigma = float(run.option("privacy.noise_multiplier")) if private else math.nan
    accuracies = [run_numbers(r)["final_accuracy"] for r in group.runs]
    row = {"method": group.method, "private": private, "sigma": sigma,
           "clip": float(run.option("privacy.clip")) if private else math.nan,
           "accuracies": accuracies, "n": group.n, "rounds": run.option("experiment.rounds"),
           "iterations": run.option("train.local_iterations"),
           "emulation": emulation.worst([emulation.verdict(r) for r in group.runs])}
    if private:
        releases = int(run.attrs["privacy_releases"])
        delta = float(run.attrs["privacy_delta"])
        recorded = float(run.attrs["privacy_epsilon"])
        add_remove = gaussian_epsilon(sigma, releases, delta, 1)
        if run.option("privacy.adjacency") == "add-remove" and not math.isclose(recorded, add_remove, rel_tol=1e-9):
            raise SystemExit("privacy_accuracy.py: %s records epsilon %g, the formula gives %g"
                             % (run.path, recorded, add_remove))
        row.update(releases=releases, delta=delta, eps_add_remove=add_remove,
                   eps_replace_one=gaussian_epsilon(sigma, releases, delta, 2))
    return row


def fmt_interval(mean, half):
    return "%.3f" % mean if math.isnan(half) else "%.3f ± %.3f" % (mean, half)


def difference_text(difference, low, high):
    if math.isnan(low):
        return "%+.3f (n=1)" % difference
    if low <= 0 <= high:
        return "no difference measured [%+.3f, %+.3f]" % (low, high)
    return "%+.3f [%+.3f, %+.3f]" % (difference, low, high)


def table(rows):
    lines = ["| method | DP | sigma | clip C | releases | epsilon (add-remove) | epsilon (replace-one) "
             "| n | final accuracy | vs DP off | emulation |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        mean, half, _ = stats.mean_ci(row["accuracies"])
        base = row["baseline"]
        versus = ("-" if base is None or not row["private"]
                  else difference_text(*welch(row["accuracies"], base["accuracies"])))
        if row["private"]:
            lines.append("| %s | gaussian | %g | %g | %d | %.3g | %.3g | %d | %s | %s | %s |" % (
                row["method"], row["sigma"], row["clip"], row["releases"], row["eps_add_remove"],
                row["eps_replace_one"], row["n"], fmt_interval(mean, half), versus, row["emulation"]))
        else:
            lines.append("| %s | off | - | - | - | - | - | %d | %s | - | %s |" % (
                row["method"], row["n"], fmt_interval(mean, half), row["emulation"]))
    unfaithful = [row for row in rows if not emulation.trusted(row["emulation"])]
    if unfaithful:
        lines.append("\n%d of %d cells hold runs that were not faithful emulations "
                     "(docs/explanation/fidelity.md); accuracy does not depend on the emulated "
                     "times, so they are kept and labelled." % (len(unfaithful), len(rows)))
    return "\n".join(lines) + "\n"


def findings(rows):
    """One line per method: the smallest epsilon whose accuracy is not measurably below
    DP off, and the smallest noise at which the accuracy's interval reaches chance."""
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        private = [r for r in rows if r["method"] == method and r["private"] and r["baseline"]]
        if not private:
            continue
        differences = [(r, welch(r["accuracies"], r["baseline"]["accuracies"])) for r in private]
        kept = [r for r, (_, low, high) in differences if not math.isnan(low) and high >= 0]
        lows = [(r, stats.mean_ci(r["accuracies"])) for r in private]
        at_chance = [r for r, (mean, half, _) in lows if not math.isnan(half) and mean - half <= CHANCE]
        line = "- **%s**: " % method
        base_mean, base_half, _ = stats.mean_ci(private[0]["baseline"]["accuracies"])
        if math.isnan(base_half) or base_mean - base_half <= CHANCE:
            out.append(line + "DP off's own accuracy interval reaches chance (%s): these seeds cannot "
                       "tell what DP costs; run more seeds or rounds." % fmt_interval(base_mean, base_half))
            continue
        if kept:
            best = min(kept, key=lambda r: r["eps_add_remove"])
            line += ("no accuracy loss measured down to epsilon %.3g (add-remove; %.3g replace-one) at "
                     "sigma %g" % (best["eps_add_remove"], best["eps_replace_one"], best["sigma"]))
        else:
            line += "every noise level tried costs accuracy (or has one run: no interval)"
        if at_chance:
            worst = min(at_chance, key=lambda r: r["sigma"])
            line += ("; from sigma %g (epsilon %.3g add-remove) the accuracy's interval reaches "
                     "chance (%.1f)" % (worst["sigma"], worst["eps_add_remove"], CHANCE))
        out.append(line + ".")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--doc", required=True, help="Markdown file to write ('-': standard output)")
    parser.add_argument("--command", default="bash scripts/privacy-accuracy.sh")
    args = parser.parse_args()
    groups = group_runs(load_runs(args.files))
    rows = [cell(g) for g in groups]
    rows.sort(key=lambda r: (r["method"], r["private"], r["sigma"] if r["private"] else 0))
    for row in rows:
        offs = [r for r in rows if r["method"] == row["method"] and not r["private"]]
        row["baseline"] = offs[0] if offs else None
    deltas = [r["delta"] for r in rows if r["private"]]
    text = ("# Differential privacy: what it costs in accuracy\n\n"
            "The main job's settings (`configs/quickstart/{fl,pipar}.ini`: Fashion-MNIST, VGG-5 split "
            "after its second pooling layer, 1 server + 3 devices, batch 32, %s round(s) of %s "
            "mini-batches, SGD), with DP off and with the Gaussian mechanism at several noise "
            "multipliers sigma (docs/explanation/privacy.md: pipar clips every sample's uploaded activation to "
            "norm C = 5 and adds N(0, (sigma C)^2) per element; sfl trains the same weights; fl is "
            "DP-FedAvg, each update clipped to C = 1, N(0, (sigma C / 3)^2) on the average). "
            "Final accuracy on the global test set (1,000 samples; chance 0.1): mean ± 95%% "
            "interval over the seeds (Student t); the difference to DP off with Welch's 95%% "
            "interval, \"no difference measured\" where it holds 0. Epsilon at delta = %g for the "
            "run's releases, under add-remove (sensitivity C) and replace-one (2C); "
            "releases = the most any sample (fl: any device's data) is released.\n\n"
            % (rows[0]["rounds"], rows[0]["iterations"], deltas[0] if deltas else 1e-5))
    text += table(rows) + "\n" + findings(rows)
    runs = [r for g in groups for r in g.runs]
    started = sorted(r.started_at for r in runs)
    binaries = sorted({str(r.attrs.get("git_revision", "unknown")) for r in runs})
    text += ("\nRuns of %s to %s on %s, cmlbed %s; the table written by `%s` (the runs' devices "
             "compute at 100 GFLOP/s over 1 gbit links so that they end sooner; accuracy depends on "
             "neither).\n" % (started[0], started[-1], ", ".join(sorted({str(h) for r in runs for h in r.attrs["hosts"]})),
                              " and ".join(binaries), args.command))
    if args.doc == "-":
        sys.stdout.write(text)
    else:
        with open(args.doc, "w") as out:
            out.write(text)
        print("privacy_accuracy.py: wrote %s (%d cells)" % (args.doc, len(rows)))
        sys.stdout.write(table(rows) + "\n" + findings(rows))


if __name__ == "__main__":
    main()
