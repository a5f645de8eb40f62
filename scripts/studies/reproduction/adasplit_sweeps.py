"""Section 4: the kappa and eta sweeps, and the baselines' optimizer and learning rate."""

import os

import numpy as np

from .learning import SETTLED_RANGE
from .runsets import LR_STEM, SEED_SUFFIX
from .text import ci_text, fmt, md_table, number_or_text, row_ci


class AdaSplitSweeps:
    def _lr_sweep(self, ours):
        """The baselines' learning-rate sweep (adasplit/lr-BASELINE-OPTIMIZER-LR runs):
        settled accuracy per setting, beside the trivial rate, and which setting the
        comparison's configs use (ours: the comparison's numbers by run name)."""
        names = set()
        for p in self.store.glob(os.path.join("adasplit", "lr-*.h5")):
            m = SEED_SUFFIX.search(os.path.basename(p))
            stem = os.path.basename(p)[:m.start()] if m else os.path.basename(p)[:-len(".h5")]
            if LR_STEM.match(stem):
                names.add(stem)
        sweep = self._adasplit_numbers(sorted(names))
        self.add("### The baselines' optimizer and learning rate\n\n")
        if not sweep:
            self.add("Not run yet: `ADASPLIT_GROUPS=lr scripts/studies/reproduction.sh --only adasplit,report`.\n\n")
            self.pending.append("the baselines' learning-rate sweep (`ADASPLIT_GROUPS=lr "
                                "scripts/studies/reproduction.sh --only adasplit,report`)")
            return
        table = []
        for name, o in sweep.items():
            baseline, optimizer, lr = LR_STEM.match(name).groups()
            used = ours.get(baseline)
            chosen = bool(used) and (used["runs"][0].option("train.optimizer") == optimizer and
                                     float(used["runs"][0].option("train.lr")) == float(lr))
            table.append([baseline, optimizer, lr, o["n"],
                          ci_text(100 * o["final_accuracy"], 100 * o["final_accuracy_ci95"], "%.1f%%")
                          + ("; **failed**" if o["failed"] else ""),
                          fmt(100 * o["trivial"], "%.1f%%"),
                          "%.1f points%s" % (100 * o["last_range"], "" if o["last_range"] < SETTLED_RANGE
                                             else ", not settled") if np.isfinite(o["last_range"]) else "-",
                          "**yes**" if chosen else "", self.cite.cite(*o["entries"])])
        table.sort(key=lambda r: tuple(number_or_text(c) for c in r[:3]))
        self.add("Each baseline's config (`configs/adasplit/BASELINE.ini`) run with each "
                 "optimizer and learning rate of `scripts/studies/adasplit-comparison.sh`'s lr group "
                 "(SGD with momentum 0.9; Adam with its weight decay 1e-5), over 1 gbit links "
                 "(only the accuracy is compared), as the AdaSplit paper tunes its baselines; "
                 "the comparison above runs each baseline at the setting its config names.\n\n")
        self.add(md_table(["baseline", "optimizer", "lr", "n", "accuracy", "trivial rate",
                           "last 5 rounds' accuracy range", "the comparison's setting", "runs"], table))
        self.add("\nThe optimizer's state (Adam's moments, SGD's momentum) starts afresh "
                 "whenever the baseline's weights are replaced by an average "
                 "(`train.optimizer_state = reset`, the default; docs/explanation/optimizer-state.md); "
                 "AdaSplit's devices never have theirs replaced.\n\n")

    def _adasplit_sweep(self, prefix, title, headings, settings, comment):
        names = set()
        for p in self.store.glob(os.path.join("adasplit", prefix + "*.h5")):
            base = os.path.basename(p)
            m = SEED_SUFFIX.search(base)
            names.add(base[:m.start()] if m else base[:-len(".h5")])
        ours = self._adasplit_numbers(sorted(names))
        if not ours:
            return
        self.add("%s:\n\n" % title)
        table = [settings(o["runs"][0]) + [
            o["n"], ci_text(100 * o["final_accuracy"], 100 * o["final_accuracy_ci95"], "%.1f%%"),
            ci_text(o["total_gb"], o["total_gb_ci95"], "%.4f"),
            ci_text(o["client_tflops"], o["client_tflops_ci95"], "%.4f"),
            row_ci(o["row"], "mean_round_s"), self.cite.cite(*o["entries"])] for o in ours.values()]
        table.sort(key=lambda r: tuple(number_or_text(c) for c in r[:len(headings)]))
        self.add(md_table(headings + ["n", "accuracy", "GB up+down", "client TFLOPs",
                                      "mean round s", "runs"], table))
        self.add("\n%s\n\n" % comment)
