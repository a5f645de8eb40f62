"""Pictures across runs: idle time and speedup bars, and time-to-accuracy curves."""

import numpy as np

from .errors import ReportError
from .plotting import label, pyplot, save
from .summary import compare


def idle_bars(runs, out_path, baseline="fl"):
    """Left: server and mean device idle seconds per round, per run. Right: speedup of
    each run's round time against its baseline."""
    plt = pyplot()
    rows = compare(runs, baseline)
    names = [label(run, runs) for run in runs]
    x = np.arange(len(runs))
    fig, (idle_ax, speed_ax) = plt.subplots(1, 2, figsize=(max(8, 1.6 * len(runs) + 4), 4.2))
    per_round = lambda key: [row[key] / row["rounds"] for row in rows]  # noqa: E731
    server = idle_ax.bar(x - 0.2, per_round("server_idle_s"), 0.4, label="server",
                         color="#4C72B0")
    device = idle_ax.bar(x + 0.2, per_round("device_idle_s"), 0.4, label="device (mean)",
                         color="#DD8452")
    for bars, key in ((server, "server_idle_pct"), (device, "device_idle_pct")):
        idle_ax.bar_label(bars, ["%.0f%%" % row[key] for row in rows], fontsize=7)
    idle_ax.set_ylabel("idle seconds per round")
    idle_ax.set_title("idle time (round wall time - union of compute)", fontsize=9)
    speed = speed_ax.bar(x, [row["speedup"] for row in rows], 0.5, color="#55A868")
    speed_ax.bar_label(speed, ["%.2fx" % row["speedup"] for row in rows], fontsize=7)
    speed_ax.axhline(1.0, color="black", lw=0.6)
    speed_ax.set_ylabel("speedup of the round time")
    speed_ax.set_title("speedup against %s" % ", ".join(sorted({r["baseline"] for r in rows})),
                       fontsize=9)
    for ax in (idle_ax, speed_ax):
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    idle_ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out_path)


def accuracy_curves(runs, out_path):
    """Test accuracy after each evaluated round against the training time so far (sum
    of round wall times: evaluation itself is not counted)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    plotted = 0
    for run in runs:
        r = run.rounds
        elapsed = np.cumsum(r["wall_s"])
        evaluated = ~np.isnan(r["test_accuracy"])
        if not evaluated.any():
            continue
        ax.plot(elapsed[evaluated], r["test_accuracy"][evaluated], marker="o", ms=3,
                label=label(run, runs))
        plotted += 1
    if plotted == 0:
        plt.close(fig)
        raise ReportError("none of the runs evaluated the model (test_accuracy is NaN in "
                          "every round)")
    ax.set_xlabel("training time, seconds (sum of round wall times)")
    ax.set_ylabel("test accuracy")
    ax.set_title("time to accuracy", fontsize=9)
    ax.grid(lw=0.3, alpha=0.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out_path)
