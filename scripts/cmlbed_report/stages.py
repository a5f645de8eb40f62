"""Stage lengths side by side (`cmlbed-report stages`): for the server (rank 0) and the
devices (ranks 1.., pooled), every kind of compute stage and every kind of message sent,
over the steady rounds (rounds 2..; all rounds of a one-round run): how many per round,
their median length and their seconds per round. With two files, the second's median
against the first's: where a simulated run parts from the measured one it predicts
(docs/explanation/simulator.md), or where two measured runs differ."""

import numpy as np

from .errors import ReportError

# Compute-lane kinds that are not work: a wait is idle time by definition.
_NOT_STAGES = ("wait",)


def stage_table(run):
    """{(role, stage): (count per round, median s, seconds per round)}; role 'server' or
    'devices', stage a compute kind ('forward', 'backward', 'step', ...) or 'send
    MESSAGE' (a transfer's send, from its posting to its last byte, on the sender)."""
    run.require_events()
    steady = {int(r) for r in run.steady_rounds()["round"]}
    compute = run.lane_code("compute")
    send = run.kind_code("send")
    durations = {}
    for rank, events in enumerate(run.events):
        role = "server" if rank == 0 else "devices"
        kept = events[np.isin(events["round"], list(steady))]
        seconds = (kept["t_end_ns"] - kept["t_start_ns"]) * 1e-9
        on_compute = kept["lane"] == compute
        for code in np.unique(kept["kind"][on_compute]):
            name = run.kind_names[code]
            if name not in _NOT_STAGES:
                durations.setdefault((role, name), []).extend(seconds[on_compute & (kept["kind"] == code)])
        sends = ~on_compute & (kept["kind"] == send)
        codes = kept["message"][sends] if run.message_names else np.zeros(int(sends.sum()), dtype=int)
        for code in np.unique(codes):
            name = "send " + (run.message_names[code] if run.message_names else "message")
            durations.setdefault((role, name), []).extend(seconds[sends][codes == code])
    rounds = max(len(steady), 1)
    return {key: (len(values) / rounds, float(np.median(values)), float(np.sum(values)) / rounds)
            for key, values in durations.items()}


def report_text(runs):
    """One row per role and stage; columns per run, and with two runs the second's median
    over the first's."""
    if len(runs) not in (1, 2):
        raise ReportError("stages compares one or two files, not %d" % len(runs))
    tables = [stage_table(run) for run in runs]
    keys = sorted(set().union(*tables), key=lambda k: (k[0] != "server", k[1]))
    header = "%-24s" % "stage"
    for run in runs:
        header += " | %-32s" % run.name[:32]
    if len(runs) == 2:
        header += " | median ratio"
    lines = ["stage lengths over the steady rounds (per round: count, median ms, s)", header]
    for key in keys:
        line = "%-24s" % ("%s %s" % key)
        for table in tables:
            if key in table:
                count, median, total = table[key]
                line += " | %8.1f %10.3f ms %9.3f s" % (count, 1e3 * median, total)
            else:
                line += " | %-32s" % "-"
        if len(runs) == 2:
            line += " | " + ("%+.1f%%" % (100 * (tables[1][key][1] / tables[0][key][1] - 1))
                             if key in tables[0] and key in tables[1] and tables[0][key][1] > 0
                             else "-")
        lines.append(line)
    return "\n".join(lines) + "\n"
