"""The tables of `cmlbed-report summary`: each run's rounds and the groups across runs
(summary.py's numbers) as plain text, CSV or Markdown, with the notes that explain them."""

import csv
import io
import math

from . import emulation, stats
from .summary import FIGURES, RATIOS, RAW_DATA_NOTE, round_rows

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
