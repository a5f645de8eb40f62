"""How the report writes things: numbers with their intervals, Markdown tables, commands,
and the provenance citations [n]."""

import math
import os
import shlex

from .constants import ROOT


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


def number_or_text(value):
    """Sort key of a table cell: numbers by value, before text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))
