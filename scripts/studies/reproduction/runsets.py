"""The runs of the report: a name's seed files (RunSet), the keys the parts' file names
carry, and grouping and comparing the methods' runs."""

import os
import re

from cmlbed_report import stats
from cmlbed_report.summary import compare_groups, group_runs

from .constants import METHODS

SEED_SUFFIX = re.compile(r"\.seed(\d+)\.h5$")
GRID_STEM = re.compile(r"^(.+)-(\d+(?:\.\d+)?)mbit-(fl|sfl|pipar)(-p1|-atp)?$")
ROUNDS_STEM = re.compile(r"^(.+)-(\d+(?:\.\d+)?)mbit-b(\d+)-(fl|sfl|pipar)(-p1|-atp)?$")
# SFL at PiPar's split: SFL / it is what pipelining alone gains (SFL's schedule is PiPar's
# with one micro-batch).
SFL_AT_PIPAR = "sfl-atp"
DP_STEM = re.compile(r"^main-(fl|sfl|pipar)-dp(on|off)(?:-r\d+)?$")
# The heterogeneity part's runs (scripts/studies/heterogeneity-comparison.sh --list), and which
# PiPar run stands for the paper's PiPar in the claims: the one planned per device.
HETEROGENEITY_RUNS = {"fl": "FL", "sfl": "SFL", "pipar-hand": "PiPar, one hand choice (split 4, m 4)",
                      "pipar-auto": "PiPar, planned per device",
                      "pipar-replan": "PiPar, re-planned after a link changes"}
HETEROGENEITY_STEM = re.compile(r"^(.+)-(%s)$" % "|".join(HETEROGENEITY_RUNS))
HETEROGENEITY_CLAIMED = "pipar-auto"
# The baselines' learning-rate sweep (scripts/studies/adasplit-comparison.sh's lr group).
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


def run_epsilon(run):
    return float(run.attrs["privacy_epsilon"]) if "privacy_epsilon" in run.attrs else None


def option_true(run, key):
    return run.option(key).strip().lower() in ("true", "1", "yes", "on")
