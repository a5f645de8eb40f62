"""cmlbed's results files in Python.

For notebooks and scripts: `load(path)` gives one file's rounds, timeline, options and
attributes as pandas DataFrames and dicts, `load_many(pattern)` the rounds of several
files in one DataFrame (frames.py; docs/how-to/analyse-results.md walks through an analysis), and
`mean_ci` / `ratio_of_means` the report's 95% intervals (stats.py). The
`cmlbed-report` commands (cli.py) draw the tables and pictures.

Those names are imported when first used: packages.py, which finds a Python that has
h5py and numpy, must be importable from one that has neither.
"""

import importlib

from .errors import ReportError

_WHERE = {"Results": "frames", "load": "frames", "load_many": "frames",
          "mean_ci": "stats", "ratio_of_means": "stats"}

__all__ = ["ReportError", "Results", "load", "load_many", "mean_ci", "ratio_of_means"]


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module("." + _WHERE[name], __name__), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
