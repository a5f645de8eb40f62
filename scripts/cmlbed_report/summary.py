"""Numbers of a run from its /rounds table, and across runs: groups of repeated runs (runs
that differ only in experiment.seed) with means and 95% intervals, speedups and idle time
reductions against a baseline (docs/explanation/statistics.md). tables.py writes them as
plain text, CSV or Markdown."""

import math
import os
import re
import sys

import numpy as np

from . import emulation, methods, stats
from .errors import ReportError

# How a run was done rather than what it ran: runs that differ only here are the same
# experiment with another method. By convention (issue 10) every option of a method
# lives in a section named after the method ([pipar], [adasplit], ...), so the rule
# needs no list of options: a new method's section is skipped as soon as a run of it
# is among the files, and the method table (each run's own, run.method_table) covers
# sections of methods that are not. What a method does (splits the model, trains,
# micro-batches) is its row of that table (run.method_traits), never a list here.
_NOT_THE_EXPERIMENT_SECTIONS = frozenset({"output"})
_NOT_THE_EXPERIMENT_OPTIONS = frozenset({("experiment", "method")})
RAW_DATA_NOTE = "* split 0: raw data uploaded (centralised training, not split learning)"


def window(run, from_round=1):
    """The /rounds rows a run's figures average over: rounds from_round.. (counted from
    1, in file order), or every round when the run has fewer than from_round rounds
    (a one-round run with from_round 2 keeps its one round). Returns (slice, first round
    used, counted from 1)."""
    if from_round < 1:
        raise ReportError("the averaging window must start at round 1 or later (got %r)"
                          % from_round)
    if len(run.rounds) >= from_round:
        return slice(from_round - 1, None), from_round
    return slice(None), 1


def run_numbers(run, from_round=1):
    """One row of the across-runs table, as a dict of plain Python values, over the
    rounds of window(run, from_round) (default: every round)."""
    rows, first = window(run, from_round)
    r = run.rounds[rows]
    wall = r["wall_s"]
    total = float(wall.sum())
    device_busy = r["busy_s"][:, 1:].sum(axis=0) if run.devices else np.zeros(1)
    device_idle = r["idle_s"][:, 1:].sum(axis=0) if run.devices else np.zeros(1)
    accuracy = r["test_accuracy"][~np.isnan(r["test_accuracy"])]
    loss = r["test_loss"][~np.isnan(r["test_loss"])]
    traits = run.method_traits
    return {
        "run": run.name,
        "method": run.method,
        "model": run.option("model.name") if traits["trains"] else "-",
        "split": _with_replans(run, "split", _split_text(run)),
        "raw_data_uploaded": raw_data_uploaded(run),
        # pipar.micro_batches cuts the mini-batches of every method that has micro-batches.
        "micro_batches": (_with_replans(run, "micro_batches", run.option("pipar.micro_batches"))
                          if traits["micro_batches"] else "-"),
        "devices": run.devices,
        "links": _links_text(run),
        "rounds": len(r),
        "first_round": first,
        "window_fallback": first < from_round,
        "complete": run.complete,
        "emulation": emulation.verdict(run),
        "mean_round_s": total / len(r),
        "total_s": total,
        "server_busy_s": float(r["busy_s"][:, 0].sum()),
        "server_idle_s": float(r["idle_s"][:, 0].sum()),
        "server_idle_pct": _percent(r["idle_s"][:, 0].sum(), total),
        "device_busy_s": float(device_busy.mean()),
        "device_idle_s": float(device_idle.mean()),
        "device_idle_pct": _percent(device_idle.mean(), total),
        "mb_up": float(r["bytes_up"].sum()) / 1e6,
        "mb_down": float(r["bytes_down"].sum()) / 1e6,
        "messages_up": _total(run.scalar("messages_up"), rows),
        "messages_down": _total(run.scalar("messages_down"), rows),
        "server_tflops": _tflops(run, True, rows),
        "device_tflops": _tflops(run, False, rows),
        "final_loss": float(loss[-1]) if len(loss) else math.nan,
        "final_accuracy": float(accuracy[-1]) if len(accuracy) else math.nan,
        "best_accuracy": float(accuracy.max()) if len(accuracy) else math.nan,
        "trivial_accuracy": run.trivial_accuracy,
    }


def _total(column, rows=slice(None)):
    """Sum of a column (NaN when the file lacks it: '-' in the tables)."""
    return math.nan if column is None else float(np.sum(column[rows]))


def _tflops(run, server, rows=slice(None)):
    """Training FLOPs from /rounds `flops`, in 10^12: the server's (rank 0), or all
    devices' together (ranks 1..), as AdaSplit reports client compute."""
    flops = run.per_rank("flops")
    if flops is None:
        return math.nan
    ranks = flops[rows, 0] if server else flops[rows, 1:]
    return float(np.sum(ranks)) / 1e12


def _values_text(values):
    """One value, or the devices' distinct values joined by '/'."""
    distinct = sorted(set(values), key=int)
    return distinct[0] if len(distinct) == 1 else "/".join(distinct)


def _split_text(run):
    if not run.method_traits["splits_model"]:
        return "-"  # the whole model (or none) runs on the device
    return _values_text(run.device_values("model.split"))


def raw_data_uploaded(run):
    """Whether a device of a split method ran at split 0 (configured, or chosen by a
    re-plan): it then uploaded raw samples, which is centralised training."""
    if not run.method_traits["splits_model"]:
        return False
    splits = run.device_values("model.split")
    if any(v.strip() == "0" for v in splits):
        return True
    replans = run.replans
    return bool(replans) and bool(np.any(np.asarray(replans["split"]) == 0))


def _with_replans(run, column, first):
    """`first` (the configuration's value: the first plan) and '>V@R' for every re-plan
    that changed the column: value(s) V from round R on (as the per-round tables count
    rounds, from 0)."""
    replans = run.replans
    if not replans:
        return first
    text, previous = first, first
    for check in sorted(set(replans["round"].tolist())):
        rows = replans["round"] == check
        if not replans["changed"][rows].any():
            continue
        values = _values_text(["%d" % v for v in replans[column][rows]])
        if values != previous:
            text += ">%s@%d" % (values, int(check) + 1)
        previous = values
    return text


def _links_text(run):
    def direction(rate_key, trace_key):
        if any(run.device_values(trace_key)):
            return "trace"
        rates = set(run.device_values(rate_key))
        if len(rates) > 1:
            return "per-device"
        return rates.pop() or "unshaped"
    return "%s/%s" % (direction("network.uplink_rate", "network.uplink_trace"),
                      direction("network.downlink_rate", "network.downlink_trace"))


def method_sections(runs):
    """Section names that hold method-only options: the methods of the runs' method
    tables and every method the given runs ran."""
    sections = {run.method for run in runs}
    for run in runs:
        sections.update(methods.names(run.method_table))
    return frozenset(sections)


def scenario(run, sections=None, any_seed=False):
    """What a run computed apart from its method: the configuration without the sections
    named after a method (`sections`; default: the methods of the run's method table),
    experiment.method and [output]; with any_seed, also without experiment.seed (repeats
    of one experiment differ only there)."""
    if sections is None:
        sections = frozenset(methods.names(run.method_table))
    left_out = _NOT_THE_EXPERIMENT_OPTIONS | (
        {("experiment", "seed")} if any_seed else set())
    items = []
    for section in run.config.sections():
        if section in sections or section in _NOT_THE_EXPERIMENT_SECTIONS:
            continue
        for key, value in run.config.items(section):
            if (section, key) not in left_out:
                items.append((section, key, value))
    return tuple(sorted(items)) + (("mpi", "size", str(run.mpi_size)),)


def choose_baselines(runs, baseline):
    """For each run, the run it is compared with. `baseline` is a method name (the run
    of that method in the same scenario, so a sweep compares like with like) or the
    path or name of one run (compared with every run)."""
    chosen = _choose([(run.name, [run]) for run in runs], baseline, any_seed=False)
    return [runs[i] for i in chosen]


def _choose(units, baseline, any_seed):
    """For each unit (label, [runs]): a run alone, or a group of repeats, the index of
    the unit it is compared with (see choose_baselines). Groups are matched on their
    scenario without experiment.seed (any_seed)."""
    candidates = [i for i, (_, unit) in enumerate(units) if unit[0].method == baseline]
    if not candidates:
        wanted = os.path.realpath(baseline)
        by_file = [i for i, (label, unit) in enumerate(units)
                   if label == baseline or any(os.path.realpath(r.path) == wanted
                                               or r.name == baseline for r in unit)]
        if by_file:
            return [by_file[0]] * len(units)
        ran = sorted({unit[0].method for _, unit in units})
        if baseline != "fl":
            raise ReportError("baseline %r is neither a method of the given runs (%s) nor one "
                              "of the files" % (baseline, ", ".join(ran)))
        return [0] * len(units)  # no FL run: compare with the first file
    sections = method_sections([r for _, unit in units for r in unit])
    key = [scenario(unit[0], sections, any_seed) for _, unit in units]
    chosen = []
    for i, (label, _) in enumerate(units):
        same = [c for c in candidates if key[c] == key[i]]
        if not same:
            print("cmlbed-report: note: no %s run has the same settings as %s; comparing "
                  "it with %s" % (baseline, label, units[candidates[0]][0]), file=sys.stderr)
        chosen.append(same[0] if same else candidates[0])
    return chosen


def compare(runs, baseline="fl", from_round=1):
    """Rows of the across-runs table with speedup and idle reductions filled in, one per
    run (point ratios; compare_groups gives the table of repeated runs)."""
    rows = [run_numbers(run, from_round) for run in runs]
    numbers = {id(run): row for run, row in zip(runs, rows)}
    for run, base, row in zip(runs, choose_baselines(runs, baseline), rows):
        b = numbers[id(base)]
        row["baseline"] = base.name
        row["speedup"] = _ratio(b["mean_round_s"], row["mean_round_s"])
        # Idle time per round, so that runs of different lengths compare fairly.
        row["server_idle_reduction"] = _ratio(b["server_idle_s"] / b["rounds"],
                                              row["server_idle_s"] / row["rounds"])
        row["device_idle_reduction"] = _ratio(b["device_idle_s"] / b["rounds"],
                                              row["device_idle_s"] / row["rounds"])
    return rows


# --- repeated runs: groups, means with intervals, ratios of means -------------------------

_SEED_SUFFIX = re.compile(r"\.seed\d+$")


def repeat_label(name):
    """A run's name without the `.seed<S>` that `cmlbed run --repeats` adds."""
    return _SEED_SUFFIX.sub("", name)


class Group:
    """Runs of one experiment that differ only in experiment.seed (and [output])."""

    def __init__(self, runs):
        self.runs = runs
        self.method = runs[0].method
        labels = []
        for run in runs:
            if repeat_label(run.name) not in labels:
                labels.append(repeat_label(run.name))
        # Differently named files of one experiment keep every name: nothing is hidden.
        self.label = "+".join(labels)
        self.seeds = [run.option("experiment.seed") for run in runs]

    @property
    def n(self):
        return len(self.runs)


def group_runs(runs):
    """Groups in the order of their first run. The key is the whole configuration but
    [output] and experiment.seed, method sections included (PiPar with m = 1 and m = 4
    are two experiments). A file given twice is counted once."""
    groups, seen = {}, set()
    for run in runs:
        path = os.path.realpath(run.path)
        if path in seen:
            print("cmlbed-report: note: %s given twice; counted once" % run.path,
                  file=sys.stderr)
            continue
        seen.add(path)
        key = (run.method, scenario(run, frozenset(), any_seed=True))
        groups.setdefault(key, []).append(run)
    result = [Group(members) for members in groups.values()]
    for group in result:
        repeated = sorted({s for s in group.seeds if group.seeds.count(s) > 1})
        if repeated:
            print("cmlbed-report: note: %s holds several runs with seed %s; each counts as "
                  "a run of its own" % (group.label, ", ".join(repeated)), file=sys.stderr)
    return result


# Figures averaged over a group, each with a `<figure>_ci95` half-width.
FIGURES = ["mean_round_s", "total_s", "server_busy_s", "server_idle_s", "server_idle_pct",
           "device_busy_s", "device_idle_s", "device_idle_pct", "mb_up", "mb_down",
           "messages_up", "messages_down", "server_tflops", "device_tflops", "final_loss",
           "final_accuracy", "best_accuracy", "trivial_accuracy"]
# Ratios against the baseline: name -> the per-run value whose means are divided
# (baseline's / the group's). Idle per round, so that runs of different lengths compare.
RATIOS = {
    "speedup": lambda r: r["mean_round_s"],
    "server_idle_reduction": lambda r: r["server_idle_s"] / r["rounds"],
    "device_idle_reduction": lambda r: r["device_idle_s"] / r["rounds"],
}


def _one_text(values):
    """The runs' common value, or their distinct values joined by '; '."""
    distinct = []
    for v in values:
        if v not in distinct:
            distinct.append(v)
    return distinct[0] if len(distinct) == 1 else "; ".join(str(v) for v in distinct)


def group_numbers(group, from_round=1):
    """One row of the across-groups table: the group's descriptive columns, n, seeds,
    and for every figure its mean and 95% half-width (NaN for n = 1), each run's figures
    over the rounds of window(run, from_round)."""
    per_run = [run_numbers(run, from_round) for run in group.runs]
    row = {key: _one_text([p[key] for p in per_run])
           for key in ("method", "model", "split", "micro_batches", "links", "devices",
                       "rounds", "first_round")}
    row.update(run=group.label, n=group.n, seeds=" ".join(group.seeds),
               complete=all(p["complete"] for p in per_run),
               emulation=emulation.worst([p["emulation"] for p in per_run]),
               raw_data_uploaded=any(p["raw_data_uploaded"] for p in per_run),
               window_fallback=any(p["window_fallback"] for p in per_run),
               per_run=per_run)
    for key in FIGURES:
        row[key], row[key + "_ci95"], _ = stats.mean_ci([p[key] for p in per_run])
    for name, value in (("server_idle_per_round_s", RATIOS["server_idle_reduction"]),
                        ("device_idle_per_round_s", RATIOS["device_idle_reduction"])):
        row[name], row[name + "_ci95"], _ = stats.mean_ci([value(p) for p in per_run])
    return row


def compare_groups(groups, baseline="fl", from_round=1):
    """Rows of the across-groups table with the ratios against each group's baseline
    group: `<ratio>` (point ratio of means), `_ci95_low`/`_ci95_high` (Fieller) and
    `_verdict` (stats.ratio_of_means), and the stats.Ratio itself under `<ratio>_ratio`.
    from_round: every figure over rounds from_round.. of each run (window())."""
    rows = [group_numbers(g, from_round) for g in groups]
    chosen = _choose([(g.label, g.runs) for g in groups], baseline, any_seed=True)
    for i, (row, b) in enumerate(zip(rows, chosen)):
        base = rows[b]
        row["baseline"] = groups[b].label
        for name, value in RATIOS.items():
            ratio = stats.ratio_of_means([value(p) for p in base["per_run"]],
                                         [value(p) for p in row["per_run"]], same=(b == i))
            row[name + "_ratio"] = ratio
            row[name] = ratio.value
            # For "> X" the interval is unbounded above: X in the low column, high empty.
            row[name + "_ci95_low"] = (ratio.bound if ratio.verdict == stats.LOWER_BOUND
                                       else ratio.low)
            row[name + "_ci95_high"] = ratio.high
            row[name + "_verdict"] = ratio.verdict
    return rows


def _percent(part, whole):
    return 100 * float(part) / whole if whole > 0 else 0.0


def _ratio(a, b):
    return a / b if b > 0 else math.nan


def round_rows(run):
    """The per-round table of one run."""
    rows = []
    messages_up, messages_down = run.scalar("messages_up"), run.scalar("messages_down")
    for i, r in enumerate(run.rounds):
        wall = float(r["wall_s"])
        device_idle = float(np.mean(r["idle_s"][1:])) if run.devices else 0.0
        rows.append({
            "run": run.name,
            "round": int(r["round"]),
            "wall_s": wall,
            "server_busy_s": float(r["busy_s"][0]),
            "server_idle_s": float(r["idle_s"][0]),
            "server_idle_pct": _percent(r["idle_s"][0], wall),
            "device_idle_s": device_idle,
            "device_idle_pct": _percent(device_idle, wall),
            "mb_up": float(r["bytes_up"]) / 1e6,
            "mb_down": float(r["bytes_down"]) / 1e6,
            "messages_up": _total(messages_up, i),
            "messages_down": _total(messages_down, i),
            "server_tflops": _tflops(run, True, i),
            "device_tflops": _tflops(run, False, i),
            "test_loss": float(r["test_loss"]),
            "test_accuracy": float(r["test_accuracy"]),
        })
    return rows
