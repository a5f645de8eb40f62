"""A run as a Chrome / Perfetto trace (JSON "Trace Event Format"), to open in
ui.perfetto.dev or chrome://tracing: one process per rank ("server", "device k"), one
thread per lane, a complete event ("ph": "X", microseconds) per recorded event, and a
flow arrow from each send to the receive of the same message.

Ids: pid = rank + 1 and tid = 100000 * (rank + 1) + 10 * spill + lane, because Perfetto
treats pid 0 as the kernel's idle process and looks thread names up by tid, so tids must
differ across processes and from every pid."""

import collections
import json
from . import emulation

# Complete events on one thread must nest; transfers in flight at the same time on one
# lane overlap without nesting (PiPar uploads the next micro-batch while the last is on
# the wire), so they spill onto extra threads of the lane ("uplink #2", ...).
_SPILL_STRIDE = 10
_RANK_STRIDE = 100000


def pid_of(rank):
    return rank + 1


def tid_of_lane(rank, lane, spill=0):
    return _RANK_STRIDE * (rank + 1) + _SPILL_STRIDE * spill + lane


def _process_name(rank):
    return "server" if rank == 0 else "device %d" % rank


def _message(run, e):
    """The message a transfer carries or a wait is for, None when the file does not
    say (written before events named their messages) or the event has none."""
    if run.message_names is None or int(e["message"]) >= len(run.message_names):
        return None
    name = run.message_names[int(e["message"])]
    return None if name == "none" else name


def _event_name(run, e):
    name = run.kind_names[e["kind"]]
    message = _message(run, e)
    if message:
        name += " " + message
    if e["micro_batch"] >= 0:
        name += " mb%d" % e["micro_batch"]
    if run.overran(e):
        name += " (overran)"
    return name


def _assign_tracks(starts, ends, nest):
    """Greedy track per event (events sorted by start, longest first): an event goes on
    the first track where it starts after the open event ended or, with `nest`, lies
    inside it. Transfer lanes do not nest, so that a flow arrow bound at a time inside a
    transfer finds that transfer and no other."""
    stacks = []
    tracks = []
    for start, end in zip(starts, ends):
        for k, stack in enumerate(stacks):
            while stack and stack[-1] <= start:
                stack.pop()
            if not stack or (nest and end <= stack[-1]):
                stack.append(end)
                tracks.append(k)
                break
        else:
            stacks.append([end])
            tracks.append(len(stacks) - 1)
    return tracks


def transfer_key(e):
    """What identifies a message on both sides: the header's round, batch, micro-batch
    and payload bytes (the occurrence count separates repeats)."""
    return (int(e["round"]), int(e["batch"]), int(e["micro_batch"]), int(e["bytes"]))


def match_transfers(run):
    """Pairs (sender rank, send row, receiver rank, recv row) of one message each."""
    send, recv = run.kind_code("send"), run.kind_code("recv")
    in_time_order = [(rank, i, events[i]) for rank, events in enumerate(run.events)
                     for i in sorted(range(len(events)), key=lambda i: events[i]["t_start_ns"])]
    receives = collections.defaultdict(collections.deque)
    for rank, i, e in in_time_order:
        if e["kind"] == recv:
            receives[(int(e["peer"]), rank) + transfer_key(e)].append(i)
    pairs = []
    for rank, i, e in in_time_order:
        if e["kind"] != send:
            continue
        queue = receives.get((rank, int(e["peer"])) + transfer_key(e))
        if queue:
            pairs.append((rank, i, int(e["peer"]), queue.popleft()))
    return pairs


def trace_events(run):
    run.require_events()
    out = []
    lane_tids = collections.defaultdict(set)
    tid_of = {}  # (rank, row) -> tid
    compute = run.lane_code("compute")
    for rank, events in enumerate(run.events):
        pid = pid_of(rank)
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": tid_of_lane(rank, 0),
                    "args": {"name": _process_name(rank)}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid,
                    "tid": tid_of_lane(rank, 0), "args": {"sort_index": rank}})
        for lane in range(len(run.lane_names)):
            rows = [i for i in range(len(events)) if events[i]["lane"] == lane]
            rows.sort(key=lambda i: (events[i]["t_start_ns"], -events[i]["t_end_ns"]))
            tracks = _assign_tracks([events[i]["t_start_ns"] for i in rows],
                                    [events[i]["t_end_ns"] for i in rows], nest=lane == compute)
            for i, k in zip(rows, tracks):
                tid = tid_of_lane(rank, lane, k)
                tid_of[(rank, i)] = tid
                lane_tids[(rank, lane)].add(tid)
                e = events[i]
                args = {"rank": rank, "round": int(e["round"]), "batch": int(e["batch"]),
                        "micro_batch": int(e["micro_batch"]), "peer": int(e["peer"]),
                        "bytes": int(e["bytes"])}
                if _message(run, e):
                    args["message"] = _message(run, e)
                held = run.held(e)
                if held != "no":
                    args["held"] = held
                slice_ = {
                    "ph": "X", "pid": pid, "tid": tid, "name": _event_name(run, e),
                    "cat": run.kind_names[e["kind"]],
                    "ts": int(e["t_start_ns"]) / 1e3,
                    "dur": (int(e["t_end_ns"]) - int(e["t_start_ns"])) / 1e3,
                    "args": args,
                }
                if held == "overran":
                    slice_["cname"] = "terrible"  # red in chrome://tracing; Perfetto shows the name
                out.append(slice_)
    for (rank, lane), tids in lane_tids.items():
        for tid in sorted(tids):
            spill = (tid % _RANK_STRIDE) // _SPILL_STRIDE
            name = run.lane_names[lane] + (" #%d" % (spill + 1) if spill else "")
            out.append({"ph": "M", "name": "thread_name", "pid": pid_of(rank), "tid": tid,
                        "args": {"name": name}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid_of(rank), "tid": tid,
                        "args": {"sort_index": tid % _RANK_STRIDE}})
    # Rounds and ranks whose emulation did not hold (docs/explanation/fidelity.md): an
    # instant event at the round's start on the rank's compute lane.
    for mark in emulation.marks(run):
        out.append({"ph": "i", "s": "t", "pid": pid_of(mark["rank"]), "tid": tid_of_lane(mark["rank"], compute),
                    "ts": mark["t_ns"] / 1e3, "cat": "emulation",
                    "name": ("held stages overran: %d by %.3g s (round: %s)" % (
                        mark["overran"], mark["overrun_s"], mark["level"]) if mark["overran"]
                             else "round emulation %s" % mark["level"]),
                    "args": {"round": mark["round"], "rank": mark["rank"], "round_verdict": mark["level"],
                             "held_stages_overran": mark["overran"], "overrun_s": mark["overrun_s"],
                             "runqueue_s": mark["runqueue_s"]}})
    for flow_id, (src, i, dst, j) in enumerate(match_transfers(run), start=1):
        s, r = run.events[src][i], run.events[dst][j]
        # Each end binds to the slice enclosing its time on its thread: the middle of the
        # send, the middle of the receive ("bp": "e": enclosing, not the next slice).
        out.append({"ph": "s", "id": flow_id, "pid": pid_of(src), "tid": tid_of[(src, i)],
                    "ts": _middle_us(s), "name": "message", "cat": "transfer"})
        out.append({"ph": "f", "bp": "e", "id": flow_id, "pid": pid_of(dst),
                    "tid": tid_of[(dst, j)], "ts": _middle_us(r), "name": "message",
                    "cat": "transfer"})
    return out


def _middle_us(e):
    return (int(e["t_start_ns"]) + int(e["t_end_ns"])) / 2e3


def write_trace(run, path):
    document = {
        "traceEvents": trace_events(run),
        "displayTimeUnit": "ms",
        "otherData": {"source": run.path, "method": run.method, "mpi_size": run.mpi_size,
                      "emulation": emulation.verdict(run), "emulation_reasons": emulation.reasons(run),
                      "time_base": "rank 0's clock, microseconds", "lanes": list(run.lane_names),
                      "ids": "pid = rank + 1; tid = 100000 * (rank + 1) + 10 * spill + lane"},
    }
    with open(path, "w") as f:
        json.dump(document, f, separators=(",", ":"))
    return document
