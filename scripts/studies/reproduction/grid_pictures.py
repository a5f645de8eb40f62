"""Section 1's pictures: speedup and idle reduction over the grid, round time against the
uplink rate."""

import math

import numpy as np

from .constants import METHODS


class GridPictures:
    def _grid_pictures(self, networks, rates, heat, cells):
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(12, 0.55 * len(networks) + 2.2))
        for ax, key, title in ((axes[0], "speedup", "PiPar speedup of the round time vs FL"),
                               (axes[1], "idle", "server idle reduction vs FL (per round)")):
            values = heat[key]
            shown = np.log10(np.where(np.isfinite(values) & (values > 0), values, np.nan))
            im = ax.imshow(shown, cmap="viridis", aspect="auto")
            finite = shown[np.isfinite(shown)]
            lo, hi = (finite.min(), finite.max()) if finite.size else (0, 0)
            for i in range(len(networks)):
                for j in range(len(rates)):
                    if np.isfinite(values[i, j]):
                        dark = hi > lo and (shown[i, j] - lo) / (hi - lo) < 0.5
                        ax.text(j, i, heat["text"][(key, i, j)] + (
                            "\nmeasured" if heat["measured"][i, j] else "\nsimulated") + (
                            "\nsplit 0: raw data\nuploaded" if heat["raw"][i, j] else ""),
                            ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")
            ax.set_xticks(range(len(rates)))
            ax.set_xticklabels(["%g" % r for r in rates])
            ax.set_yticks(range(len(networks)))
            ax.set_yticklabels(networks)
            ax.set_xlabel("uplink mbit/s (downlink 2.5x)")
            ax.set_title(title + " (measured: mean of the seeds)", fontsize=9)
            fig.colorbar(im, ax=ax, label="log10 of the factor")
        fig.tight_layout()
        save(fig, self.image("grid"))

        cols = min(3, len(networks))
        rows_n = (len(networks) + cols - 1) // cols
        fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.2 * rows_n), squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for k, net in enumerate(networks):
            ax = axes[k // cols][k % cols]
            for method in METHODS:
                for source, style in (("simulated", "-"), ("measured", "o")):
                    xs, ys, errs = [], [], []
                    for rate in rates:
                        cell = cells.get((net, rate), {}).get(source)
                        if cell:
                            row = cell["rows"][method]
                            xs.append(rate)
                            ys.append(row["mean_round_s"])
                            half = row.get("mean_round_s_ci95", math.nan)
                            errs.append(0 if not np.isfinite(half) else half)
                    if not xs:
                        continue
                    if source == "measured":
                        ax.errorbar(xs, ys, yerr=errs, fmt="o", color=colours[method], ms=5,
                                    mfc="none", capsize=2, label="%s (measured, 95%% CI)" % method)
                    else:
                        ax.plot(xs, ys, style, color=colours[method],
                                label="%s (simulated)" % method)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(net, fontsize=9)
            ax.set_xlabel("uplink mbit/s")
            ax.set_ylabel("mean round s (rounds %d..)" % self.from_round)
            ax.grid(lw=0.3, alpha=0.5, which="both")
            if k == 0:
                ax.legend(fontsize=6)
        for k in range(len(networks), rows_n * cols):
            axes[k // cols][k % cols].axis("off")
        fig.tight_layout()
        save(fig, self.image("rounds"))
