"""cmlbed's results files in Python.

For notebooks and scripts: `load(path)` gives one file's rounds, timeline, options and
attributes as pandas DataFrames and dicts, `load_many(pattern)` the rounds of several
files in one DataFrame (frames.py; docs/how-to/analyse-results.md walks through an analysis), and
`mean_ci` / `ratio_of_means` the report's 95% intervals (stats.py). The
`cmlbed-report` commands (cli.py) draw the tables and pictures.
"""

from .errors import ReportError
from .frames import Results, load, load_many
from .stats import mean_ci, ratio_of_means

__all__ = ["ReportError", "Results", "load", "load_many", "mean_ci", "ratio_of_means"]
