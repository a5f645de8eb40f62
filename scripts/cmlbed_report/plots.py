"""Pictures across runs: idle time and speedup bars, and time-to-accuracy curves. Runs
that differ only in experiment.seed are one entry (summary.group_runs): its mean, with
the 95% interval as error bars or a band where it holds more than one run."""

import numpy as np

from . import stats
from .errors import ReportError
from .plotting import pyplot, save
from .summary import compare_groups, group_runs, raw_data_uploaded
from .tables import ratio_text


def group_labels(groups):
    """A group's name in a legend: its method, or with its label where methods repeat;
    n where it holds several runs; 'raw data uploaded' where a device ran at split 0."""
    methods = [g.method for g in groups]
    return [(g.method if methods.count(g.method) == 1 else "%s (%s)" % (g.method, g.label))
            + (" n=%d" % g.n if g.n > 1 else "")
            + (", split 0: raw data uploaded" if any(raw_data_uploaded(r) for r in g.runs) else "")
            for g in groups]


def _errors(rows, key):
    """Half-widths as error bar lengths; 0 (no bar) for a lone run."""
    return np.nan_to_num([row[key + "_ci95"] for row in rows], nan=0.0)


def idle_bars(runs, out_path, baseline="fl"):
    """Left: server and mean device idle seconds per round, per group. Right: speedup of
    each group's round time against its baseline, with Fieller's interval."""
    plt = pyplot()
    groups = group_runs(runs)
    rows = compare_groups(groups, baseline)
    names = group_labels(groups)
    x = np.arange(len(groups))
    fig, (idle_ax, speed_ax) = plt.subplots(1, 2, figsize=(max(8, 1.6 * len(groups) + 4), 4.2))
    bars = []
    for offset, key, name, colour in ((-0.2, "server_idle_per_round_s", "server", "#4C72B0"),
                                      (0.2, "device_idle_per_round_s", "device (mean)",
                                       "#DD8452")):
        bars.append(idle_ax.bar(x + offset, [row[key] for row in rows], 0.4, label=name,
                                color=colour, yerr=_errors(rows, key), capsize=3))
    for bar, key in zip(bars, ("server_idle_pct", "device_idle_pct")):
        idle_ax.bar_label(bar, ["%.0f%%" % row[key] for row in rows], fontsize=7)
    idle_ax.set_ylabel("idle seconds per round")
    idle_ax.set_title("idle time (round wall time - union of compute); bars: 95% CI",
                      fontsize=9)
    _speedup_bars(speed_ax, x, [row["speedup_ratio"] for row in rows])
    speed_ax.set_title("speedup against %s; bars: Fieller 95%% CI"
                       % ", ".join(sorted({r["baseline"] for r in rows})), fontsize=9)
    for ax in (idle_ax, speed_ax):
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    idle_ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out_path)


def _speedup_bars(ax, x, ratios):
    """A bar per ratio at its point value with its interval; '> X' as a hatched bar up
    to X (no point figure exists), nothing where the ratio is undefined."""
    heights, low, high, hatches = [], [], [], []
    for r in ratios:
        bounded = r.verdict == stats.LOWER_BOUND
        height = r.bound if bounded else (0.0 if np.isnan(r.value) else r.value)
        heights.append(height)
        has_interval = not (np.isnan(r.low) or np.isnan(r.high))
        low.append(height - r.low if has_interval else 0.0)
        high.append(r.high - height if has_interval else 0.0)
        hatches.append("//" if bounded else None)
    bars = ax.bar(x, heights, 0.5, color="#55A868", yerr=[low, high], capsize=3)
    for bar, hatch in zip(bars, hatches):
        if hatch:
            bar.set_hatch(hatch)
            bar.set_alpha(0.5)
    ax.bar_label(bars, [ratio_text(r, short=True) for r in ratios], fontsize=7)
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_ylabel("speedup of the round time")


def accuracy_curves(runs, out_path):
    """Test accuracy after each evaluated round against the training time so far (sum
    of round wall times: evaluation itself is not counted). A group of seeds: the mean
    curve over the rounds every run evaluated (at the mean elapsed time), with the 95%
    interval of the accuracy as a band."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    groups = group_runs(runs)
    plotted = 0
    for group, name in zip(groups, group_labels(groups)):
        length = min(len(run.rounds) for run in group.runs)
        accuracy = np.array([run.rounds["test_accuracy"][:length] for run in group.runs])
        elapsed = np.array([np.cumsum(run.rounds["wall_s"][:length]) for run in group.runs])
        evaluated = ~np.isnan(accuracy).any(axis=0)
        if not evaluated.any():
            continue
        accuracy, elapsed = accuracy[:, evaluated], elapsed[:, evaluated]
        mean = accuracy.mean(axis=0)
        line, = ax.plot(elapsed.mean(axis=0), mean, marker="o", ms=3, label=name)
        if group.n > 1:
            half = (stats.t_two_sided(group.n) * accuracy.std(axis=0, ddof=1)
                    / np.sqrt(group.n))
            ax.fill_between(elapsed.mean(axis=0), mean - half, mean + half,
                            color=line.get_color(), alpha=0.2, lw=0)
        plotted += 1
    if plotted == 0:
        plt.close(fig)
        raise ReportError("none of the runs evaluated the model (test_accuracy is NaN in "
                          "every round)")
    ax.set_xlabel("training time, seconds (sum of round wall times; mean over seeds)")
    ax.set_ylabel("test accuracy")
    title = "time to accuracy"
    if any(g.n > 1 for g in groups):
        title += "; bands: 95% CI over seeds"
    ax.set_title(title, fontsize=9)
    ax.grid(lw=0.3, alpha=0.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out_path)
