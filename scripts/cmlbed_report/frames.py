"""cmlbed results files as pandas DataFrames, for notebooks and scripts.

    import cmlbed_report
    run = cmlbed_report.load("results/quickstart-pipar.seed1.h5")
    run.rounds.wall_s.mean()          # one row per round
    run.events(rank=0)                # the server's timeline
    table = cmlbed_report.load_many("results/quickstart-*.h5")

The files are read by the same reader as every `cmlbed-report` command
(results.Run), so a file that the report refuses is refused here with the same message.
pandas is needed only here: the report's commands run without it.
"""

import glob as globbing

import numpy as np

from . import emulation
from .errors import ReportError
from .results import Run


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ReportError("cmlbed_report.load needs pandas (Debian: apt-get install python3-pandas; "
                          "the report's commands do not)") from None
    return pandas


def _value(value):
    """An HDF5 attribute as a plain Python value (numpy scalars and bytes unwrapped)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_value(v) for v in value.tolist()]
    return value


class Results:
    """One results file. Attributes:
    rounds     DataFrame, one row per completed round. The columns are those of
               /rounds; a per-rank column becomes one column per rank, NAME_R
               (busy_s_0 is the server's busy time, busy_s_1 device 1's, ...).
    config     dict of the resolved options, "section.key" -> text, as the run used them.
    attrs      dict of the file's root attributes (method, git_revision, ...).
    summary    dict of the end-of-run figures (/summary); empty for a run that stopped.
    simulated  True for a file written by `cmlbed simulate`.
    emulation  'faithful', 'degraded', 'broken' (the run's times are partly this
               host's), 'simulated' or 'unknown' (an older file); emulation_reasons the
               list of what failed, emulation_placement where the ranks ran. The per-round
               figures behind it are the rounds' paced_*, cpu_s, runqueue_s, ... columns
               and `emulation` (0 faithful, 1 degraded, 2 broken; docs/explanation/fidelity.md).
    method, path, name, ranks (MPI ranks: the server and the devices).
    events(rank=None) gives the timeline as a DataFrame."""

    def __init__(self, path):
        self._run = Run(path)
        run = self._run
        self.path = run.path
        self.name = run.name
        self.method = run.method
        self.ranks = run.mpi_size
        self.attrs = {key: _value(value) for key, value in run.attrs.items()}
        self.summary = dict(run.summary)
        self.simulated = bool(self.attrs.get("simulated", 0))
        self.emulation = emulation.verdict(run)
        self.emulation_reasons = emulation.reasons(run)
        self.emulation_placement = emulation.placement(run)
        self.trivial_accuracy = run.trivial_accuracy  # NaN where the file does not say
        self.config = {"%s.%s" % (section, key): value
                       for section in run.config.sections()
                       for key, value in run.config.items(section)}
        self.rounds = _rounds_frame(run.rounds)

    def events(self, rank=None):
        """The timeline: one row per event with the columns of /ranks/R/events, the
        enums as names (lane, kind, message, held), a `rank` column, and t_start_s / t_end_s
        (seconds from the first round's start, in rank 0's time base). rank=None: every
        rank's events, rank by rank."""
        pandas = _pandas()
        ranks = range(self.ranks) if rank is None else [rank]
        if rank is not None and not 0 <= rank < self.ranks:
            raise ReportError("%s has ranks 0..%d, not %d" % (self.path, self.ranks - 1, rank))
        origin = int(self._run.rounds["t_start_ns"][0]) if len(self._run.rounds) else 0
        frames = []
        for r in ranks:
            events = self._run.events[r]
            frame = pandas.DataFrame({name: events[name] for name in events.dtype.names})
            frame["lane"] = pandas.Categorical.from_codes(events["lane"], self._run.lane_names)
            frame["kind"] = pandas.Categorical.from_codes(events["kind"], self._run.kind_names)
            if self._run.message_names is not None:
                frame["message"] = pandas.Categorical.from_codes(events["message"],
                                                                 self._run.message_names)
            if self._run.held_names is not None:
                frame["held"] = pandas.Categorical.from_codes(events["held"], self._run.held_names)
            frame.insert(0, "rank", r)
            frame["t_start_s"] = (events["t_start_ns"] - origin) / 1e9
            frame["t_end_s"] = (events["t_end_ns"] - origin) / 1e9
            frames.append(frame)
        return pandas.concat(frames, ignore_index=True)

    def __repr__(self):
        return "<cmlbed results %s: %s, %d ranks, %d rounds, %s>" % (
            self.path, self.method, self.ranks, len(self.rounds), self.emulation)


def _rounds_frame(rounds):
    pandas = _pandas()
    columns = {}
    for name in rounds.dtype.names:
        values = rounds[name]
        if values.ndim == 1:
            columns[name] = values
        else:
            for r in range(values.shape[1]):
                columns["%s_%d" % (name, r)] = values[:, r]
    return pandas.DataFrame(columns)


def load(path):
    """One results file (see Results)."""
    return Results(path)


def _paths(files):
    if isinstance(files, str):
        paths = sorted(globbing.glob(files))
        if not paths:
            raise ReportError("no file matches %s" % files)
        return paths
    paths = list(files)
    if not paths:
        raise ReportError("load_many: no files given")
    return paths


def load_many(files):
    """Several results files (a glob pattern or a list of paths) as one DataFrame: every
    file's rounds, with columns `file`, `run` (the file's name without .h5), `method`,
    `seed` (experiment.seed) and one column per option whose value differs between the
    files ("network.uplink_rate", ...), placed before the rounds' columns."""
    pandas = _pandas()
    loaded = [load(path) for path in _paths(files)]
    keys = sorted(set().union(*(r.config for r in loaded)))
    varying = [key for key in keys
               if key not in ("experiment.method", "experiment.seed", "output.file")
               and len({r.config.get(key) for r in loaded}) > 1]
    frames = []
    for r in loaded:
        frame = r.rounds.copy()
        front = {"file": r.path, "run": r.name, "method": r.method,
                 "seed": int(r.config.get("experiment.seed", 0) or 0)}
        front.update({key: r.config.get(key) for key in varying})
        for position, (column, value) in enumerate(front.items()):
            frame.insert(position, column, value)
        frames.append(frame)
    return pandas.concat(frames, ignore_index=True)
