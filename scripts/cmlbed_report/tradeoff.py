"""Methods side by side on what they cost and what they reach (`cmlbed-report c3
--markdown/--plot`): one Markdown table row and one point per run, accuracy against the
gigabytes that crossed the links and against the devices' training TFLOPs, as AdaSplit
compares SL, SplitFed, FL and itself."""

import math

from .plotting import pyplot, save
from .summary import run_numbers
from .tables import markdown_table

COLUMNS = [
    ("label", "method", "%s"), ("final_accuracy", "accuracy", "%.4f"),
    ("total_gb", "GB up+down", "%.4f"), ("client_tflops", "client TFLOPs", "%.4f"),
    ("mean_round_s", "mean round s", "%.3f"), ("server_idle_pct", "server idle %", "%.1f"),
    ("within_budgets", "within budgets", "%s"), ("accuracy_at_budget", "acc at budget", "%.4f"),
    ("run", "file", "%s"),
]


def run_labels(runs):
    """Each run's name in the table and the picture: its method, and where several runs
    share a method, the options of the method's own section that tell them apart
    (e.g. 'adasplit local_fraction=0.3'), else the file name."""
    labels = []
    for run in runs:
        same = [r for r in runs if r.method == run.method]
        if len(same) == 1:
            labels.append(run.method)
            continue
        section = run.method
        keys = sorted({k for r in same if r.config.has_section(section)
                       for k in r.config.options(section)})
        differing = [k for k in keys
                     if len({r.config.get(section, k, fallback="") for r in same}) > 1]
        own = ["%s=%s" % (k, run.config.get(section, k, fallback="")) for k in differing]
        words = [run.method] + own
        label = " ".join(words) if own else "%s (%s)" % (run.method, run.name)
        labels.append(label)
    # Runs that differ outside the method's section too get their file name as well.
    return [label if labels.count(label) == 1 else "%s (%s)" % (label, run.name)
            for label, run in zip(labels, runs)]


def comparison_rows(runs, budget_rows):
    """Table rows: the c3 numbers of each run (budget_numbers) with its mean round time
    and server idle share from the summary's definitions."""
    rows = []
    for run, label, c3 in zip(runs, run_labels(runs), budget_rows):
        numbers = run_numbers(run)
        within = [c3["within_bandwidth_budget"], c3["within_compute_budget"]]
        rows.append({
            "label": label,
            "run": run.name,
            "method": run.method,
            "final_accuracy": _nan(c3["final_accuracy"]),
            "total_gb": c3["total_gb"],
            "client_tflops": _nan(c3["client_tflops"]),
            "mean_round_s": numbers["mean_round_s"],
            "server_idle_pct": numbers["server_idle_pct"] if run.has_events else math.nan,
            "within_budgets": ("unknown" if None in within else
                               "yes" if all(within) else "no"),
            "accuracy_at_budget": _nan(c3["accuracy_at_budget"]),
        })
    return rows


def _nan(value):
    return math.nan if value is None else value


def markdown(rows, bandwidth_budget, compute_budget):
    return (markdown_table(rows, COLUMNS) +
            "\naccuracy: test accuracy of the last evaluated round (per-device runs: the "
            "mean of the devices' accuracies weighted by their test samples); GB up+down: "
            "bytes that crossed the links, all devices and rounds, 10^9 bytes; client "
            "TFLOPs: training FLOPs of all devices (ranks >= 1) / 10^12; mean round s: "
            "mean round wall time (training only, evaluation excluded); server idle %%: "
            "the server's idle time over all rounds' wall time; within budgets: %g GB and "
            "%g client TFLOP; acc at budget: accuracy of the last evaluated round within "
            "both budgets ('-': none). See docs/explanation/c3-accounting.md.\n"
            % (bandwidth_budget / 1e9, compute_budget / 1e12))


def draw(rows, out_path, bandwidth_budget, compute_budget, title=None):
    """Two panels, accuracy against GB and against client TFLOPs, one point per run (a
    colour and marker each, named in the legend: runs often share a point, e.g. sfl and
    pipar, which send the same bytes); a budget is drawn as a dashed line when it falls
    inside the axis."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = "osD^vP*X<>"
    panels = (("total_gb", "GB up + down (10^9 bytes)", bandwidth_budget / 1e9, "GB"),
              ("client_tflops", "client TFLOPs (training, all devices)",
               compute_budget / 1e12, "TFLOP"))
    for ax, (key, xlabel, budget, unit) in zip(axes, panels):
        drawn = [r for r in rows if not math.isnan(r[key]) and not math.isnan(r["final_accuracy"])]
        for i, r in enumerate(rows):
            if r in drawn:
                ax.scatter(r[key], r["final_accuracy"], s=40, zorder=3, label=r["label"],
                           color=colours[i % len(colours)], marker=markers[i % len(markers)],
                           alpha=0.85)
        top = max([r[key] for r in drawn] + [0.0])
        ax.set_xlim(0, top * 1.25 if top > 0 else 1)
        if budget <= ax.get_xlim()[1]:
            ax.axvline(budget, color="grey", ls="--", lw=0.8)
            ax.annotate("budget", (budget, 0.02), fontsize=7, color="grey", rotation=90,
                        xytext=(-9, 0), textcoords="offset points")
        ax.set_xlabel(xlabel + ("" if budget <= ax.get_xlim()[1] else
                                "; the budget, %g %s, is off the scale" % (budget, unit)),
                      fontsize=8)
        ax.grid(lw=0.3, alpha=0.5)
    axes[0].set_ylabel("final accuracy")
    axes[0].set_ylim(0, 1.0)
    handles, labels = axes[0].get_legend_handles_labels()
    if not handles:
        handles, labels = axes[1].get_legend_handles_labels()
    axes[1].legend(handles, labels, fontsize=7, loc="upper right")
    fig.suptitle(title or "accuracy against traffic and client compute (one point per run)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, out_path)
