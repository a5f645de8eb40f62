"""Whether a method learned: its accuracy's last rounds (settled) and the trivial rate
(the best constant answer)."""

import math

import numpy as np

from cmlbed_report import stats


def settled_text(runs):
    """max - min of the last five rounds' accuracy, the largest over the runs, as text."""
    spread = last_accuracy_range(runs)
    return "range %.3f" % spread if np.isfinite(spread) else "-"


SETTLED_RANGE = 0.02  # accuracy has settled when its last 5 rounds move by less than 2 points


def last_accuracy_range(runs):
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
