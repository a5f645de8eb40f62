"""The decisions of the DP accuracy study (privacy_accuracy.py): epsilon, Welch's interval
of a difference, whether a cell settled, which clip to choose and the smallest epsilon
that keeps accuracy (tests/python/test_privacy_accuracy.py)."""

import math

import numpy as np

from cmlbed_report import stats

CLIP_GOAL = 0.02       # clip-only accuracy within 2 points of DP off
COST_GOAL = 0.05       # "accuracy stays within 5 points of DP off"
USEFUL_EPSILON = 10.0  # "none up to epsilon = 10"
SETTLE_ROUNDS = 5      # settled: the last 5 rounds ...
SETTLE_SPAN = 0.02     # ... move by less than 2 points


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


def last_rounds_mean(curves, last=SETTLE_ROUNDS):
    """The mean over the seeds of the per-round accuracy (curves cut to the shortest),
    its last `last` rounds; None with fewer rounds."""
    length = min(len(c) for c in curves) if curves else 0
    if length < last:
        return None
    return np.mean([np.asarray(c[:length], float) for c in curves], axis=0)[-last:]


def settling_span(curves, last=SETTLE_ROUNDS):
    """How far the accuracy moved over the last `last` rounds: max - min of the mean over
    the seeds; NaN with fewer rounds."""
    tail = last_rounds_mean(curves, last)
    return math.nan if tail is None else float(tail.max() - tail.min())


def settling_trend(curves, last=SETTLE_ROUNDS):
    """The change across the last `last` rounds of the least-squares line through the
    mean over the seeds: drift (still rising or falling), where settling_span also counts
    the round-to-round jitter. NaN with fewer rounds."""
    tail = last_rounds_mean(curves, last)
    return math.nan if tail is None else float(np.polyfit(np.arange(last), tail, 1)[0] * (last - 1))


def settled(curves, last=SETTLE_ROUNDS, span=SETTLE_SPAN):
    """Whether the accuracy moved by less than `span` over the last `last` rounds (False
    when too few rounds to tell; accuracies are multiples of 1/1000, so a move of exactly
    `span` is not less, whatever the rounding of the subtraction)."""
    moved = settling_span(curves, last)
    return not math.isnan(moved) and moved < span - 1e-9


def choose_clip(clip_means, baseline_mean, goal=CLIP_GOAL):
    """(clip, met): the smallest clip whose clip-only mean accuracy is within `goal` of
    DP off's, met = True; none is: the clip of the best mean (the smaller on a tie),
    met = False. clip_means: {clip: mean accuracy}."""
    if not clip_means:
        raise ValueError("no clip-only cell to choose from")
    for clip in sorted(clip_means):
        if clip_means[clip] >= baseline_mean - goal:
            return clip, True
    best = max(clip_means.values())
    return min(c for c, m in clip_means.items() if m == best), False


def smallest_epsilon_within(points, baseline_mean, goal=COST_GOAL):
    """The smallest epsilon at which accuracy stays within `goal` of DP off: walking from
    the largest epsilon (clipping alone: inf) down, the last before the first cell that
    falls further below; None when the largest already does. points: [(epsilon, mean
    accuracy)]."""
    found = None
    for epsilon, mean in sorted(points, key=lambda p: -p[0]):
        if mean < baseline_mean - goal:
            break
        found = epsilon
    return found


def epsilon_verdict(epsilon, useful=USEFUL_EPSILON):
    """The page's words for smallest_epsilon_within's answer."""
    if epsilon is None:
        return "none up to epsilon = %g (no cell within %d points)" % (useful, COST_GOAL * 100)
    if math.isinf(epsilon):
        return "none up to epsilon = %g (only clipping alone, without noise)" % useful
    if epsilon > useful:
        return "none up to epsilon = %g (smallest within %d points: %.3g)" % (
            useful, COST_GOAL * 100, epsilon)
    return "epsilon = %.3g" % epsilon
