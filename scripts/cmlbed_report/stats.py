"""Statistics across repeated runs (seeds): the mean with a Student t interval, and a
ratio of two means with Fieller's interval. Only numpy and the standard library: scipy
is not among the packages the report may use (docs/explanation/statistics.md)."""

import math

import numpy as np

LEVEL = 0.95


def _betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta function (modified Lentz,
    as in Numerical Recipes' betacf); converges fast for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges on the side of the symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
    # where x is small.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The t with P(T <= t) = p (0 < p < 1): bisection on t_cdf, which is monotone, to
    the precision of a double (about 60 halvings after the bracket is found)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0 (got p=%r, df=%r)" % (p, df))
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def t_two_sided(n):
    """t(0.975, n - 1): the factor of a 95% two-sided interval on the mean of n values."""
    return t_quantile(0.5 + LEVEL / 2, n - 1)


def mean_ci(values):
    """(mean, half-width, n) of the values; half-width = t(0.975, n-1) * s / sqrt(n)
    with s the sample standard deviation, NaN for a lone value (no interval). NaN in
    any value makes the mean NaN: a figure some runs lack is not averaged over the
    others."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(values.mean())
    if n == 1 or math.isnan(mean):
        return mean, math.nan, n
    return mean, t_two_sided(n) * float(values.std(ddof=1)) / math.sqrt(n), n


# What a ratio of two group means says (CSV: <ratio>_verdict).
BASELINE = "baseline"            # a group against itself: 1 by definition, no interval
SINGLE_RUN = "single_run"        # n = 1 on a side: the point ratio, no interval
LOWER_BOUND = "lower_bound"      # the denominator's interval reaches 0: only "> X"
NO_DIFFERENCE = "no_difference"  # the interval includes 1
ABOVE_1 = "above_1"              # the whole interval above 1
BELOW_1 = "below_1"              # the whole interval below 1
UNDEFINED = "undefined"          # a side unknown (NaN) or the denominator 0 in every run


class Ratio:
    """numerator mean / denominator mean with its 95% interval and verdict. `value` is
    the point ratio (NaN where none may be printed: lower_bound, undefined); `low` and
    `high` the interval (NaN where there is none); for lower_bound, `bound` is X in
    "> X"."""

    def __init__(self, verdict, value=math.nan, low=math.nan, high=math.nan,
                 bound=math.nan):
        self.verdict, self.value, self.low, self.high, self.bound = (
            verdict, value, low, high, bound)


def ratio_of_means(numerator, denominator, same=False):
    """Ratio of the means of two independent samples (e.g. the baseline's round times
    over a method's) with Fieller's 95% interval, df = min(n_a, n_b) - 1 (conservative:
    the smaller sample's df, not Welch's). Rules, in this order: a group against itself
    (same=True) is 1 with no interval; n = 1 on either side gives the point ratio
    without interval; a denominator whose own 95% interval (df n_b - 1) reaches 0 gives
    only the bound X = numerator mean / that interval's upper end (also when Fieller's
    set is unbounded, which the smaller df can cause); otherwise Fieller's interval, and
    the verdict says whether it includes 1."""
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    if same:
        return Ratio(BASELINE, 1.0)
    if len(a) == 0 or len(b) == 0 or np.isnan(a).any() or np.isnan(b).any():
        return Ratio(UNDEFINED)
    ma, mb = float(a.mean()), float(b.mean())
    if len(a) == 1 or len(b) == 1:
        return Ratio(SINGLE_RUN, ma / mb) if mb > 0 else Ratio(UNDEFINED)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)  # squared standard errors
    b_half = t_two_sided(len(b)) * math.sqrt(vb)
    if mb + b_half <= 0:
        return Ratio(UNDEFINED)  # e.g. zero idle time in every run: nothing to divide by
    bound = Ratio(LOWER_BOUND, bound=ma / (mb + b_half))
    if mb - b_half <= 0:
        return bound
    t = t_two_sided(min(len(a), len(b)))
    # Fieller: the R with (ma - R mb)^2 <= t^2 (va + R^2 vb), a quadratic in R that
    # bounds an interval when the denominator is clearly away from 0 (mb^2 > t^2 vb).
    leading = mb * mb - t * t * vb
    if leading <= 0:
        return bound
    root = t * math.sqrt(ma * ma * vb + va * leading)
    low, high = (ma * mb - root) / leading, (ma * mb + root) / leading
    verdict = NO_DIFFERENCE if low <= 1.0 <= high else (ABOVE_1 if low > 1.0 else BELOW_1)
    return Ratio(verdict, ma / mb, low, high)
