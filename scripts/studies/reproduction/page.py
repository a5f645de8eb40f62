"""The page around the sections: the header, the summary, section 0 (how to read the
numbers), Regenerating; write() puts them together."""

import datetime
import os
import subprocess

from cmlbed_report import emulation
from cmlbed_report.tables import ratio_text

from .constants import CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE, ROOT
from .text import rate_text


class Page:
    def reading(self):
        """Section 0: how every figure is computed, from the constants the code uses."""
        return [
            "## 0. How to read the numbers\n\n",
            "- **Seeds.** Every measured run ran n times with experiment.seed = 1..n "
            "(files NAME.seedS.h5; the timed runs of a cell seed by seed across its methods, "
            "A B C A B C, so that the host's drift over a sitting spreads over every method; "
            "the others with `cmlbed run --repeats`). Runs that differ only in the seed "
            "are one group (`cmlbed-report summary`'s grouping, "
            "cmlbed_report.summary.group_runs); a measured figure is the **mean ± the "
            "half-width of its 95% Student t interval** over the group, with n stated.\n",
            "- **Ratios** (speedup, idle reduction, PiPar vs SFL, accuracy and byte ratios) "
            "divide the baseline's mean by the other's, with **Fieller's 95% interval** in "
            "brackets (stats.ratio_of_means); 'no difference measured [a, b]' where the "
            "interval includes 1; '> X' where the denominator's own interval reaches 0 (X = "
            "numerator mean / the upper end of that interval), never a point figure; '(n=1)' "
            "a single run on a side, no interval. docs/explanation/statistics.md gives the formulas.\n",
            "- **One averaging window.** Every time figure (round time, busy and idle time) "
            "is averaged over **rounds %d.. of each run**: round 1 starts with full token "
            "buckets, so its transfers are faster than a steady round's "
            "(`cmlbed-report summary --from-round %d`). A run with fewer rounds keeps all of "
            "them%s. Accuracy is the last round's; AdaSplit's bytes and client TFLOPs are "
            "totals of the whole training.\n" % (
                self.from_round, self.from_round,
                " (here: %s)" % ", ".join(sorted(set(self.fallback))) if self.fallback else
                " (none here)"),
            "- **Idle time**, exactly as the tables compute it: for each round, the round's "
            "wall time (from the first rank leaving the round's barrier to the last rank done "
            "training; the evaluation after it is not in the round) minus the union of the "
            "rank's compute intervals (forward, backward, optimizer step, aggregate, emulated "
            "device time; sends, receives and waits are not compute), in seconds "
            "(docs/reference/results-format.md, Busy and idle time). **Server idle** is rank 0's, in "
            "seconds per round over the window; the idle reduction is FL's mean of it over "
            "PiPar's.\n",
            "- **Simulated** cells are `cmlbed simulate`'s, run once (deterministic), and "
            "labelled simulated wherever they appear. Their ± is the simulator's validated "
            "error band, not a confidence interval: %s.\n" % self._band_source(),
            "- **Split 0** (no layer on the device) uploads raw samples, which is centralised "
            "training, not split learning: marked `*` and kept out of the headline figures.\n",
            "\n",
        ]

    def write(self):
        head = self._head()
        body = self.parts
        self.parts = []
        summary = self._summary()
        regen = self.regeneration_text()
        text = "".join(head + summary + self.reading() + body + regen)
        with open(self.args.doc, "w") as f:
            f.write(text)

    def _head(self):
        """The title and what wrote the page: when, where, from which runs and binaries."""
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        try:
            revision = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()
        except OSError:
            revision = "?"
        started = [e.provenance["started"] for e in self.cite.entries if e.provenance.get("started")]
        try:
            version = subprocess.run([self.args.cmlbed, "--version"], capture_output=True,
                                     text=True).stdout.strip() or "?"
        except OSError as e:  # absent, or being rebuilt
            version = "? (%s)" % (e.strerror or e)
        binaries = {}
        for e in self.cite.entries:
            binaries[e.provenance.get("cmlbed", "?")] = binaries.get(e.provenance.get("cmlbed", "?"), 0) + 1
        kept = sum(e.archived for e in self.cite.entries)
        if len(binaries) == 1:
            one = "**One binary behind every run: `%s`.**" % next(iter(binaries))
        else:
            one = ("**Not one binary: the runs come from %d binaries** (%s); regenerate with "
                   "one (Regenerating, below)." % (len(binaries), ", ".join(
                       "`%s` (%d runs)" % kv for kv in sorted(binaries.items())) or "-"))
        head = [
            "# Reproduction report: PiPar and AdaSplit on cmlbed\n\n",
            "Written by `scripts/studies/reproduction.sh%s --repeats %d` on %s, host %s (%d cores, "
            "load average %s when the report was written), repository at %s, from the results "
            "in `%s/` and, for %d of its %d runs, their digests kept in `%s/`: runs that were "
            "already done are reused, so the runs behind it may come from several invocations "
            "(runs from %s to %s). %s The binary at `%s` when the report was written: %s. Do "
            "not edit by hand: every number below comes from a results file (or its kept "
            "digest) of the binary its provenance names, and the [n] after it points to the "
            "command that produced it, with its date, machine and load (Provenance, at the "
            "end).\n\n" % (
                {"default": "", "full": " --full", "quick": " --quick"}[self.args.mode],
                self.args.repeats, now, os.uname().nodename, os.cpu_count(),
                " ".join("%.2f" % x for x in os.getloadavg()), revision,
                os.path.relpath(os.path.abspath(self.results), ROOT), kept,
                len(self.cite.entries), self._archive_text(),
                min(started) if started else "-", max(started) if started else "-", one,
                os.path.relpath(self.args.cmlbed, ROOT) if self.args.cmlbed.startswith(ROOT)
                else self.args.cmlbed, version)]
        return head

    def _summary(self):
        """The headline figures of every section, the claims' verdicts, what is pending."""
        summary = ["## Summary\n\n"]
        if "cells" in self.headline:
            measured, simulated, none = self.headline["cells"]
            summary.append("- Grid cells: %d measured (%s), %d simulated, %d without results.\n" % (
                len(measured), ", ".join("%s/%g" % c for c in measured) or "none", len(simulated), len(none)))
        for key, noun, paper in (
                ("speedup", "PiPar grid, measured, split >= 1, m >= 2: largest speedup of the "
                 "round time vs FL", "the paper: 34.6x"),
                ("idle", "PiPar grid, measured, split >= 1, m >= 2: largest server idle "
                 "reduction vs FL", "the paper: 64.1x"),
                ("pipelining", "Pipelining alone (SFL / PiPar at PiPar's split, m >= 2): "
                 "largest", "the paper does not separate it"),
                ("splitting", "Splitting alone (FL / SFL, SFL at its own split): largest",
                 "the paper's 34.6x holds both factors")):
            if key in self.headline:
                best = self.headline[key]
                summary.append(
                    "- %s **%s** (%s; %s); %s.\n" % (noun, ratio_text(best[0]), best[1],
                                                   self._factors_text(best[2]), paper)
                    if best else "- %s: none whose interval lies above 1; %s.\n" % (noun, paper))
        if "sim_error" in self.headline:
            med, worst = self.headline["sim_error"]
            summary.append("- Simulator vs measured mean round time on the measured cells: "
                           "median |error| %.1f%%, largest %+.1f%% (%s, %s, %s).\n"
                           % (100 * med, 100 * worst[1], worst[2], rate_text(worst[3]), worst[4]))
        if "sittings" in self.headline:
            diff, where, method, count, inside = self.headline["sittings"]
            summary.append("- A second sitting: largest difference of a cell's round time "
                           "%+.1f%% (%s, %s); %d of %d within the first sitting's range.\n"
                           % (100 * diff, where, method, inside, count))
        for experiment, speedup, level in self.headline.get("heterogeneity", []):
            summary.append("- %s: PiPar planned per device vs FL %s; emulation %s%s.\n" % (
                experiment, ratio_text(speedup), level, "" if emulation.trusted(level)
                else " (partly this host's times: no verdict)"))
        if "dp" in self.headline:
            g = self.headline["dp"]
            summary.append("- DP on the main job: PiPar vs FL %s (DP off) / %s (on); vs SFL "
                           "%s / %s.\n" % (ratio_text(g["off"]["speedup"]), ratio_text(g["on"]["speedup"]),
                                           ratio_text(g["off"]["vs_sfl"]), ratio_text(g["on"]["vs_sfl"])))
        if "adasplit_bytes" in self.headline:
            ours, theirs = self.headline["adasplit_bytes"]
            summary.append("- SplitFed's bytes over AdaSplit's: %s (the authors: %.2fx).\n"
                           % (ratio_text(ours), theirs))
        claims = self.headline.get("claims", [])
        if claims:
            summary.append("- The papers' claims (What we conclude): %s.\n" % ", ".join(
                "%d %s" % (sum(1 for c in claims if c["verdict"] == v), v)
                for v in (CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE)))
        for p in self.pending:
            summary.append("- Pending: %s.\n" % p)
        summary.append("\n")
        return summary


    def regeneration_text(self):
        notes = []
        if self.legacy:
            notes.append("The runs of %d groups were made before seeds (n = 1, no interval): %s."
                         % (len(self.legacy), ", ".join(self.legacy)))
        if self.short:
            notes.append("fewer seeds than the %d asked for: %s." % (self.args.repeats, ", ".join(self.short)))
        if self.superseded:
            notes.append("%d files made before seeds are superseded by seed files of the same "
                         "name and not used (their digests in `%s/` can be deleted)."
                         % (self.superseded, self._archive_text()))
        return ["## Regenerating\n\n",
                "`%s` runs every part (profiles, simulated grid, every measured cell, the "
                "round-length curve, DP, heterogeneity, accuracy, the AdaSplit comparison and "
                "its learning-rate sweep) with %d seeds per measured run and rewrites "
                "this page; a run already done (its NAME.seedS.h5 and provenance exist) is not "
                "run again. On a cluster: `REPEATS=%d jobs/submit-reproduction.sh` (the heavy "
                "parts as an array, then the report), and `scripts/studies/reproduction.sh --repeats %d` "
                "for the default parts. %s\n" % (
                    self.regenerate_command(), max(3, self.args.repeats), max(3, self.args.repeats),
                    max(3, self.args.repeats), " ".join(notes) or "Every run set here has its seeds.")]
