"""A results file without its events, as JSON: what the reproduction report reads from a
run (its root attributes, /rounds, /summary, the re-planner's checks), small enough to
keep in git (a few KB a run, against MBs for the .h5 with its timeline), so that a
report can be rewritten after the results folder is gone and new runs can be added to
it without running the old ones again (scripts/studies/reproduction_report.py, --archive).

A digest loads as a Run whose every figure but the timeline is the file's own:
run_numbers() and compare() give the same numbers on both (tests/python/test_digest.py)."""

import json

import numpy as np

from .errors import ReportError
from .results import Run, _parse_config

FORMAT = "cmlbed-results-digest"
VERSION = 1


def _plain(value):
    """An attribute or array element as a JSON value (NaN stays NaN: Python's json reads
    and writes it)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _table(array):
    """A numpy structured array as {"columns": [[name, dtype, shape], ...], "rows": n,
    "values": {name: nested list}}."""
    columns = [[name, array.dtype[name].base.str, list(array.dtype[name].shape)]
               for name in array.dtype.names]
    return {"columns": columns, "rows": len(array),
            "values": {name: array[name].tolist() for name in array.dtype.names}}


def _array(table, path):
    try:
        dtype = np.dtype([(name, base, tuple(shape)) for name, base, shape in table["columns"]])
        array = np.zeros(int(table["rows"]), dtype=dtype)
        for name in dtype.names:
            array[name] = np.asarray(table["values"][name], dtype=dtype[name].base)
    except (KeyError, TypeError, ValueError) as e:
        raise ReportError("%s: a malformed table in the digest (%s)" % (path, e))
    return array


# Root attributes longer than this are left out (named in "left_out"): a simulated run's
# `profile` (13 KB for VGG-5), which the report reads from the profile file itself. The
# method table is kept whatever its length: the report reads what a run's method does
# from it (methods.py).
LONGEST_ATTRIBUTE = 4096
ALWAYS_KEPT = frozenset({"method_table"})


def digest(run):
    """The digest of a Run (as a dict ready for json.dump)."""
    attrs = {k: _plain(v) for k, v in run.attrs.items()}
    left_out = sorted(k for k, v in attrs.items()
                      if k not in ALWAYS_KEPT and len(json.dumps(v)) > LONGEST_ATTRIBUTE)
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": run.name,
        "attrs": {k: v for k, v in attrs.items() if k not in left_out},
        "left_out": left_out,
        "rounds": _table(run.rounds),
        "summary": run.summary,
        "replans": ({k: _plain(v) for k, v in run.replans.items()} if run.replans is not None
                    else None),
    }


def write(run, path):
    """Writes the digest of run to path; returns whether the file changed."""
    text = json.dumps(digest(run), indent=0, sort_keys=True) + "\n"
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return True


class DigestRun(Run):
    """A Run read from a digest: every table but the events."""

    def __init__(self, path, results_path=None):
        # Not Run.__init__, which reads an HDF5 file. results_path: the .h5 the digest was
        # made from, which this run stands for (its name and path in reports).
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ReportError("%s: cannot read the digest: %s" % (path, e))
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ReportError("%s is not a cmlbed results digest of version %d" % (path, VERSION))
        self.path = results_path or path
        self.digest_path = path
        self.name = data["name"]
        self.attrs = data["attrs"]
        try:
            self.method = str(self.attrs["method"])
            self.mpi_size = int(self.attrs["mpi_size"])
            self.config_text = str(self.attrs["config"])
        except KeyError as e:
            raise ReportError("%s: the digest lacks the root attribute %s" % (path, e))
        self.started_at = str(self.attrs.get("started_at", ""))
        self.trivial_accuracy = float(self.attrs.get("trivial_accuracy", float("nan")))
        self.rounds = _array(data["rounds"], path)
        self.summary = {k: float(v) for k, v in data["summary"].items()}
        self.events = [np.zeros(0) for _ in range(self.mpi_size)]
        self.event_detail = str(self.attrs.get("event_detail", "all"))
        self.event_totals = None
        self.kind_names = self.lane_names = self.message_names = self.held_names = None
        self.replans = ({k: np.asarray(v) for k, v in data["replans"].items()}
                        if data.get("replans") is not None else None)
        self.config = _parse_config(self.config_text, path)
        self.has_events = self.option("output.timeline") != "false"

    def require_events(self):
        raise ReportError("%s is a digest (%s), which keeps no events: draw or trace the "
                          "results file itself" % (self.path, self.digest_path))
