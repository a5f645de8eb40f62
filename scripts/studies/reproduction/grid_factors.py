"""Section 1 after the grid: the maxima against the paper, the gain taken apart into
splitting and pipelining (and grid.csv), and the noise across sittings."""

import os

import numpy as np

from cmlbed_report import stats
from cmlbed_report.tables import ratio_text

from .band import band_interval
from .constants import METHODS, PIPAR_PAPER, ROOT
from .runsets import pipelined, pipelining
from .text import ci_text, md_table, rate_text
from .verdicts import largest_supported


class GridFactors:
    def _grid_headline(self, cells):
        measured = [c["measured"] for c in cells.values() if "measured" in c]
        simulated = [c["simulated"] for c in cells.values()
                     if "measured" not in c and "simulated" in c]
        if not measured and not simulated:
            self.add("No grid cell has results yet: run `scripts/studies/reproduction.sh`.\n\n")
            return
        # Faithful (or not yet judged) measured cells with at least one layer on the device.
        trusted = [c for c in self.evidence["grid"] if not c["raw"]]
        piped = [c for c in trusted if pipelined(c)]
        self.add("### Maxima over the grid, against the paper\n\n")
        self.add("PiPar's figures are the largest over the **measured** cells in which it "
                 "pipelines (m >= 2 micro-batches: at m = 1 PiPar runs SFL's schedule, so its "
                 "gain there is splitting's) and keeps at least one layer on the device, whose "
                 "emulation held, and whose 95% interval lies above 1 (for '> X': X > 1; "
                 "ranked by the point ratio, or X). Splitting's figure is SFL's: FL / SFL over "
                 "the same measured cells, m = 1 ones included. Each figure comes with its "
                 "cell's factors (section 'The gain taken apart'). Simulated cells are in "
                 "their own column and are not findings.\n\n")
        rows = []
        figures = (
            ("speedup", "PiPar's speedup of training (round time) vs FL", piped,
             lambda c: c["speedup"], PIPAR_PAPER["speedup"]),
            ("idle", "PiPar's server idle reduction vs FL (s per round)", piped,
             lambda c: c["idle"], PIPAR_PAPER["idle_reduction"]),
            ("pipelining", "pipelining: SFL / PiPar round time at PiPar's split", piped,
             pipelining, None),
            ("splitting", "splitting: FL / SFL round time (SFL at its own split)", trusted,
             lambda c: c["splitting"], PIPAR_PAPER["speedup"]))
        for key, noun, pool, ratio_of, paper in figures:
            items = [(ratio_of(c), c) for c in pool if ratio_of(c) is not None]
            best = largest_supported(items)
            sim = [(ratio_of(c).value, c) for c in simulated
                   if not c["raw"] and ratio_of(c) is not None and np.isfinite(ratio_of(c).value)
                   and (key == "splitting" or pipelined(c))]
            sim_best = max(sim, key=lambda t: t[0]) if sim else None
            self.headline[key] = best and (best[0], best[1]["where"], best[1])
            rows.append([
                noun,
                "**%s**" % ratio_text(best[0]) if best else
                "none above 1 (%d measured cells qualify)" % len(items),
                self._where(best[1]) if best else "-",
                self._factors_text(best[1]) if best else "-",
                "%s (%s)" % (self._sim_ratio_text(ratio_of(sim_best[1]), band=key != "idle"),
                             self._where(sim_best[1])) if sim_best else "-",
                "%.1fx" % paper if paper else "-"])
        self.add(md_table(["figure", "ours: measured", "where", "that cell's factors",
                           "ours: simulated (not a finding)", "PiPar paper"], rows))
        self.add("\nThe paper's figures are quoted from %s, not measured here; the paper "
                 "compares PiPar with FL, so its 34.6x holds splitting and pipelining together. "
                 "Server idle: section 0's definition (per round, evaluation not counted).\n\n"
                 % PIPAR_PAPER["source"])

    def _sittings(self, cells):
        """How far a later sitting's round times lie from the first's, per measured cell
        and method (each seed's provenance names its sitting: SITTING of the invocation
        that ran it). The grid's figures pool every sitting's seeds."""
        rows, differences = [], []
        for c in cells:
            sitting = {id(e.run): int(e.provenance.get("sitting", 1) or 1) for e in c["entries"]}
            for m in METHODS:
                by = {}
                for run, p in zip(c["groups"][m].runs, c["rows"][m]["per_run"]):
                    by.setdefault(sitting.get(id(run), 1), []).append(p["mean_round_s"])
                if len(by) < 2:
                    continue
                first_sitting = min(by)
                first = by.pop(first_sitting)
                for k, later in sorted(by.items()):
                    ratio = stats.ratio_of_means(later, first)
                    inside = min(first) <= min(later) and max(later) <= max(first)
                    differences.append((abs(ratio.value - 1), ratio.value - 1, c["where"], m))
                    rows.append([c["net"], rate_text(c["rate"]), m, "%d: %s (n = %d)" % (
                        first_sitting, ci_text(*stats.mean_ci(first)[:2]), len(first)),
                        "%d: %s (n = %d)" % (k, ci_text(*stats.mean_ci(later)[:2]), len(later)),
                        ratio_text(ratio), "yes" if inside else "**no**"])
        self.add("### Noise across sittings\n\n")
        command = "`SITTING=2 FIRST_SEED=%d REPEATS=1 scripts/studies/reproduction.sh --only measured,report`" % (
            self.args.repeats + 1)
        if not rows:
            self.add("Every measured run here comes from one sitting, so the intervals hold that "
                     "sitting's noise only. %s, run hours or days later, takes one more seed of "
                     "every measured cell and shows here how far it lands.\n\n" % command)
            self.pending.append("a second sitting of the measured cells (%s)" % command)
            return
        self.add("Round times of the seeds of a later sitting (%s) against the first sitting's, "
                 "per measured cell and method: mean ± 95%% interval, the ratio later / first "
                 "with Fieller's interval ('(n=1)': one run, no interval), and whether the later "
                 "runs lie within the range of the first's. The grid's figures pool every "
                 "sitting's seeds.\n\n" % command)
        self.add(md_table(["network", "uplink", "method", "first sitting: mean round s",
                           "later sitting: mean round s", "later / first",
                           "within the first's range"], rows))
        largest = max(differences)
        self.headline["sittings"] = (largest[1], largest[2], largest[3], len(differences),
                                     sum(1 for r in rows if r[-1] == "yes"))
        self.add("\nLargest difference between sittings: %+.1f%% (%s, %s); %d of %d later "
                 "sittings within the first's range.\n\n" % (
                     100 * largest[1], largest[2], largest[3], self.headline["sittings"][4], len(rows)))

    def _factors(self, cells):
        """The speedup and idle reduction of every cell taken apart."""
        shown = [cell.get("measured") or cell.get("simulated") for _, cell in sorted(cells.items())]
        if not shown:
            return
        self.add("### The gain taken apart: splitting and pipelining\n\n")
        self.add(
            "PiPar's speedup over FL is the product of two factors. **Splitting** is FL's round "
            "time over SFL's at SFL's own split: what training the device's part and sending "
            "activations instead of the whole model gains. **Pipelining** is SFL's round time "
            "over PiPar's: what cutting a mini-batch into micro-batches gains. At each one's "
            "own choices the two multiply exactly to the speedup; PiPar's planner may choose "
            "another split than SFL's, so pipelining is also given at PiPar's split, against "
            "SFL run at that split (NAME-sfl-atp), or against SFL's own runs where SFL chose "
            "PiPar's split too ('not run' where neither is there). The same for the server idle reduction. At m = 1 PiPar is SFL's "
            "schedule and its pipelining factor can only be 1.\n\n")
        self.add(md_table(
            ["network", "uplink", "cell", "mini-batches per device and round", "SFL split",
             "PiPar split, m", "splitting: FL / SFL", "pipelining: SFL / PiPar at PiPar's split",
             "pipelining at own choices", "speedup: FL / PiPar", "idle: FL / SFL",
             "idle: SFL / PiPar at PiPar's split", "idle reduction: FL / PiPar"],
            self._factor_rows(shown)))
        self.add("\nMeasured: Fieller's 95%% intervals as in the grid; simulated: the band "
                 "(section 0). The machine-readable table: `%s`.\n\n"
                 % os.path.relpath(self._grid_csv(shown), ROOT))

    def _grid_csv(self, shown):
        """grid.csv in the archive (docs/reproduction-data/; the results folder without
        one): one row per cell as the grid shows it (measured where measured, else
        simulated)."""
        import csv
        path = os.path.join(self.args.archive or self.results, "grid.csv")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["network", "uplink_mbit", "measured", "emulation", "n",
                          "mini_batches_per_round", "fl_round_s", "sfl_round_s", "pipar_round_s",
                          "sfl_split", "pipar_split", "pipar_m"] +
                         [name + suffix for name in ("splitting_gain", "pipelining_gain",
                                                     "pipelining_gain_own_choices", "speedup",
                                                     "splitting_idle_reduction",
                                                     "pipelining_idle_reduction", "idle_reduction")
                          for suffix in ("", "_lo", "_hi")])
            for c in shown:
                src = c["source"]
                ratios = [c["splitting"], pipelining(c), c["vs_sfl"], c["speedup"],
                          c["splitting_idle"], pipelining(c, "idle"), c["idle"]]
                bands = [True, True, True, True, False, False, False]
                out.writerow(
                    [c["net"], "%g" % c["rate"], int(src == "measured"),
                     c["emulation"] if src == "measured" else "simulated",
                     c["n"] if src == "measured" else "",
                     "" if c["mini_batches"] is None else c["mini_batches"]] +
                    ["%.6g" % c["rows"][m]["mean_round_s"] for m in METHODS] +
                    [c["rows"]["sfl"]["split"], c["rows"]["pipar"]["split"], c["m"]] +
                    [v for r, band in zip(ratios, bands) for v in self._ratio_fields(r, src, band)])
        return path

    def _ratio_fields(self, ratio, source, band):
        """(value, lo, hi) of a ratio for grid.csv: Fieller's interval (measured), the
        band's range (simulated round-time ratios), '' where there is none; '> X' is
        value '', lo X, hi inf."""
        if ratio is None:
            return ["", "", ""]
        if source == "measured" and ratio.verdict == stats.LOWER_BOUND:
            return ["", "%.6g" % ratio.bound, "inf"]
        if not np.isfinite(ratio.value):
            return ["", "", ""]
        value = "%.6g" % ratio.value
        if source != "measured":
            if band and self.band:
                lo, hi = band_interval(ratio.value, self.band["largest"])
                return [value, "%.6g" % lo, "%.6g" % hi]
            return [value, "", ""]
        if ratio.verdict in (stats.ABOVE_1, stats.BELOW_1, stats.NO_DIFFERENCE):
            return [value, "%.6g" % ratio.low, "%.6g" % ratio.high]
        return [value, "", ""]
