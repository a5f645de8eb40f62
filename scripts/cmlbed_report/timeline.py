"""Gantt chart of one or more runs: one row per rank and lane (server on top), one colour
per kind of event, micro-batch numbers where they fit. Several runs share one time
scale, so PiPar's overlap shows next to SFL's and FL's."""

import numpy as np

from .errors import ReportError
from .plotting import pyplot, save
from .summary import raw_data_uploaded
from . import emulation

KIND_COLOURS = {
    "forward": "#4C72B0", "backward": "#DD8452", "step": "#55A868", "send": "#8172B3",
    "recv": "#64B5CD", "wait": "#F4F4F4", "aggregate": "#C44E52", "evaluate": "#8C8C8C",
    "compute": "#937860", "sleep": "#CCB974",
}
# A wait is idle time, not work: a pale hatched bar under the compute bars, so that it
# reads as a gap with a reason rather than as another kind of computation.
_WAIT_STYLE = {"hatch": "////", "edgecolor": "#A0A0A0", "linewidth": 0.0}
OVERRAN_EDGE = "#D62728"  # a held stage that ran past its length
_LEGEND_NAMES = {"wait": "wait (for a message)", "overran": "held stage ran past its length"}
_MIN_LABEL_PX = 14  # a bar narrower than this gets no micro-batch number


def parse_rounds(spec, run):
    """'all', '3', '0-2' or '0,2,5' -> sorted round numbers present in the run."""
    present = [int(r) for r in run.rounds["round"]]
    if spec in (None, "", "all"):
        return present
    chosen = set()
    try:
        for part in spec.split(","):
            lo, dash, hi = part.partition("-")
            lo, hi = int(lo), int(hi) if dash else int(lo)
            if hi < lo:
                raise ValueError
            chosen.update(range(lo, hi + 1))
    except ValueError:
        raise ReportError("--rounds %r: expected 'all', N, N-M (N <= M) or a list like 0,2"
                          % spec)
    missing = sorted(chosen - set(present))
    if missing:
        raise ReportError("%s has no round %s (its rounds: %d-%d)"
                          % (run.path, ", ".join(map(str, missing)), present[0], present[-1]))
    return sorted(chosen)


def _rows(run):
    """(rank, lane) rows in drawing order, top first, leaving out lanes with no event."""
    rows = []
    for rank, events in enumerate(run.events):
        for lane in range(len(run.lane_names)):
            if np.any(events["lane"] == lane):
                rows.append((rank, lane))
    return rows


def _row_label(run, rank, lane):
    who = "server" if rank == 0 else "device %d" % rank
    return "%s %s" % (who, run.lane_names[lane])


def _window(run, rounds):
    run.require_round_windows()
    table = run.rounds[np.isin(run.rounds["round"], rounds)]
    t0 = int(table["t_start_ns"].min())
    ends = [int(table["t_end_ns"].max())]
    # The test-set evaluation after a round is not part of it: it may run off the chart.
    evaluate = run.kind_code("evaluate") if "evaluate" in run.kind_names else -1
    for events in run.events:
        chosen = np.isin(events["round"], rounds) & (events["kind"] != evaluate)
        if chosen.any():
            ends.append(int(events["t_end_ns"][chosen].max()))
    return t0, max(ends), table


def draw(runs, out_path, rounds_spec=None, title=None):
    for run in runs:
        run.require_events()
    plt = pyplot()
    selections = [parse_rounds(rounds_spec, run) for run in runs]
    windows = [_window(run, rounds) for run, rounds in zip(runs, selections)]
    span_s = max((end - start) * 1e-9 for start, end, _ in windows)
    rows = [_rows(run) for run in runs]
    heights = [len(r) for r in rows]
    fig, axes = plt.subplots(len(runs), 1, squeeze=False, sharex=True,
                             figsize=(14, 1.2 + 0.32 * sum(heights) + 0.6 * len(runs)),
                             gridspec_kw={"height_ratios": heights})
    used_kinds = set()
    notes = _repeat_notes(runs)
    for ax, run, run_rows, rounds, (t0, _, table) in zip(axes[:, 0], runs, rows, selections,
                                                         windows):
        used_kinds |= _draw_run(ax, run, run_rows, rounds, t0, table, span_s, fig)
        if notes.get(id(run)):
            ax.set_title(ax.get_title(loc="left") + "\n" + notes[id(run)], fontsize=9, loc="left")
        if emulation.title_note(run):  # the drawn times are partly this host's
            ax.set_title(ax.get_title(loc="left") + "\n" + emulation.title_note(run), fontsize=9, loc="left",
                         color="darkred")
    ax = axes[-1, 0]
    ax.set_xlim(0, span_s * 1.01)
    ax.set_xlabel("seconds since the start of the first round shown (the evaluation after a "
                  "round runs off to the right)")
    shown = [k for k in KIND_COLOURS if k in used_kinds] + (["overran"] if "overran" in used_kinds else [])
    handles = [_legend_handle(plt, k) for k in shown]
    fig.legend(handles, [_LEGEND_NAMES.get(k, k) for k in shown], loc="upper center",
               ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 1.0))
    if title:
        fig.suptitle(title, y=1.03)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    save(fig, out_path, bbox_inches="tight")


def _repeat_notes(runs):
    """{id(run): text} for runs drawn with other seeds of their experiment: a Gantt
    chart shows one run's events, which cannot be averaged, so the title gives the
    group's mean round time with its 95% interval, to read the drawn run against."""
    from .summary import group_numbers, group_runs
    notes = {}
    for group in group_runs(runs):
        if group.n > 1:
            row = group_numbers(group)
            for run in group.runs:
                notes[id(run)] = ("seed %s of %d; the %d seeds' mean round time %.3f ± %.3f s "
                                  "(95%% CI, all rounds)" % (
                                      run.option("experiment.seed"), group.n, group.n,
                                      row["mean_round_s"], row["mean_round_s_ci95"]))
    return notes


def _legend_handle(plt, kind):
    if kind == "overran":
        return plt.Rectangle((0, 0), 1, 1, facecolor="none", edgecolor=OVERRAN_EDGE, linewidth=1.0)
    if kind == "wait":
        return plt.Rectangle((0, 0), 1, 1, facecolor=KIND_COLOURS["wait"],
                             **dict(_WAIT_STYLE, linewidth=0.5))
    return plt.Rectangle((0, 0), 1, 1, color=KIND_COLOURS.get(kind, "black"))


def _draw_run(ax, run, rows, rounds, t0, table, span_s, fig):
    y_of = {row: len(rows) - 1 - i for i, row in enumerate(rows)}  # server on top
    axes_px = fig.get_size_inches()[0] * fig.dpi * 0.85
    bars = {}  # (row y, kind, is transfer) -> [(start, width)], drawn once per key
    overran = {}  # row y -> [(start, width)] of held stages that ran past their length
    # Numbers only where a mini-batch is really cut into micro-batches.
    pipelined = any(len(e) and e["micro_batch"].max() > 0 for e in run.events)
    for rank, events in enumerate(run.events):
        chosen = events[np.isin(events["round"], rounds)]
        for e in chosen:
            y = y_of[(rank, int(e["lane"]))]
            kind = run.kind_names[e["kind"]]
            start = (int(e["t_start_ns"]) - t0) * 1e-9
            width = (int(e["t_end_ns"]) - int(e["t_start_ns"])) * 1e-9
            transfer = int(e["lane"]) != run.lane_code("compute")
            bars.setdefault((y, kind, transfer), []).append((start, width))
            if run.overran(e):
                overran.setdefault(y, []).append((start, width))
            # Not on the server's link lanes, where all devices' transfers overlap.
            wide_enough = width / span_s * axes_px >= _MIN_LABEL_PX
            if (pipelined and e["micro_batch"] >= 0 and (rank > 0 or not transfer)
                    and wide_enough and kind != "wait"):
                ax.text(start + width / 2, y, str(int(e["micro_batch"])), ha="center",
                        va="center", fontsize=6, color="white", zorder=3)
    for (y, kind, transfer), spans in bars.items():
        if kind == "wait":
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=KIND_COLOURS["wait"], zorder=1,
                           **_WAIT_STYLE)
            continue
        # Transfers in flight together overlap on their lane: thin white edges and a
        # little transparency keep each one visible.
        ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=KIND_COLOURS.get(kind, "black"),
                       edgecolor="white" if transfer else "none", linewidth=0.4,
                       alpha=0.85 if transfer else 1.0, zorder=2)
    # Held stages (paced or stretched) whose work ran past their length: a red outline
    # (the emulation did not hold there; docs/explanation/fidelity.md).
    for y, spans in overran.items():
        ax.broken_barh(spans, (y - 0.4, 0.8), facecolors="none", edgecolor=OVERRAN_EDGE, linewidth=1.0, zorder=3)
    for r in table:
        ax.axvline((int(r["t_start_ns"]) - t0) * 1e-9, color="black", lw=0.6, ls="--")
        ax.axvline((int(r["t_end_ns"]) - t0) * 1e-9, color="black", lw=0.6, ls=":")
        ax.text((int(r["t_start_ns"]) - t0) * 1e-9, len(rows) - 0.45, " round %d" % r["round"],
                fontsize=7, va="bottom")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_row_label(run, *row) for row in reversed(rows)], fontsize=7)
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.set_title("%s: %s, %s, %d device(s)%s; dashed = round start, dotted = round end"
                 % (run.name, run.method, run.option("model.name"), run.devices,
                    ", split 0: raw data uploaded" if raw_data_uploaded(run) else ""),
                 fontsize=9, loc="left")
    ax.grid(axis="x", lw=0.3, alpha=0.5)
    kinds = {kind for _, kind, _ in bars}
    if overran:
        kinds.add("overran")
    return kinds
