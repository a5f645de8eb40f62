"""Budgets on the command line of `cmlbed-report c3`: a traffic size in bytes and a
count of FLOPs, with SI prefixes.

Sizes use the report's own units: GB = 10^9 bytes, as every table of cmlbed-report
prints MB = 10^6 bytes, so a budget of 10GB and a run's "10.000 GB" are the same number.
That differs from tc and from cmlbed's own size options (`network.burst`), where
`k`/`kb` mean 1024; binary multiples are written out here (KiB, MiB, GiB, TiB), and the
bare tc letters (10g) and bit units (10gbit) are refused rather than guessed."""

import math
import re

# Case-insensitive: 10GB, 10gb and 10 Gb all mean 10 * 10^9 bytes.
_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "pb": 10**15, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
               "pib": 2**50}
_FLOP_PREFIXES = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15, "e": 1e18}
_NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)"


class BudgetError(ValueError):
    """A budget that cannot be read; the message says what is allowed."""


def _split(text, what):
    match = re.fullmatch(r"\s*" + _NUMBER + r"\s*([A-Za-z]*)\s*", text)
    if not match:
        raise BudgetError("%s budget %r: expected a positive number with a unit, e.g. %s"
                          % (what, text, "10GB" if what == "bandwidth" else "5TFLOP"))
    value = float(match.group(1))
    if not math.isfinite(value) or value <= 0:
        raise BudgetError("%s budget %r: must be a positive, finite number" % (what, text))
    return value, match.group(2)


def parse_bytes(text):
    """Bytes in a size such as 10GB (10^10), 3.6GB, 500MB, 2GiB (2^31) or 123456 (bytes)."""
    value, unit = _split(text, "bandwidth")
    key = unit.lower()
    if key in _SIZE_UNITS:
        return value * _SIZE_UNITS[key]
    if key.endswith("bit") or key.endswith("bps"):
        raise BudgetError("bandwidth budget %r: a budget is bytes that cross the links, not "
                          "bits or a rate; write e.g. 10GB (10^9 bytes) or 10GiB (2^30)" % text)
    if key in ("k", "m", "g", "t"):
        si, iec = ("kB", "KiB") if key == "k" else (key.upper() + "B", key.upper() + "iB")
        raise BudgetError("bandwidth budget %r: a bare '%s' is ambiguous (tc reads it as a "
                          "multiple of 1024); write %g%s (powers of 1000, the report's unit) "
                          "or %g%s (powers of 1024)" % (text, unit, value, si, value, iec))
    raise BudgetError("bandwidth budget %r: unknown unit %r; use B, kB, MB, GB, TB (powers "
                      "of 1000, as the report prints) or KiB, MiB, GiB, TiB (powers of 1024)"
                      % (text, unit))


def parse_flops(text):
    """FLOPs in a count such as 5TFLOP (5 * 10^12), 500GFLOP, 2.5e12 or 5 TFLOPs."""
    value, unit = _split(text, "compute")
    if unit == "":
        return value
    # Case-insensitive (5TFLOP, 5 tflops); no milli: m is mega, as nobody budgets mFLOP.
    match = re.fullmatch(r"([kmgtpe]?)flops?", unit.lower())
    if not match:
        raise BudgetError("compute budget %r: unknown unit %r; write a FLOP count with an SI "
                          "prefix: FLOP, kFLOP, MFLOP, GFLOP, TFLOP, PFLOP (e.g. 5TFLOP, "
                          "500GFLOP) or a plain number" % (text, unit))
    return value * _FLOP_PREFIXES[match.group(1).lower()]


