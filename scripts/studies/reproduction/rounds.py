"""Section 1: how the round length moves the answer (the round-length curve)."""

import math

import numpy as np

from .band import band_interval
from .constants import METHODS
from .runsets import SFL_AT_PIPAR, pipelining, rounds_key, run_sets
from .text import md_table, rate_text


class Rounds:
    def rounds(self):
        """The round-length curve: speedup, splitting and pipelining against the
        mini-batches per device and round, for the networks the rounds part ran."""
        measured = run_sets(self.store, "rounds-measured", rounds_key)
        simulated = run_sets(self.store, "rounds-simulated", rounds_key)
        points = {}  # (net, rate) -> {length: cell}, measured where measured
        for files, source in ((simulated, "simulated"), (measured, "measured")):
            for (net, rate, length) in sorted({k[:3] for k in files}):
                sets = {m: files.get((net, rate, length, m)) for m in METHODS + (SFL_AT_PIPAR,)}
                if any(sets[m] is None for m in METHODS):
                    continue
                c = self._cell(net, rate, source, sets)
                if not c:
                    continue
                # A measured point replaces the simulated one, which stays cited.
                replaced = points.setdefault((net, rate), {}).get(length)
                c["cited"] = c["entries"] + (replaced["entries"] if replaced else [])
                points[(net, rate)][length] = c
        self.add("### How the round length moves the answer\n\n")
        if not points:
            self.add("Not run yet: `scripts/studies/reproduction.sh --only rounds,report` (the Slurm "
                     "array's 'rounds NET LENGTH' elements).\n\n")
            self.pending.append("the round-length curve (`scripts/studies/reproduction.sh --only rounds,report`)")
            return
        self.add(
            "FL sends the whole model up and down once a round; SFL and PiPar send activations "
            "and gradients for every mini-batch. So the longer a round, the less FL's model "
            "exchange weighs, and splitting's gain falls towards what compute alone gives. "
            "Each point below is a cell of the grid (same settings, same four runs) with "
            "`train.local_iterations` set to the round's length; 390 mini-batches of 32 is a "
            "CIFAR-10 epoch over 4 devices (12,500 samples each; the synthetic data repeat, "
            "which leaves the times alone). Measured points: mean and Fieller's 95% interval "
            "over the seeds, their emulation in the cell column where it did not hold (then "
            "the times are partly this host's); the others are simulated and carry the band "
            "of section 0.\n\n")
        rows = []
        for (net, rate), by_length in sorted(points.items()):
            for length, c in sorted(by_length.items()):
                rows.append([net, rate_text(rate), length] + self._factor_rows([c])[0][2:3] + [
                    self._time_cell(c["rows"]["fl"], "mean_round_s", c["source"]),
                    "%s, m %s" % (self._split(c["rows"]["pipar"]), c["m"]),
                    self._ratio_cell(c["splitting"], c["source"]),
                    self._ratio_cell(pipelining(c), c["source"]) if pipelining(c) else "not run",
                    self._ratio_cell(c["speedup"], c["source"]),
                    self.cite.cite(*c["cited"])])
        self.add(md_table(["network", "uplink", "mini-batches per device and round", "cell",
                           "FL round s", "PiPar split, m", "splitting: FL / SFL",
                           "pipelining: SFL / PiPar at PiPar's split", "speedup: FL / PiPar",
                           "runs"], rows))
        self.add("\n")
        self._rounds_picture(points)
        self.add("![speedup, splitting and pipelining against the round length](%s)\n\n"
                 % self.link(self.image("round-length")))

    def _rounds_picture(self, points):
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharex=True)
        figures = (("speedup", "speedup FL / PiPar", lambda c: c["speedup"]),
                   ("splitting", "splitting FL / SFL", lambda c: c["splitting"]),
                   ("pipelining", "pipelining SFL / PiPar at PiPar's split", pipelining))
        colours = ["#4C72B0", "#C44E52", "#55A868", "#8172B2", "#CCB974"]
        for ax, (_, title, ratio_of) in zip(axes, figures):
            for k, ((net, rate), by_length) in enumerate(sorted(points.items())):
                colour = colours[k % len(colours)]
                xs, ys = [], []
                for length, c in sorted(by_length.items()):
                    r = ratio_of(c)
                    if r is None or not np.isfinite(r.value):
                        continue
                    xs.append(length)
                    ys.append(r.value)
                    measured = c["source"] == "measured"
                    low = r.low if measured else band_interval(r.value, self.band["largest"])[0] \
                        if self.band else math.nan
                    high = r.high if measured else band_interval(r.value, self.band["largest"])[1] \
                        if self.band else math.nan
                    err = ([[r.value - low], [high - r.value]] if np.isfinite(low) and np.isfinite(high)
                           else None)
                    ax.errorbar([length], [r.value], yerr=err, fmt="o" if measured else "s",
                                color=colour, mfc=colour if measured else "none", capsize=2, ms=5)
                ax.plot(xs, ys, "-", color=colour, lw=1, label="%s, %s" % (net, rate_text(rate)))
            ax.axhline(1, color="k", lw=0.5)
            ax.set_xscale("log")
            lengths = sorted({length for by in points.values() for length in by})
            ax.set_xticks(lengths)
            ax.set_xticklabels([str(length) for length in lengths])
            ax.minorticks_off()
            ax.set_xlabel("mini-batches per device and round")
            ax.set_title(title, fontsize=9)
            ax.grid(lw=0.3, alpha=0.5)
        axes[0].set_ylabel("ratio")
        axes[0].legend(fontsize=7, title="filled: measured (95% CI)\nopen: simulated (band)",
                       title_fontsize=7)
        fig.tight_layout()
        save(fig, self.image("round-length"))
