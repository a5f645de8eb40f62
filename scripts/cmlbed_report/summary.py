"""Numbers of a run from its /rounds table, a table across runs with speedups and idle
time reductions against a baseline, and the per-round table of each run; as plain text,
CSV or Markdown. The across-runs table has one row per group of repeated runs (runs
that differ only in experiment.seed): means with 95% intervals (docs/explanation/statistics.md)."""

import csv
import io
import math
import os
import re
import sys

import numpy as np

from . import emulation, stats
from .errors import ReportError

# How a run was done rather than what it ran: runs that differ only here are the same
# experiment with another method. By convention (issue 10) every option of a method
# lives in a section named after the method ([pipar], [adasplit], ...), so the rule
# needs no list of options: a new method's section is skipped as soon as a run of it
# is among the files, and the known methods cover sections of methods that are not.
# Both sets mirror the method table (`cmlbed info --methods`); ctest help_texts checks them.
KNOWN_METHODS = frozenset({"fl", "sl", "sfl", "pipar", "sfl2", "adasplit", "transfer"})
_NOT_THE_EXPERIMENT_SECTIONS = frozenset({"output"})
_NOT_THE_EXPERIMENT_OPTIONS = frozenset({("experiment", "method")})
# Methods that split the model: their split 0 sends raw samples to the server.
SPLIT_METHODS = frozenset({"sl", "sfl", "pipar", "sfl2", "adasplit"})
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
    return {
        "run": run.name,
        "method": run.method,
        "model": "-" if run.method == "transfer" else run.option("model.name"),
        "split": _with_replans(run, "split", _split_text(run)),
        "raw_data_uploaded": raw_data_uploaded(run),
        "micro_batches": (_with_replans(run, "micro_batches", run.option("pipar.micro_batches"))
                          if run.method == "pipar" else "-"),
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
    if run.method in ("fl", "transfer"):
        return "-"  # the whole model (or none) runs on the device
    return _values_text(run.device_values("model.split"))


def raw_data_uploaded(run):
    """Whether a device of a split method ran at split 0 (configured, or chosen by a
    re-plan): it then uploaded raw samples, which is centralised training."""
    if run.method not in SPLIT_METHODS:
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
    """Section names that hold method-only options: the known methods and every method
    the given runs ran."""
    return KNOWN_METHODS | {run.method for run in runs}


def scenario(run, methods=KNOWN_METHODS, any_seed=False):
    """What a run computed apart from its method: the configuration without the sections
    named after a method (`methods`), experiment.method and [output]; with any_seed,
    also without experiment.seed (repeats of one experiment differ only there)."""
    left_out = _NOT_THE_EXPERIMENT_OPTIONS | (
        {("experiment", "seed")} if any_seed else set())
    items = []
    for section in run.config.sections():
        if section in methods or section in _NOT_THE_EXPERIMENT_SECTIONS:
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
        methods = sorted({unit[0].method for _, unit in units})
        if baseline != "fl":
            raise ReportError("baseline %r is neither a method of the given runs (%s) nor one "
                              "of the files" % (baseline, ", ".join(methods)))
        return [0] * len(units)  # no FL run: compare with the first file
    methods = method_sections([r for _, unit in units for r in unit])
    key = [scenario(unit[0], methods, any_seed) for _, unit in units]
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


# Columns: (key, heading, format for text and Markdown). CSV keeps full precision.
RUN_COLUMNS = [
    ("run", "run", "%s"), ("method", "method", "%s"), ("model", "model", "%s"),
    ("split", "split", "%s"), ("micro_batches", "m", "%s"), ("devices", "dev", "%d"),
    ("links", "up/down", "%s"), ("rounds", "rounds", "%d"), ("emulation", "emulation", "%s"),
    ("mean_round_s", "round s", "%.3f"), ("total_s", "total s", "%.2f"),
    ("server_busy_s", "srv busy s", "%.2f"), ("server_idle_s", "srv idle s", "%.2f"),
    ("server_idle_pct", "srv idle %", "%.1f"), ("device_busy_s", "dev busy s", "%.2f"),
    ("device_idle_s", "dev idle s", "%.2f"), ("device_idle_pct", "dev idle %", "%.1f"),
    ("mb_up", "MB up", "%.2f"), ("mb_down", "MB down", "%.2f"),
    ("messages_up", "msgs up", "%.0f"), ("messages_down", "msgs down", "%.0f"),
    ("server_tflops", "srv TFLOPs", "%.4f"), ("device_tflops", "dev TFLOPs", "%.4f"),
    ("final_accuracy", "acc", "%.4f"), ("best_accuracy", "best acc", "%.4f"),
    ("trivial_accuracy", "trivial", "%.4f"),
    ("baseline", "vs", "%s"), ("speedup", "speedup", "%.2fx"),
    ("server_idle_reduction", "srv idle /x", "%.2fx"),
    ("device_idle_reduction", "dev idle /x", "%.2fx"),
]
ROUND_COLUMNS = [
    ("round", "round", "%d"), ("wall_s", "wall s", "%.3f"),
    ("server_busy_s", "srv busy s", "%.3f"), ("server_idle_s", "srv idle s", "%.3f"),
    ("server_idle_pct", "srv idle %", "%.1f"), ("device_idle_s", "dev idle s", "%.3f"),
    ("device_idle_pct", "dev idle %", "%.1f"), ("mb_up", "MB up", "%.2f"),
    ("mb_down", "MB down", "%.2f"), ("messages_up", "msgs up", "%.0f"),
    ("messages_down", "msgs down", "%.0f"), ("server_tflops", "srv TFLOPs", "%.4f"),
    ("device_tflops", "dev TFLOPs", "%.4f"), ("test_loss", "loss", "%.4f"),
    ("test_accuracy", "accuracy", "%.4f"),
]


def _mean_text(key, fmt):
    """A group's figure as 'mean ± half-width' (the mean alone for n = 1)."""
    def text(row):
        mean, half = row[key], row.get(key + "_ci95", math.nan)
        if math.isnan(mean):
            return "-"
        return fmt % mean if math.isnan(half) else "%s ± %s" % (fmt % mean, fmt % half)
    return text


def ratio_text(ratio, short=False):
    """How a ratio of group means is written (docs/explanation/statistics.md): never a point figure
    for a denominator near 0, never a speedup when the interval includes 1."""
    v = ratio.verdict
    if v == stats.BASELINE:
        return "1.00x"
    if v == stats.SINGLE_RUN:
        return "%.2fx (n=1)" % ratio.value
    if v == stats.LOWER_BOUND:
        return "> %.2fx" % ratio.bound
    if v == stats.NO_DIFFERENCE:
        return "no difference" if short else (
            "no difference measured [%.2f, %.2f]" % (ratio.low, ratio.high))
    if v in (stats.ABOVE_1, stats.BELOW_1):
        return "%.2fx" % ratio.value if short else (
            "%.2fx [%.2f, %.2f]" % (ratio.value, ratio.low, ratio.high))
    return "-"


def _split_mark(row):
    return row["split"] + ("*" if row["raw_data_uploaded"] else "")


def _right(key):
    return lambda row: str(row[key])


def _group_column(key, heading, fmt):
    if key == "split":
        return (key, heading, _split_mark)
    if key in ("devices", "rounds"):  # '2; 3' where the runs differ
        return (key, heading, _right(key))
    if key in FIGURES:
        return (key, heading, _mean_text(key, fmt))
    if key in RATIOS:
        return (key, heading, lambda row, key=key: ratio_text(row[key + "_ratio"]))
    return (key, heading, fmt)


# The across-groups table: RUN_COLUMNS with n after rounds, figures as mean ± half-width.
GROUP_COLUMNS = []
for _column in RUN_COLUMNS:
    GROUP_COLUMNS.append(_group_column(*_column))
    if _column[0] == "rounds":
        GROUP_COLUMNS.append(("n", "n", "%d"))
# In Markdown a bare '*' starts emphasis or a list: escaped.
_MARKDOWN_GROUP_COLUMNS = [
    (key, heading, (lambda row: _split_mark(row).replace("*", "\\*")) if key == "split" else fmt)
    for key, heading, fmt in GROUP_COLUMNS]
# Its CSV: full precision, every figure followed by its half-width, every ratio by its
# interval and verdict.
GROUP_CSV_COLUMNS = []
for _key, _, _ in RUN_COLUMNS:
    GROUP_CSV_COLUMNS.append(_key)
    if _key == "micro_batches":
        GROUP_CSV_COLUMNS.append("raw_data_uploaded")
    elif _key == "rounds":
        GROUP_CSV_COLUMNS += ["n", "seeds"]
    elif _key in FIGURES:
        GROUP_CSV_COLUMNS.append(_key + "_ci95")
    elif _key in RATIOS:
        GROUP_CSV_COLUMNS += [_key + "_ci95_low", _key + "_ci95_high", _key + "_verdict"]
GROUP_CSV_COLUMNS = [(key, key, "%s") for key in GROUP_CSV_COLUMNS]


def _cell(value, fmt):
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return fmt % value


def _row_cell(row, key, fmt):
    # A callable format renders from the whole row (mean and half-width, a ratio).
    return fmt(row) if callable(fmt) else _cell(row[key], fmt)


def text_table(rows, columns):
    cells = [[_row_cell(row, key, fmt) for key, _, fmt in columns] for row in rows]
    headings = [heading for _, heading, _ in columns]
    widths = [max(len(c) for c in column) for column in zip(headings, *cells)]
    # Text columns left-aligned, numbers right-aligned.
    left = [fmt == "%s" or fmt is _split_mark for _, _, fmt in columns]
    lines = ["  ".join(c.ljust(w) if l else c.rjust(w) for c, w, l in zip(line, widths, left))
             .rstrip() for line in [headings] + cells]
    return "\n".join(lines) + "\n"


def markdown_table(rows, columns):
    out = ["| " + " | ".join(h for _, h, _ in columns) + " |",
           "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        out.append("| " + " | ".join(_row_cell(row, k, f) for k, _, f in columns) + " |")
    return "\n".join(out) + "\n"


def csv_text(rows, columns):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([key for key, _, _ in columns])
    for row in rows:
        writer.writerow([_csv_value(row[key]) for key, _, _ in columns])
    return buffer.getvalue()


def _csv_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return value


STATISTICS_NOTE = (
    "Runs that differ only in experiment.seed form one row; n = runs. Figures: mean ± "
    "95% half-width, Student t over the runs (t(0.975, n-1) s / sqrt(n)); none for n = 1. "
    "Ratios (speedup, idle reductions) divide the baseline's mean by the row's, with "
    "Fieller's 95% interval (df = min(n_base, n_row) - 1) in brackets; 'no difference "
    "measured' where it includes 1; '> X' where the denominator's own interval reaches 0 "
    "(X = numerator mean / the interval's upper end); '(n=1)' a single run on a side, no "
    "interval. docs/explanation/statistics.md.")


def _raw_data_note(rows):
    return RAW_DATA_NOTE + "\n" if any(row["raw_data_uploaded"] for row in rows) else ""


def totals_note(runs):
    """A line naming the runs whose events are kept as totals (nothing when there are none)."""
    summed = [run.name for run in runs if getattr(run, "event_detail", "all") == "totals"]
    if not summed:
        return ""
    return ("Events kept as totals per rank, round and kind (/event_totals): %s. Busy and idle "
            "figures are exact (computed from every event before summing); timeline, stages, "
            "idle causes and trace need every event (cmlbed simulate --events all).\n"
            % ", ".join(summed))


def window_note(rows, from_round):
    """A line saying which rounds the figures average (nothing for the default, every
    round), naming the rows that had too few rounds and kept all of theirs."""
    if from_round <= 1:
        return ""
    short = [row["run"] for row in rows if row.get("window_fallback")]
    return ("Figures over rounds %d.. of each run (--from-round %d)%s.\n" % (
        from_round, from_round,
        "; with fewer rounds than that, all rounds: %s" % ", ".join(short) if short else ""))


def report_text(runs, rows, per_round, from_round=1):
    """`rows`: compare_groups' rows."""
    parts = []
    if per_round:
        for run in runs:
            status = "" if run.complete else "  (incomplete: %d of %d rounds)" % (
                len(run.rounds), run.configured_rounds)
            parts.append("== %s: %s, %s, emulation %s%s\n" % (run.name, run.method, run.path,
                                                              emulation.verdict(run), status))
            parts.append(text_table(round_rows(run), ROUND_COLUMNS) + "\n")
    parts.append("== runs, grouped over seeds (mean ± 95% half-width; speedup and idle "
                 "reductions per round against the group in 'vs', Fieller 95% interval "
                 "in brackets)\n")
    parts.append(text_table(rows, GROUP_COLUMNS))
    parts.append(_raw_data_note(rows))
    parts.append(window_note(rows, from_round))
    parts.append(totals_note(runs))
    parts.append(emulation.note(runs))
    return "".join(parts)


def report_markdown(runs, rows, from_round=1):
    """`rows`: compare_groups' rows."""
    emulation_note = emulation.note(runs)
    parts = ["## Runs\n\n", markdown_table(rows, _MARKDOWN_GROUP_COLUMNS), "\n",
             _raw_data_note(rows).replace("*", "\\*", 1),
             ("\n" + window_note(rows, from_round)) if from_round > 1 else "",
             "\nSpeedup = baseline's mean round time / the run's; idle reductions compare "
             "idle seconds per round (idle = round wall time minus the union of compute). "
             "TFLOPs = training FLOPs (forward, backward, optimizer step) / 10^12 over all "
             "rounds, of the server and of all devices together; '-' where the file "
             "predates a column. " + STATISTICS_NOTE + "\n",
             ("\n" + emulation_note) if emulation_note else ""]
    for run in runs:
        parts.append("\n## %s (%s)\n\n" % (run.name, run.method))
        parts.append(markdown_table(round_rows(run), ROUND_COLUMNS))
    return "".join(parts)


def rounds_csv(runs):
    rows = [row for run in runs for row in round_rows(run)]
    return csv_text(rows, [("run", "run", "%s")] + ROUND_COLUMNS)
