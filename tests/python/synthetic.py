"""Small results files written with h5py in the layout of docs/reference/results-format.md, for
tests that need columns or events a given cmlbed binary may not write yet (issue 10:
/rounds messages_up, messages_down, flops, device_accuracy; the events' `message` enum
and `wait` events), or exact hand-computed numbers. No test here runs cmlbed."""

import h5py
import numpy as np

LANES = ["compute", "uplink", "downlink"]
KINDS = ["forward", "backward", "step", "send", "recv", "wait", "aggregate", "evaluate",
         "compute", "sleep"]
MESSAGES = ["none", "activation", "gradient", "model", "transfer_up", "transfer_down",
            "control"]
HELD = ["no", "kept", "overran"]


def _enum(names):
    return h5py.enum_dtype({name: i for i, name in enumerate(names)}, basetype="u1")


def event_dtype(with_message=True):
    fields = [("round", "<i4"), ("batch", "<i4"), ("micro_batch", "<i4"),
              ("lane", _enum(LANES)), ("kind", _enum(KINDS))]
    if with_message:  # and held, which came later; files before either have neither
        fields += [("message", _enum(MESSAGES)), ("held", _enum(HELD))]
    fields += [("peer", "<i4"), ("bytes", "<i8"), ("t_start_ns", "<i8"), ("t_end_ns", "<i8")]
    return np.dtype(fields)


def rounds_dtype(mpi_size, new_columns=True):
    per_rank = ("<f8", (mpi_size,))
    fields = [("round", "<i4"), ("t_start_ns", "<i8"), ("t_end_ns", "<i8"), ("wall_s", "<f8"),
              ("bytes_up", "<i8"), ("bytes_down", "<i8"), ("test_loss", "<f8"),
              ("test_accuracy", "<f8"), ("busy_s",) + per_rank, ("idle_s",) + per_rank]
    if new_columns:  # added at the end, as cmlbed adds columns
        fields += [("messages_up", "<i8"), ("messages_down", "<i8"), ("flops",) + per_rank,
                   ("device_accuracy",) + per_rank]
    return np.dtype(fields)


def event(kind, t_start_ns, t_end_ns, round_=0, lane="compute", message="none", peer=-1,
          micro_batch=-1, nbytes=0, held="no"):
    """One event as a dict; `events` turns a list of them into a table."""
    return dict(round=round_, batch=0, micro_batch=micro_batch, lane=LANES.index(lane),
                kind=KINDS.index(kind), message=MESSAGES.index(message), held=HELD.index(held), peer=peer,
                bytes=nbytes, t_start_ns=t_start_ns, t_end_ns=t_end_ns)


def config_text(method, sections=None):
    """A resolved configuration: every run carries every section, as cmlbed writes it."""
    config = {
        "experiment": {"method": method, "rounds": "1", "seed": "1"},
        "model": {"name": "lenet", "split": "3"},
        "train": {"lr": "0.01", "batch_size": "32"},
        "network": {"uplink_rate": "10mbit", "downlink_rate": "25mbit"},
        "output": {"file": "results/%s.h5" % method, "timeline": "true"},
        "pipar": {"micro_batches": "4"},
        "adasplit": {"kappa": "0.6", "eta": "3"},
    }
    for section, options in (sections or {}).items():
        config.setdefault(section, {}).update(options)
    return "".join("[%s]\n%s\n" % (s, "".join("%s = %s\n" % kv for kv in o.items()))
                   for s, o in config.items())


def write(path, method="fl", mpi_size=3, rounds=None, events=None, sections=None,
          new_columns=True, summary=True, attrs=None):
    """rounds: list of dicts (missing fields 0; busy_s / idle_s computed by the caller
    or left 0); events: {rank: [event(...), ...]}; attrs: more root attributes (e.g.
    method_table; without it the report asks the binary for the method table)."""
    rounds = rounds or [dict(round=0, t_start_ns=0, t_end_ns=10**9)]
    with h5py.File(path, "w") as f:
        f.attrs["cmlbed_version"] = "test"
        f.attrs["git_revision"] = "unknown"
        f.attrs["method"] = method
        f.attrs["mpi_size"] = np.int32(mpi_size)
        f.attrs["config"] = config_text(method, sections)
        f.attrs["started_at"] = "2026-11-30T00:00:00Z"
        for key, value in (attrs or {}).items():
            f.attrs[key] = value
        table = np.zeros(len(rounds), dtype=rounds_dtype(mpi_size, new_columns))
        for i, row in enumerate(rounds):
            for key, value in row.items():
                table[key][i] = value
            table["wall_s"][i] = (row["t_end_ns"] - row["t_start_ns"]) / 1e9
        f.create_dataset("rounds", data=table, maxshape=(None,), chunks=True)
        group = f.create_group("summary")
        if summary:
            group.attrs["rounds"] = float(len(rounds))
        dtype = event_dtype(with_message=new_columns)
        for rank in range(mpi_size):
            rows = (events or {}).get(rank, [])
            data = np.zeros(len(rows), dtype=dtype)
            for i, e in enumerate(rows):
                for key in dtype.names:
                    data[key][i] = e[key]
            f.create_dataset("ranks/%d/events" % rank, data=data, maxshape=(None,),
                             chunks=(max(len(rows), 1),))
    return path
