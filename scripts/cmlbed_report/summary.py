"""Numbers of a run from its /rounds table, a table across runs with speedups and idle
time reductions against a baseline, and the per-round table of each run; as plain text,
CSV or Markdown."""

import csv
import io
import math
import os
import sys

import numpy as np

from .errors import ReportError

# How a run was done rather than what it ran: runs that differ only here are the same
# experiment with another method. By convention (issue 10) every option of a method
# lives in a section named after the method ([pipar], [adasplit], ...), so the rule
# needs no list of options: a new method's section is skipped as soon as a run of it
# is among the files, and the known methods cover sections of methods that are not.
KNOWN_METHODS = frozenset({"fl", "sl", "sfl", "pipar", "adasplit", "transfer"})
_NOT_THE_EXPERIMENT_SECTIONS = frozenset({"output"})
_NOT_THE_EXPERIMENT_OPTIONS = frozenset({("experiment", "method")})


def run_numbers(run):
    """One row of the across-runs table, as a dict of plain Python values."""
    r = run.rounds
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
        "micro_batches": (_with_replans(run, "micro_batches", run.option("pipar.micro_batches"))
                          if run.method == "pipar" else "-"),
        "devices": run.devices,
        "links": _links_text(run),
        "rounds": len(r),
        "complete": run.complete,
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
        "messages_up": _total(run.scalar("messages_up")),
        "messages_down": _total(run.scalar("messages_down")),
        "server_tflops": _tflops(run, server=True),
        "device_tflops": _tflops(run, server=False),
        "final_loss": float(loss[-1]) if len(loss) else math.nan,
        "final_accuracy": float(accuracy[-1]) if len(accuracy) else math.nan,
        "best_accuracy": float(accuracy.max()) if len(accuracy) else math.nan,
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


def scenario(run, methods=KNOWN_METHODS):
    """What a run computed apart from its method: the configuration without the sections
    named after a method (`methods`), experiment.method and [output]."""
    items = []
    for section in run.config.sections():
        if section in methods or section in _NOT_THE_EXPERIMENT_SECTIONS:
            continue
        for key, value in run.config.items(section):
            if (section, key) not in _NOT_THE_EXPERIMENT_OPTIONS:
                items.append((section, key, value))
    return tuple(sorted(items)) + (("mpi", "size", str(run.mpi_size)),)


def choose_baselines(runs, baseline):
    """For each run, the run it is compared with. `baseline` is a method name (the run
    of that method in the same scenario, so a sweep compares like with like) or the
    path or name of one run (compared with every run)."""
    candidates = [r for r in runs if r.method == baseline]
    if not candidates:
        wanted = os.path.realpath(baseline)
        by_file = [r for r in runs
                   if os.path.realpath(r.path) == wanted or r.name == baseline]
        if by_file:
            return [by_file[0]] * len(runs)
        if baseline != "fl":
            raise ReportError("baseline %r is neither a method of the given runs (%s) nor one "
                              "of the files" % (baseline, ", ".join(sorted({r.method for r in runs}))))
        return [runs[0]] * len(runs)  # no FL run: compare with the first file
    methods = method_sections(runs)
    chosen = []
    for run in runs:
        same = [c for c in candidates if scenario(c, methods) == scenario(run, methods)]
        if not same:
            print("cmlbed-report: note: no %s run has the same settings as %s; comparing "
                  "it with %s" % (baseline, run.name, candidates[0].name), file=sys.stderr)
        chosen.append(same[0] if same else candidates[0])
    return chosen


def compare(runs, baseline="fl"):
    """Rows of the across-runs table with speedup and idle reductions filled in."""
    rows = [run_numbers(run) for run in runs]
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
    ("links", "up/down", "%s"), ("rounds", "rounds", "%d"),
    ("mean_round_s", "round s", "%.3f"), ("total_s", "total s", "%.2f"),
    ("server_busy_s", "srv busy s", "%.2f"), ("server_idle_s", "srv idle s", "%.2f"),
    ("server_idle_pct", "srv idle %", "%.1f"), ("device_busy_s", "dev busy s", "%.2f"),
    ("device_idle_s", "dev idle s", "%.2f"), ("device_idle_pct", "dev idle %", "%.1f"),
    ("mb_up", "MB up", "%.2f"), ("mb_down", "MB down", "%.2f"),
    ("messages_up", "msgs up", "%.0f"), ("messages_down", "msgs down", "%.0f"),
    ("server_tflops", "srv TFLOPs", "%.4f"), ("device_tflops", "dev TFLOPs", "%.4f"),
    ("final_accuracy", "acc", "%.4f"), ("best_accuracy", "best acc", "%.4f"),
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


def _cell(value, fmt):
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return fmt % value


def text_table(rows, columns):
    cells = [[_cell(row[key], fmt) for key, _, fmt in columns] for row in rows]
    headings = [heading for _, heading, _ in columns]
    widths = [max(len(c) for c in column) for column in zip(headings, *cells)]
    # Text columns left-aligned, numbers right-aligned.
    left = [fmt == "%s" for _, _, fmt in columns]
    lines = ["  ".join(c.ljust(w) if l else c.rjust(w) for c, w, l in zip(line, widths, left))
             .rstrip() for line in [headings] + cells]
    return "\n".join(lines) + "\n"


def markdown_table(rows, columns):
    out = ["| " + " | ".join(h for _, h, _ in columns) + " |",
           "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        out.append("| " + " | ".join(_cell(row[k], f) for k, _, f in columns) + " |")
    return "\n".join(out) + "\n"


def csv_text(rows, columns):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([key for key, _, _ in columns])
    for row in rows:
        writer.writerow([_csv_value(row[key]) for key, _, _ in columns])
    return buffer.getvalue()


def _csv_value(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return value


def report_text(runs, rows, per_round):
    parts = []
    if per_round:
        for run in runs:
            status = "" if run.complete else "  (incomplete: %d of %d rounds)" % (
                len(run.rounds), run.configured_rounds)
            parts.append("== %s: %s, %s%s\n" % (run.name, run.method, run.path, status))
            parts.append(text_table(round_rows(run), ROUND_COLUMNS) + "\n")
    parts.append("== runs (speedup and idle reductions per round against the run in 'vs')\n")
    parts.append(text_table(rows, RUN_COLUMNS))
    return "".join(parts)


def report_markdown(runs, rows):
    parts = ["## Runs\n\n", markdown_table(rows, RUN_COLUMNS),
             "\nSpeedup = baseline's mean round time / the run's; idle reductions compare "
             "idle seconds per round (idle = round wall time minus the union of compute). "
             "TFLOPs = training FLOPs (forward, backward, optimizer step) / 10^12 over all "
             "rounds, of the server and of all devices together; '-' where the file "
             "predates a column.\n"]
    for run in runs:
        parts.append("\n## %s (%s)\n\n" % (run.name, run.method))
        parts.append(markdown_table(round_rows(run), ROUND_COLUMNS))
    return "".join(parts)


def rounds_csv(runs):
    rows = [row for run in runs for row in round_rows(run)]
    return csv_text(rows, [("run", "run", "%s")] + ROUND_COLUMNS)
