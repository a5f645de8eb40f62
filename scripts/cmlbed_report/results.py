"""Reading one cmlbed results file (layout: docs/reference/results-format.md) into plain numpy
arrays, with clear errors for files that are not results files."""

import configparser
import os

import h5py

from . import methods
from .errors import ReportError


class Run:
    """A results file, read completely (files of short runs are small; a long run's
    events fit in memory as well: 43 bytes per event)."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        with _open(path) as f:
            _check_layout(f, path)
            self.method = str(f.attrs["method"])
            self.mpi_size = int(f.attrs["mpi_size"])
            self.config_text = str(f.attrs["config"])
            self.started_at = str(f.attrs.get("started_at", ""))
            # Every root attribute (privacy_epsilon, simulated, ...), as numpy gives it.
            self.attrs = dict(f.attrs.items())
            # The accuracy of always answering one class, as this run's evaluations score
            # (root attribute trivial_accuracy); NaN in files written before it and in
            # runs that score nothing.
            self.trivial_accuracy = float(f.attrs.get("trivial_accuracy", float("nan")))
            self.rounds = f["rounds"][()]
            self.summary = {k: float(v) for k, v in f["summary"].attrs.items()}
            # A simulation of many devices keeps events summed (`cmlbed simulate --events
            # totals`): /event_totals instead of /ranks/R/events; the rounds' busy and idle
            # figures were computed from every event all the same.
            self.event_detail = str(f.attrs.get("event_detail", "all"))
            if self.event_detail == "totals":
                self.event_totals = f["event_totals"][()]
                self.events = [self.event_totals[:0] for _ in range(self.mpi_size)]
                dtype = self.event_totals.dtype
            else:
                self.event_totals = None
                self.events = [f["ranks/%d/events" % r][()] for r in range(self.mpi_size)]
                dtype = self.events[0].dtype
            self.kind_names = _enum_names(dtype, "kind", path)
            self.lane_names = _enum_names(dtype, "lane", path)
            # What a transfer carries or a wait is for; files written before issue 10
            # have no `message` member: None, and reports say so where it matters.
            self.message_names = (_enum_names(dtype, "message", path)
                                  if "message" in dtype.names else None)
            # Whether a compute stage was held to a length and ran past it (no, kept,
            # overran); files written before it have no `held` member: None.
            self.held_names = _enum_names(dtype, "held", path) if "held" in dtype.names else None
            # The re-planner's checks (plan.replan; docs/explanation/simulator.md): column -> array,
            # one row per device and check; None when the run did not re-plan.
            self.replans = ({name: f["plan/replans"][name][()] for name in f["plan/replans"]}
                            if "plan/replans" in f else None)
        self.config = _parse_config(self.config_text, path)
        # Without events (output.timeline = false) busy and idle time are unknown: NaN
        # (older cmlbed versions stored 0 busy, all idle).
        self.has_events = self.option("output.timeline") != "false"
        if not self.has_events:
            self.rounds["busy_s"] = float("nan")
            self.rounds["idle_s"] = float("nan")

    # --- configuration -------------------------------------------------------------
    def option(self, key, device=None):
        """A resolved option, 'section.key'; with device=K the [device.K] override wins."""
        section, name = key.split(".", 1)
        if device is not None and self.config.has_option("device.%d" % device, name):
            return self.config.get("device.%d" % device, name)
        return self.config.get(section, name, fallback="")

    def device_values(self, key):
        """The option's value on every device (ranks 1..mpi_size-1)."""
        return [self.option(key, d) for d in range(1, self.mpi_size)]

    @property
    def configured_rounds(self):
        return int(self.option("experiment.rounds") or 0)

    def require_rounds(self):
        if len(self.rounds) == 0:
            raise ReportError("%s holds no completed round: 0 of %d rounds (the run stopped "
                              "before its first round ended)" % (self.path, self.configured_rounds))

    @property
    def complete(self):
        return len(self.summary) > 0 and len(self.rounds) >= self.configured_rounds

    @property
    def devices(self):
        return self.mpi_size - 1

    def require_round_windows(self):
        if "t_start_ns" not in self.rounds.dtype.names:
            raise ReportError("%s was written by an older cmlbed whose /rounds table has no "
                              "round windows (t_start_ns, t_end_ns); run it again"
                              % self.path)

    def require_events(self):
        if self.event_totals is not None:
            raise ReportError("%s keeps its events as totals per rank, round and kind "
                              "(/event_totals: `cmlbed simulate --events totals`, or more events "
                              "than --events auto keeps): nothing to draw or trace event by event; "
                              "simulate again with --events all for that" % self.path)
        if not self.has_events or not any(len(e) for e in self.events):
            raise ReportError("%s holds no events (the run was made with output.timeline = "
                              "false?): nothing to draw or trace" % self.path)

    # --- the method table ------------------------------------------------------------
    @property
    def method_table(self):
        """The method table as the file stores it (root attribute method_table), or, for a
        file written before it, the binary's (`cmlbed info --methods --json`): a list of
        dicts, one per method (methods.py)."""
        table = self.__dict__.get("_method_table")
        if table is None:
            table = methods.table_of_file(self.attrs, self.path)
            if table is None:
                table = methods.table_from_binary()
            self._method_table = table
        return table

    @property
    def method_traits(self):
        """This run's method's row of the method table ({"splits_model": ..., ...})."""
        try:
            return methods.traits(self.method_table, self.method)
        except ReportError as e:
            raise ReportError("%s: %s" % (self.path, e))

    # --- the per-round table ------------------------------------------------------------
    def round_columns(self):
        """{name: "per-rank" or "scalar"} for every /rounds column the file has, taken
        from its dtype (an array member holds one value per rank), so that columns a newer
        cmlbed adds are read without a list to keep here."""
        return {name: ("per-rank" if self.rounds.dtype[name].shape else "scalar")
                for name in self.rounds.dtype.names}

    def steady_rounds(self):
        """The /rounds rows after the first, which starts with every token bucket full (all
        of them for a one-round run): what round-time comparisons average over."""
        return self.rounds[1:] if len(self.rounds) > 1 else self.rounds

    def steady_round_s(self):
        """Mean wall time of the steady rounds, seconds."""
        return float(self.steady_rounds()["wall_s"].mean())

    def steady_server_idle(self):
        """The server's idle share of the steady rounds' wall time (0..1)."""
        kept = self.steady_rounds()
        return float(kept["idle_s"][:, 0].sum() / kept["wall_s"].sum())

    def has_column(self, name):
        return name in self.rounds.dtype.names

    def per_rank(self, name):
        """A per-rank column as a float (rounds x mpi_size) array; None when the file
        lacks it (written by an older cmlbed)."""
        return self._column(name, 2, "one value per round, expected one per rank")

    def scalar(self, name):
        """A one-value-per-round column as a float array; None when the file lacks it."""
        return self._column(name, 1, "one value per rank, expected one per round")

    def _column(self, name, ndim, mismatch):
        if not self.has_column(name):
            return None
        values = self.rounds[name]
        if values.ndim != ndim:
            raise ReportError("%s: /rounds column %r holds %s" % (self.path, name, mismatch))
        return values.astype(float)

    # --- events ----------------------------------------------------------------------
    def kind_code(self, name):
        return self.kind_names.index(name)

    def lane_code(self, name):
        return self.lane_names.index(name)

    def held(self, event):
        """Whether a compute stage was held to a length and kept it: "no", "kept" or
        "overran" ("no" where the file does not say)."""
        return self.held_names[int(event["held"])] if self.held_names is not None else "no"

    def overran(self, event):
        """Whether a compute stage held to a length (paced or stretched) ran past it: the
        emulation did not hold for that stage."""
        return self.held(event) == "overran"


def _open(path):
    if not os.path.exists(path):
        raise ReportError("%s: no such file" % path)
    if os.path.isdir(path):
        raise ReportError("%s is a directory, not a results file" % path)
    if not h5py.is_hdf5(path):
        raise ReportError("%s is not an HDF5 file (cmlbed writes its results as HDF5; "
                          "is it a results file, and was it written completely?)" % path)
    try:
        return h5py.File(path, "r")
    except OSError as e:
        if "truncated file" in str(e):
            raise ReportError("%s is cut short (%s): it was copied or written incompletely"
                              % (path, str(e).split("(", 1)[-1].rstrip(")")))
        if "unable to lock file" in str(e).lower():
            raise ReportError("%s is locked by another process, probably a run still "
                              "writing it; to read it anyway set HDF5_USE_FILE_LOCKING=FALSE"
                              % path)
        raise ReportError("%s cannot be opened as HDF5: %s" % (path, e))


def _check_layout(f, path):
    missing = [a for a in ("cmlbed_version", "method", "mpi_size", "config")
               if a not in f.attrs]
    if missing:
        raise ReportError("%s is an HDF5 file but not a cmlbed results file (no root "
                          "attribute %s)" % (path, ", ".join(repr(m) for m in missing)))
    size = int(f.attrs["mpi_size"])
    needed = ["rounds", "summary"] + (["event_totals"] if str(f.attrs.get("event_detail", "all")) == "totals"
                                      else ["ranks/%d/events" % r for r in range(size)])
    absent = [n for n in needed if n not in f]
    if absent:
        raise ReportError("%s is an incomplete cmlbed results file: missing %s (the run was "
                          "probably killed while the file was being created)"
                          % (path, ", ".join("/" + n for n in absent)))


def _enum_names(dtype, field, path):
    mapping = h5py.check_enum_dtype(dtype[field])
    if not mapping:
        raise ReportError("%s: the events' %r field is not an HDF5 enum" % (path, field))
    names = [None] * (max(mapping.values()) + 1)
    for name, value in mapping.items():
        names[value] = name
    return names


def _parse_config(text, path):
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    try:
        parser.read_string(text)
    except configparser.Error as e:
        raise ReportError("%s: the stored configuration cannot be parsed: %s" % (path, e))
    return parser


def load_runs(paths, allow_empty=False):
    """The runs of `paths`. A file without a completed round is an error unless
    allow_empty (then the caller says so and leaves it out)."""
    if not paths:
        raise ReportError("no results file given")
    runs = [Run(p) for p in paths]
    if not allow_empty:
        for run in runs:
            run.require_rounds()
    return runs
