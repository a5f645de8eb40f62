"""Idle time by cause: how much of each rank's idle time (round wall time minus the union
of its compute) it spent blocked on a message, by what it waited for and from whom,
taken from the `wait` events of the timeline (cmlbed records one whenever a rank blocks
on a message: kind wait, peer = the rank waited for, message = what is waited for).

Rule, per rank and round, inside the round's window (/rounds t_start_ns .. t_end_ns):
busy = the union of the rank's compute intervals other than waits (the /rounds busy_s
definition); every stretch of the window that is not busy and lies under one or more
wait events goes to those waits, shared equally when several overlap (a wait on any of
several devices is a wait on each of them), so the parts add up to the idle time; the
idle time under no wait event is "other" (before the first message of the round, at the
round's end, bookkeeping between stages).

A wait is named after the message waited for, with two names of U-shaped split learning
(ushaped), the one schedule in which these messages go that way: a device waiting for an
activation waits for the "middle output" (the server's middle, for its tail), and the
server waiting for a gradient waits for the "tail gradient" (the gradient of the middle's
output, from a device's tail)."""

import collections

import numpy as np

OTHER = "other"


def split_window(lo, hi, busy, waits, keys):
    """Busy nanoseconds and idle nanoseconds per wait key within [lo, hi).

    busy: (n, 2) start/end pairs; waits: (m, 2) pairs with keys[i] the cause of wait i.
    Returns (busy_ns, {key: ns}); the rest of the window is idle without a wait."""
    busy = _clip(np.asarray(busy, dtype=np.int64).reshape(-1, 2), lo, hi)
    waits = np.asarray(waits, dtype=np.int64).reshape(-1, 2)
    # Keys are any hashables (tuples too), so they are numbered rather than put in numpy.
    unique_keys = list(dict.fromkeys(keys))
    index = np.array([unique_keys.index(k) for k in keys], dtype=np.int64)
    waits = np.clip(waits, lo, hi)
    kept = waits[:, 1] > waits[:, 0]
    waits, index = waits[kept], index[kept]
    # Elementary segments between every boundary; coverage by counting starts and ends.
    points = np.unique(np.concatenate([[lo, hi], busy.ravel(), waits.ravel()]))
    length = np.diff(points)
    is_busy = _covered(points, busy)
    covered = np.array([_covered(points, waits[index == i]) for i in range(len(unique_keys))],
                       dtype=bool).reshape(len(unique_keys), len(length))
    count = covered.sum(axis=0)
    share = np.where((count > 0) & ~is_busy, length / np.maximum(count, 1), 0.0)
    per_key = {k: float(share[covered[i]].sum()) for i, k in enumerate(unique_keys)}
    return int(length[is_busy].sum()), per_key


def _clip(spans, lo, hi):
    spans = np.clip(spans, lo, hi)
    return spans[spans[:, 1] > spans[:, 0]]


def _covered(points, spans):
    """For each segment [points[i], points[i+1]): is it inside any of the spans?"""
    delta = np.zeros(len(points), dtype=np.int64)
    np.add.at(delta, np.searchsorted(points, spans[:, 0]), 1)
    np.add.at(delta, np.searchsorted(points, spans[:, 1]), -1)
    return np.cumsum(delta)[:-1] > 0


class RankCauses:
    """One rank's idle time over a run's rounds, seconds, by cause."""

    def __init__(self, rank):
        self.rank = rank
        self.wall_s = 0.0
        self.busy_s = 0.0
        self.waiting = collections.Counter()  # message name -> seconds
        self.by_peer = collections.Counter()  # (message name, peer) -> seconds

    @property
    def idle_s(self):
        return self.wall_s - self.busy_s

    @property
    def other_s(self):
        return max(self.idle_s - sum(self.waiting.values()), 0.0)

    def top_peer(self, message):
        """The peer this rank waited for longest for `message`, and how many peers it
        waited for with that message."""
        peers = {p: s for (m, p), s in self.by_peer.items() if m == message and s > 0}
        return max(peers, key=peers.get), len(peers)


def availability(run):
    """None when the run's idle time can be explained, else why not (one phrase)."""
    if getattr(run, "event_totals", None) is not None:
        return "events kept as totals (/event_totals), not one by one"
    if not run.has_events or not any(len(e) for e in run.events):
        return "no events (output.timeline = false)"
    if "t_start_ns" not in run.rounds.dtype.names:
        return "no round windows in /rounds (an older cmlbed)"
    wait = run.kind_names.index("wait") if "wait" in run.kind_names else -1
    if not any(np.any(e["kind"] == wait) for e in run.events):
        return ("no wait events (written by a cmlbed that did not record waits)"
                if run.message_names is None else "no wait events recorded")
    return None


def run_causes(run):
    """[RankCauses for rank 0 .. mpi_size-1], summed over the run's rounds."""
    compute = run.lane_names.index("compute")
    wait = run.kind_names.index("wait")
    causes = []
    for rank, events in enumerate(run.events):
        result = RankCauses(rank)
        busy_rows = events[(events["lane"] == compute) & (events["kind"] != wait)]
        wait_rows = events[events["kind"] == wait]
        busy = np.stack([busy_rows["t_start_ns"], busy_rows["t_end_ns"]], axis=1)
        waits = np.stack([wait_rows["t_start_ns"], wait_rows["t_end_ns"]], axis=1)
        keys = [(_cause_name(_message_name(run, row), rank), int(row["peer"])) for row in wait_rows]
        for window in run.rounds:
            lo, hi = int(window["t_start_ns"]), int(window["t_end_ns"])
            # By time, not by round number: what falls in the window counts (the
            # evaluation after a round lies outside it), as for /rounds busy_s.
            in_busy = (busy[:, 1] > lo) & (busy[:, 0] < hi)
            in_wait = np.flatnonzero((waits[:, 1] > lo) & (waits[:, 0] < hi))
            busy_ns, per_key = split_window(lo, hi, busy[in_busy], waits[in_wait],
                                            [keys[i] for i in in_wait])
            result.wall_s += (hi - lo) * 1e-9
            result.busy_s += busy_ns * 1e-9
            for (message, peer), ns in per_key.items():
                result.waiting[message] += ns * 1e-9
                result.by_peer[(message, peer)] += ns * 1e-9
        causes.append(result)
    return causes


def _message_name(run, row):
    if run.message_names is None:
        return "a message"
    code = int(row["message"])
    name = run.message_names[code] if code < len(run.message_names) else None
    return "a message" if name in (None, "none") else name


# Messages that travel against the usual direction (ushaped), by the rank that waits:
# (waiting on a device?, message) -> the cause's name.
_AGAINST_THE_FLOW = {(True, "activation"): "middle output", (False, "gradient"): "tail gradient"}


def _cause_name(message, rank):
    return _AGAINST_THE_FLOW.get((rank != 0, message), message)


def _who(rank):
    return "server" if rank == 0 else "device %d" % rank


def _percent(part, whole):
    return 100 * part / whole if whole > 0 else 0.0


def describe(causes):
    """'idle 61.0%: 48.0% waiting for activation (device 2 most), 13.0% other'."""
    wall = causes.wall_s
    parts = []
    for message, seconds in sorted(causes.waiting.items(), key=lambda kv: -kv[1]):
        if seconds <= 0:
            continue
        peer, peers = causes.top_peer(message)
        source = _who(peer) if peer >= 0 else "any rank"
        parts.append("%.1f%% waiting for %s (%s%s)" % (_percent(seconds, wall), message, source,
                                                     " most" if peers > 1 else ""))
    parts.append("%.1f%% %s" % (_percent(causes.other_s, wall), OTHER))
    return "idle %.1f%%: %s" % (_percent(causes.idle_s, wall), ", ".join(parts))


def report_text(runs):
    lines = ["== idle causes (percent of the rounds' wall time; waiting = idle under the "
             "rank's wait events, by the message waited for; other = idle under no wait, "
             "e.g. at a round's start and end)"]
    for run in runs:
        lines.append("%s (%s)" % (run.name, run.method))
        why_not = availability(run)
        if why_not:
            lines.append("  unknown: %s" % why_not)
            continue
        for causes in run_causes(run):
            lines.append("  %-10s %s" % (_who(causes.rank), describe(causes)))
    return "\n".join(lines) + "\n"


def rows(runs):
    """Long-format rows (one per run, rank and cause) for CSV and Markdown."""
    out = []
    for run in runs:
        if availability(run):
            continue
        for causes in run_causes(run):
            def row(cause, peer, seconds):
                return {"run": run.name, "method": run.method, "rank": causes.rank,
                        "cause": cause, "peer": peer, "seconds": seconds,
                        "pct_of_wall": _percent(seconds, causes.wall_s),
                        "idle_pct": _percent(causes.idle_s, causes.wall_s)}
            for (message, peer), seconds in sorted(causes.by_peer.items()):
                out.append(row("waiting for " + message, _who(peer) if peer >= 0 else "-",
                               seconds))
            out.append(row(OTHER, "-", causes.other_s))
    return out


COLUMNS = [
    ("run", "run", "%s"), ("method", "method", "%s"), ("rank", "rank", "%d"),
    ("idle_pct", "idle %", "%.1f"), ("cause", "cause", "%s"), ("peer", "from", "%s"),
    ("seconds", "seconds", "%.3f"), ("pct_of_wall", "% of wall", "%.1f"),
]


def report_markdown(runs):
    from .tables import markdown_table
    text = ("\n## Idle causes\n\nEach rank's idle time (percent of the rounds' wall time) "
            "under its wait events, by the message waited for and the rank it came from; "
            "'other' is idle time under no wait event.\n\n")
    unknown = [(run, availability(run)) for run in runs if availability(run)]
    table = rows(runs)
    if table:
        text += markdown_table(table, COLUMNS)
    for run, why in unknown:
        text += "\n%s: unknown, %s.\n" % (run.name, why)
    return text
