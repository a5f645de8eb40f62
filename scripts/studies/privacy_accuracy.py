#!/usr/bin/env python3
"""The page of scripts/studies/privacy-accuracy.sh (docs/privacy-accuracy.md): what differential
privacy costs in accuracy, in two phases.

1. Clipping alone (sigma 0) at several clipping norms C per method: the smallest C whose
   clip-only mean final accuracy is within 2 points of DP off is chosen (none is: the
   best one, and the page says the goal is not met).
2. The noise multiplier sigma swept at the chosen C: final accuracy (mean ± 95% interval
   over the seeds, the trivial rate beside it), its difference to DP off (Welch's 95%
   interval), whether it settled (the mean over the seeds moved by less than 2 points
   over the last 5 rounds), and epsilon under both adjacency relations
   (docs/explanation/privacy.md), drawn against accuracy (docs/images/privacy-accuracy.png);
   per method and relation the smallest epsilon at which accuracy stays within 5 points
   of DP off, or "none up to epsilon = 10".

The runs are RESULTS/runs/NAME.seedS.h5 (NAME: METHOD-off, METHOD-cC-sSIGMA) with their
provenance FILE.run.json; each run that succeeded is kept as a digest in the archive
(docs/reproduction-data/privacy-accuracy/, cmlbed_report.archive), so that the page can be
rebuilt without the .h5 files. Every run must come from one binary (else the page is
refused, or flagged with --allow-mixed-binaries) and one round count.

    privacy_accuracy.py report --results DIR --archive DIR|none --doc FILE --image FILE
    privacy_accuracy.py choose-clip --results DIR --archive DIR|none --method M --rounds R
    privacy_accuracy.py provenance --start T --seconds S --status N --cmlbed BIN FILES -- COMMAND...
"""

import argparse
import math
import os
import socket
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/: cmlbed_report
from cmlbed_report import emulation, plotting, stats  # noqa: E402
from cmlbed_report.archive import Archive, write_provenance  # noqa: E402
from cmlbed_report.errors import ReportError  # noqa: E402
from cmlbed_report.summary import group_runs, run_numbers  # noqa: E402
from privacy_rules import (CLIP_GOAL, COST_GOAL, SETTLE_ROUNDS, SETTLE_SPAN, USEFUL_EPSILON,  # noqa: E402
                           choose_clip, epsilon_verdict, gaussian_epsilon, settled,
                           settling_span, settling_trend, smallest_epsilon_within, welch)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = "runs/*.h5"
RELATIONS = (("eps_add_remove", "add-remove"), ("eps_replace_one", "replace-one"))


class StudyError(Exception):
    """The runs do not make one study (exit status 2)."""


# --- the runs ----------------------------------------------------------------------

def binary_of(run):
    """The binary that wrote a run, as `cmlbed --version` names it."""
    return "cmlbed %s (git %s)" % (run.attrs.get("cmlbed_version", "?"),
                                   run.attrs.get("git_revision", "unknown"))


def accuracy_curve(run):
    """The run's test accuracy per round (rounds without an evaluation left out)."""
    accuracy = np.asarray(run.rounds["test_accuracy"], float)
    return accuracy[~np.isnan(accuracy)]


def epsilons(run, sigma):
    """releases, delta and epsilon under both relations; the recorded add-remove figure
    must be the formula's (else the runs and this page disagree: refused)."""
    releases = int(run.attrs["privacy_releases"])
    delta = float(run.attrs["privacy_delta"])
    add_remove = gaussian_epsilon(sigma, releases, delta, 1)
    recorded = float(run.attrs["privacy_epsilon"])
    if run.option("privacy.adjacency") in ("", "add-remove") and not (
            math.isclose(recorded, add_remove, rel_tol=1e-9) or recorded == add_remove):
        raise StudyError("%s records epsilon %g, the formula gives %g" % (run.path, recorded, add_remove))
    return {"releases": releases, "delta": delta, "eps_add_remove": add_remove,
            "eps_replace_one": gaussian_epsilon(sigma, releases, delta, 2)}


def cell_of(group):
    """One cell of the study: a group of runs that differ only in their seed."""
    run = group.runs[0]
    private = run.option("privacy.mechanism") not in ("", "none")
    cell = {"method": group.method, "label": group.label, "private": private,
            "clip": float(run.option("privacy.clip")) if private else None,
            "sigma": float(run.option("privacy.noise_multiplier")) if private else None,
            "accuracies": [run_numbers(r)["final_accuracy"] for r in group.runs],
            "curves": [accuracy_curve(r) for r in group.runs],
            "trivial": float(np.nanmean([r.trivial_accuracy for r in group.runs]))
            if any(not math.isnan(r.trivial_accuracy) for r in group.runs) else math.nan,
            "nan_loss": sum(math.isnan(float(r.rounds["test_loss"][-1])) for r in group.runs
                            if len(r.rounds)),
            "loss": float(np.mean([r.rounds["test_loss"][-1] for r in group.runs if len(r.rounds)])),
            "n": group.n, "rounds": run.configured_rounds,
            "complete": all(r.complete for r in group.runs),
            "iterations": run.option("train.local_iterations"),
            "binaries": sorted({binary_of(r) for r in group.runs}),
            "emulation": emulation.worst([emulation.verdict(r) for r in group.runs]),
            "runs": group.runs}
    cell["mean"], cell["half"], _ = stats.mean_ci(cell["accuracies"])
    if private and cell["sigma"] > 0:
        cell.update(epsilons(run, cell["sigma"]))
    return cell


def load_cells(results, kept):
    """The cells of every run that succeeded, from the results folder (entering the
    archive) or from the archive; returns (cells, provenances)."""
    store = Archive(results, kept)
    written, _ = store.refresh()
    if kept and written:
        print("privacy_accuracy.py: %d run digests new or changed in %s" % (written, kept),
              file=sys.stderr)
    entries = [store.entry(p) for p in store.glob(RUNS)]
    runs = [e.load() for e in entries if e.ok]
    runs = [r for r in runs if r is not None]
    if not runs:
        raise StudyError("no run in %s/runs%s" % (results, " nor in %s/runs" % kept if kept else ""))
    provenances = [e.provenance for e in entries if e.ok]
    return [cell_of(g) for g in group_runs(runs)], provenances


def cell_key(cell):
    return (cell["method"], cell["clip"], cell["sigma"])


def check_one_study(cells, allow_mixed_binaries=False):
    """Refuses cells that are not one study: two configurations for one (method, clip,
    sigma), several round counts, several binaries (unless allowed: then returned, for
    the page to flag). Returns the binaries."""
    rounds = {}
    for cell in cells:
        rounds.setdefault(cell["rounds"], []).append(cell["label"])
    if len(rounds) > 1:
        raise StudyError("the runs have different round counts (%s): one study has one; remove "
                         "the stale runs or digests" % "; ".join(
                             "%d in %s" % (r, ", ".join(labels[:4])) for r, labels in sorted(rounds.items())))
    seen = {}
    for cell in cells:
        if cell_key(cell) in seen:
            raise StudyError("two configurations of %s clip %s sigma %s: %s and %s (other "
                             "overrides?); remove one" % (cell_key(cell) + (seen[cell_key(cell)], cell["label"])))
        seen[cell_key(cell)] = cell["label"]
    binaries = sorted({b for cell in cells for b in cell["binaries"]})
    if len(binaries) > 1 and not allow_mixed_binaries:
        raise StudyError("the runs come from %d binaries (%s): run the study again with one, or "
                         "pass --allow-mixed-binaries to write the page flagged" % (
                             len(binaries), "; ".join(binaries)))
    return binaries


def organise(cells):
    """Per method: {"off": cell, "clips": [clip-only cells by clip], "chosen": clip,
    "met": bool, "sweep": [cells at the chosen clip with sigma > 0, by sigma], "other":
    noisy cells at another clip}."""
    methods = {}
    for cell in sorted(cells, key=lambda c: (c["method"], c["clip"] or 0, c["sigma"] or 0)):
        entry = methods.setdefault(cell["method"], {"off": None, "clips": [], "noisy": []})
        if not cell["private"]:
            entry["off"] = cell
        else:
            entry["clips" if cell["sigma"] == 0 else "noisy"].append(cell)
    for entry in methods.values():
        entry["chosen"], entry["met"] = None, False
        if entry["off"] and entry["clips"]:
            entry["chosen"], entry["met"] = choose_clip(
                {c["clip"]: c["mean"] for c in entry["clips"]}, entry["off"]["mean"])
        entry["sweep"] = [c for c in entry["noisy"] if c["clip"] == entry["chosen"]]
        entry["other"] = [c for c in entry["noisy"] if c["clip"] != entry["chosen"]]
    return methods


# --- the page ----------------------------------------------------------------------

def fmt_interval(mean, half):
    return "%.3f" % mean if math.isnan(half) else "%.3f ± %.3f" % (mean, half)


def difference_text(cell, base):
    """The cell's accuracy minus DP off's, with Welch's 95% interval."""
    if base is None:
        return "-"
    difference, low, high = welch(cell["accuracies"], base["accuracies"])
    if math.isnan(low):
        return "%+.3f (n=1)" % difference
    return "%+.3f [%+.3f, %+.3f]" % (difference, low, high)


def settling_text(cell):
    """'yes'/'no' by the last 5 rounds' range, with the range and the drift."""
    span, trend = settling_span(cell["curves"]), settling_trend(cell["curves"])
    if math.isnan(span):
        return "too few rounds"
    verdict = "yes" if settled(cell["curves"]) else "no"
    return "%s (range %.3f, drift %+.3f)" % (verdict, span, 0.0 if abs(trend) < 5e-4 else trend)


def within_text(cell, base, goal):
    if base is None:
        return "-"
    return "yes" if cell["mean"] >= base["mean"] - goal else "no"


def accuracy_cells(cell):
    return "%d | %s | %s" % (cell["n"], fmt_interval(cell["mean"], cell["half"]),
                             "-" if math.isnan(cell["trivial"]) else "%.3f" % cell["trivial"])


def clip_table(methods):
    lines = ["| method | clip C | n | final accuracy | trivial rate | vs DP off [95%] "
             "| within 2 points | settled (last 5 rounds) | |",
             "|---|---|---|---|---|---|---|---|---|"]
    for method, entry in methods.items():
        base = entry["off"]
        if base:
            lines.append("| %s | DP off | %s | - | - | %s | |" % (
                method, accuracy_cells(base), settling_text(base)))
        for cell in entry["clips"]:
            mark = ""
            if cell["clip"] == entry["chosen"]:
                mark = "**chosen**" if entry["met"] else "**chosen: best, goal not met**"
            lines.append("| %s | %g | %s | %s | %s | %s | %s |" % (
                method, cell["clip"], accuracy_cells(cell), difference_text(cell, base),
                within_text(cell, base, CLIP_GOAL), settling_text(cell), mark))
    return "\n".join(lines) + "\n"


def chosen_clip_cells(entry):
    """The clip-only cells at the method's chosen clip (sigma 0 of its noise sweep)."""
    return [c for c in entry["clips"] if c["clip"] == entry["chosen"]]


def sigma_row(cell, base):
    if cell["sigma"] == 0:
        releases, ar, ro = "-", "inf", "inf"
    else:
        releases, ar, ro = (str(cell["releases"]), "%.3g" % cell["eps_add_remove"],
                            "%.3g" % cell["eps_replace_one"])
    return "| %s | %g | %g | %s | %s | %s | %s | %s | %s | %s |" % (
        cell["method"], cell["sigma"], cell["clip"], releases, ar, ro, accuracy_cells(cell),
        difference_text(cell, base), within_text(cell, base, COST_GOAL), settling_text(cell))


def sigma_table(methods):
    lines = ["| method | sigma | clip C | releases | epsilon add-remove | epsilon replace-one | n "
             "| final accuracy | trivial rate | vs DP off [95%] | within 5 points | settled (last 5 rounds) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for entry in methods.values():
        for cell in chosen_clip_cells(entry) + entry["sweep"]:
            lines.append(sigma_row(cell, entry["off"]))
    return "\n".join(lines) + "\n"


def curve_points(entry, relation):
    """[(epsilon, mean accuracy)] of a method's sweep under one relation, clipping alone
    (epsilon inf) included."""
    points = [(math.inf, c["mean"]) for c in chosen_clip_cells(entry)]
    return points + [(c[relation], c["mean"]) for c in entry["sweep"]]


def verdict_table(methods):
    lines = ["| method | clip C | clip alone vs DP off | smallest epsilon within 5 points: "
             "add-remove | replace-one | cells settled |",
             "|---|---|---|---|---|---|"]
    for method, entry in methods.items():
        base = entry["off"]
        if base is None or entry["chosen"] is None:
            lines.append("| %s | - | no DP-off or clip-only cell | - | - | - |" % method)
            continue
        clip_only = chosen_clip_cells(entry)[0]
        verdicts = [epsilon_verdict(smallest_epsilon_within(curve_points(entry, key), base["mean"]))
                    for key, _ in RELATIONS]
        cells = [base] + entry["clips"] + entry["sweep"]
        lines.append("| %s | %g%s | %.3f against %.3f (%s) | %s | %s | %d of %d |" % (
            method, entry["chosen"], "" if entry["met"] else " (goal not met)", clip_only["mean"],
            base["mean"], difference_text(clip_only, base), verdicts[0], verdicts[1],
            sum(settled(c["curves"]) for c in cells), len(cells)))
    return "\n".join(lines) + "\n"


def draw(methods, path):
    """Accuracy against epsilon, one panel per adjacency relation: one line per method
    (mean with its 95% interval), DP off as a band (its interval) in the method's colour,
    the trivial rate dotted, epsilon = 10 marked."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, len(RELATIONS), figsize=(11, 5), sharey=True)
    for ax, (key, relation) in zip(axes, RELATIONS):
        for i, (method, entry) in enumerate(methods.items()):
            draw_method(ax, method, entry, key, "C%d" % i)
        ax.axvline(USEFUL_EPSILON, color="grey", linestyle=":", linewidth=1,
                   label="epsilon = %g" % USEFUL_EPSILON)
        trivial = [c["trivial"] for e in methods.values() for c in [e["off"]] + e["sweep"]
                   if c is not None and not math.isnan(c["trivial"])]
        if trivial:
            ax.axhline(float(np.mean(trivial)), color="black", linestyle=":", linewidth=0.8,
                       label="trivial rate (the most common class)")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon, %s (delta = %g)" % (relation, delta_of(methods)))
        ax.set_title(relation)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlim(left=min(1.0, ax.get_xlim()[0]))
    axes[0].set_ylabel("final test accuracy")
    axes[0].set_ylim(0, 1)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    plotting.save(fig, path)


def draw_method(ax, method, entry, key, color):
    base = entry["off"]
    if base is not None:
        half = 0 if math.isnan(base["half"]) else base["half"]
        ax.axhspan(base["mean"] - half, base["mean"] + half, color=color, alpha=0.15, linewidth=0)
        ax.axhline(base["mean"], color=color, linestyle="--", linewidth=0.8,
                   label="%s, DP off (band: 95%% interval)" % method)
    sweep = sorted(entry["sweep"], key=lambda c: c[key])
    if sweep:
        ax.errorbar([c[key] for c in sweep], [c["mean"] for c in sweep],
                    yerr=[0 if math.isnan(c["half"]) else c["half"] for c in sweep],
                    color=color, marker="o", capsize=3,
                    label="%s, C = %g, by sigma" % (method, entry["chosen"]))


def delta_of(methods):
    deltas = {c["delta"] for e in methods.values() for c in e["sweep"]}
    return deltas.pop() if len(deltas) == 1 else 1e-5


def intro(methods, cells):
    rounds, iterations = cells[0]["rounds"], cells[0]["iterations"]
    return (
        "# Differential privacy: what it costs in accuracy\n\n"
        "The main job's settings (`configs/quickstart/{fl,pipar}.ini`: Fashion-MNIST, VGG-5 split "
        "after its second pooling layer, 1 server + 3 devices, batch 32, SGD), trained for %d "
        "rounds of %s mini-batches (the main job stops at 3; longer here to let accuracy settle: "
        "whether it did is each cell's \"settled\"), "
        "DP off and with the Gaussian mechanism (docs/explanation/privacy.md). Split methods clip "
        "every sample's uploaded activation to norm C and add N(0, (sigma C)^2) per element; fl is "
        "DP-FedAvg: each device's update of its weights since the last aggregation clipped to "
        "norm C, and N(0, (sigma C / 3)^2) added to every weight of the average (VGG-5's "
        "batch-norm running statistics are averaged without noise, outside the epsilon).\n\n"
        "Two phases, each cell a few seeds (n in the tables): **clipping alone** "
        "(sigma 0) at several C per method, choosing the smallest C whose mean final accuracy is "
        "within %d points of DP off (none is: the best, marked \"goal not met\"); then **noise**: "
        "sigma swept at that C. Final accuracy on the global test set (1,000 samples): mean ± 95%% "
        "interval over the seeds (Student t), the trivial rate (always answering the most common "
        "class) beside it, the difference to DP off with Welch's 95%% interval. **Settled**: the "
        "mean over the seeds moved by less than %d points over the last %d rounds (range = max - "
        "min there, counting round-to-round jitter; drift = the change along the least-squares "
        "line, i.e. still rising or falling). Epsilon at delta = %g for the run's releases (the "
        "most any sample, fl: any device's data, is released: one a round), under add-remove "
        "(sensitivity C) and replace-one (2C). **Smallest epsilon**: going from clipping alone "
        "(epsilon inf) to ever more noise, the last epsilon before the first cell whose mean falls "
        "more than %d points below DP off; \"none up to epsilon = %g\" when that is above %g.\n\n"
        % (rounds, iterations, CLIP_GOAL * 100, SETTLE_SPAN * 100,
           SETTLE_ROUNDS, delta_of(methods), COST_GOAL * 100, USEFUL_EPSILON, USEFUL_EPSILON))


def chance_text(method, entry):
    """Where a method's accuracy interval first reaches its trivial rate, if it does (and
    whether its models broke there: test loss NaN)."""
    for cell in entry["sweep"]:
        if math.isnan(cell["trivial"]):
            continue
        reach = cell["mean"] - (0 if math.isnan(cell["half"]) else cell["half"])
        if reach <= cell["trivial"] + 0.005:
            broke = (" in %d of %d runs the model broke (test loss NaN) and answers one class;"
                     % (cell["nan_loss"], cell["n"]) if cell["nan_loss"] else "")
            return ("- **%s**: from sigma %g (epsilon %.3g add-remove, %.3g replace-one) the "
                    "accuracy's interval reaches the trivial rate (%.3f):%s nothing learnt "
                    "that lasts.\n" % (method, cell["sigma"], cell["eps_add_remove"],
                                       cell["eps_replace_one"], cell["trivial"], broke))
    return ""


def loss_note(method, entry):
    """Split methods train on clipped activations but are scored on the whole model
    without the clip: a clipped cell's test loss far above DP off's at the same accuracy."""
    base = entry["off"]
    if method == "fl" or base is None:
        return []
    shifted = [c for c in entry["clips"] + entry["sweep"]
               if c["loss"] > 5 * base["loss"] and c["mean"] >= base["mean"] - COST_GOAL]
    if not shifted:
        return []
    return ["- %s: test loss %s against %.2f off at about the same accuracy: the split methods' "
            "evaluation runs the whole model without the activation clip (`SplitLearning::evaluate`, "
            "src/train/split_learning.cpp), so the server part sees activations far longer than C, "
            "and its answers are overconfident; the accuracy is that of the unclipped model." % (
                method, ", ".join("%.1f (%s)" % (c["loss"], c["label"]) for c in shifted), base["loss"])]


def notes(methods, cells):
    out = [line for method, entry in methods.items() for line in loss_note(method, entry)]
    for method, entry in methods.items():
        if entry["other"]:
            out.append("- %s: %d noisy cell(s) at another clip than the chosen one left out (%s)." % (
                method, len(entry["other"]), ", ".join(c["label"] for c in entry["other"])))
    broken = [c for c in cells if c["nan_loss"]]
    if broken:
        out.append("- Runs whose last test loss is NaN: the model broke and answers one class (fl: "
                   "with 3 devices the average's noise, sigma C / 3 on each weight, is not averaged "
                   "down: every round adds noise of that spread to every weight): %s." % (
            ", ".join("%s (%d of %d)" % (c["label"], c["nan_loss"], c["n"]) for c in broken)))
    incomplete = [c["label"] for c in cells if not c["complete"]]
    if incomplete:
        out.append("- Cells holding runs that stopped early: %s." % ", ".join(incomplete))
    unfaithful = [c for c in cells if not emulation.trusted(c["emulation"])]
    if unfaithful:
        out.append("- %d of %d cells hold runs that were not faithful emulations (this host "
                   "could not keep the devices' pace; docs/explanation/fidelity.md); accuracy does "
                   "not depend on the emulated times, so they are kept." % (len(unfaithful), len(cells)))
    few = sorted({c["n"] for c in cells})
    if few and few[0] < 3:
        out.append("- Cells with fewer than 3 seeds: %s." % ", ".join(
            "%s (n=%d)" % (c["label"], c["n"]) for c in cells if c["n"] < 3))
    return "\n".join(out) + ("\n" if out else "")


def provenance_text(cells, provenances, binaries, args):
    runs = [r for c in cells for r in c["runs"]]
    started = sorted(r.started_at for r in runs)
    hosts = sorted({str(h) for r in runs for h in np.atleast_1d(r.attrs.get("hosts", ["?"]))})
    recorded = sorted({str(p.get("cmlbed", "")) for p in provenances if p.get("cmlbed")})
    minutes = sum(float(p.get("seconds", 0)) / int(p.get("repeats", 1)) for p in provenances) / 60
    text = ("\n## Provenance\n\n%d runs in %d cells, %s to %s on %s (%.0f minutes of runs), the "
            "runs' devices computing at 100 GFLOP/s over 1 gbit links so that they end sooner "
            "(accuracy depends on neither). " % (len(runs), len(cells), started[0], started[-1],
                                                   ", ".join(hosts), minutes))
    if len(binaries) == 1:
        text += "One binary, as every results file records it: %s%s." % (binaries[0], (
            " (built from a tree with uncommitted changes)" if "-dirty" in binaries[0] else ""))
    if len(recorded) > 1 or (recorded and recorded != binaries):
        text += (" The runs' provenance records `cmlbed --version` as %s." % "; ".join(recorded))
    studies = sorted({p["study"] for p in provenances if p.get("study")})
    if studies:
        text += " The runs were made by %s." % " and ".join("`%s`" % s for s in studies)
    kept = ("Every run's digest and provenance are kept in `%s/runs/`, from which `bash "
            "scripts/studies/privacy-accuracy.sh --report-only` rebuilds this page without the .h5 files"
            % os.path.relpath(os.path.abspath(args.archive), ROOT)) if args.archive else "No digests kept (--archive none)"
    return text + " This page was written by `%s`. %s.\n" % (args.command, kept)


def mixed_flag(binaries):
    if len(binaries) < 2:
        return ""
    return ("**Flagged: these runs come from %d binaries (%s); the cells are not one "
            "experiment.**\n\n" % (len(binaries), "; ".join(binaries)))


def page(cells, provenances, binaries, args):
    methods = organise(cells)
    image = os.path.relpath(args.image, os.path.dirname(os.path.abspath(args.doc)))
    text = intro(methods, cells) + mixed_flag(binaries)
    text += "## Clipping alone\n\n" + clip_table(methods)
    text += "\n## Noise at the chosen clip\n\n" + sigma_table(methods)
    text += ("\n## Accuracy against epsilon\n\n![accuracy against epsilon, add-remove and "
             "replace-one](%s)\n\n" % image) + verdict_table(methods) + "\n"
    text += "".join(chance_text(m, e) for m, e in methods.items())
    extra = notes(methods, cells)
    if extra:
        text += "\n" + extra
    text += provenance_text(cells, provenances, binaries, args)
    return methods, text


def report(args):
    cells, provenances = load_cells(args.results, args.archive)
    binaries = check_one_study(cells, args.allow_mixed_binaries)
    methods, text = page(cells, provenances, binaries, args)
    os.makedirs(os.path.dirname(os.path.abspath(args.image)), exist_ok=True)
    draw(methods, args.image)
    with open(args.doc, "w") as out:
        out.write(text)
    print("privacy_accuracy.py: wrote %s and %s (%d cells)" % (args.doc, args.image, len(cells)))
    sys.stdout.write(verdict_table(methods))
    return 0


def choose(args):
    """Prints the clip the sweep should use for one method (choose_clip on the clip-only
    cells of --rounds rounds); exit status 1 without a DP-off or clip-only cell."""
    cells, _ = load_cells(args.results, args.archive)
    cells = [c for c in cells if c["method"] == args.method and c["rounds"] == args.rounds]
    entry = organise(cells).get(args.method)
    if not entry or entry["chosen"] is None:
        print("privacy_accuracy.py: %s has no DP-off and clip-only cells of %d rounds to choose "
              "from" % (args.method, args.rounds), file=sys.stderr)
        return 1
    best = chosen_clip_cells(entry)[0]
    print("privacy-accuracy: %s: clip %g (clip alone %.3f, DP off %.3f: %s)" % (
        args.method, entry["chosen"], best["mean"], entry["off"]["mean"],
        "within %d points" % (CLIP_GOAL * 100) if entry["met"] else "none within %d points: "
        "the best, goal not met" % (CLIP_GOAL * 100)), file=sys.stderr)
    print("%g" % entry["chosen"])
    return 0


def provenance(args):
    """FILE.run.json for the results files of one `cmlbed run` (cmlbed_report.archive)."""
    try:
        version = subprocess.run([args.cmlbed, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.split("\n")[0]
    except OSError:
        version = ""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    write_provenance(args.files, {
        "command": args.run, "started": args.start, "seconds": args.seconds,
        "status": args.status, "host": socket.gethostname(), "load_after": load,
        "cores": os.cpu_count(), "cmlbed": version, "study": args.study})
    return 0


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    for name in ("report", "choose-clip"):
        p = sub.add_parser(name)
        p.add_argument("--results", required=True, help="the study's results folder (RESULTS/runs/*.h5)")
        p.add_argument("--archive", required=True, help="where the digests are kept; 'none': nowhere")
    report_parser, choose_parser = sub.choices["report"], sub.choices["choose-clip"]
    report_parser.add_argument("--doc", required=True, help="the Markdown page to write")
    report_parser.add_argument("--image", required=True, help="the accuracy-against-epsilon picture")
    report_parser.add_argument("--command", default="bash scripts/studies/privacy-accuracy.sh")
    report_parser.add_argument("--allow-mixed-binaries", action="store_true",
                               help="write the page, flagged, when runs come from several binaries")
    choose_parser.add_argument("--method", required=True)
    choose_parser.add_argument("--rounds", type=int, required=True)
    p = sub.add_parser("provenance")
    p.add_argument("--start", required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--status", type=int, required=True)
    p.add_argument("--cmlbed", required=True)
    p.add_argument("--study", default="", help="the privacy-accuracy.sh command the run is part of")
    p.add_argument("--file", dest="files", action="append", required=True)
    p.add_argument("run", nargs=argparse.REMAINDER, help="-- and the command that wrote the files")
    args = parser.parse_args(argv)
    if getattr(args, "archive", None) == "none":
        args.archive = None
    if args.action == "provenance" and args.run[:1] == ["--"]:
        args.run = args.run[1:]
    return args


def main(argv=None):
    args = parse(argv)
    action = {"report": report, "choose-clip": choose, "provenance": provenance}[args.action]
    try:
        return action(args)
    except (StudyError, ReportError) as e:
        print("privacy_accuracy.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
