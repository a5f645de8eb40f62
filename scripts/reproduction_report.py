#!/usr/bin/env python3
"""The reproduction report (docs/reproduction.md) from the results that
scripts/reproduction.sh left in its results folder: the PiPar grid (measured and
simulated cells, measured-vs-simulated errors), DP on the main job, accuracy, the
AdaSplit comparison, and what we conclude about each claim of the two papers. Every
figure comes from results files of this cmlbed through scripts/cmlbed-report's own
definitions: the seeds of a run are grouped by cmlbed_report.summary.group_runs, and
means, 95% intervals (Student t) and ratios of means (Fieller) come from
summary.compare_groups and stats (docs/explanation/statistics.md), over rounds 2.. of each run
(--from-round); each run's command, date, machine and load come from the FILE.run.json
the script wrote beside it.

Run it through scripts/reproduction.sh (which passes the settings it ran with); it needs
h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy python3-matplotlib) and
runs itself with /usr/bin/python3 when the python3 on PATH lacks them."""

import os
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
REEXEC_MARK = "CMLBED_REPRODUCTION_REEXEC"


def _ensure_packages():
    missing = None
    for name in ("h5py", "numpy", "matplotlib"):
        try:
            __import__(name)
        except ImportError:
            missing = name
            break
    if missing is None:
        return
    if not os.environ.get(REEXEC_MARK) and os.path.exists(SYSTEM_PYTHON):
        ok = subprocess.run([SYSTEM_PYTHON, "-c", "import h5py, numpy, matplotlib"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if ok:
            os.environ[REEXEC_MARK] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write(
        "reproduction_report.py: error: the Python package '%s' is missing in %s.\n"
        "It needs h5py, numpy and matplotlib. On Debian 12:\n"
        "  apt-get install python3-h5py python3-numpy python3-matplotlib\n"
        "(bash scripts/setup.sh installs them); it uses %s when the python3 on PATH lacks "
        "them.\n" % (missing, sys.executable, SYSTEM_PYTHON))
    sys.exit(3)


if __name__ == "__main__":
    _ensure_packages()

import argparse  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402

import warnings  # noqa: E402

import numpy as np  # noqa: E402

warnings.filterwarnings("ignore", message="All-NaN slice")  # networks without cells

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from cmlbed_report import emulation, stats  # noqa: E402
from cmlbed_report.archive import Archive  # noqa: E402
from cmlbed_report.errors import ReportError  # noqa: E402
from cmlbed_report.c3 import budget_numbers  # noqa: E402
from cmlbed_report.summary import (RAW_DATA_NOTE, Group, compare_groups,  # noqa: E402
                                   group_runs, ratio_text)
from cmlbed_report.tradeoff import comparison_rows  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
METHODS = ("fl", "sfl", "pipar")
# The papers' own figures, quoted (not measured here) with their source.
PIPAR_PAPER = {"speedup": 34.6, "idle_reduction": 64.1,
               "source": "PiPar (Zhang et al., JPDC 193, 2024; arXiv 2302.12803), as quoted "
                         "in ../shared/DESIGN.md"}
ADASPLIT_PAPER = [  # method, accuracy %, GB; CIFAR-10 class-wise, 5 clients, LeNet
    ("adasplit", 91.63, 3.63), ("sfl", 65.76, 29.51), ("sl", 70.93, 25.98)]
ADASPLIT_PAPER_BYTES_RATIO = 29.51 / 3.63  # SplitFed's GB / AdaSplit's: 8.13x
# scripts/adasplit-comparison.sh's budgets (10 GB, 5 TFLOP): they do not change the
# figures tabled here (final accuracy, totals), only c3's within-budget columns.
ADASPLIT_BUDGETS = (10e9, 5e12)
ADASPLIT_PAPER_SOURCE = ("AdaSplit (Chopra et al., arXiv 2112.01637), CIFAR-10 class-wise "
                         "split, 5 clients, LeNet; as quoted in ../shared/DESIGN.md")
# The option that makes a split baseline personalised (each device keeps its own
# device-side model and is scored on its own classes), as issue 38 names it. Runs
# without it (or with it false) deploy one global model.
PERSONALISED_OPTION = "train.personalised"
# The margins of the two claims that are about equality, not direction (stated in the
# report next to each verdict): "same accuracy" holds when every interval of PiPar's
# final accuracy over FL's lies within 1 +- ACCURACY_MARGIN; "8.13x fewer bytes" when our
# interval of SplitFed's bytes over AdaSplit's meets 8.13x within +-BYTES_FACTOR_TOLERANCE.
ACCURACY_MARGIN = 0.02
BYTES_FACTOR_TOLERANCE = 0.10
PREDICTION_ACCURACY_DOC = os.path.join(ROOT, "docs", "prediction-accuracy.md")
# The simulator's band comes from the tables of configurations drawn after it was tuned
# (held out), not from the configurations it was tuned on (prediction-accuracy.md).
HELD_OUT_TABLES = tuple(os.path.join(ROOT, "docs", page) for page in (
    "prediction-random-2.md", "prediction-crowded-2.md"))

CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE = "confirmed", "not confirmed", "not testable here"
# Verdicts of stats.ratio_of_means that carry an interval (or the bound of "> X").
WITH_INTERVAL = (stats.ABOVE_1, stats.BELOW_1, stats.NO_DIFFERENCE, stats.LOWER_BOUND)


# --- reading -----------------------------------------------------------------------------
class Citations:
    """Provenance numbers [n] in order of first citation; the appendix lists them."""

    def __init__(self):
        self.entries = []

    def cite(self, *entries):
        refs = []
        for e in entries:
            if e is None:
                continue
            if e.id is None:
                self.entries.append(e)
                e.id = len(self.entries)
            refs.append(e.id)
        return _refs(refs)


def _refs(ids):
    ids = sorted(set(ids))
    if not ids:
        return ""
    # Ranges keep long lists short: [3-5, 9].
    parts, start = [], ids[0]
    for a, b in zip(ids, ids[1:] + [None]):
        if b != a + 1:
            parts.append(str(start) if start == a else "%d-%d" % (start, a))
            start = b
    return "[%s]" % ", ".join(parts)


SEED_SUFFIX = re.compile(r"\.seed(\d+)\.h5$")
GRID_STEM = re.compile(r"^(.+)-(\d+(?:\.\d+)?)mbit-(fl|sfl|pipar)(-p1|-atp)?$")
ROUNDS_STEM = re.compile(r"^(.+)-(\d+(?:\.\d+)?)mbit-b(\d+)-(fl|sfl|pipar)(-p1|-atp)?$")
# SFL at PiPar's split: SFL / it is what pipelining alone gains (SFL's schedule is PiPar's
# with one micro-batch).
SFL_AT_PIPAR = "sfl-atp"
DP_STEM = re.compile(r"^main-(fl|sfl|pipar)-dp(on|off)(?:-r\d+)?$")
# The heterogeneity part's runs (scripts/heterogeneity-comparison.sh --list), and which
# PiPar run stands for the paper's PiPar in the claims: the one planned per device.
HETEROGENEITY_RUNS = {"fl": "FL", "sfl": "SFL", "pipar-hand": "PiPar, one hand choice (split 4, m 4)",
                      "pipar-auto": "PiPar, planned per device",
                      "pipar-replan": "PiPar, re-planned after a link changes"}
HETEROGENEITY_STEM = re.compile(r"^(.+)-(%s)$" % "|".join(HETEROGENEITY_RUNS))
HETEROGENEITY_CLAIMED = "pipar-auto"
# The baselines' learning-rate sweep (scripts/adasplit-comparison.sh's lr group).
LR_STEM = re.compile(r"^lr-(.+)-(sgd|adam)-([0-9.]+(?:e-?[0-9]+)?)$")
HETEROGENEITY_CONDITIONS = {"heterogeneous": "heterogeneous devices",
                            "changing-bandwidth": "changing bandwidth"}


class RunSet:
    """The runs of one name: its seed files NAME.seedS.h5 (`cmlbed run --repeats`), or,
    while there is none, what was made before seeds: NAME.h5 (and, for DP, its passes
    NAME-rK.h5), marked legacy. Files of another name never mix in."""

    def __init__(self, seeded, legacy):
        self.entries = sorted(seeded or legacy, key=lambda e: e.path)
        self.legacy = not seeded and bool(legacy)
        self.superseded = legacy if seeded else []

    def ok_entries(self):
        return [e for e in self.entries if e.load() is not None]

    def runs(self):
        return [e.run for e in self.ok_entries()]


def run_sets(store, folder, key_of):
    """{key: RunSet} of <results>/<folder>/*.h5 (or their kept digests); key_of(stem)
    gives the key of a file name without .seedS and .h5, or None to leave it out."""
    seeded, legacy = {}, {}
    for path in store.glob(os.path.join(folder, "*.h5")):
        base = os.path.basename(path)
        m = SEED_SUFFIX.search(base)
        key = key_of(base[:m.start()] if m else base[:-len(".h5")])
        if key is not None:
            (seeded if m else legacy).setdefault(key, []).append(store.entry(path))
    return {k: RunSet(seeded.get(k, []), legacy.get(k, [])) for k in set(seeded) | set(legacy)}


def grid_key(stem):
    m = GRID_STEM.match(stem)
    return (m.group(1), float(m.group(2)), m.group(3) + (m.group(4) or "")) if m else None


def rounds_key(stem):
    m = ROUNDS_STEM.match(stem)
    return ((m.group(1), float(m.group(2)), int(m.group(3)), m.group(4) + (m.group(5) or ""))
            if m else None)


def heterogeneity_key(stem):
    m = HETEROGENEITY_STEM.match(stem)
    return (m.group(1), m.group(2)) if m else None


def dp_key(stem):
    m = DP_STEM.match(stem)
    return (m.group(1), m.group(2)) if m else None


def grouped(run_lists):
    """({method: Group}, {method: [Group, ...]}) of {method: [Run, ...]}: the runs
    grouped by summary.group_runs (same configuration but the seed). Where one method's
    seeds fall into several groups (e.g. `auto` chose differently for one seed), the
    largest is used and all are returned in the second dict."""
    runs = [r for method in run_lists for r in run_lists[method]]
    by_method = {}
    for group in group_runs(runs):
        by_method.setdefault(group.method, []).append(group)
    chosen, split = {}, {}
    for method, groups in by_method.items():
        groups = sorted(groups, key=lambda g: -g.n)
        chosen[method] = groups[0]
        if len(groups) > 1:
            split[method] = groups
    return chosen, split


def compare_methods(groups, order, baseline, from_round):
    """{method: compare_groups row} of groups[m] for m in order (those present), each
    against groups[baseline] (matched by its label), over rounds from_round.. ."""
    present = [m for m in order if m in groups]
    rows = compare_groups([groups[m] for m in present], baseline=groups[baseline].label,
                          from_round=from_round)
    return dict(zip(present, rows))


def mini_batches_per_round(runs):
    """The mini-batches each device trains a round (train.local_iterations) common to the
    runs, or None where they differ or a run trains local epochs (0)."""
    counts = {run.option("train.local_iterations") for run in runs}
    if len(counts) != 1:
        return None
    count = counts.pop()
    return int(count) if count.isdigit() and int(count) > 0 else None


def pipelined(cell):
    """Whether PiPar pipelines in a cell: every seed's micro-batch count is at least 2
    (at m = 1 PiPar runs SFL's schedule)."""
    counts = [m for m in str(cell["m"]).split("; ") if m.strip().isdigit()]
    return bool(counts) and all(int(m) >= 2 for m in counts)


def pipelining(cell, key="speedup"):
    """SFL / PiPar at PiPar's split, of the round time (key "speedup") or of the server's
    idle time ("idle"): against the sfl-atp runs, or against SFL itself where SFL chose
    PiPar's split; None where neither is there."""
    if cell.get("same_split"):
        return cell["same_split"][key]
    if cell.get("sfl_split") == cell.get("split"):
        return cell["vs_sfl" if key == "speedup" else "vs_sfl_idle"]
    return None


def method_rows(cell):
    """{method: (compare_groups row, runs)} of a grid cell's runs: fl, sfl, pipar and,
    where it ran, sfl at PiPar's split (SFL_AT_PIPAR)."""
    rows = {m: (cell["rows"][m], cell["groups"][m].runs) for m in METHODS}
    if cell.get("same_split"):
        rows[SFL_AT_PIPAR] = (cell["same_split"]["row"], cell["same_split"]["group"].runs)
    return rows


def heterogeneous(run):
    """Whether the run's devices differ in speed (per-device devices.flops or slowdown)."""
    return any(len(set(run.device_values(key))) > 1
               for key in ("devices.flops", "devices.slowdown"))


def per_round(row, key):
    """A group's mean of the per-run value key / rounds (its figures are totals over the
    window) with its 95% half-width."""
    mean, half, _ = stats.mean_ci([p[key] / p["rounds"] for p in row["per_run"]])
    return mean, half


def supported(ratio):
    """The figure a ratio establishes above 1: the point ratio when its whole interval
    lies above 1, X when it is "> X" with X > 1; None otherwise."""
    if ratio.verdict == stats.ABOVE_1:
        return ratio.value
    if ratio.verdict == stats.LOWER_BOUND and ratio.bound > 1:
        return ratio.bound
    return None


def largest_supported(items):
    """(ratio, where) of items [(stats.Ratio, where), ...] with the largest supported()
    figure, or None when no interval lies above 1."""
    best = [(supported(r), r, w) for r, w in items if supported(r) is not None]
    if not best:
        return None
    _, ratio, where = max(best, key=lambda t: t[0])
    return ratio, where


def _upper(ratio):
    """The upper end of a ratio's interval (inf for "> X")."""
    return math.inf if ratio.verdict == stats.LOWER_BOUND else ratio.high


def band_interval(value, band):
    """A simulated ratio's range when each of its two round times may be off by up to
    `band` (a fraction): [value (1 - band) / (1 + band), value (1 + band) / (1 - band)]."""
    return value * (1 - band) / (1 + band), value * (1 + band) / (1 - band)


def read_prediction_table(path):
    """The summary of one prediction-accuracy page (scripts/prediction-accuracy.sh): a
    dict with median and largest |error| (fractions), rows within / rows, when it was
    generated; None when the page cannot be read or parsed."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        return None
    m = re.search(r"(\d+) of (\d+) rows within both goals; median \|error\| of the round time "
                  r"([0-9.]+)%, largest ([0-9.]+)%", text)
    if not m:
        return None
    when = re.search(r"^Generated by .*? on (\S+ \S+ UTC)", text, re.M)
    return {"within": int(m.group(1)), "rows": int(m.group(2)),
            "median": float(m.group(3)) / 100, "largest": float(m.group(4)) / 100,
            "generated": when.group(1) if when else "?",
            "source": os.path.relpath(path, ROOT)}


def simulator_band(paths=HELD_OUT_TABLES):
    """The simulator's validated round-time error: the largest |error| over the held-out
    tables (a dict with "largest" and "tables", each read_prediction_table's), or None
    when one of them cannot be read: a band from part of the evidence would be too
    narrow."""
    tables = [read_prediction_table(p) for p in paths]
    if not tables or any(t is None for t in tables):
        return None
    return {"largest": max(t["largest"] for t in tables), "tables": tables}


# --- conclusions: each claim's verdict, computed from the evidence ------------------------
def _where_text(item):
    ratio, where = item
    return "%s (%s)" % (ratio_text(ratio), where)


NO_PIPELINED_CELL = ("no measured cell in which PiPar pipelines (m >= 2 micro-batches) with "
                     "split >= 1 and a faithful emulation")


GRID_SCOPE = "measured cells (split >= 1, m >= 2)"


def gain_verdicts(items, noun, none=NO_PIPELINED_CELL, scope=GRID_SCOPE):
    """The direction of a PiPar gain (noun: 'speedup', ...) over measured cells with split
    >= 1. items: [(stats.Ratio, where)]; none: the reason when there are none; scope: what
    the items are, for the reason. Returns (verdict, evidence, reason)."""
    if not items:
        return NOT_TESTABLE, "-", none
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if not with_interval:
        return (NOT_TESTABLE, "; ".join(_where_text(i) for i in items[:3]),
                "all %d qualifying %s have n = 1 on a side: no interval (at least 2 seeds "
                "per run are needed)" % (len(items), scope))
    best = largest_supported(with_interval)
    if best:
        above = sum(1 for r, _ in with_interval if supported(r) is not None)
        return (CONFIRMED, _where_text(best),
                "%d of %d qualifying %s with an interval have the %s's 95%% interval above 1; "
                "the largest is cited" % (above, len(with_interval), scope, noun))
    counts = {}
    for r, _ in with_interval:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    top = max(with_interval, key=lambda i: _upper(i[0]))
    parts = ["%d %s" % (counts[v], text) for v, text in (
        (stats.NO_DIFFERENCE, "no difference measured"), (stats.BELOW_1, "below 1"),
        (stats.LOWER_BOUND, "only '> X' with X <= 1 (the denominator's interval reaches 0)"))
        if counts.get(v)]
    return (NOT_CONFIRMED, _where_text(top),
            "none of the qualifying %s has the %s's interval above 1 (%d: %s); the one reaching "
            "highest is cited" % (scope, noun, len(with_interval), ", ".join(parts)))


def magnitude_verdicts(items, noun, paper):
    """The paper's figure ('up to 34.6x') against the measured cells with split >= 1:
    confirmed when some cell's interval above 1 reaches it (its upper end, or X of
    "> X", at least the paper's figure)."""
    direction = gain_verdicts(items, noun)
    if direction[0] == NOT_TESTABLE:
        return direction
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if direction[0] == NOT_CONFIRMED:
        return (NOT_CONFIRMED, direction[1], "no %s is established at all: %s"
                % (noun, direction[2]))
    reaching = [(r, w) for r, w in with_interval
                if (r.verdict == stats.ABOVE_1 and r.high >= paper)
                or (r.verdict == stats.LOWER_BOUND and r.bound >= paper)]
    if reaching:
        ratio, where = largest_supported(reaching)
        low = ratio.bound if ratio.verdict == stats.LOWER_BOUND else ratio.low
        if low >= paper:
            reason = "the whole interval lies at or above the paper's %.1fx" % paper
        else:
            reason = ("the interval holds the paper's %.1fx: our largest %s is consistent with "
                      "it, not shown to be larger or smaller" % (paper, noun))
        return CONFIRMED, _where_text((ratio, where)), reason
    best = largest_supported(with_interval)
    ratio = best[0]
    reach = ("only '> %.2fx' is established there (the denominator's interval reaches 0)"
             % ratio.bound if ratio.verdict == stats.LOWER_BOUND else
             "its interval ends at %.2fx" % ratio.high)
    return (NOT_CONFIRMED, _where_text(best),
            "the largest %s whose interval lies above 1 stays below the paper's %.1fx: %s"
            % (noun, paper, reach))


def accuracy_verdicts(items, margin=ACCURACY_MARGIN, failed=()):
    """'Same accuracy as FL' from [(ratio of PiPar's final accuracy over FL's, where)]:
    confirmed when every interval lies within 1 +- margin; not confirmed when one
    excludes 1 or is too wide to tell. failed: the groups left out because FL did not
    clear the trivial rate (or it was not recorded)."""
    if not items and failed:
        return (NOT_TESTABLE, "-", "no group whose FL baseline learns: %s" % "; ".join(failed))
    if not items:
        return (NOT_TESTABLE, "-", "no accuracy runs of PiPar and FL (DP off) in the data "
                "(scripts/reproduction.sh --only accuracy,report)")
    with_interval = [i for i in items if i[0].verdict in WITH_INTERVAL]
    if len(with_interval) < len(items):
        return (NOT_TESTABLE, "; ".join(_where_text(i) for i in items),
                "%d of %d groups have n = 1 on a side: no interval"
                % (len(items) - len(with_interval), len(items)))
    differ = [i for i in with_interval if i[0].verdict in (stats.ABOVE_1, stats.BELOW_1)]
    if differ:
        return (NOT_CONFIRMED, "; ".join(_where_text(i) for i in differ),
                "PiPar's final accuracy differs from FL's: the interval excludes 1 in %d of "
                "%d groups" % (len(differ), len(with_interval)))
    wide = [i for i in with_interval if i[0].verdict == stats.LOWER_BOUND
            or i[0].low < 1 - margin or i[0].high > 1 + margin]
    if wide:
        return (NOT_CONFIRMED, "; ".join(_where_text(i) for i in wide),
                "no difference measured, but the interval is wider than 1 +- %.0f%% in %d of "
                "%d groups: these seeds cannot tell the accuracies apart at that margin"
                % (100 * margin, len(wide), len(with_interval)))
    return (CONFIRMED, "; ".join(_where_text(i) for i in with_interval),
            "every interval of PiPar's final accuracy over FL's lies within 1 +- %.0f%% (%d "
            "groups, DP off)" % (100 * margin, len(with_interval)))


def condition_verdicts(items, condition, runs_seen, part=None):
    """A gain 'also with <condition>' from the heterogeneity part's runs of that condition
    (part: [(speedup Ratio, where)] of PiPar planned per device against FL, faithful
    emulations only; None: the part has not run), else from the measured grid cells that
    have it (items): gain_verdicts on their speedups, or not testable."""
    if part is not None:
        return gain_verdicts(part, "speedup", scope="experiments (PiPar planned per device "
                             "against FL, emulation faithful)",
                             none="the heterogeneity part ran this experiment, but not every run "
                             "of it was a faithful emulation (its table says which)")
    if not items:
        return (NOT_TESTABLE, "-", "none of the %d measured runs behind this report has %s, and "
                "the heterogeneity part has not run its experiment (scripts/reproduction.sh "
                "--only heterogeneity,report)" % (runs_seen, condition))
    return gain_verdicts(items, "speedup")


def dp_verdicts(dp):
    """'The gain holds with DP' from the DP part: {"on": {"speedup": Ratio, "idle":
    Ratio}, "off": {...}} or None."""
    if not dp or "on" not in dp:
        return (NOT_TESTABLE, "-", "the DP part has not run "
                "(scripts/reproduction.sh --only dp,report)")
    on = dp["on"]["speedup"]
    evidence = "speedup vs FL with DP on %s, off %s; server idle reduction on %s" % (
        ratio_text(on), ratio_text(dp["off"]["speedup"]) if "off" in dp else "-",
        ratio_text(dp["on"]["idle"]))
    if on.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, evidence, "n = 1 on a side with DP on: no interval"
    if supported(on) is not None:
        return (CONFIRMED, evidence, "PiPar's speedup vs FL with DP on has its interval above 1; "
                "this rests on round times only: what DP costs in accuracy is section 3's and "
                "privacy-accuracy.md's")
    return (NOT_CONFIRMED, evidence, "with DP on, PiPar's speedup vs FL is %s"
            % ("not distinguishable from 1" if on.verdict == stats.NO_DIFFERENCE
               else "below 1"))


def accuracy_baseline(ours, base):
    """The run name whose accuracy AdaSplit's is judged against for baseline `base` (sfl,
    sl): its personalised variant where that ran personalised (like for like: AdaSplit's
    devices are scored with their own models), else `base` itself; None when neither ran."""
    variant = base + "-personalised"
    if variant in ours and ours[variant]["personalised"]:
        return variant
    return base if base in ours else None


def adasplit_accuracy_verdicts(ratio, baseline, personalised, failed=(False, math.nan)):
    """AdaSplit's accuracy above a split baseline's: ratio = AdaSplit's final accuracy
    over the baseline's (None: a side not run); personalised: whether the baseline's
    runs keep a personalised model per device, as AdaSplit's devices do; failed:
    (failed_to_learn of the baseline, its trivial rate): a baseline that does not clear
    the trivial rate (True), or whose rate is not recorded (None), is no baseline."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no %s run in the AdaSplit comparison's data" % baseline
    evidence = ratio_text(ratio)
    did_fail, trivial = failed
    if did_fail:
        return (NOT_TESTABLE, evidence, "our %s failed to learn: its accuracy's 95%% interval "
                "does not clear the trivial rate %.3f, so beating it shows nothing"
                % (baseline, trivial))
    if did_fail is None:
        return (NOT_TESTABLE, evidence, "our %s runs predate the trivial rate "
                "(trivial_accuracy), so whether that baseline learned is not known; rerun "
                "them" % baseline)
    if not personalised:
        return (NOT_TESTABLE, evidence,
                "not like for like: our %s deploys one global model (no %s in its "
                "configuration) while each AdaSplit device is scored with its own "
                "personalised model on its own classes" % (baseline, PERSONALISED_OPTION))
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, evidence, "n = 1 on a side: no interval"
    against = ("against our personalised %s (%s: each device scored with its own model, as "
               "AdaSplit's are)" % (baseline, PERSONALISED_OPTION))
    if supported(ratio) is not None:
        return CONFIRMED, evidence, "the interval of the accuracy ratio %s lies above 1" % against
    return NOT_CONFIRMED, evidence, "the interval of the accuracy ratio %s does not lie above 1" % against


def adasplit_bytes_verdicts(ratio, baseline):
    """AdaSplit sends fewer bytes than a baseline: ratio = baseline's GB / AdaSplit's."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no %s run in the AdaSplit comparison's data" % baseline
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, ratio_text(ratio), "n = 1 on a side: no interval"
    if supported(ratio) is not None:
        return (CONFIRMED, ratio_text(ratio), "%s's bytes over AdaSplit's: the interval lies "
                "above 1" % baseline)
    return (NOT_CONFIRMED, ratio_text(ratio), "%s's bytes over AdaSplit's: the interval does "
            "not lie above 1" % baseline)


def bytes_factor_verdicts(ratio, paper=ADASPLIT_PAPER_BYTES_RATIO,
                          tolerance=BYTES_FACTOR_TOLERANCE, expected=None):
    """'8.13x fewer bytes than SplitFed': confirmed when our interval of SplitFed's bytes
    over AdaSplit's meets [paper / (1 + tolerance), paper (1 + tolerance)]. expected:
    (figure, how) the schedule of our runs predicts, quoted in the reason."""
    if ratio is None:
        return NOT_TESTABLE, "-", "no SplitFed and AdaSplit runs in the AdaSplit comparison's data"
    if ratio.verdict not in WITH_INTERVAL:
        return NOT_TESTABLE, ratio_text(ratio), "n = 1 on a side: no interval"
    low = ratio.bound if ratio.verdict == stats.LOWER_BOUND else ratio.low
    high = _upper(ratio)
    lo, hi = paper / (1 + tolerance), paper * (1 + tolerance)
    schedule = (" (our runs' schedule predicts %.2fx: %s)" % expected) if expected else ""
    if low <= hi and high >= lo:
        return (CONFIRMED, ratio_text(ratio), "the interval meets %.2fx +- %.0f%%%s"
                % (paper, 100 * tolerance, schedule))
    return (NOT_CONFIRMED, ratio_text(ratio), "the interval [%.2f, %s] misses %.2fx +- %.0f%% "
            "([%.2f, %.2f])%s" % (low, "inf" if math.isinf(high) else "%.2f" % high, paper,
                                   100 * tolerance, lo, hi, schedule))


def conclusions(evidence):
    """Every claim of both papers with its verdict, computed from `evidence` (what the
    report's sections measured):
      grid: [cell dicts of measured cells: speedup, idle (stats.Ratio), raw (split 0),
             heterogeneous, trace, where]
      runs_seen: how many measured runs the report read
      conditions: {"heterogeneous" | "changing-bandwidth": [(Ratio, where)]} of the
             heterogeneity part (absent: not run)
      accuracy: [(Ratio of PiPar's final accuracy over FL's, where)], DP off
      dp: as dp_verdicts takes it, or None
      adasplit: {"accuracy": {baseline: Ratio}, "bytes": {baseline: Ratio},
                 "personalised": {baseline: bool}, "expected": (figure, how) or None}
    Returns [{"paper", "claim", "paper_figure", "verdict", "evidence", "reason"}]."""
    # PiPar's own claims rest on cells where it pipelines (m >= 2): at m = 1 it runs
    # SFL's schedule, and its gain over FL there is splitting's.
    grid = [c for c in evidence.get("grid", []) if not c["raw"] and pipelined(c)]
    speedups = [(c["speedup"], c["where"]) for c in grid]
    idles = [(c["idle"], c["where"]) for c in grid]
    pipes = [(pipelining(c), c["where"]) for c in grid if pipelining(c) is not None]
    runs_seen = evidence.get("runs_seen", 0)
    claims = []

    def add(paper, claim, figure, verdict):
        claims.append({"paper": paper, "claim": claim, "paper_figure": figure,
                       "verdict": verdict[0], "evidence": verdict[1], "reason": verdict[2]})

    add("PiPar", "server idle time lower than FL's", "",
        gain_verdicts(idles, "server idle reduction"))
    add("PiPar", "server idle time down by up to 64.1x vs FL", "64.1x",
        magnitude_verdicts(idles, "server idle reduction", PIPAR_PAPER["idle_reduction"]))
    add("PiPar", "training faster than FL", "", gain_verdicts(speedups, "speedup"))
    add("PiPar", "training up to 34.6x faster than FL", "34.6x",
        magnitude_verdicts(speedups, "speedup", PIPAR_PAPER["speedup"]))
    add("PiPar", "pipelining itself speeds training (SFL / PiPar at PiPar's split)", "",
        gain_verdicts(pipes, "pipelining factor"))
    add("PiPar", "same accuracy as FL", "", accuracy_verdicts(
        evidence.get("accuracy", []), failed=evidence.get("accuracy_failed", ())))
    add("PiPar", "the speedup holds with differential privacy (round time only)", "", dp_verdicts(evidence.get("dp")))
    conditions = evidence.get("conditions") or {}
    add("PiPar", "the gain holds with heterogeneous devices", "", condition_verdicts(
        [(c["speedup"], c["where"]) for c in grid if c["heterogeneous"]],
        "devices of different speeds (per-device devices.flops or devices.slowdown)", runs_seen,
        conditions.get("heterogeneous")))
    add("PiPar", "the gain holds with changing bandwidth", "", condition_verdicts(
        [(c["speedup"], c["where"]) for c in grid if c["trace"]],
        "a link whose rate follows a trace (network.uplink_trace / downlink_trace)", runs_seen,
        conditions.get("changing-bandwidth")))
    ada = evidence.get("adasplit") or {}
    paper = {m: (a, gb) for m, a, gb in ADASPLIT_PAPER}
    for baseline, name in (("sfl", "SplitFed"), ("sl", "SL")):
        add("AdaSplit", "higher accuracy than %s" % name, "%.2f%% vs %.2f%%" % (
            paper["adasplit"][0], paper[baseline][0]),
            adasplit_accuracy_verdicts(ada.get("accuracy", {}).get(baseline), name,
                                       ada.get("personalised", {}).get(baseline, False),
                                       ada.get("failed", {}).get(baseline, (False, math.nan))))
        add("AdaSplit", "fewer bytes than %s" % name, "%.2f GB vs %.2f GB" % (
            paper["adasplit"][1], paper[baseline][1]),
            adasplit_bytes_verdicts(ada.get("bytes", {}).get(baseline), name))
    add("AdaSplit", "8.13x fewer bytes than SplitFed", "%.2fx" % ADASPLIT_PAPER_BYTES_RATIO,
        bytes_factor_verdicts(ada.get("bytes", {}).get("sfl"), expected=ada.get("expected")))
    return claims


# --- formatting --------------------------------------------------------------------------
def fmt(value, spec="%.2f", dash="-"):
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return dash
    return spec % value


def ci_text(mean, half, spec="%.3f"):
    """'mean ± half-width' (the mean alone where there is no interval)."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if half is None or (isinstance(half, float) and math.isnan(half)):
        return spec % mean
    return "%s ± %s" % (spec % mean, spec % half)


def row_ci(row, key, spec="%.3f"):
    return ci_text(row[key], row.get(key + "_ci95", math.nan), spec)


def rate_text(rate):
    return ("%g" % rate) + " mbit"


def md_table(headings, rows):
    out = ["| " + " | ".join(headings) + " |", "|" + "|".join("---" for _ in headings) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def command_text(entry):
    command = entry.provenance.get("command") or []
    return " ".join(shlex.quote(os.path.relpath(c, ROOT) if c.startswith(ROOT + "/") else c)
                    for c in command)


def _settled(runs):
    """max - min of the last five rounds' accuracy, the largest over the runs, as text."""
    spread = _last_range(runs)
    return "range %.3f" % spread if np.isfinite(spread) else "-"


SETTLED_RANGE = 0.02  # accuracy has settled when its last 5 rounds move by less than 2 points


def _last_range(runs):
    """max - min of the last five rounds' accuracy, the largest over the runs (NaN when
    no run evaluated)."""
    ranges = []
    for run in runs:
        acc = run.rounds["test_accuracy"]
        acc = acc[~np.isnan(acc)][-5:]
        if len(acc):
            ranges.append(acc.max() - acc.min())
    return max(ranges) if ranges else math.nan


def trivial_rate(runs):
    """The runs' trivial accuracy (the best constant answer, scored as each run scores:
    its root attribute trivial_accuracy), their mean; NaN where a run predates it."""
    values = [r.trivial_accuracy for r in runs]
    return float(np.mean(values)) if values and np.all(np.isfinite(values)) else math.nan


def failed_to_learn(accuracies, trivial):
    """Whether a method's final accuracies do not clear the trivial rate: the low end of
    their 95% interval (the mean for n = 1) at or below it; None when the trivial rate is
    not recorded."""
    if not np.isfinite(trivial):
        return None
    mean, half, _ = stats.mean_ci(accuracies)
    return bool((mean - half if np.isfinite(half) else mean) <= trivial)


def _number_or_text(value):
    """Sort key of a table cell: numbers by value, before text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _epsilon(run):
    return float(run.attrs["privacy_epsilon"]) if "privacy_epsilon" in run.attrs else None


def _option_true(run, key):
    return run.option(key).strip().lower() in ("true", "1", "yes", "on")


# --- the report --------------------------------------------------------------------------
class Report:
    def __init__(self, args):
        self.args = args
        self.results = args.results
        self.from_round = args.from_round
        self.store = Archive(args.results, args.archive)
        self.doc_dir = os.path.dirname(os.path.abspath(args.doc))
        self.images = args.images
        self.cite = Citations()
        self.parts = []
        self.headline = {}
        self.pending = []
        self.band = simulator_band()
        # What the conclusions rest on (conclusions() documents the keys).
        self.evidence = {"grid": [], "accuracy": [], "dp": None, "adasplit": {}, "runs_seen": 0}
        self.legacy = []       # names whose runs predate seeds (n = 1)
        self.superseded = 0    # pre-seed files ignored because seed files exist
        self.short = []        # names with fewer seeds than --repeats asks for
        self.fallback = []     # names with too few rounds for the window (all rounds used)
        self.unfaithful = []   # measured grid cells whose emulation was degraded or broken
        self.unjudged = []     # measured grid cells made before cmlbed judged its emulation

    def image(self, name):
        return os.path.join(self.images, "reproduction-%s.png" % name)

    def link(self, path):
        return os.path.relpath(os.path.abspath(path), self.doc_dir)

    def add(self, text):
        self.parts.append(text)

    def note_sets(self, label, sets):
        """Keeps track of pre-seed runs, missing seeds and window fallbacks of RunSets."""
        legacy = False
        for s in sets:
            if s is None:
                continue
            self.superseded += len(s.superseded)
            runs = s.runs()
            if s.legacy:
                legacy = True
            elif 0 < len(runs) < self.args.repeats:
                self.short.append("%s (n = %d)" % (label, len(runs)))
        if legacy and label not in self.legacy:
            self.legacy.append(label)

    def note_rows(self, label, rows):
        if any(row.get("window_fallback") for row in rows):
            self.fallback.append(label)

    def measured_runs(self, count):
        self.evidence["runs_seen"] += count

    # --- PiPar grid ------------------------------------------------------------------------
    def _cell(self, net, rate, source, sets):
        """The numbers of one grid cell: FL, SFL and PiPar grouped over their seeds and
        compared (rounds from_round..); None where a method has no run."""
        run_lists = {m: sets[m].runs() for m in METHODS}
        if any(not runs for runs in run_lists.values()):
            return None
        groups, split_groups = grouped(run_lists)
        if any(m not in groups for m in METHODS):
            return None
        rows = compare_methods(groups, METHODS, "fl", self.from_round)
        vs_sfl = compare_methods(groups, ("sfl", "pipar"), "sfl", self.from_round)["pipar"]
        pipar = rows["pipar"]
        # SFL at PiPar's split (its own files: its runs are sfl runs, so grouped apart).
        at_split = sets.get(SFL_AT_PIPAR)
        at_runs = at_split.runs() if at_split else []
        same_split = None
        if at_runs:
            at_group = max(grouped({"sfl": at_runs})[0].values(), key=lambda g: g.n)
            at_row, pipar_row = compare_groups([at_group, groups["pipar"]], baseline=at_group.label,
                                               from_round=self.from_round)
            same_split = {"row": at_row, "group": at_group, "speedup": pipar_row["speedup_ratio"],
                          "idle": pipar_row["server_idle_reduction_ratio"]}
        runs = [r for g in groups.values() for r in g.runs] + at_runs
        label = "%s/%s %s" % (net, rate_text(rate), source)
        used = [m for m in METHODS + (SFL_AT_PIPAR,) if sets.get(m)]
        if source == "measured":
            self.note_sets(label, [sets[m] for m in used])
            self.measured_runs(sum(len(sets[m].runs()) for m in used))
        self.note_rows(label, rows.values())
        return {
            "net": net, "rate": rate, "source": source, "rows": rows, "groups": groups,
            "entries": [e for m in used for e in sets[m].ok_entries()],
            "speedup": pipar["speedup_ratio"], "idle": pipar["server_idle_reduction_ratio"],
            # The speedup (and idle reduction) vs FL taken apart: splitting = FL / SFL at
            # SFL's split; pipelining = SFL / PiPar at PiPar's split (same_split, None
            # without the sfl-atp runs) and at each one's own choice (vs_sfl).
            "splitting": rows["sfl"]["speedup_ratio"],
            "splitting_idle": rows["sfl"]["server_idle_reduction_ratio"],
            "same_split": same_split, "vs_sfl_idle": vs_sfl["server_idle_reduction_ratio"],
            "mini_batches": mini_batches_per_round(runs),
            "vs_sfl": vs_sfl["speedup_ratio"], "split": pipar["split"],
            "m": pipar["micro_batches"], "raw": bool(pipar["raw_data_uploaded"]),
            "sfl_split": rows["sfl"]["split"], "legacy": any(sets[m].legacy for m in METHODS),
            "n": min(row["n"] for row in rows.values()), "split_groups": split_groups,
            "heterogeneous": any(heterogeneous(r) for r in runs),
            "trace": any("trace" in row["links"] for row in rows.values()),
            # The cell's worst run (docs/explanation/fidelity.md): a time taken while the
            # emulation did not hold is the host's, and stays out of the headline.
            "emulation": emulation.worst([emulation.verdict(r) for r in runs]),
            "where": "%s, uplink %s, %s" % (net, rate_text(rate), source)}

    def grid(self):
        args = self.args
        networks, rates = args.networks.split(), [float(r) for r in args.rates.split()]
        measured = run_sets(self.store, "measured", grid_key)
        simulated = run_sets(self.store, "simulated", grid_key)
        profiles = {n: self.store.entry(os.path.join(self.results, "profiles", n + ".json"))
                    for n in networks}
        cells = {}  # (net, rate) -> {"measured": cell, "simulated": cell}
        for net in networks:
            for rate in rates:
                for source, files in (("measured", measured), ("simulated", simulated)):
                    sets = {m: files.get((net, rate, m)) for m in METHODS + (SFL_AT_PIPAR,)}
                    if any(sets[m] is None for m in METHODS):
                        continue
                    cell = self._cell(net, rate, source, sets)
                    if cell:
                        cells.setdefault((net, rate), {})[source] = cell
        self.add("## 1. PiPar grid: six networks x five uplink rates x FL / SFL / PiPar\n\n")
        self.add(
            "Settings (`%s`): CIFAR-10-shaped synthetic data (3x32x32, 10 classes), 1 server + "
            "4 devices, batch 32, SGD; each cell overrides `model.name` and the links "
            "(uplink U mbit, downlink 2.5 U, burst 32 KiB). **Devices are paced with "
            "`devices.flops = 2GFLOP/s`** (every device stage lasts its FLOPs / 2e9 s; "
            "`devices.slowdown` is not used), the server runs at this machine's speed "
            "(1 LibTorch thread). Rounds: %s; `%s` makes a round one local epoch, 16 "
            "mini-batches over each device's 512 samples. FL trains the whole model on the device; SFL's split and "
            "PiPar's split and micro-batch count are `auto` (the planner's choice, "
            "docs/explanation/simulator.md, at least one layer on the device unless a config asks for "
            "split 0) from the network's profile measured here (`cmlbed profile`, "
            "server + 1 device, 3 repeats after 1 warm-up). A cell is **measured** when "
            "FL, SFL and PiPar ran for real (`mpirun -np 5 cmlbed run`, %d seeds, run seed "
            "by seed across the methods so that the host's drift spreads over all of them; "
            "`model.split = auto` with `--plan.profile`, each seed planning on its own; "
            "SFL also at the split PiPar's run of the same seed chose), else "
            "**simulated** (`cmlbed plan` for the choice, then `cmlbed simulate` with that "
            "profile and the same device count, %s; deterministic, so simulated once). "
            "Speedup = FL's mean round time / PiPar's; server idle reduction = FL's server "
            "idle seconds per round / PiPar's (section 0's definitions, computed by "
            "`cmlbed-report summary`'s code).\n\n"
            % (args.grid_config, self._grid_rounds_text(cells), args.grid_config, args.repeats,
               self._host_cores_text(simulated)))
        self._profiles(networks, profiles)

        rows, heat = [], {key: np.full((len(networks), len(rates)), np.nan)
                          for key in ("speedup", "idle")}
        heat["measured"] = np.zeros((len(networks), len(rates)), bool)
        heat["raw"] = np.zeros((len(networks), len(rates)), bool)
        heat["text"] = {}
        for i, net in enumerate(networks):
            for j, rate in enumerate(rates):
                cell = cells.get((net, rate))
                if not cell:
                    why = "no profile (see above)" if net in self.failed_profiles else "pending"
                    rows.append([net, rate_text(rate), why] + ["-"] * 12)
                    continue
                source = "measured" if "measured" in cell else "simulated"
                c = cell[source]
                if source == "measured":
                    where = "%s/%s" % (net, rate_text(rate))
                    if c["emulation"] == "unknown":
                        self.unjudged.append(where)
                    if emulation.trusted(c["emulation"]) or c["emulation"] == "unknown":
                        self.evidence["grid"].append(c)
                    else:
                        self.unfaithful.append("%s (%s)" % (where, c["emulation"]))
                heat["measured"][i, j] = source == "measured"
                heat["raw"][i, j] = c["raw"]
                for key in ("speedup", "idle"):
                    heat[key][i, j], heat["text"][(key, i, j)] = self._heat_value(c[key], source)
                rows.append(self._grid_row(c, cell, simulated))
        self.add("### The grid\n\n")
        self.add(md_table(
            ["network", "uplink", "cell (n = seeds)", "FL round s", "SFL round s (split)",
             "PiPar round s (split, micro-batches)", "PiPar device FLOPs share",
             "FL server idle s/round", "PiPar server idle s/round", "PiPar speedup vs FL",
             "PiPar vs SFL", "server idle reduction vs FL",
             "PiPar with split >= 1, where the cell's is 0: round s (P, m), speedup / idle "
             "reduction vs FL", "runs"], rows))
        self.add("\nMeasured cells: mean ± 95%% half-width over the seeds (n in the cell column; "
                 "rounds %d.. of each run), ratios with Fieller's 95%% interval in brackets, "
                 "'no difference measured' where it includes 1, '> X' where the denominator's "
                 "interval reaches 0 (section 0). Simulated cells: one simulation; ± is the "
                 "simulator's validated error band, not a confidence interval (%s). A split "
                 "marked `*`: %s; the cell is kept out of the headline figures, and the "
                 "next-to-last column gives the planner's fastest candidate with at least one "
                 "layer on the device, simulated, where a cell's own split is 0.\n\n"
                 % (self.from_round, self._band_source(), RAW_DATA_NOTE.lstrip("* ")))
        self.add(self._emulation_note())
        if any(cells):
            self._grid_pictures(networks, rates, heat, cells)
            self.add("![speedup and server idle reduction over the grid](%s)\n\n"
                     % self.link(self.image("grid")))
            self.add("![round time per method against the uplink rate](%s)\n\n"
                     % self.link(self.image("rounds")))
        self.headline["cells"] = (
            sorted((n, r) for (n, r), c in cells.items() if "measured" in c),
            sorted((n, r) for (n, r), c in cells.items() if "measured" not in c),
            [(n, r) for n in networks for r in rates if (n, r) not in cells])
        self._grid_headline(cells)
        self._factors(cells)
        self._sittings([cell["measured"] for _, cell in sorted(cells.items()) if "measured" in cell])
        self._why(heat, networks, rates, cells)
        self._measured_vs_simulated(cells)
        pending = [(n, r) for n in networks for r in rates if (n, r) not in cells]
        if pending:
            self.pending.append(
                "grid cells without results: %s (measured by `scripts/reproduction.sh --job "
                "'measured NET RATE'`, `--full` or the Slurm array; simulated by `--only "
                "profiles,simulate` where the network has a profile)" % ", ".join(
                    "%s/%s" % (n, rate_text(r)) for n, r in pending))
        self.add("Cells measured by this report's default run: `%s` (script variable "
                 "MEASURED); the other cells are measured by `scripts/reproduction.sh "
                 "--full` or the Slurm array `jobs/submit-reproduction.sh` "
                 "(`jobs/reproduction.sbatch`, one cell or accuracy group per element), whose "
                 "results this report folds in when they are in `%s` (and keeps in `%s`).\n\n"
                 % (self.args.measured, self.results, self.args.archive))

    def _profiles(self, networks, profiles):
        profile_rows = []
        self.failed_profiles = {}
        for net in networks:
            p = profiles[net]
            data = p.read_json()
            if data is None:
                log = self.store.source(os.path.join(self.results, "profiles", net + ".log"))
                first = ""
                if p.provenance.get("status", 0) != 0 and log:
                    first = next((l.strip() for l in open(log, errors="replace")
                                  if l.startswith("cmlbed:")), "")
                    self.failed_profiles[net] = (first, p)
                profile_rows.append([net, "failed %s" % self.cite.cite(p) if first else "not run",
                                     "-", "-", "-", "-"])
                continue
            server = next(r for r in data["ranks"] if r["role"] == "server")
            batch = data["batch_sizes"][-1]
            seconds = sum(l["forward_s"][-1] + l["backward_s"][-1] for l in server["layers"])
            flops = 3 * batch * sum(l["flops_per_sample"] for l in server["layers"])
            params = sum(l["parameters"] for l in server["layers"])
            profile_rows.append([
                net, "%.1f" % (params / 1e6), "%.0f" % (flops / 3 / batch / 1e6),
                "%.3f" % seconds, "%.1f" % (flops / seconds / 1e9),
                "%.1fx %s" % (flops / seconds / 2e9, self.cite.cite(p))])
        self.add("Profiles (this machine's server, batch 32; training FLOPs taken as 3 x "
                 "forward):\n\n")
        self.add(md_table(["network", "M params", "MFLOPs/sample fwd",
                           "server fwd+bwd s (batch 32)", "server GFLOP/s",
                           "server / device speed"], profile_rows))
        self.add("\n")
        if self.failed_profiles:
            self.add(
                "**%s: `cmlbed profile` fails** (`%s`): the profile measures every layer at "
                "the batch sizes 1, 2, 4, ... 32, and a batch-norm layer in training mode on a "
                "1x1 feature map cannot take a batch of 1. So these networks have no profile, "
                "hence no simulated cells and no `auto` (which profiles too); their measured "
                "cells use the split and micro-batch count of "
                "`configs/pipar-networks/NET.ini` instead (marked fixed). A fix belongs in "
                "`cmlbed profile` (start the ladder at 2 for such layers, or profile in "
                "evaluation mode), not in this report.\n\n"
                % (", ".join(sorted(self.failed_profiles)),
                   next(iter(self.failed_profiles.values()))[0].replace("cmlbed: failed: ", "")))
            self.pending.append("simulated cells of %s: `cmlbed profile` fails on them (batch "
                                "norm at batch size 1; a cmlbed bug, see section 1)"
                                % ", ".join(sorted(self.failed_profiles)))

    def _band_source(self):
        b = self.band
        if not b:
            return ("no validated band: %s could not be read, so simulated figures carry none"
                    % ", ".join(os.path.relpath(p, ROOT) for p in HELD_OUT_TABLES))
        return ("±%.1f%% of the round time, the largest |error| of `cmlbed simulate` against "
                "measured runs over the held-out random tables (configurations drawn after the "
                "simulator was tuned: %s); a simulated speedup (a ratio of two round times) gets "
                "the range of both ends off by that much; a simulated idle reduction gets no "
                "band, since the tables validate round times, and idle seconds near 0 carry a "
                "far larger relative error"
                % (100 * b["largest"], "; ".join(
                    "%s: %d of %d within 10%%, median |error| %.1f%%, largest %.1f%%, generated %s"
                    % (t["source"], t["within"], t["rows"], 100 * t["median"], 100 * t["largest"],
                       t["generated"]) for t in b["tables"])))

    def _sim_ratio_text(self, ratio, band=True):
        """A simulated ratio with the range the validated band allows; band=False for a
        ratio of idle times, which the band (of round times) does not cover."""
        value = ratio.value
        if not np.isfinite(value):
            return "-"
        if not band:
            return "%.2fx sim (no band: idle)" % value
        if not self.band:
            return "%.2fx (simulated)" % value
        lo, hi = band_interval(value, self.band["largest"])
        return "%.2fx sim [%.2f, %.2f]" % (value, lo, hi)

    def _ratio_cell(self, ratio, source, band=True):
        return ratio_text(ratio) if source == "measured" else self._sim_ratio_text(ratio, band)

    def _time_cell(self, row, key, source, spec="%.3f"):
        if source == "measured":
            return row_ci(row, key, spec)
        band = " ±%.0f%%" % (100 * self.band["largest"]) if self.band else ""
        return fmt(row[key], spec) + band

    @staticmethod
    def _heat_value(ratio, source):
        """(value drawn, its label) of a ratio in the grid picture."""
        if source == "measured" and ratio.verdict == stats.LOWER_BOUND:
            return ratio.bound, "> %.1fx" % ratio.bound
        if not np.isfinite(ratio.value):
            return math.nan, ""
        value = ratio.value
        text = ("%.1fx" if value < 100 else "%.0fx") % value
        if source == "measured" and ratio.verdict == stats.NO_DIFFERENCE:
            text = "%s\nno diff." % text
        return value, text

    @staticmethod
    def _first_reason(cell):
        """The first reason of the cell's worst run's verdict, shortened."""
        for group in cell["groups"].values():
            for run in group.runs:
                if emulation.verdict(run) == cell["emulation"] and emulation.reasons(run):
                    reason = emulation.reasons(run)[0]
                    return reason if len(reason) <= 160 else reason[:157] + "..."
        return "no reason recorded"

    def _emulation_note(self):
        """How many measured cells' emulation held (docs/explanation/fidelity.md)."""
        measured = len(self.evidence["grid"]) + len(self.unfaithful)
        text = ""
        if self.unfaithful:
            text += ("%d of %d measured cells were not faithful emulations: %s. Their times are "
                     "partly this host's; they are labelled in the cell column and kept out of the "
                     "headline figures and the conclusions. " % (
                         len(self.unfaithful), measured, ", ".join(self.unfaithful)))
        if self.unjudged:
            text += ("%d of %d measured cells were made before cmlbed judged its emulation "
                     "(emulation unknown): %s. " % (len(self.unjudged), measured, ", ".join(self.unjudged)))
        return text + "\n\n" if text else ""

    def _grid_row(self, c, cell, simulated):
        rows, source = c["rows"], c["source"]
        fl, sfl, pipar = rows["fl"], rows["sfl"], rows["pipar"]
        share = pipar["device_tflops"] / (pipar["device_tflops"] + pipar["server_tflops"])
        fl_idle, pipar_idle = per_round(fl, "server_idle_s"), per_round(pipar, "server_idle_s")
        if source == "measured":
            n = sorted({row["n"] for row in rows.values()})
            label = "measured, n = %s" % "/".join(str(k) for k in n)
            if c["legacy"]:
                label += " (made before seeds)"
            if c["emulation"] in ("degraded", "broken"):  # unknown ones are counted below the grid
                label += "; emulation %s" % c["emulation"]
            if c["split_groups"]:
                label += "; seeds chose differently: %s" % "; ".join(
                    "%s %s" % (m, ", ".join("P %s m %s (n %d)" % (g.runs[0].option("model.split"),
                                                                  g.runs[0].option("pipar.micro_batches"),
                                                                  g.n) for g in gs))
                    for m, gs in c["split_groups"].items())
            idle_fmt = lambda mh: ci_text(mh[0], mh[1], "%.3f")  # noqa: E731
        else:
            label = "simulated"
            idle_fmt = lambda mh: fmt(mh[0], "%.3f")  # noqa: E731
        fixed = ", fixed" if c["net"] in self.failed_profiles else ""
        return [c["net"], rate_text(c["rate"]), label,
                self._time_cell(fl, "mean_round_s", source),
                "%s (P %s)" % (self._time_cell(sfl, "mean_round_s", source), self._split(sfl)),
                "%s (P %s, m %s%s)" % (self._time_cell(pipar, "mean_round_s", source),
                                       self._split(pipar), pipar["micro_batches"], fixed),
                "%.0f%%" % (100 * share) if np.isfinite(share) else "-",
                idle_fmt(fl_idle), idle_fmt(pipar_idle),
                self._ratio_cell(c["speedup"], source), self._ratio_cell(c["vs_sfl"], source),
                self._ratio_cell(c["idle"], source, band=False),
                self._split_one(c, cell, simulated), self.cite.cite(*c["entries"])]

    @staticmethod
    def _split(row):
        return row["split"] + ("\\*" if row["raw_data_uploaded"] else "")

    @staticmethod
    def _host_cores_text(simulated):
        """How the simulated cells shared the host's cores, from their stored options."""
        shared = set()
        for s in simulated.values():
            for run in s.runs():
                cores = run.option("plan.host_cores") or "0"
                # `placement` (the default since issue 53): the host's cores, as this host placed them.
                shared.add((int(cores) if cores.isdigit() else -1, run.option("plan.host_slice") or "0ms"))
        if not shared:
            return "no simulated cell read"
        texts = []
        for cores, slice_ in sorted(shared):
            texts.append("each rank on cores of its own (`plan.host_cores = 0`)" if cores == 0 else
                         "the ranks sharing this host's cores (`plan.host_cores = placement`)" if cores < 0 else
                         "the ranks sharing %d cores as in a measured cell (`--plan.host_cores=%d "
                         "--plan.host_slice=%s`)" % (cores, cores, slice_))
        return "; some cells ".join(texts)

    def _split_one(self, c, cell, simulated):
        """PiPar with at least one layer on the device where the cell's own split is 0:
        the simulated -p1 file against the simulated cell's FL."""
        if not c["raw"]:
            return "(the cell's own)"
        p1 = simulated.get((c["net"], c["rate"], "pipar-p1"))
        if p1 is None or not p1.runs() or "simulated" not in cell:
            return "-"
        groups, _ = grouped({"fl": cell["simulated"]["groups"]["fl"].runs, "pipar": p1.runs()})
        row = compare_methods(groups, ("fl", "pipar"), "fl", self.from_round)["pipar"]
        c["p1"] = row
        return "%.3f (P %s, m %s), %s / %s %s" % (
            row["mean_round_s"], row["split"], row["micro_batches"],
            self._sim_ratio_text(row["speedup_ratio"]),
            self._sim_ratio_text(row["server_idle_reduction_ratio"], band=False),
            self.cite.cite(*p1.ok_entries()))

    def _grid_rounds_text(self, cells):
        """The cells' rounds as their runs ran them (kept digests may predate the config)."""
        shown = [c for cell in cells.values() for c in cell.values()]
        counts = sorted({c["mini_batches"] for c in shown if c["mini_batches"] is not None})
        rounds = sorted({r.configured_rounds for c in shown for g in c["groups"].values()
                         for r in g.runs})
        if not counts:
            return "(no cell read yet)"
        text = "%s mini-batches of 32 per device and round, %s rounds" % (
            " or ".join(str(k) for k in counts), " or ".join(str(k) for k in rounds))
        if len(counts) > 1:
            text += " (cells differ: see the mini-batches column of 'The gain taken apart')"
        if self.args.mode == "quick":
            text += " (quick mode: overridden smaller, see the commands)"
        return text

    def _grid_pictures(self, networks, rates, heat, cells):
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(12, 0.55 * len(networks) + 2.2))
        for ax, key, title in ((axes[0], "speedup", "PiPar speedup of the round time vs FL"),
                               (axes[1], "idle", "server idle reduction vs FL (per round)")):
            values = heat[key]
            shown = np.log10(np.where(np.isfinite(values) & (values > 0), values, np.nan))
            im = ax.imshow(shown, cmap="viridis", aspect="auto")
            finite = shown[np.isfinite(shown)]
            lo, hi = (finite.min(), finite.max()) if finite.size else (0, 0)
            for i in range(len(networks)):
                for j in range(len(rates)):
                    if np.isfinite(values[i, j]):
                        dark = hi > lo and (shown[i, j] - lo) / (hi - lo) < 0.5
                        ax.text(j, i, heat["text"][(key, i, j)] + (
                            "\nmeasured" if heat["measured"][i, j] else "\nsimulated") + (
                            "\nsplit 0: raw data\nuploaded" if heat["raw"][i, j] else ""),
                            ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")
            ax.set_xticks(range(len(rates)))
            ax.set_xticklabels(["%g" % r for r in rates])
            ax.set_yticks(range(len(networks)))
            ax.set_yticklabels(networks)
            ax.set_xlabel("uplink mbit/s (downlink 2.5x)")
            ax.set_title(title + " (measured: mean of the seeds)", fontsize=9)
            fig.colorbar(im, ax=ax, label="log10 of the factor")
        fig.tight_layout()
        save(fig, self.image("grid"))

        cols = min(3, len(networks))
        rows_n = (len(networks) + cols - 1) // cols
        fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.2 * rows_n), squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for k, net in enumerate(networks):
            ax = axes[k // cols][k % cols]
            for method in METHODS:
                for source, style in (("simulated", "-"), ("measured", "o")):
                    xs, ys, errs = [], [], []
                    for rate in rates:
                        cell = cells.get((net, rate), {}).get(source)
                        if cell:
                            row = cell["rows"][method]
                            xs.append(rate)
                            ys.append(row["mean_round_s"])
                            half = row.get("mean_round_s_ci95", math.nan)
                            errs.append(0 if not np.isfinite(half) else half)
                    if not xs:
                        continue
                    if source == "measured":
                        ax.errorbar(xs, ys, yerr=errs, fmt="o", color=colours[method], ms=5,
                                    mfc="none", capsize=2, label="%s (measured, 95%% CI)" % method)
                    else:
                        ax.plot(xs, ys, style, color=colours[method],
                                label="%s (simulated)" % method)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(net, fontsize=9)
            ax.set_xlabel("uplink mbit/s")
            ax.set_ylabel("mean round s (rounds %d..)" % self.from_round)
            ax.grid(lw=0.3, alpha=0.5, which="both")
            if k == 0:
                ax.legend(fontsize=6)
        for k in range(len(networks), rows_n * cols):
            axes[k // cols][k % cols].axis("off")
        fig.tight_layout()
        save(fig, self.image("rounds"))

    def _grid_headline(self, cells):
        measured = [c["measured"] for c in cells.values() if "measured" in c]
        simulated = [c["simulated"] for c in cells.values()
                     if "measured" not in c and "simulated" in c]
        if not measured and not simulated:
            self.add("No grid cell has results yet: run `scripts/reproduction.sh`.\n\n")
            return
        # Faithful (or not yet judged) measured cells with at least one layer on the device.
        trusted = [c for c in self.evidence["grid"] if not c["raw"]]
        piped = [c for c in trusted if pipelined(c)]
        self.add("### Maxima over the grid, against the paper\n\n")
        self.add("PiPar's figures are the largest over the **measured** cells in which it "
                 "pipelines (m >= 2 micro-batches: at m = 1 PiPar runs SFL's schedule, so its "
                 "gain there is splitting's) and keeps at least one layer on the device, whose "
                 "emulation held, and whose 95% interval lies above 1 (for '> X': X > 1; "
                 "ranked by the point ratio, or X). Splitting's figure is SFL's: FL / SFL over "
                 "the same measured cells, m = 1 ones included. Each figure comes with its "
                 "cell's factors (section 'The gain taken apart'). Simulated cells are in "
                 "their own column and are not findings.\n\n")
        rows = []
        figures = (
            ("speedup", "PiPar's speedup of training (round time) vs FL", piped,
             lambda c: c["speedup"], PIPAR_PAPER["speedup"]),
            ("idle", "PiPar's server idle reduction vs FL (s per round)", piped,
             lambda c: c["idle"], PIPAR_PAPER["idle_reduction"]),
            ("pipelining", "pipelining: SFL / PiPar round time at PiPar's split", piped,
             pipelining, None),
            ("splitting", "splitting: FL / SFL round time (SFL at its own split)", trusted,
             lambda c: c["splitting"], PIPAR_PAPER["speedup"]))
        for key, noun, pool, ratio_of, paper in figures:
            items = [(ratio_of(c), c) for c in pool if ratio_of(c) is not None]
            best = largest_supported(items)
            sim = [(ratio_of(c).value, c) for c in simulated
                   if not c["raw"] and ratio_of(c) is not None and np.isfinite(ratio_of(c).value)
                   and (key == "splitting" or pipelined(c))]
            sim_best = max(sim, key=lambda t: t[0]) if sim else None
            self.headline[key] = best and (best[0], best[1]["where"], best[1])
            rows.append([
                noun,
                "**%s**" % ratio_text(best[0]) if best else
                "none above 1 (%d measured cells qualify)" % len(items),
                self._where(best[1]) if best else "-",
                self._factors_text(best[1]) if best else "-",
                "%s (%s)" % (self._sim_ratio_text(ratio_of(sim_best[1]), band=key != "idle"),
                             self._where(sim_best[1])) if sim_best else "-",
                "%.1fx" % paper if paper else "-"])
        self.add(md_table(["figure", "ours: measured", "where", "that cell's factors",
                           "ours: simulated (not a finding)", "PiPar paper"], rows))
        self.add("\nThe paper's figures are quoted from %s, not measured here; the paper "
                 "compares PiPar with FL, so its 34.6x holds splitting and pipelining together. "
                 "Server idle: section 0's definition (per round, evaluation not counted).\n\n"
                 % PIPAR_PAPER["source"])

    def _factors_text(self, c):
        """A cell's speedup vs FL as splitting x pipelining (own choices: an exact
        product), and pipelining at PiPar's split."""
        same = pipelining(c)
        return "splitting %s x pipelining %s (own choices)%s" % (
            self._ratio_cell(c["splitting"], c["source"]), self._ratio_cell(c["vs_sfl"], c["source"]),
            "; pipelining at PiPar's split %s" % self._ratio_cell(same, c["source"])
            if same is not None else "")

    def _factor_rows(self, cells):
        rows = []
        for c in cells:
            src = c["source"]
            same, same_idle = pipelining(c), pipelining(c, "idle")
            rows.append([
                c["net"], rate_text(c["rate"]),
                "measured, n = %d" % c["n"] + ("; emulation %s" % c["emulation"]
                                              if c["emulation"] in ("degraded", "broken") else "")
                if src == "measured" else "simulated",
                fmt(c["mini_batches"], "%d"), self._split(c["rows"]["sfl"]),
                "%s, m %s" % (self._split(c["rows"]["pipar"]), c["m"]),
                self._ratio_cell(c["splitting"], src),
                self._ratio_cell(same, src) if same else "not run",
                self._ratio_cell(c["vs_sfl"], src), self._ratio_cell(c["speedup"], src),
                self._ratio_cell(c["splitting_idle"], src, band=False),
                self._ratio_cell(same_idle, src, band=False) if same_idle else "not run",
                self._ratio_cell(c["idle"], src, band=False)])
        return rows

    def _sittings(self, cells):
        """How far a later sitting's round times lie from the first's, per measured cell
        and method (each seed's provenance names its sitting: SITTING of the invocation
        that ran it). The grid's figures pool every sitting's seeds."""
        rows, differences = [], []
        for c in cells:
            sitting = {id(e.run): int(e.provenance.get("sitting", 1) or 1) for e in c["entries"]}
            for m in METHODS:
                by = {}
                for run, p in zip(c["groups"][m].runs, c["rows"][m]["per_run"]):
                    by.setdefault(sitting.get(id(run), 1), []).append(p["mean_round_s"])
                if len(by) < 2:
                    continue
                first_sitting = min(by)
                first = by.pop(first_sitting)
                for k, later in sorted(by.items()):
                    ratio = stats.ratio_of_means(later, first)
                    inside = min(first) <= min(later) and max(later) <= max(first)
                    differences.append((abs(ratio.value - 1), ratio.value - 1, c["where"], m))
                    rows.append([c["net"], rate_text(c["rate"]), m, "%d: %s (n = %d)" % (
                        first_sitting, ci_text(*stats.mean_ci(first)[:2]), len(first)),
                        "%d: %s (n = %d)" % (k, ci_text(*stats.mean_ci(later)[:2]), len(later)),
                        ratio_text(ratio), "yes" if inside else "**no**"])
        self.add("### Noise across sittings\n\n")
        command = "`SITTING=2 FIRST_SEED=%d REPEATS=1 scripts/reproduction.sh --only measured,report`" % (
            self.args.repeats + 1)
        if not rows:
            self.add("Every measured run here comes from one sitting, so the intervals hold that "
                     "sitting's noise only. %s, run hours or days later, takes one more seed of "
                     "every measured cell and shows here how far it lands.\n\n" % command)
            self.pending.append("a second sitting of the measured cells (%s)" % command)
            return
        self.add("Round times of the seeds of a later sitting (%s) against the first sitting's, "
                 "per measured cell and method: mean ± 95%% interval, the ratio later / first "
                 "with Fieller's interval ('(n=1)': one run, no interval), and whether the later "
                 "runs lie within the range of the first's. The grid's figures pool every "
                 "sitting's seeds.\n\n" % command)
        self.add(md_table(["network", "uplink", "method", "first sitting: mean round s",
                           "later sitting: mean round s", "later / first",
                           "within the first's range"], rows))
        largest = max(differences)
        self.headline["sittings"] = (largest[1], largest[2], largest[3], len(differences),
                                     sum(1 for r in rows if r[-1] == "yes"))
        self.add("\nLargest difference between sittings: %+.1f%% (%s, %s); %d of %d later "
                 "sittings within the first's range.\n\n" % (
                     100 * largest[1], largest[2], largest[3], self.headline["sittings"][4], len(rows)))

    def _factors(self, cells):
        """The speedup and idle reduction of every cell taken apart."""
        shown = [cell.get("measured") or cell.get("simulated") for _, cell in sorted(cells.items())]
        if not shown:
            return
        self.add("### The gain taken apart: splitting and pipelining\n\n")
        self.add(
            "PiPar's speedup over FL is the product of two factors. **Splitting** is FL's round "
            "time over SFL's at SFL's own split: what training the device's part and sending "
            "activations instead of the whole model gains. **Pipelining** is SFL's round time "
            "over PiPar's: what cutting a mini-batch into micro-batches gains. At each one's "
            "own choices the two multiply exactly to the speedup; PiPar's planner may choose "
            "another split than SFL's, so pipelining is also given at PiPar's split, against "
            "SFL run at that split (NAME-sfl-atp), or against SFL's own runs where SFL chose "
            "PiPar's split too ('not run' where neither is there). The same for the server idle reduction. At m = 1 PiPar is SFL's "
            "schedule and its pipelining factor can only be 1.\n\n")
        self.add(md_table(
            ["network", "uplink", "cell", "mini-batches per device and round", "SFL split",
             "PiPar split, m", "splitting: FL / SFL", "pipelining: SFL / PiPar at PiPar's split",
             "pipelining at own choices", "speedup: FL / PiPar", "idle: FL / SFL",
             "idle: SFL / PiPar at PiPar's split", "idle reduction: FL / PiPar"],
            self._factor_rows(shown)))
        self.add("\nMeasured: Fieller's 95%% intervals as in the grid; simulated: the band "
                 "(section 0). The machine-readable table: `%s`.\n\n"
                 % os.path.relpath(self._grid_csv(shown), ROOT))

    def _grid_csv(self, shown):
        """grid.csv in the archive (docs/reproduction-data/; the results folder without
        one): one row per cell as the grid shows it (measured where measured, else
        simulated)."""
        import csv
        path = os.path.join(self.args.archive or self.results, "grid.csv")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["network", "uplink_mbit", "measured", "emulation", "n",
                          "mini_batches_per_round", "fl_round_s", "sfl_round_s", "pipar_round_s",
                          "sfl_split", "pipar_split", "pipar_m"] +
                         [name + suffix for name in ("splitting_gain", "pipelining_gain",
                                                     "pipelining_gain_own_choices", "speedup",
                                                     "splitting_idle_reduction",
                                                     "pipelining_idle_reduction", "idle_reduction")
                          for suffix in ("", "_lo", "_hi")])
            for c in shown:
                src = c["source"]
                ratios = [c["splitting"], pipelining(c), c["vs_sfl"], c["speedup"],
                          c["splitting_idle"], pipelining(c, "idle"), c["idle"]]
                bands = [True, True, True, True, False, False, False]
                out.writerow(
                    [c["net"], "%g" % c["rate"], int(src == "measured"),
                     c["emulation"] if src == "measured" else "simulated",
                     c["n"] if src == "measured" else "",
                     "" if c["mini_batches"] is None else c["mini_batches"]] +
                    ["%.6g" % c["rows"][m]["mean_round_s"] for m in METHODS] +
                    [c["rows"]["sfl"]["split"], c["rows"]["pipar"]["split"], c["m"]] +
                    [v for r, band in zip(ratios, bands) for v in self._ratio_fields(r, src, band)])
        return path

    def _ratio_fields(self, ratio, source, band):
        """(value, lo, hi) of a ratio for grid.csv: Fieller's interval (measured), the
        band's range (simulated round-time ratios), '' where there is none; '> X' is
        value '', lo X, hi inf."""
        if ratio is None:
            return ["", "", ""]
        if source == "measured" and ratio.verdict == stats.LOWER_BOUND:
            return ["", "%.6g" % ratio.bound, "inf"]
        if not np.isfinite(ratio.value):
            return ["", "", ""]
        value = "%.6g" % ratio.value
        if source != "measured":
            if band and self.band:
                lo, hi = band_interval(ratio.value, self.band["largest"])
                return [value, "%.6g" % lo, "%.6g" % hi]
            return [value, "", ""]
        if ratio.verdict in (stats.ABOVE_1, stats.BELOW_1, stats.NO_DIFFERENCE):
            return [value, "%.6g" % ratio.low, "%.6g" % ratio.high]
        return [value, "", ""]

    def _where(self, c):
        return "%s, uplink %s (PiPar split %s, %s micro-batches; PiPar server idle %s s/round)" % (
            c["net"], rate_text(c["rate"]), c["split"], c["m"],
            ci_text(*per_round(c["rows"]["pipar"], "server_idle_s"), spec="%.3f"))

    def _why(self, heat, networks, rates, cells):
        """What the data say about where the gain is large, in sentences built from it."""
        if not cells:
            return
        lines = []
        by_net = np.array([np.nanmax(row) if np.isfinite(row).any() else np.nan
                           for row in heat["speedup"]])
        order = np.argsort(-np.nan_to_num(by_net, nan=-1))
        flops = {}
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if data:
                flops[net] = sum(l["flops_per_sample"] for l in data["ranks"][0]["layers"])
        ranked = [networks[k] for k in order if np.isfinite(by_net[k]) and networks[k] in flops]
        heavy_first = (len(ranked) >= 2 and
                       ranked[0] in sorted(flops, key=flops.get, reverse=True)[:max(1, len(flops) // 2)])
        heading = "Heavy networks gain most." if heavy_first else "Gain per network."

        def measured_at_max(k):
            row = heat["speedup"][k]
            return bool(heat["measured"][k][int(np.nanargmax(row))])
        lines.append("- **" + heading + "** Largest speedup per network (point ratios; "
                     "measured cells: the mean of the seeds; simulated ones are predictions, "
                     "not findings): " + ", ".join(
                         "%s %.1fx (%s)" % (networks[k], by_net[k],
                                            "measured" if measured_at_max(k) else "simulated")
                         for k in order if np.isfinite(by_net[k])) +
                     ". FL makes each device train the whole model at 2 GFLOP/s and send it "
                     "both ways every round; PiPar's planner leaves the device a thin first part "
                     "(see the device FLOPs share column) and the server, %s faster than a "
                     "device, does the rest. Most of that gain is splitting's, not "
                     "pipelining's (section 'The gain taken apart'); and since FL's model "
                     "exchange is paid once a round, the gain shrinks as rounds grow longer "
                     "(section 'How the round length moves the answer')."
                     % self._speed_ratio_text(networks))
        trend = []
        for k, net in enumerate(networks):
            row = heat["speedup"][k]
            ok = np.isfinite(row)
            if ok.sum() >= 2:
                trend.append((net, row[ok][0], row[ok][-1]))
        if trend:
            thin = [t for t in trend if t[1] > t[2]]
            lines.append(
                "- **Link rate.** Speedup at the thinnest vs the fastest uplink: " + ", ".join(
                    "%s %.1fx -> %.1fx" % t for t in trend) + ". " +
                ("For %s the gain is larger on thin links: FL sends the whole model up and "
                 "down every round, which the thin link makes long, while PiPar's "
                 "activations are small next to the model. " % ", ".join(t[0] for t in thin)
                 if thin else "") +
                ("For %s the gain grows with the rate: PiPar's per-sample activations "
                 "outweigh the model's bytes there, so a faster link helps PiPar more than "
                 "FL. " % ", ".join(t[0] for t in trend if t[1] <= t[2])
                 if len(thin) < len(trend) else ""))
        lines.append(
            "- **Server idle.** In FL the server only averages: its idle time is nearly the "
            "whole round. The reduction is FL's idle seconds per round divided by PiPar's "
            "remaining ones, so it is largest where PiPar keeps the server busiest, not where "
            "the round is shortest. Where PiPar's remaining idle time is near 0 its interval "
            "reaches 0 and only '> X' can be said.")
        shown = [c.get("measured") or c.get("simulated") for c in cells.values()]
        losing = [c for c in shown if (c["source"] == "measured" and c["speedup"].verdict == stats.BELOW_1)
                  or (c["source"] == "simulated" and np.isfinite(c["speedup"].value)
                      and c["speedup"].value < 1)]
        # A gain or loss measured while the emulation did not hold is the host's, not a
        # finding (docs/explanation/fidelity.md).
        host_made = [c for c in shown if c.get("emulation") in ("degraded", "broken")]
        losing = [c for c in losing if c not in host_made]
        if host_made:
            lines.append(
                "- **Where the emulation did not hold:** %s. Their round times are partly this "
                "host's (its ranks waited for its cores, or the devices' stages outlasted their "
                "pace), so these cells are no evidence either way; they are kept out of the "
                "headline." % "; ".join(
                    "%s at %s (%s; emulation %s: %s)" % (
                        c["net"], rate_text(c["rate"]), self._ratio_cell(c["speedup"], c["source"]),
                        c["emulation"], self._first_reason(c)) for c in host_made))
        if losing:
            lines.append(
                "- **Where PiPar loses to FL:** %s. Light networks (few FLOPs per sample) "
                "leave FL little device work to save, while PiPar still sends every "
                "activation and gradient and the server runs every device's micro-batches "
                "one after another." % ", ".join(
                    "%s at %s (%s)" % (c["net"], rate_text(c["rate"]),
                                       self._ratio_cell(c["speedup"], c["source"])) for c in losing))
        measured = [c["measured"] for c in cells.values() if "measured" in c]
        alike = [c for c in measured if c["m"] == "1"]
        if alike:
            lines.append(
                "- **PiPar with one micro-batch** (the planner's choice) runs SFL's schedule: "
                "vs SFL %s." % ", ".join("%s at %s %s" % (c["net"], rate_text(c["rate"]),
                                                          ratio_text(c["vs_sfl"])) for c in alike))
        slower = [c for c in measured if c["m"] != "1" and c["vs_sfl"].verdict == stats.BELOW_1]
        if slower:
            lines.append(
                "- **Where PiPar (m > 1) is slower than SFL:** %s. The server bounds the round "
                "there, and PiPar runs m smaller stages per mini-batch where SFL runs one, which "
                "on this CPU takes longer in all (per-layer call costs do not shrink with the "
                "micro-batch)." % ", ".join("%s at %s (%s)" % (c["net"], rate_text(c["rate"]),
                                                              ratio_text(c["vs_sfl"])) for c in slower))
        faster = [c for c in measured if c["m"] != "1" and supported(c["vs_sfl"]) is not None]
        if faster:
            lines.append(
                "- **Pipelining itself** (PiPar with m > 1 against SFL, the same mathematics "
                "without the pipeline): faster in %s." % ", ".join(
                    "%s at %s (%s)" % (c["net"], rate_text(c["rate"]), ratio_text(c["vs_sfl"]))
                    for c in faster))
        lines.append(
            "- **Why ours differs from 34.6x / 64.1x.** The paper's server and devices are "
            "not ours: here the server is one CPU core at the speeds of the profile table "
            "and the devices are paced at 2 GFLOP/s, so each side's compute, and with it "
            "both factors, differ. Our rounds are %s, which weighs FL's per-round model exchange "
            "more than a CIFAR-10 epoch (390 mini-batches per device at 4 devices) would: "
            "the round-length curve shows by how much. The grid's devices "
            "are identical and paced exactly; the paper's testbed is not modelled here. "
            "PiPar's choices come from our planner (it simulates the real schedule, with "
            "one server serving every device), not from the authors' closed form."
            % self._grid_rounds_text(cells))
        self.add("### Where the gain is large, and why\n\n" + "\n".join(lines) + "\n\n")

    def _speed_ratio_text(self, networks):
        ratios = []
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if not data:
                continue
            server = next(r for r in data["ranks"] if r["role"] == "server")
            batch = data["batch_sizes"][-1]
            seconds = sum(l["forward_s"][-1] + l["backward_s"][-1] for l in server["layers"])
            flops = 3 * batch * sum(l["flops_per_sample"] for l in server["layers"])
            ratios.append(flops / seconds / 2e9)
        if not ratios:
            return "(no profile)"
        if round(min(ratios)) == round(max(ratios)):
            return "%.0fx" % ratios[0]
        return "%.0f-%.0fx" % (min(ratios), max(ratios))

    def _measured_vs_simulated(self, cells):
        rows, errors, points, inside = [], [], [], 0
        for (net, rate), cell in sorted(cells.items()):
            if "measured" not in cell or "simulated" not in cell:
                continue
            m_cell, s_cell = cell["measured"], cell["simulated"]
            m_rows, s_rows = method_rows(m_cell), method_rows(s_cell)
            for method in [k for k in m_rows if k in s_rows]:
                (m, m_runs), (s, s_runs) = m_rows[method], s_rows[method]
                error = s["mean_round_s"] / m["mean_round_s"] - 1
                choice = lambda row: ("P %s" % row["split"]) + (  # noqa: E731
                    ", m %s" % row["micro_batches"] if method == "pipar" else "")
                differs = method != "fl" and choice(m) != choice(s)
                same = "" if method == "fl" else (
                    "%s / %s" % (choice(m), choice(s)) if differs else choice(m))
                half = m.get("mean_round_s_ci95", math.nan)
                within = (abs(s["mean_round_s"] - m["mean_round_s"]) <= half
                          if np.isfinite(half) else None)
                # A pair with different choices (a cell measured at its config's fixed
                # split, simulated at the planner's) predicts another run: shown, not counted.
                if not differs:
                    errors.append((abs(error), error, net, rate, method))
                    points.append((m["mean_round_s"], s["mean_round_s"], method, half))
                    inside += bool(within)
                rows.append([net, rate_text(rate), method, same, row_ci(m, "mean_round_s"),
                             "%.3f" % s["mean_round_s"],
                             "(other choice)" if differs else "%+.1f%%" % (100 * error),
                             "-" if within is None else ("yes" if within else "no"),
                             "%s / %.2f" % (ci_text(*per_round(m, "server_busy_s"), spec="%.2f"),
                                            per_round(s, "server_busy_s")[0]),
                             "%s / %.2f" % (ci_text(*per_round(m, "device_busy_s"), spec="%.2f"),
                                            per_round(s, "device_busy_s")[0]),
                             self.cite.cite(*[e for e in m_cell["entries"] + s_cell["entries"]
                                              if e.run in m_runs or e.run in s_runs])])
        self.add("### Measured against simulated\n\n")
        if not rows:
            self.add("No cell is both measured and simulated yet.\n\n")
            return
        self.add(md_table(["network", "uplink", "method", "choice (measured / simulated)",
                           "measured round s (mean ± 95% CI)", "simulated round s",
                           "error of the mean", "simulated within the measured interval",
                           "server busy s/round measured / simulated",
                           "device busy s/round measured / simulated", "runs"], rows))
        abs_errors = sorted(e[0] for e in errors)
        worst = max(errors)
        self.headline["sim_error"] = (float(np.median(abs_errors)), worst)
        self.add("\nError = simulated / measured mean - 1 of the mean round time (rounds %d..), "
                 "for pairs that ran the same split and micro-batches (a row marked '(other "
                 "choice)' is not counted). Median |error| %.1f%%, largest %+.1f%% (%s, %s, %s); "
                 "%d of %d simulations fall inside the measured 95%% interval. The busy columns "
                 "say where a difference comes from: the measured runs put the ranks on this "
                 "machine's cores beside whatever else ran (load in the provenance), while the "
                 "simulation shares the cores among the ranks only. How close the simulator "
                 "comes on a quiet machine: %s.\n\n"
                 % (self.from_round, 100 * float(np.median(abs_errors)), 100 * worst[1], worst[2],
                    rate_text(worst[3]), worst[4], inside, len(errors),
                    os.path.relpath(PREDICTION_ACCURACY_DOC, ROOT)))
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5, 4.4))
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for method in METHODS:
            mine = [p for p in points if p[2] == method]
            if mine:
                ax.errorbar([p[0] for p in mine], [p[1] for p in mine],
                            xerr=[p[3] if np.isfinite(p[3]) else 0 for p in mine], fmt="o",
                            color=colours[method], label=method, ms=5, capsize=2)
        lo = min(min(p[0], p[1]) for p in points) * 0.8
        hi = max(max(p[0], p[1]) for p in points) * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured mean round s (95% CI)")
        ax.set_ylabel("simulated mean round s")
        ax.set_title("simulator vs runtime, grid cells measured here", fontsize=9)
        ax.grid(lw=0.3, alpha=0.5, which="both")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save(fig, self.image("measured-vs-simulated"))
        self.add("![measured vs simulated round time](%s)\n\n"
                 % self.link(self.image("measured-vs-simulated")))

    # --- round length ----------------------------------------------------------------------
    def rounds(self):
        """The round-length curve: speedup, splitting and pipelining against the
        mini-batches per device and round, for the networks the rounds part ran."""
        measured = run_sets(self.store, "rounds-measured", rounds_key)
        simulated = run_sets(self.store, "rounds-simulated", rounds_key)
        points = {}  # (net, rate) -> {length: cell}, measured where measured
        for files, source in ((simulated, "simulated"), (measured, "measured")):
            for (net, rate, length) in sorted({k[:3] for k in files}):
                sets = {m: files.get((net, rate, length, m)) for m in METHODS + (SFL_AT_PIPAR,)}
                if any(sets[m] is None for m in METHODS):
                    continue
                c = self._cell(net, rate, source, sets)
                if not c:
                    continue
                # A measured point replaces the simulated one, which stays cited.
                replaced = points.setdefault((net, rate), {}).get(length)
                c["cited"] = c["entries"] + (replaced["entries"] if replaced else [])
                points[(net, rate)][length] = c
        self.add("### How the round length moves the answer\n\n")
        if not points:
            self.add("Not run yet: `scripts/reproduction.sh --only rounds,report` (the Slurm "
                     "array's 'rounds NET LENGTH' elements).\n\n")
            self.pending.append("the round-length curve (`scripts/reproduction.sh --only rounds,report`)")
            return
        self.add(
            "FL sends the whole model up and down once a round; SFL and PiPar send activations "
            "and gradients for every mini-batch. So the longer a round, the less FL's model "
            "exchange weighs, and splitting's gain falls towards what compute alone gives. "
            "Each point below is a cell of the grid (same settings, same four runs) with "
            "`train.local_iterations` set to the round's length; 390 mini-batches of 32 is a "
            "CIFAR-10 epoch over 4 devices (12,500 samples each; the synthetic data repeat, "
            "which leaves the times alone). Measured points: mean and Fieller's 95% interval "
            "over the seeds, their emulation in the cell column where it did not hold (then "
            "the times are partly this host's); the others are simulated and carry the band "
            "of section 0.\n\n")
        rows = []
        for (net, rate), by_length in sorted(points.items()):
            for length, c in sorted(by_length.items()):
                rows.append([net, rate_text(rate), length] + self._factor_rows([c])[0][2:3] + [
                    self._time_cell(c["rows"]["fl"], "mean_round_s", c["source"]),
                    "%s, m %s" % (self._split(c["rows"]["pipar"]), c["m"]),
                    self._ratio_cell(c["splitting"], c["source"]),
                    self._ratio_cell(pipelining(c), c["source"]) if pipelining(c) else "not run",
                    self._ratio_cell(c["speedup"], c["source"]),
                    self.cite.cite(*c["cited"])])
        self.add(md_table(["network", "uplink", "mini-batches per device and round", "cell",
                           "FL round s", "PiPar split, m", "splitting: FL / SFL",
                           "pipelining: SFL / PiPar at PiPar's split", "speedup: FL / PiPar",
                           "runs"], rows))
        self.add("\n")
        self._rounds_picture(points)
        self.add("![speedup, splitting and pipelining against the round length](%s)\n\n"
                 % self.link(self.image("round-length")))

    def _rounds_picture(self, points):
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharex=True)
        figures = (("speedup", "speedup FL / PiPar", lambda c: c["speedup"]),
                   ("splitting", "splitting FL / SFL", lambda c: c["splitting"]),
                   ("pipelining", "pipelining SFL / PiPar at PiPar's split", pipelining))
        colours = ["#4C72B0", "#C44E52", "#55A868", "#8172B2", "#CCB974"]
        for ax, (_, title, ratio_of) in zip(axes, figures):
            for k, ((net, rate), by_length) in enumerate(sorted(points.items())):
                colour = colours[k % len(colours)]
                xs, ys = [], []
                for length, c in sorted(by_length.items()):
                    r = ratio_of(c)
                    if r is None or not np.isfinite(r.value):
                        continue
                    xs.append(length)
                    ys.append(r.value)
                    measured = c["source"] == "measured"
                    low = r.low if measured else band_interval(r.value, self.band["largest"])[0] \
                        if self.band else math.nan
                    high = r.high if measured else band_interval(r.value, self.band["largest"])[1] \
                        if self.band else math.nan
                    err = ([[r.value - low], [high - r.value]] if np.isfinite(low) and np.isfinite(high)
                           else None)
                    ax.errorbar([length], [r.value], yerr=err, fmt="o" if measured else "s",
                                color=colour, mfc=colour if measured else "none", capsize=2, ms=5)
                ax.plot(xs, ys, "-", color=colour, lw=1, label="%s, %s" % (net, rate_text(rate)))
            ax.axhline(1, color="k", lw=0.5)
            ax.set_xscale("log")
            lengths = sorted({length for by in points.values() for length in by})
            ax.set_xticks(lengths)
            ax.set_xticklabels([str(length) for length in lengths])
            ax.minorticks_off()
            ax.set_xlabel("mini-batches per device and round")
            ax.set_title(title, fontsize=9)
            ax.grid(lw=0.3, alpha=0.5)
        axes[0].set_ylabel("ratio")
        axes[0].legend(fontsize=7, title="filled: measured (95% CI)\nopen: simulated (band)",
                       title_fontsize=7)
        fig.tight_layout()
        save(fig, self.image("round-length"))

    # --- DP on the main job ------------------------------------------------------------
    # --- heterogeneous devices and changing bandwidth ------------------------------------
    def heterogeneity(self):
        """FL, SFL and PiPar on configs/heterogeneous.ini and configs/changing-bandwidth.ini
        (the heterogeneity part), and the speedups the conditions' claims rest on."""
        sets = run_sets(self.store, "heterogeneity", heterogeneity_key)
        self.add("### Heterogeneous devices and changing bandwidth\n\n")
        experiments = sorted({e for e, _ in sets})
        if not experiments:
            self.add("Not run yet: `scripts/reproduction.sh --only heterogeneity,report`.\n\n")
            self.pending.append("heterogeneous devices and changing bandwidth "
                                "(`scripts/reproduction.sh --only heterogeneity,report`)")
            return
        self.add(
            "PiPar's paper says its gains hold with heterogeneous devices and changing "
            "bandwidth. `configs/heterogeneous.ini`: 1 server + 4 devices, VGG-5 on "
            "Fashion-MNIST, devices 1.5x, 4x, 8x and 8x slower than this machine "
            "(`devices.slowdown`), links of 5-100 mbit with 2-30 ms delay. "
            "`configs/changing-bandwidth.ini`: 1 server + 3 devices whose links drop and "
            "partly recover mid-run (configs/traces/). Each runs FL, SFL, PiPar with one hand "
            "choice for every device, PiPar planned per device before round 1, and, where "
            "links follow traces, PiPar planned again after a round in which a link changed "
            "(`scripts/heterogeneity-comparison.sh --list`), seed by seed across the runs. "
            "Mean and 95%% interval over the seeds (rounds %d..), ratios with Fieller's "
            "interval; a run whose emulation did not hold is marked, and its experiment's "
            "figures stay out of the conclusions. The claims rest on PiPar planned per "
            "device against FL.\n\n" % self.from_round)
        conditions = {}
        for experiment in experiments:
            items = self._heterogeneity_table(experiment, {
                name: sets[(experiment, name)] for name in HETEROGENEITY_RUNS
                if (experiment, name) in sets})
            if experiment in HETEROGENEITY_CONDITIONS:
                conditions[experiment] = items
        self.evidence["conditions"] = conditions

    def _heterogeneity_table(self, experiment, sets):
        """One experiment's table; returns [(PiPar planned vs FL speedup, where)] when
        FL and that PiPar ran and every run of the experiment was faithful, else []."""
        # Every seed of a run is one group, whatever the planner chose for it: the run
        # is "PiPar planned per device", not one plan.
        groups = {name: Group(s.runs()) for name, s in sets.items() if s.runs()}
        replanned = [n for n, g in groups.items() if len(group_runs(g.runs)) > 1]
        self.note_sets(experiment, sets.values())
        self.measured_runs(sum(g.n for g in groups.values()))
        self.add("**%s** (`configs/%s.ini`)\n\n" % (experiment, experiment))
        if "fl" not in groups:
            self.add("No FL run yet: no comparison.\n\n")
            return []
        names = [n for n in HETEROGENEITY_RUNS if n in groups]
        rows = dict(zip(names, compare_groups([groups[n] for n in names], baseline=groups["fl"].label,
                                              from_round=self.from_round)))
        vs_sfl = {}
        if "sfl" in groups:
            for name in names:
                if name.startswith("pipar"):
                    vs_sfl[name] = compare_groups([groups["sfl"], groups[name]], baseline=groups["sfl"].label,
                                                  from_round=self.from_round)[1]["speedup_ratio"]
        self.note_rows(experiment, rows.values())
        verdicts = {n: emulation.worst([emulation.verdict(r) for r in groups[n].runs]) for n in names}
        table = []
        for name in names:
            row, runs = rows[name], groups[name].runs
            table.append([HETEROGENEITY_RUNS[name], row["n"], row_ci(row, "mean_round_s"),
                          ci_text(*per_round(row, "server_idle_s")),
                          row_ci(row, "final_accuracy", "%.4f"), fmt(trivial_rate(runs), "%.3f"),
                          "-" if name == "fl" else ratio_text(row["speedup_ratio"]),
                          "-" if name == "fl" else ratio_text(row["server_idle_reduction_ratio"]),
                          ratio_text(vs_sfl[name]) if name in vs_sfl else "-", verdicts[name],
                          self.cite.cite(*sets[name].ok_entries())])
        self.add(md_table(["run", "n", "mean round s", "server idle s/round", "final accuracy",
                           "trivial rate", "speedup vs FL", "server idle reduction vs FL",
                           "speedup vs SFL", "emulation", "runs"], table))
        self.add("\n")
        if replanned:
            self.add("The planner chose differently for different seeds in %s; each row holds "
                     "all its seeds.\n\n" % ", ".join(HETEROGENEITY_RUNS[n] for n in replanned))
        if HETEROGENEITY_CLAIMED in rows:
            self.headline.setdefault("heterogeneity", []).append((
                experiment, rows[HETEROGENEITY_CLAIMED]["speedup_ratio"],
                emulation.worst(list(verdicts.values()))))
        unfaithful = [n for n in names if not emulation.trusted(verdicts[n])]
        if unfaithful:
            self.add("Not faithful (%s): the times of this experiment are partly this host's and "
                     "stay out of the conclusions.\n\n" % ", ".join(
                         "%s: %s" % (HETEROGENEITY_RUNS[n], verdicts[n]) for n in unfaithful))
            return []
        if HETEROGENEITY_CLAIMED not in rows:
            return []
        return [(rows[HETEROGENEITY_CLAIMED]["speedup_ratio"], "%s, %s" % (
            experiment, HETEROGENEITY_RUNS[HETEROGENEITY_CLAIMED]))]

    def dp(self):
        self.add("## 2. Differential privacy: its cost, and PiPar's gain with DP on\n\n")
        self.add("What DP costs in accuracy across noise multipliers, with epsilon under both "
                 "adjacency relations, on the main job's settings (3 seeds a cell): "
                 "[privacy-accuracy.md](privacy-accuracy.md) (`bash scripts/privacy-accuracy.sh`). "
                 "This section measures time.\n\n")
        sets = run_sets(self.store, "dp", dp_key)
        self.add(
            "The main job's settings (`configs/quickstart/{fl,sfl,pipar}.ini`: Fashion-MNIST, "
            "VGG-5 split 4, 1 server + 3 devices, devices `slowdown = 4`, 10/25 mbit, %s), "
            "each method with DP off and on. DP on: `%s` for sfl and pipar (each sample's "
            "activation clipped and noised on the device, inside its forward stage); `%s` for "
            "fl (DP-FedAvg: clipped updates, noise on the average) (docs/explanation/privacy.md). "
            "These configs pace devices with `devices.slowdown` (a stage lasts 4x what it "
            "took here), which keeps DP's own work in the device's time (`devices.flops` "
            "would pace it away, as it counts only the layers' FLOPs), but makes every time "
            "follow this machine's load: the script runs one pass per seed over the six "
            "configurations, every second pass in reverse order, and the table gives the "
            "mean ± 95%% interval over the passes (rounds %d..).\n\n"
            % ("shortened for the quick mode" if self.args.mode == "quick" else "3 rounds of 10 mini-batches",
               self.args.dp_split, self.args.dp_fl, self.from_round))
        missing = ["%s DP %s" % (m, dp) for m in METHODS for dp in ("off", "on")
                   if (m, dp) not in sets or not sets[(m, dp)].runs()]
        if missing:
            self.add("Not run yet (%s): `scripts/reproduction.sh --only dp,report`.\n\n"
                     % ", ".join(missing))
            self.pending.append("DP on the main job (`scripts/reproduction.sh --only dp,report`)")
            return
        self.note_sets("DP", sets.values())
        rows, numbers, gains = [], {}, {}
        for dp in ("off", "on"):
            run_lists = {m: sets[(m, dp)].runs() for m in METHODS}
            self.measured_runs(sum(len(v) for v in run_lists.values()))
            groups, _ = grouped(run_lists)
            vs_fl = compare_methods(groups, METHODS, "fl", self.from_round)
            vs_sfl = compare_methods(groups, ("sfl", "pipar"), "sfl", self.from_round)["pipar"]
            self.note_rows("DP %s" % dp, vs_fl.values())
            numbers[dp] = (groups, vs_fl)
            gains[dp] = {"speedup": vs_fl["pipar"]["speedup_ratio"],
                         "idle": vs_fl["pipar"]["server_idle_reduction_ratio"],
                         "vs_sfl": vs_sfl["speedup_ratio"]}
        self.evidence["dp"] = gains
        self.headline["dp"] = gains
        for method in METHODS:
            cost = compare_methods({"off": numbers["off"][0][method], "on": numbers["on"][0][method]},
                                   ("off", "on"), "off", self.from_round)["on"]
            for dp in ("off", "on"):
                row = numbers[dp][1][method]
                runs = numbers[dp][0][method].runs
                eps = _epsilon(runs[0])
                rows.append([method, dp, row["n"], row_ci(row, "mean_round_s"),
                             ci_text(*per_round(row, "device_busy_s")),
                             ci_text(*per_round(row, "server_idle_s")),
                             "-" if dp == "off" else ratio_text(cost["speedup_ratio"]),
                             row_ci(row, "final_accuracy", "%.4f"), fmt(eps, "%.2f"),
                             self.cite.cite(*sets[(method, dp)].ok_entries())])
        self.add(md_table(["method", "DP", "n", "mean round s", "device busy s/round",
                           "server idle s/round", "round time DP off / on",
                           "final accuracy", "epsilon (delta 1e-5)", "runs"], rows))
        self.add(
            "\nPiPar against FL: speedup %s with DP off, %s with DP on; server idle reduction "
            "%s off, %s on. PiPar against SFL: %s off, %s on. 'round time DP off / on' below 1 "
            "means DP made the rounds longer; what DP costs (per-sample norms and one normal "
            "draw per activation element inside the forward stage; for fl the update's "
            "clipping once per round) shows there only when it exceeds this machine's load "
            "drift between passes. Accuracy after these short rounds: at this noise (its norm "
            "is sigma x sqrt(elements) = 0.5 x sqrt(3,136) = 28x the clipped activation's at "
            "VGG-5 split 4) the split methods stay near chance, and so does fl (noise of 0.1 "
            "per weight on the average of 3 devices); section 3 trains longer with less "
            "noise. Epsilon is the conservative record-level (split) or device-level (fl) "
            "figure the run recorded (docs/explanation/privacy.md states the adjacency relation); the two "
            "are not the same guarantee.\n\n"
            % (ratio_text(gains["off"]["speedup"]), ratio_text(gains["on"]["speedup"]),
               ratio_text(gains["off"]["idle"]), ratio_text(gains["on"]["idle"]),
               ratio_text(gains["off"]["vs_sfl"]), ratio_text(gains["on"]["vs_sfl"])))
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        x = np.arange(len(METHODS))
        for ax, key, label in ((axes[0], "mean_round_s", "mean round s (95% CI)"),
                               (axes[1], "device_busy_s", "device busy s per round (95% CI)")):
            for k, (dp, colour) in enumerate((("off", "#4C72B0"), ("on", "#DD8452"))):
                if key == "mean_round_s":
                    vals = [numbers[dp][1][m][key] for m in METHODS]
                    errs = [numbers[dp][1][m][key + "_ci95"] for m in METHODS]
                else:
                    pairs = [per_round(numbers[dp][1][m], key) for m in METHODS]
                    vals, errs = [p[0] for p in pairs], [p[1] for p in pairs]
                errs = [e if np.isfinite(e) else 0 for e in errs]
                bars = ax.bar(x + (k - 0.5) * 0.38, vals, 0.38, yerr=errs, capsize=3,
                              color=colour, label="DP " + dp)
                ax.bar_label(bars, ["%.2f" % v for v in vals], fontsize=7)
            ax.set_xticks(x)
            ax.set_xticklabels(METHODS)
            ax.set_ylabel(label)
            ax.legend(fontsize=8)
        fig.suptitle("main job, DP off and on (mean of the seeds, 95% interval)", fontsize=9)
        fig.tight_layout()
        save(fig, self.image("dp"))
        self.add("![round time with DP off and on](%s)\n\n" % self.link(self.image("dp")))

    # --- accuracy -------------------------------------------------------------------------
    def accuracy(self):
        self.add("## 3. Accuracy: FL, SFL and PiPar with DP off and on\n\n")
        args = self.args
        self.add(
            "`%s`: 1 server + 3 devices, iid shares, batch 32, SGD lr 0.05, 10 mini-batches "
            "per device and round, %s rounds, split 2, PiPar with 4 micro-batches; fast "
            "unpaced links (time is not measured here). Networks: %s; data: %s "
            "(synthetic = CIFAR-shaped 3x32x32). DP on: `%s` for sfl and pipar, `%s` for "
            "fl. That is far less noise than in section 2: there every method stays near "
            "chance; here the noise's norm is 0.3x to 2x the signal's, by method and network "
            "(worked out in scripts/reproduction.sh), and the epsilon the runs record is too "
            "large to protect anything. It shows whether the methods still agree when noise "
            "enters their training, not a useful privacy level. Final accuracy = the last "
            "round's, mean ± 95%% interval over the seeds; PiPar / FL and SFL / FL are "
            "ratios of those means (Fieller).\n\n"
            % (args.accuracy_config, args.accuracy_rounds, args.accuracy_networks,
               args.accuracy_datasets, args.dp_accuracy_split, args.dp_accuracy_fl))
        wanted = {"%s-%s-%s-dp%s" % (d, n, m, dp): (d, n, m, dp)
                  for d in args.accuracy_datasets.split() for n in args.accuracy_networks.split()
                  for m in METHODS for dp in ("off", "on")}
        sets = run_sets(self.store, "accuracy", wanted.get)
        groups_drawn, rows, missing_groups = [], [], []
        for dataset in args.accuracy_datasets.split():
            for net in args.accuracy_networks.split():
                present = {(m, dp): sets[(dataset, net, m, dp)] for m in METHODS for dp in ("off", "on")
                           if (dataset, net, m, dp) in sets and sets[(dataset, net, m, dp)].runs()}
                if len(present) < 2 * len(METHODS):
                    missing_groups.append((dataset, net, 2 * len(METHODS) - len(present)))
                if not present:
                    continue
                self.note_sets("accuracy %s x %s" % (dataset, net), present.values())
                drawn = {}
                for dp in ("off", "on"):
                    run_lists = {m: present[(m, dp)].runs() for m in METHODS if (m, dp) in present}
                    if not run_lists:
                        continue
                    self.measured_runs(sum(len(v) for v in run_lists.values()))
                    groups, _ = grouped(run_lists)
                    base = "fl" if "fl" in groups else next(iter(groups))
                    numbers = compare_methods(groups, METHODS, base, self.from_round)
                    drawn.update({(m, dp): groups[m] for m in groups})
                    ratios = {}
                    for m in ("sfl", "pipar"):
                        if m in numbers and "fl" in numbers:
                            ratios[m] = stats.ratio_of_means(
                                [p["final_accuracy"] for p in numbers[m]["per_run"]],
                                [p["final_accuracy"] for p in numbers["fl"]["per_run"]])
                    all_runs = [r for g in groups.values() for r in g.runs]
                    trivial = trivial_rate(all_runs)
                    failed = {m: failed_to_learn([p["final_accuracy"] for p in numbers[m]["per_run"]],
                                                 trivial) for m in numbers}
                    where = "%s, %s" % (dataset, net)
                    if dp == "off" and "pipar" in ratios:
                        # FL is the baseline: a comparison with an FL that did not learn
                        # is no evidence (nor is one whose trivial rate is not recorded).
                        if failed.get("fl") is False:
                            self.evidence["accuracy"].append((ratios["pipar"], where))
                        else:
                            self.evidence.setdefault("accuracy_failed", []).append(
                                "%s (%s)" % (where, "FL at or below the trivial rate %.3f" % trivial
                                             if failed.get("fl") else "no trivial rate recorded"))
                    rows.append([dataset, net, dp, fmt(trivial, "%.3f")] + [
                        ("%s (n %d; %s)%s" % (row_ci(numbers[m], "final_accuracy", "%.4f"),
                                              numbers[m]["n"], _settled(groups[m].runs),
                                              "; **failed**: not above the trivial rate"
                                              if failed[m] else ""))
                        if m in numbers else "not run" for m in METHODS] + [
                        ratio_text(ratios["sfl"]) if "sfl" in ratios else "-",
                        ratio_text(ratios["pipar"]) if "pipar" in ratios else "-",
                        fmt(_epsilon(groups["pipar"].runs[0]) if "pipar" in groups else None, "%.3g"),
                        self.cite.cite(*[e for m in METHODS if (m, dp) in present
                                         for e in present[(m, dp)].ok_entries()])])
                groups_drawn.append((dataset, net, drawn))
        if not rows:
            self.add("**Not run yet.** These runs take about %s a seed on a 2-core machine; they "
                     "are not part of the default run. Produce them with `scripts/reproduction.sh "
                     "--only accuracy,report` (or `--full`), or on a cluster with "
                     "`jobs/submit-reproduction.sh` (one array element per dataset and "
                     "network), then `scripts/reproduction.sh --report-only`.\n\n" % "an hour")
            self.pending.append("accuracy (`scripts/reproduction.sh --only accuracy,report`)")
            return
        if missing_groups:
            text = ", ".join("%s x %s (%d of 6 runs missing: `scripts/reproduction.sh --job "
                             "'accuracy %s %s'`)" % (d, n, k, d, n) for d, n, k in missing_groups)
            self.add("Not run yet: %s; or all of them with the Slurm array "
                     "(`jobs/submit-reproduction.sh`), then `scripts/reproduction.sh "
                     "--report-only`.\n\n" % text)
            self.pending.append("accuracy groups %s" % ", ".join(
                "%s x %s" % (d, n) for d, n, _ in missing_groups))
        self.add(md_table(["data", "network", "DP", "trivial rate", "FL final accuracy (n; "
                           "last 5 rounds' largest range)", "SFL", "PiPar", "SFL / FL",
                           "PiPar / FL", "pipar's epsilon", "runs"], rows))
        self.add("\nThe trivial rate is the accuracy of the best constant answer (the test "
                 "set's most common class), as the runs record it (root attribute "
                 "trivial_accuracy; '-' for runs made before it); a method whose 95%% interval "
                 "does not clear it has **failed** to learn, and no comparison rests on it. The "
                 "range in brackets is max - min of the last five rounds' accuracy, the largest "
                 "over the seeds: below %.2f (%d points) means settled.\n\n"
                 % (SETTLED_RANGE, round(100 * SETTLED_RANGE)))
        self.add(
            "FL and SFL share FedAvg's mathematics (a mini-batch is one batch-norm batch on "
            "both sides of the cut); PiPar is SFL with micro-batches whose gradients "
            "accumulate, the same step, except that batch-norm layers (in VGG-5 and "
            "MobileNetV3 alike) normalise each micro-batch with its own statistics. "
            "With DP on, pipar draws its noise per micro-batch, so its noise is another sample "
            "of the same distribution as sfl's, and fl uses another mechanism (DP-FedAvg on "
            "the averaged model): FL's accuracy with DP is not expected to match the split "
            "methods'.\n\n")
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, len(groups_drawn), figsize=(4.3 * len(groups_drawn), 3.6),
                                 squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for ax, (dataset, net, drawn) in zip(axes[0], groups_drawn):
            for (method, dp), group in sorted(drawn.items()):
                n_rounds = min(len(r.rounds) for r in group.runs)
                acc = np.array([r.rounds["test_accuracy"][:n_rounds] for r in group.runs])
                means = [stats.mean_ci(acc[:, k]) for k in range(n_rounds)]
                mean = np.array([m[0] for m in means])
                half = np.array([m[1] if np.isfinite(m[1]) else 0 for m in means])
                x = np.arange(1, n_rounds + 1)
                ok = np.isfinite(mean)
                ax.plot(x[ok], mean[ok], "-" if dp == "off" else "--", color=colours[method],
                        label="%s, DP %s (n %d)" % (method, dp, group.n))
                ax.fill_between(x[ok], (mean - half)[ok], (mean + half)[ok],
                                color=colours[method], alpha=0.15, lw=0)
            ax.set_title("%s, %s" % (net, dataset), fontsize=9)
            ax.set_xlabel("round")
            ax.set_ylabel("test accuracy (mean, 95% band)")
            ax.grid(lw=0.3, alpha=0.5)
        axes[0][0].legend(fontsize=6)
        fig.tight_layout()
        save(fig, self.image("accuracy"))
        self.add("![accuracy per round](%s)\n\n" % self.link(self.image("accuracy")))

    # --- AdaSplit ------------------------------------------------------------------------
    def _adasplit_numbers(self, names):
        """{name: dict} for each name of adasplit/NAME(.seedS).h5 that has runs: the runs'
        c3 numbers (tradeoff.comparison_rows: final accuracy, GB up+down, client TFLOPs)
        per seed with their mean and 95% half-width, the group's mean round time and
        server idle share (compare_groups, rounds from_round..), the entries."""
        sets = run_sets(self.store, "adasplit", lambda stem: stem if stem in names else None)
        out = {}
        for name in names:
            s = sets.get(name)
            if s is None or not s.runs():
                continue
            runs = s.runs()
            self.note_sets("adasplit %s" % name, [s])
            self.measured_runs(len(runs))
            c3 = comparison_rows(runs, [budget_numbers(r, *ADASPLIT_BUDGETS) for r in runs])
            groups, split = grouped({name: runs})
            group = max(groups.values(), key=lambda g: g.n)
            row = compare_groups([group], baseline=group.label, from_round=self.from_round)[0]
            self.note_rows("adasplit %s" % name, [row])
            numbers = {"name": name, "method": runs[0].method, "runs": runs, "row": row,
                       "entries": s.ok_entries(), "n": len(runs), "legacy": s.legacy,
                       "personalised": all(_option_true(r, PERSONALISED_OPTION) for r in runs)}
            for key in ("final_accuracy", "total_gb", "client_tflops"):
                numbers[key + "_runs"] = [c[key] for c in c3]
                numbers[key], numbers[key + "_ci95"], _ = stats.mean_ci(numbers[key + "_runs"])
            numbers["trivial"] = trivial_rate(runs)
            numbers["failed"] = failed_to_learn(numbers["final_accuracy_runs"], numbers["trivial"])
            numbers["last_range"] = _last_range(runs)
            out[name] = numbers
        return out

    def adasplit(self):
        self.add("## 4. AdaSplit: comparison table, kappa and eta sweeps\n\n")
        methods = self.args.adasplit_methods.split()
        ours = self._adasplit_numbers(methods)
        command = "`scripts/reproduction.sh --only adasplit,report`"
        if not ours:
            self.add("Not run yet: %s (or the Slurm array) runs the comparison's runs, "
                     "`scripts/adasplit-comparison.sh --list`.\n\n" % command)
            self.pending.append("the AdaSplit comparison (%s, about 100 minutes a seed here)" % command)
            return
        first = next(iter(ours.values()))["runs"][0]
        up, down = first.option("network.uplink_rate"), first.option("network.downlink_rate")
        links = "%s up / %s down" % (up, down)
        if (up, down) != ("10mbit", "25mbit"):
            links += (" (the configs' 10 / 25 mbit raised with ADASPLIT_EXTRA: no method's "
                      "schedule, bytes or accuracy depends on the rates, so the runs reach "
                      "%d rounds sooner; round times are of these links)" % first.configured_rounds)
        self.add(
            "Configs `configs/adasplit/{%s}.ini` (%s): 1 server + 5 devices, Fashion-MNIST "
            "with 2 classes per device, LeNet split after pool1, %d rounds of %s "
            "mini-batches, each method at its optimizer and learning rate (the table; the "
            "baselines' chosen by the sweep at the end of this section), each device scored on its own classes, links %s; "
            "run by %s, one run per line of `scripts/adasplit-comparison.sh --list`, each "
            "with its seeds. Numbers are `cmlbed-report c3`'s (docs/explanation/c3-accounting.md) per "
            "seed, then mean ± 95%% interval: accuracy of the last evaluated round (per-device "
            "runs: the devices' accuracies weighted by their test samples), bytes over all "
            "links and rounds of the whole training, the devices' training FLOPs; mean round "
            "time and server idle share over rounds %d.. (`cmlbed-report summary`'s). The "
            "authors' figures: %s.\n\n"
            % (",".join(methods), "the runs' settings as configured" if self.args.mode != "quick"
               else "quick mode: overridden smaller, see the commands",
               first.configured_rounds, first.option("train.local_iterations") or "?", links, command,
               self.from_round, ADASPLIT_PAPER_SOURCE))
        paper = {m: (a, gb) for m, a, gb in ADASPLIT_PAPER}
        table = []
        # Both variants of the split baselines; the authors' figures beside each (theirs
        # scored every client's own model: the personalised rows are the like-for-like ones).
        for method in ("adasplit", "sfl", "sl", "pipar", "fl", "sfl-personalised", "sl-personalised",
                       "pipar-personalised"):
            if method not in ours:
                continue
            o = ours[method]
            p = paper.get(method.split("-")[0])
            table.append([
                method, "%s %s" % (o["runs"][0].option("train.optimizer"), o["runs"][0].option("train.lr")),
                o["n"], ci_text(100 * o["final_accuracy"], 100 * o["final_accuracy_ci95"], "%.1f%%")
                + ("; **failed**" if o["failed"] else ""),
                fmt(100 * o["trivial"], "%.1f%%"),
                "%.1f points%s" % (100 * o["last_range"], "" if o["last_range"] < SETTLED_RANGE
                                   else ", not settled") if np.isfinite(o["last_range"]) else "-",
                ci_text(o["total_gb"], o["total_gb_ci95"], "%.4f"),
                ci_text(o["client_tflops"], o["client_tflops_ci95"], "%.4f"),
                row_ci(o["row"], "mean_round_s"), row_ci(o["row"], "server_idle_pct", "%.1f"),
                "yes" if o["personalised"] else "no",
                "%.2f%%" % p[0] if p else "not reported", "%.2f" % p[1] if p else "-",
                self.cite.cite(*o["entries"])])
        self.add(md_table(["method", "optimizer, lr", "n", "accuracy (ours)", "trivial rate",
                           "last 5 rounds' accuracy range (largest over seeds)", "GB up+down (ours)",
                           "client TFLOPs (ours)", "mean round s (ours)", "server idle % (ours)",
                           "personalised (%s)" % PERSONALISED_OPTION, "accuracy (authors)",
                           "GB (authors)", "runs"], table))
        self.add("\nThe trivial rate is the best constant answer scored as the run scores "
                 "(here each device on its own classes: always answering the more common of "
                 "its own classes), from the runs' trivial_accuracy ('-': runs made before "
                 "cmlbed recorded it). A method whose 95%% interval does not clear it has "
                 "**failed**, and no verdict rests on beating it. Accuracy has settled when "
                 "its last 5 rounds move by less than %d points.\n"
                 % round(100 * SETTLED_RANGE))
        evidence = {"accuracy": {}, "bytes": {}, "personalised": {}, "failed": {},
                    "expected": None}
        lines = []
        if "adasplit" in ours:
            ada = ours["adasplit"]
            for base in ("sfl", "sl"):
                # The verdicts' accuracy is against the personalised variant where it ran
                # (like for like); bytes against the plain one (the method as published).
                for variant in (base, base + "-personalised"):
                    if variant not in ours:
                        continue
                    b = ours[variant]
                    accuracy = stats.ratio_of_means(ada["final_accuracy_runs"], b["final_accuracy_runs"])
                    sent = stats.ratio_of_means(b["total_gb_runs"], ada["total_gb_runs"])
                    if variant == accuracy_baseline(ours, base):
                        evidence["accuracy"][base] = accuracy
                        evidence["personalised"][base] = b["personalised"]
                        evidence["failed"][base] = (b["failed"], b["trivial"])
                    if variant == base:
                        evidence["bytes"][base] = sent
                    lines.append("- AdaSplit against %s: accuracy ratio %s, %s's bytes over AdaSplit's "
                                 "%s (the authors: %.2fx accuracy, %.2fx bytes)."
                                 % (variant, ratio_text(accuracy), variant, ratio_text(sent),
                                    paper["adasplit"][0] / paper[base][0], paper[base][1] / paper["adasplit"][1]))
            run = ada["runs"][0]
            try:
                kappa = float(run.option("adasplit.local_fraction"))
                eta = int(run.option("adasplit.selected"))
                devices = run.devices
                evidence["expected"] = (
                    2 * devices / eta / (1 - kappa),
                    "2 (no gradients back) x %d/%d (devices / selected) x 1/(1 - %g) (global "
                    "phase only), SplitFed's model exchange left out" % (devices, eta, kappa))
            except (TypeError, ValueError, ZeroDivisionError):
                pass
            if "sfl" in ours:
                self.headline["adasplit_bytes"] = (evidence["bytes"]["sfl"], ADASPLIT_PAPER_BYTES_RATIO)
        self.evidence["adasplit"] = evidence
        if lines:
            self.add("\n" + "\n".join(lines) + "\n")
        self.add(
            "\nThe totals differ from the authors' by orders of magnitude because our runs are "
            "LeNet on 28x28 grey images, theirs a larger network on CIFAR-10; the byte ratio "
            "follows from the schedule (%s). Accuracy is only like for like where the split "
            "baselines keep a personalised model per device (the personalised column), as "
            "AdaSplit's devices do; otherwise our FL/SFL/PiPar deploy one global model that "
            "after a few rounds on 2-class shards still mixes the devices' classes. The "
            "C3-Score is not reported: its formula was not available (docs/explanation/c3-accounting.md "
            "gives the budget coordinates).\n\n"
            % ("%.2fx expected: %s" % evidence["expected"] if evidence["expected"] else
               "no AdaSplit run to read it from"))
        self._adasplit_sweep(
            "kappa", "kappa sweep (AdaSplit's local fraction; eta 3 of 5, UCB)",
            ["kappa (local fraction)"], lambda run: [run.option("adasplit.local_fraction")],
            "More local training (higher kappa) sends fewer bytes, since the global phase is "
            "shorter; where accuracy falls, the global phase has become too short to "
            "train the server's part for every device. The authors' sweep numbers were not "
            "available to us, so only the direction can be compared: they report the same "
            "trade-off (kappa trades accuracy for bandwidth and client compute; 0.6 is their "
            "default).")
        self._adasplit_sweep(
            "eta", "eta sweep (devices selected per iteration of the global phase) x orchestrator "
            "(kappa 0.6)", ["eta (selected of 5)", "orchestrator"],
            lambda run: [run.option("adasplit.selected"), run.option("adasplit.orchestrator")],
            "Fewer selected devices send fewer bytes in the global phase; the orchestrator "
            "decides which devices (UCB: those whose loss is high, discounted; random: "
            "uniformly). The authors' figures for this sweep were not available to us.")
        self._lr_sweep(ours)

    def _lr_sweep(self, ours):
        """The baselines' learning-rate sweep (adasplit/lr-BASELINE-OPTIMIZER-LR runs):
        settled accuracy per setting, beside the trivial rate, and which setting the
        comparison's configs use (ours: the comparison's numbers by run name)."""
        names = set()
        for p in self.store.glob(os.path.join("adasplit", "lr-*.h5")):
            m = SEED_SUFFIX.search(os.path.basename(p))
            stem = os.path.basename(p)[:m.start()] if m else os.path.basename(p)[:-len(".h5")]
            if LR_STEM.match(stem):
                names.add(stem)
        sweep = self._adasplit_numbers(sorted(names))
        self.add("### The baselines' optimizer and learning rate\n\n")
        if not sweep:
            self.add("Not run yet: `ADASPLIT_GROUPS=lr scripts/reproduction.sh --only adasplit,report`.\n\n")
            self.pending.append("the baselines' learning-rate sweep (`ADASPLIT_GROUPS=lr "
                                "scripts/reproduction.sh --only adasplit,report`)")
            return
        table = []
        for name, o in sweep.items():
            baseline, optimizer, lr = LR_STEM.match(name).groups()
            used = ours.get(baseline)
            chosen = bool(used) and (used["runs"][0].option("train.optimizer") == optimizer and
                                     float(used["runs"][0].option("train.lr")) == float(lr))
            table.append([baseline, optimizer, lr, o["n"],
                          ci_text(100 * o["final_accuracy"], 100 * o["final_accuracy_ci95"], "%.1f%%")
                          + ("; **failed**" if o["failed"] else ""),
                          fmt(100 * o["trivial"], "%.1f%%"),
                          "%.1f points%s" % (100 * o["last_range"], "" if o["last_range"] < SETTLED_RANGE
                                             else ", not settled") if np.isfinite(o["last_range"]) else "-",
                          "**yes**" if chosen else "", self.cite.cite(*o["entries"])])
        table.sort(key=lambda r: tuple(_number_or_text(c) for c in r[:3]))
        self.add("Each baseline's config (`configs/adasplit/BASELINE.ini`) run with each "
                 "optimizer and learning rate of `scripts/adasplit-comparison.sh`'s lr group "
                 "(SGD with momentum 0.9; Adam with its weight decay 1e-5), over 1 gbit links "
                 "(only the accuracy is compared), as the AdaSplit paper tunes its baselines; "
                 "the comparison above runs each baseline at the setting its config names.\n\n")
        self.add(md_table(["baseline", "optimizer", "lr", "n", "accuracy", "trivial rate",
                           "last 5 rounds' accuracy range", "the comparison's setting", "runs"], table))
        self.add("\nThe optimizer's state (Adam's moments, SGD's momentum) starts afresh "
                 "whenever the baseline's weights are replaced by an average "
                 "(`train.optimizer_state = reset`, the default; docs/explanation/optimizer-state.md); "
                 "AdaSplit's devices never have theirs replaced.\n\n")

    def _adasplit_sweep(self, prefix, title, headings, settings, comment):
        names = set()
        for p in self.store.glob(os.path.join("adasplit", prefix + "*.h5")):
            base = os.path.basename(p)
            m = SEED_SUFFIX.search(base)
            names.add(base[:m.start()] if m else base[:-len(".h5")])
        ours = self._adasplit_numbers(sorted(names))
        if not ours:
            return
        self.add("%s:\n\n" % title)
        table = [settings(o["runs"][0]) + [
            o["n"], ci_text(100 * o["final_accuracy"], 100 * o["final_accuracy_ci95"], "%.1f%%"),
            ci_text(o["total_gb"], o["total_gb_ci95"], "%.4f"),
            ci_text(o["client_tflops"], o["client_tflops_ci95"], "%.4f"),
            row_ci(o["row"], "mean_round_s"), self.cite.cite(*o["entries"])] for o in ours.values()]
        table.sort(key=lambda r: tuple(_number_or_text(c) for c in r[:len(headings)]))
        self.add(md_table(headings + ["n", "accuracy", "GB up+down", "client TFLOPs",
                                      "mean round s", "runs"], table))
        self.add("\n%s\n\n" % comment)

    # --- what we conclude -------------------------------------------------------------------
    def conclude(self):
        claims = conclusions(self.evidence)
        self.headline["claims"] = claims
        self.add("## What we conclude\n\n")
        self.add(
            "Each claim of the two papers, with the verdict this report's data give it: "
            "**confirmed** (the cited 95%% interval supports it), **not confirmed** (the data "
            "are there and do not support it) or **not testable here** (the data cannot "
            "decide it, with the reason). Every verdict is computed from the figures above "
            "by scripts/reproduction_report.py (`conclusions()`), none is written by hand. "
            "PiPar's gains are taken over the measured grid cells in which it pipelines (m >= "
            "2 micro-batches) with at least one layer on the device (split >= 1) and whose "
            "emulation held (section 1), rounds %d.. of each run; at m = 1 PiPar runs SFL's "
            "schedule, and its gain there is splitting's (section 'The gain taken apart'). 'Same accuracy' needs every interval of PiPar's final "
            "accuracy over FL's within 1 ± %.0f%%; '8.13x' needs our interval to meet 8.13x "
            "± %.0f%%.\n\n" % (self.from_round, 100 * ACCURACY_MARGIN, 100 * BYTES_FACTOR_TOLERANCE))
        self.add(md_table(["paper", "claim", "paper's figure", "verdict", "what it rests on (ours)",
                           "why"], [[c["paper"], c["claim"], c["paper_figure"] or "-",
                                     "**%s**" % c["verdict"], c["evidence"], c["reason"]]
                                    for c in claims]))
        counts = {v: sum(1 for c in claims if c["verdict"] == v)
                  for v in (CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE)}
        self.add("\n%d claims: %d confirmed, %d not confirmed, %d not testable here.\n\n"
                 % (len(claims), counts[CONFIRMED], counts[NOT_CONFIRMED], counts[NOT_TESTABLE]))
        lines = []
        for key, noun, paper in (("speedup", "PiPar's speedup of the round time vs FL", "34.6x"),
                                 ("idle", "PiPar's server idle reduction vs FL", "64.1x"),
                                 ("pipelining", "pipelining factor (SFL / PiPar at PiPar's "
                                  "split)", "not separated"),
                                 ("splitting", "splitting factor (FL / SFL)", "34.6x for both "
                                  "factors together")):
            best = self.headline.get(key)
            if best:
                lines.append("- Largest measured %s (split >= 1%s): **%s** (%s; %s); the paper: "
                             "%s." % (noun, "" if key == "splitting" else ", m >= 2",
                                      ratio_text(best[0]), best[1], self._factors_text(best[2]), paper))
            else:
                lines.append("- No qualifying measured cell has a %s whose interval lies "
                             "above 1; the paper: %s." % (noun, paper))
        if self.headline.get("dp"):
            g = self.headline["dp"]
            lines.append("- With DP on (main job), PiPar against FL: %s; with DP off: %s."
                         % (ratio_text(g["on"]["speedup"]), ratio_text(g["off"]["speedup"])))
        if self.headline.get("adasplit_bytes"):
            r, theirs = self.headline["adasplit_bytes"]
            lines.append("- SplitFed's bytes over AdaSplit's: %s; the authors: %.2fx."
                         % (ratio_text(r), theirs))
        if self.legacy:
            lines.append("- The runs of %d groups predate seeds (n = 1, no interval): every verdict that "
                         "rests on them is 'not testable here' until they are run again "
                         "(Regenerating, below)." % len(self.legacy))
        self.add("\n".join(lines) + "\n\n")

    # --- provenance ------------------------------------------------------------------------
    def provenance(self):
        self.add("## Provenance: every run behind the numbers\n\n")
        self.add("Each bracketed number [n] above names runs of this list (one line per seed's "
                 "file): the command (its config and overrides), when it started (UTC), how "
                 "long it took (a `--repeats` command writes several seeds; its time is the "
                 "whole command's), the machine and its load average (1, 5, 15 min) when it "
                 "ended, and the cmlbed binary that ran it. Results files are under `%s/` (not "
                 "committed; rerun the command to get them); a run marked *kept* is read from "
                 "its digest in `%s/` (every table of the results file but the timeline, "
                 "scripts/cmlbed_report/digest.py), which git keeps when the results folder is "
                 "gone.\n\n"
                 % (os.path.relpath(os.path.abspath(self.results), ROOT), self._archive_text()))
        self.add("<details><summary>%d runs</summary>\n\n" % len(self.cite.entries))
        rows = []
        for e in self.cite.entries:
            p = e.provenance
            took = fmt(p.get("seconds"), "%.0f s")
            if p.get("repeats", 1) > 1:
                took += " (%d seeds)" % p["repeats"]
            rows.append(["[%d]" % e.id, "`%s`%s" % (os.path.relpath(e.path, self.results),
                                                     " (kept)" if e.archived else ""),
                         "`%s`" % command_text(e).replace("|", "\\|"), p.get("started", "-"),
                         took, "%s (%s cores)" % (p.get("host", "-"), p.get("cores", "-")),
                         p.get("load_after", "-"), p.get("cmlbed", "-")])
        self.add(md_table(["#", "file", "command", "started", "took", "machine", "load",
                           "cmlbed"], rows))
        self.add("\n</details>\n\n")
        plans = self.store.glob(os.path.join("simulated", "*.plan.txt"))
        if plans:
            self.add("Simulated sfl and pipar cells simulate the choice `cmlbed plan` printed "
                     "for the same configuration (same overrides, `--model.split=auto`, for "
                     "pipar also `--pipar.micro_batches=auto`, `--profile` the network's "
                     "profile, `--devices` the grid's device count); the plans are in "
                     "`%s/simulated/*.plan.txt`.\n\n" % self._archive_text())

    def _archive_text(self):
        return (os.path.relpath(os.path.abspath(self.args.archive), ROOT) if self.args.archive
                else os.path.relpath(os.path.abspath(self.results), ROOT))

    def regenerate_command(self):
        return ("scripts/reproduction.sh --full --repeats %d" % max(3, self.args.repeats))

    def reading(self):
        """Section 0: how every figure is computed, from the constants the code uses."""
        return [
            "## 0. How to read the numbers\n\n",
            "- **Seeds.** Every measured run ran n times with experiment.seed = 1..n "
            "(files NAME.seedS.h5; the timed runs of a cell seed by seed across its methods, "
            "A B C A B C, so that the host's drift over a sitting spreads over every method; "
            "the others with `cmlbed run --repeats`). Runs that differ only in the seed "
            "are one group (`cmlbed-report summary`'s grouping, "
            "cmlbed_report.summary.group_runs); a measured figure is the **mean ± the "
            "half-width of its 95% Student t interval** over the group, with n stated.\n",
            "- **Ratios** (speedup, idle reduction, PiPar vs SFL, accuracy and byte ratios) "
            "divide the baseline's mean by the other's, with **Fieller's 95% interval** in "
            "brackets (stats.ratio_of_means); 'no difference measured [a, b]' where the "
            "interval includes 1; '> X' where the denominator's own interval reaches 0 (X = "
            "numerator mean / the upper end of that interval), never a point figure; '(n=1)' "
            "a single run on a side, no interval. docs/explanation/statistics.md gives the formulas.\n",
            "- **One averaging window.** Every time figure (round time, busy and idle time) "
            "is averaged over **rounds %d.. of each run**: round 1 starts with full token "
            "buckets, so its transfers are faster than a steady round's "
            "(`cmlbed-report summary --from-round %d`). A run with fewer rounds keeps all of "
            "them%s. Accuracy is the last round's; AdaSplit's bytes and client TFLOPs are "
            "totals of the whole training.\n" % (
                self.from_round, self.from_round,
                " (here: %s)" % ", ".join(sorted(set(self.fallback))) if self.fallback else
                " (none here)"),
            "- **Idle time**, exactly as the tables compute it: for each round, the round's "
            "wall time (from the first rank leaving the round's barrier to the last rank done "
            "training; the evaluation after it is not in the round) minus the union of the "
            "rank's compute intervals (forward, backward, optimizer step, aggregate, emulated "
            "device time; sends, receives and waits are not compute), in seconds "
            "(docs/reference/results-format.md, Busy and idle time). **Server idle** is rank 0's, in "
            "seconds per round over the window; the idle reduction is FL's mean of it over "
            "PiPar's.\n",
            "- **Simulated** cells are `cmlbed simulate`'s, run once (deterministic), and "
            "labelled simulated wherever they appear. Their ± is the simulator's validated "
            "error band, not a confidence interval: %s.\n" % self._band_source(),
            "- **Split 0** (no layer on the device) uploads raw samples, which is centralised "
            "training, not split learning: marked `*` and kept out of the headline figures.\n",
            "\n",
        ]

    def write(self):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        try:
            revision = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()
        except OSError:
            revision = "?"
        started = [e.provenance["started"] for e in self.cite.entries if e.provenance.get("started")]
        try:
            version = subprocess.run([self.args.cmlbed, "--version"], capture_output=True,
                                     text=True).stdout.strip() or "?"
        except OSError as e:  # absent, or being rebuilt
            version = "? (%s)" % (e.strerror or e)
        binaries = {}
        for e in self.cite.entries:
            binaries[e.provenance.get("cmlbed", "?")] = binaries.get(e.provenance.get("cmlbed", "?"), 0) + 1
        kept = sum(e.archived for e in self.cite.entries)
        if len(binaries) == 1:
            one = "**One binary behind every run: `%s`.**" % next(iter(binaries))
        else:
            one = ("**Not one binary: the runs come from %d binaries** (%s); regenerate with "
                   "one (Regenerating, below)." % (len(binaries), ", ".join(
                       "`%s` (%d runs)" % kv for kv in sorted(binaries.items())) or "-"))
        head = [
            "# Reproduction report: PiPar and AdaSplit on cmlbed\n\n",
            "Written by `scripts/reproduction.sh%s --repeats %d` on %s, host %s (%d cores, "
            "load average %s when the report was written), repository at %s, from the results "
            "in `%s/` and, for %d of its %d runs, their digests kept in `%s/`: runs that were "
            "already done are reused, so the runs behind it may come from several invocations "
            "(runs from %s to %s). %s The binary at `%s` when the report was written: %s. Do "
            "not edit by hand: every number below comes from a results file (or its kept "
            "digest) of the binary its provenance names, and the [n] after it points to the "
            "command that produced it, with its date, machine and load (Provenance, at the "
            "end).\n\n" % (
                {"default": "", "full": " --full", "quick": " --quick"}[self.args.mode],
                self.args.repeats, now, os.uname().nodename, os.cpu_count(),
                " ".join("%.2f" % x for x in os.getloadavg()), revision,
                os.path.relpath(os.path.abspath(self.results), ROOT), kept,
                len(self.cite.entries), self._archive_text(),
                min(started) if started else "-", max(started) if started else "-", one,
                os.path.relpath(self.args.cmlbed, ROOT) if self.args.cmlbed.startswith(ROOT)
                else self.args.cmlbed, version)]
        body = self.parts
        self.parts = []
        summary = ["## Summary\n\n"]
        if "cells" in self.headline:
            measured, simulated, none = self.headline["cells"]
            summary.append("- Grid cells: %d measured (%s), %d simulated, %d without results.\n" % (
                len(measured), ", ".join("%s/%g" % c for c in measured) or "none", len(simulated), len(none)))
        for key, noun, paper in (
                ("speedup", "PiPar grid, measured, split >= 1, m >= 2: largest speedup of the "
                 "round time vs FL", "the paper: 34.6x"),
                ("idle", "PiPar grid, measured, split >= 1, m >= 2: largest server idle "
                 "reduction vs FL", "the paper: 64.1x"),
                ("pipelining", "Pipelining alone (SFL / PiPar at PiPar's split, m >= 2): "
                 "largest", "the paper does not separate it"),
                ("splitting", "Splitting alone (FL / SFL, SFL at its own split): largest",
                 "the paper's 34.6x holds both factors")):
            if key in self.headline:
                best = self.headline[key]
                summary.append(
                    "- %s **%s** (%s; %s); %s.\n" % (noun, ratio_text(best[0]), best[1],
                                                   self._factors_text(best[2]), paper)
                    if best else "- %s: none whose interval lies above 1; %s.\n" % (noun, paper))
        if "sim_error" in self.headline:
            med, worst = self.headline["sim_error"]
            summary.append("- Simulator vs measured mean round time on the measured cells: "
                           "median |error| %.1f%%, largest %+.1f%% (%s, %s, %s).\n"
                           % (100 * med, 100 * worst[1], worst[2], rate_text(worst[3]), worst[4]))
        if "sittings" in self.headline:
            diff, where, method, count, inside = self.headline["sittings"]
            summary.append("- A second sitting: largest difference of a cell's round time "
                           "%+.1f%% (%s, %s); %d of %d within the first sitting's range.\n"
                           % (100 * diff, where, method, inside, count))
        for experiment, speedup, level in self.headline.get("heterogeneity", []):
            summary.append("- %s: PiPar planned per device vs FL %s; emulation %s%s.\n" % (
                experiment, ratio_text(speedup), level, "" if emulation.trusted(level)
                else " (partly this host's times: no verdict)"))
        if "dp" in self.headline:
            g = self.headline["dp"]
            summary.append("- DP on the main job: PiPar vs FL %s (DP off) / %s (on); vs SFL "
                           "%s / %s.\n" % (ratio_text(g["off"]["speedup"]), ratio_text(g["on"]["speedup"]),
                                           ratio_text(g["off"]["vs_sfl"]), ratio_text(g["on"]["vs_sfl"])))
        if "adasplit_bytes" in self.headline:
            ours, theirs = self.headline["adasplit_bytes"]
            summary.append("- SplitFed's bytes over AdaSplit's: %s (the authors: %.2fx).\n"
                           % (ratio_text(ours), theirs))
        claims = self.headline.get("claims", [])
        if claims:
            summary.append("- The papers' claims (What we conclude): %s.\n" % ", ".join(
                "%d %s" % (sum(1 for c in claims if c["verdict"] == v), v)
                for v in (CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE)))
        for p in self.pending:
            summary.append("- Pending: %s.\n" % p)
        summary.append("\n")
        regen = self.regeneration_text()
        text = "".join(head + summary + self.reading() + body + regen)
        with open(self.args.doc, "w") as f:
            f.write(text)

    def regeneration_text(self):
        notes = []
        if self.legacy:
            notes.append("The runs of %d groups were made before seeds (n = 1, no interval): %s."
                         % (len(self.legacy), ", ".join(self.legacy)))
        if self.short:
            notes.append("fewer seeds than the %d asked for: %s." % (self.args.repeats, ", ".join(self.short)))
        if self.superseded:
            notes.append("%d files made before seeds are superseded by seed files of the same "
                         "name and not used (their digests in `%s/` can be deleted)."
                         % (self.superseded, self._archive_text()))
        return ["## Regenerating\n\n",
                "`%s` runs every part (profiles, simulated grid, every measured cell, the "
                "round-length curve, DP, heterogeneity, accuracy, the AdaSplit comparison and "
                "its learning-rate sweep) with %d seeds per measured run and rewrites "
                "this page; a run already done (its NAME.seedS.h5 and provenance exist) is not "
                "run again. On a cluster: `REPEATS=%d jobs/submit-reproduction.sh` (the heavy "
                "parts as an array, then the report), and `scripts/reproduction.sh --repeats %d` "
                "for the default parts. %s\n" % (
                    self.regenerate_command(), max(3, self.args.repeats), max(3, self.args.repeats),
                    max(3, self.args.repeats), " ".join(notes) or "Every run set here has its seeds.")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--mode", choices=("default", "full", "quick"), default="default")
    parser.add_argument("--grid-config", default="configs/reproduction/grid.ini")
    parser.add_argument("--accuracy-config", default="configs/reproduction/accuracy.ini")
    parser.add_argument("--networks", default="vgg5 vgg11 vgg16 resnet18 mobilenetv3-small mobilenetv3-large")
    parser.add_argument("--rates", default="5 10 25 50 100")
    parser.add_argument("--measured", default="")
    parser.add_argument("--accuracy-networks", default="vgg5 mobilenetv3-small")
    parser.add_argument("--accuracy-datasets", default="fashion-mnist synthetic")
    parser.add_argument("--accuracy-rounds", default="20")
    parser.add_argument("--dp-split", default="")
    parser.add_argument("--dp-fl", default="")
    parser.add_argument("--dp-accuracy-split", default="")
    parser.add_argument("--dp-accuracy-fl", default="")
    parser.add_argument("--adasplit-methods", default="fl sl sfl pipar adasplit sl-personalised sfl-personalised pipar-personalised")
    parser.add_argument("--repeats", type=int, default=3,
                        help="seeds each measured run should have (the report flags fewer)")
    parser.add_argument("--from-round", type=int, default=2,
                        help="average every time figure over rounds K.. of each run "
                             "(cmlbed-report summary --from-round; default 2)")
    parser.add_argument("--strict-seeds", action="store_true",
                        help="fail (status 4) instead of writing a report when measured runs "
                             "predate seeds (n = 1)")
    parser.add_argument("--cmlbed", default="build/cmlbed")
    parser.add_argument("--archive", default=os.path.join(ROOT, "docs", "reproduction-data"),
                        help="where digests of the runs are kept (in git), read when a results "
                             "file is gone; 'none': no archive")
    args = parser.parse_args()
    if args.archive == "none":
        args.archive = None
    args.cmlbed = os.path.abspath(args.cmlbed)
    if not os.path.isdir(args.results):
        print("reproduction_report.py: no results folder %s" % args.results, file=sys.stderr)
        return 1
    if args.from_round < 1 or args.repeats < 1:
        print("reproduction_report.py: --from-round and --repeats must be >= 1", file=sys.stderr)
        return 2
    os.makedirs(args.images, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.doc)), exist_ok=True)
    report = Report(args)
    try:
        runs, files = report.store.refresh()
        if args.archive:
            print("reproduction_report.py: %d run digests and %d files new or changed in %s"
                  % (runs, files, args.archive))
        report.grid()
        report.rounds()
        report.heterogeneity()
        report.dp()
        report.accuracy()
        report.adasplit()
        report.conclude()
        report.provenance()
        if report.legacy:
            message = (
                "reproduction_report.py: %s the runs of %d groups predate seeds (one NAME.h5 "
                "each, n = 1: no interval, so verdicts resting on them are 'not testable "
                "here'): %s. Regenerate them with: %s" % (
                    "error:" if args.strict_seeds else "warning:", len(report.legacy),
                    ", ".join(report.legacy[:6]) + (", ..." if len(report.legacy) > 6 else ""),
                              report.regenerate_command()))
            print(message, file=sys.stderr)
            if args.strict_seeds:
                return 4
        report.write()
    except ReportError as e:
        print("reproduction_report.py: error: %s" % e, file=sys.stderr)
        return 1
    print("reproduction_report.py: wrote %s and %s/reproduction-*.png" % (args.doc, args.images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
