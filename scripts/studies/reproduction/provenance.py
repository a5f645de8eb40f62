"""The appendix: every run behind the numbers, one line per seed's file."""

import os

from .constants import ROOT
from .text import command_text, fmt, md_table


class Provenance:
    def provenance(self):
        self.add("## Provenance: every run behind the numbers\n\n")
        self.add("Each bracketed number [n] above names runs of this list (one line per seed's "
                 "file): the command (its config and overrides), when it started (UTC), how "
                 "long it took (a `--repeats` command writes several seeds; its time is the "
                 "whole command's), the machine and its load average (1, 5, 15 min) when it "
                 "ended, and the cmlbed binary that ran it. Results files are under `%s/` (not "
                 "committed; rerun the command to get them); a run marked *kept* is read from "
                 "its digest in `%s/` (every table of the results file but the timeline, "
                 "scripts/cmlbed_report/digest.py), which git keeps when the results folder is "
                 "gone.\n\n"
                 % (os.path.relpath(os.path.abspath(self.results), ROOT), self._archive_text()))
        self.add("<details><summary>%d runs</summary>\n\n" % len(self.cite.entries))
        rows = []
        for e in self.cite.entries:
            p = e.provenance
            took = fmt(p.get("seconds"), "%.0f s")
            if p.get("repeats", 1) > 1:
                took += " (%d seeds)" % p["repeats"]
            rows.append(["[%d]" % e.id, "`%s`%s" % (os.path.relpath(e.path, self.results),
                                                     " (kept)" if e.archived else ""),
                         "`%s`" % command_text(e).replace("|", "\\|"), p.get("started", "-"),
                         took, "%s (%s cores)" % (p.get("host", "-"), p.get("cores", "-")),
                         p.get("load_after", "-"), p.get("cmlbed", "-")])
        self.add(md_table(["#", "file", "command", "started", "took", "machine", "load",
                           "cmlbed"], rows))
        self.add("\n</details>\n\n")
        plans = self.store.glob(os.path.join("simulated", "*.plan.txt"))
        if plans:
            self.add("Simulated sfl and pipar cells simulate the choice `cmlbed plan` printed "
                     "for the same configuration (same overrides, `--model.split=auto`, for "
                     "pipar also `--pipar.micro_batches=auto`, `--profile` the network's "
                     "profile, `--devices` the grid's device count); the plans are in "
                     "`%s/simulated/*.plan.txt`.\n\n" % self._archive_text())
