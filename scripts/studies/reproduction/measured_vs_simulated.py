"""Section 1: `cmlbed simulate` against the cells measured here."""

import math
import os

import numpy as np

from .constants import METHODS, PREDICTION_ACCURACY_DOC, ROOT
from .runsets import method_rows, per_round
from .text import ci_text, md_table, rate_text, row_ci


class MeasuredVsSimulated:
    def _measured_vs_simulated(self, cells):
        rows, errors, points, inside = [], [], [], 0
        for (net, rate), cell in sorted(cells.items()):
            if "measured" not in cell or "simulated" not in cell:
                continue
            m_cell, s_cell = cell["measured"], cell["simulated"]
            m_rows, s_rows = method_rows(m_cell), method_rows(s_cell)
            for method in [k for k in m_rows if k in s_rows]:
                (m, m_runs), (s, s_runs) = m_rows[method], s_rows[method]
                error = s["mean_round_s"] / m["mean_round_s"] - 1
                choice = lambda row: ("P %s" % row["split"]) + (  # noqa: E731
                    ", m %s" % row["micro_batches"] if method == "pipar" else "")
                differs = method != "fl" and choice(m) != choice(s)
                same = "" if method == "fl" else (
                    "%s / %s" % (choice(m), choice(s)) if differs else choice(m))
                half = m.get("mean_round_s_ci95", math.nan)
                within = (abs(s["mean_round_s"] - m["mean_round_s"]) <= half
                          if np.isfinite(half) else None)
                # A pair with different choices (a cell measured at its config's fixed
                # split, simulated at the planner's) predicts another run: shown, not counted.
                if not differs:
                    errors.append((abs(error), error, net, rate, method))
                    points.append((m["mean_round_s"], s["mean_round_s"], method, half))
                    inside += bool(within)
                rows.append([net, rate_text(rate), method, same, row_ci(m, "mean_round_s"),
                             "%.3f" % s["mean_round_s"],
                             "(other choice)" if differs else "%+.1f%%" % (100 * error),
                             "-" if within is None else ("yes" if within else "no"),
                             "%s / %.2f" % (ci_text(*per_round(m, "server_busy_s"), spec="%.2f"),
                                            per_round(s, "server_busy_s")[0]),
                             "%s / %.2f" % (ci_text(*per_round(m, "device_busy_s"), spec="%.2f"),
                                            per_round(s, "device_busy_s")[0]),
                             self.cite.cite(*[e for e in m_cell["entries"] + s_cell["entries"]
                                              if e.run in m_runs or e.run in s_runs])])
        self.add("### Measured against simulated\n\n")
        if not rows:
            self.add("No cell is both measured and simulated yet.\n\n")
            return
        self.add(md_table(["network", "uplink", "method", "choice (measured / simulated)",
                           "measured round s (mean ± 95% CI)", "simulated round s",
                           "error of the mean", "simulated within the measured interval",
                           "server busy s/round measured / simulated",
                           "device busy s/round measured / simulated", "runs"], rows))
        abs_errors = sorted(e[0] for e in errors)
        worst = max(errors)
        self.headline["sim_error"] = (float(np.median(abs_errors)), worst)
        self.add("\nError = simulated / measured mean - 1 of the mean round time (rounds %d..), "
                 "for pairs that ran the same split and micro-batches (a row marked '(other "
                 "choice)' is not counted). Median |error| %.1f%%, largest %+.1f%% (%s, %s, %s); "
                 "%d of %d simulations fall inside the measured 95%% interval. The busy columns "
                 "say where a difference comes from: the measured runs put the ranks on this "
                 "machine's cores beside whatever else ran (load in the provenance), while the "
                 "simulation shares the cores among the ranks only. How close the simulator "
                 "comes on a quiet machine: %s.\n\n"
                 % (self.from_round, 100 * float(np.median(abs_errors)), 100 * worst[1], worst[2],
                    rate_text(worst[3]), worst[4], inside, len(errors),
                    os.path.relpath(PREDICTION_ACCURACY_DOC, ROOT)))
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5, 4.4))
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for method in METHODS:
            mine = [p for p in points if p[2] == method]
            if mine:
                ax.errorbar([p[0] for p in mine], [p[1] for p in mine],
                            xerr=[p[3] if np.isfinite(p[3]) else 0 for p in mine], fmt="o",
                            color=colours[method], label=method, ms=5, capsize=2)
        lo = min(min(p[0], p[1]) for p in points) * 0.8
        hi = max(max(p[0], p[1]) for p in points) * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured mean round s (95% CI)")
        ax.set_ylabel("simulated mean round s")
        ax.set_title("simulator vs runtime, grid cells measured here", fontsize=9)
        ax.grid(lw=0.3, alpha=0.5, which="both")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save(fig, self.image("measured-vs-simulated"))
        self.add("![measured vs simulated round time](%s)\n\n"
                 % self.link(self.image("measured-vs-simulated")))
