"""What we conclude: every claim of both papers with its computed verdict."""

from cmlbed_report.tables import ratio_text

from .constants import (ACCURACY_MARGIN, BYTES_FACTOR_TOLERANCE, CONFIRMED, NOT_CONFIRMED,
                        NOT_TESTABLE)
from .text import md_table
from .verdicts import conclusions


class Conclusions:
    def conclude(self):
        claims = conclusions(self.evidence)
        self.headline["claims"] = claims
        self.add("## What we conclude\n\n")
        self.add(
            "Each claim of the two papers, with the verdict this report's data give it: "
            "**confirmed** (the cited 95%% interval supports it), **not confirmed** (the data "
            "are there and do not support it) or **not testable here** (the data cannot "
            "decide it, with the reason). Every verdict is computed from the figures above "
            "by scripts/studies/reproduction_report.py (`conclusions()`), none is written by hand. "
            "PiPar's gains are taken over the measured grid cells in which it pipelines (m >= "
            "2 micro-batches) with at least one layer on the device (split >= 1) and whose "
            "emulation held (section 1), rounds %d.. of each run; at m = 1 PiPar runs SFL's "
            "schedule, and its gain there is splitting's (section 'The gain taken apart'). 'Same accuracy' needs every interval of PiPar's final "
            "accuracy over FL's within 1 ± %.0f%%; '8.13x' needs our interval to meet 8.13x "
            "± %.0f%%.\n\n" % (self.from_round, 100 * ACCURACY_MARGIN, 100 * BYTES_FACTOR_TOLERANCE))
        self.add(md_table(["paper", "claim", "paper's figure", "verdict", "what it rests on (ours)",
                           "why"], [[c["paper"], c["claim"], c["paper_figure"] or "-",
                                     "**%s**" % c["verdict"], c["evidence"], c["reason"]]
                                    for c in claims]))
        counts = {v: sum(1 for c in claims if c["verdict"] == v)
                  for v in (CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE)}
        self.add("\n%d claims: %d confirmed, %d not confirmed, %d not testable here.\n\n"
                 % (len(claims), counts[CONFIRMED], counts[NOT_CONFIRMED], counts[NOT_TESTABLE]))
        lines = []
        for key, noun, paper in (("speedup", "PiPar's speedup of the round time vs FL", "34.6x"),
                                 ("idle", "PiPar's server idle reduction vs FL", "64.1x"),
                                 ("pipelining", "pipelining factor (SFL / PiPar at PiPar's "
                                  "split)", "not separated"),
                                 ("splitting", "splitting factor (FL / SFL)", "34.6x for both "
                                  "factors together")):
            best = self.headline.get(key)
            if best:
                lines.append("- Largest measured %s (split >= 1%s): **%s** (%s; %s); the paper: "
                             "%s." % (noun, "" if key == "splitting" else ", m >= 2",
                                      ratio_text(best[0]), best[1], self._factors_text(best[2]), paper))
            else:
                lines.append("- No qualifying measured cell has a %s whose interval lies "
                             "above 1; the paper: %s." % (noun, paper))
        if self.headline.get("dp"):
            g = self.headline["dp"]
            lines.append("- With DP on (main job), PiPar against FL: %s; with DP off: %s."
                         % (ratio_text(g["on"]["speedup"]), ratio_text(g["off"]["speedup"])))
        if self.headline.get("adasplit_bytes"):
            r, theirs = self.headline["adasplit_bytes"]
            lines.append("- SplitFed's bytes over AdaSplit's: %s; the authors: %.2fx."
                         % (ratio_text(r), theirs))
        if self.legacy:
            lines.append("- The runs of %d groups predate seeds (n = 1, no interval): every verdict that "
                         "rests on them is 'not testable here' until they are run again "
                         "(Regenerating, below)." % len(self.legacy))
        self.add("\n".join(lines) + "\n\n")
