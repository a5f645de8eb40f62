"""A grid cell: its methods' runs grouped and compared, and how a cell's figures are
written (measured with Fieller's interval, simulated with the band)."""

import os

import numpy as np

from cmlbed_report import emulation
from cmlbed_report.summary import compare_groups
from cmlbed_report.tables import ratio_text

from .band import band_interval
from .constants import HELD_OUT_TABLES, METHODS, ROOT
from .runsets import (SFL_AT_PIPAR, compare_methods, grouped, heterogeneous, mini_batches_per_round,
                      per_round, pipelining)
from .text import ci_text, fmt, rate_text, row_ci


class Cells:
    def _cell(self, net, rate, source, sets):
        """The numbers of one grid cell: FL, SFL and PiPar grouped over their seeds and
        compared (rounds from_round..); None where a method has no run."""
        run_lists = {m: sets[m].runs() for m in METHODS}
        if any(not runs for runs in run_lists.values()):
            return None
        groups, split_groups = grouped(run_lists)
        if any(m not in groups for m in METHODS):
            return None
        rows = compare_methods(groups, METHODS, "fl", self.from_round)
        vs_sfl = compare_methods(groups, ("sfl", "pipar"), "sfl", self.from_round)["pipar"]
        pipar = rows["pipar"]
        # SFL at PiPar's split (its own files: its runs are sfl runs, so grouped apart).
        at_split = sets.get(SFL_AT_PIPAR)
        at_runs = at_split.runs() if at_split else []
        same_split = None
        if at_runs:
            at_group = max(grouped({"sfl": at_runs})[0].values(), key=lambda g: g.n)
            at_row, pipar_row = compare_groups([at_group, groups["pipar"]], baseline=at_group.label,
                                               from_round=self.from_round)
            same_split = {"row": at_row, "group": at_group, "speedup": pipar_row["speedup_ratio"],
                          "idle": pipar_row["server_idle_reduction_ratio"]}
        runs = [r for g in groups.values() for r in g.runs] + at_runs
        label = "%s/%s %s" % (net, rate_text(rate), source)
        used = [m for m in METHODS + (SFL_AT_PIPAR,) if sets.get(m)]
        if source == "measured":
            self.note_sets(label, [sets[m] for m in used])
            self.measured_runs(sum(len(sets[m].runs()) for m in used))
        self.note_rows(label, rows.values())
        return {
            "net": net, "rate": rate, "source": source, "rows": rows, "groups": groups,
            "entries": [e for m in used for e in sets[m].ok_entries()],
            "speedup": pipar["speedup_ratio"], "idle": pipar["server_idle_reduction_ratio"],
            # The speedup (and idle reduction) vs FL taken apart: splitting = FL / SFL at
            # SFL's split; pipelining = SFL / PiPar at PiPar's split (same_split, None
            # without the sfl-atp runs) and at each one's own choice (vs_sfl).
            "splitting": rows["sfl"]["speedup_ratio"],
            "splitting_idle": rows["sfl"]["server_idle_reduction_ratio"],
            "same_split": same_split, "vs_sfl_idle": vs_sfl["server_idle_reduction_ratio"],
            "mini_batches": mini_batches_per_round(runs),
            "vs_sfl": vs_sfl["speedup_ratio"], "split": pipar["split"],
            "m": pipar["micro_batches"], "raw": bool(pipar["raw_data_uploaded"]),
            "sfl_split": rows["sfl"]["split"], "legacy": any(sets[m].legacy for m in METHODS),
            "n": min(row["n"] for row in rows.values()), "split_groups": split_groups,
            "heterogeneous": any(heterogeneous(r) for r in runs),
            "trace": any("trace" in row["links"] for row in rows.values()),
            # The cell's worst run (docs/explanation/fidelity.md): a time taken while the
            # emulation did not hold is the host's, and stays out of the headline.
            "emulation": emulation.worst([emulation.verdict(r) for r in runs]),
            "where": "%s, uplink %s, %s" % (net, rate_text(rate), source)}

    def _band_source(self):
        b = self.band
        if not b:
            return ("no validated band: %s could not be read, so simulated figures carry none"
                    % ", ".join(os.path.relpath(p, ROOT) for p in HELD_OUT_TABLES))
        return ("±%.1f%% of the round time, the largest |error| of `cmlbed simulate` against "
                "measured runs over the held-out random tables (configurations drawn after the "
                "simulator was tuned: %s); a simulated speedup (a ratio of two round times) gets "
                "the range of both ends off by that much; a simulated idle reduction gets no "
                "band, since the tables validate round times, and idle seconds near 0 carry a "
                "far larger relative error"
                % (100 * b["largest"], "; ".join(
                    "%s: %d of %d within 10%%, median |error| %.1f%%, largest %.1f%%, generated %s"
                    % (t["source"], t["within"], t["rows"], 100 * t["median"], 100 * t["largest"],
                       t["generated"]) for t in b["tables"])))

    def _sim_ratio_text(self, ratio, band=True):
        """A simulated ratio with the range the validated band allows; band=False for a
        ratio of idle times, which the band (of round times) does not cover."""
        value = ratio.value
        if not np.isfinite(value):
            return "-"
        if not band:
            return "%.2fx sim (no band: idle)" % value
        if not self.band:
            return "%.2fx (simulated)" % value
        lo, hi = band_interval(value, self.band["largest"])
        return "%.2fx sim [%.2f, %.2f]" % (value, lo, hi)

    def _ratio_cell(self, ratio, source, band=True):
        return ratio_text(ratio) if source == "measured" else self._sim_ratio_text(ratio, band)

    def _time_cell(self, row, key, source, spec="%.3f"):
        if source == "measured":
            return row_ci(row, key, spec)
        band = " ±%.0f%%" % (100 * self.band["largest"]) if self.band else ""
        return fmt(row[key], spec) + band

    @staticmethod
    def _split(row):
        return row["split"] + ("\\*" if row["raw_data_uploaded"] else "")

    def _factors_text(self, c):
        """A cell's speedup vs FL as splitting x pipelining (own choices: an exact
        product), and pipelining at PiPar's split."""
        same = pipelining(c)
        return "splitting %s x pipelining %s (own choices)%s" % (
            self._ratio_cell(c["splitting"], c["source"]), self._ratio_cell(c["vs_sfl"], c["source"]),
            "; pipelining at PiPar's split %s" % self._ratio_cell(same, c["source"])
            if same is not None else "")

    def _factor_rows(self, cells):
        rows = []
        for c in cells:
            src = c["source"]
            same, same_idle = pipelining(c), pipelining(c, "idle")
            rows.append([
                c["net"], rate_text(c["rate"]),
                "measured, n = %d" % c["n"] + ("; emulation %s" % c["emulation"]
                                              if c["emulation"] in ("degraded", "broken") else "")
                if src == "measured" else "simulated",
                fmt(c["mini_batches"], "%d"), self._split(c["rows"]["sfl"]),
                "%s, m %s" % (self._split(c["rows"]["pipar"]), c["m"]),
                self._ratio_cell(c["splitting"], src),
                self._ratio_cell(same, src) if same else "not run",
                self._ratio_cell(c["vs_sfl"], src), self._ratio_cell(c["speedup"], src),
                self._ratio_cell(c["splitting_idle"], src, band=False),
                self._ratio_cell(same_idle, src, band=False) if same_idle else "not run",
                self._ratio_cell(c["idle"], src, band=False)])
        return rows

    def _where(self, c):
        return "%s, uplink %s (PiPar split %s, %s micro-batches; PiPar server idle %s s/round)" % (
            c["net"], rate_text(c["rate"]), c["split"], c["m"],
            ci_text(*per_round(c["rows"]["pipar"], "server_idle_s"), spec="%.3f"))
