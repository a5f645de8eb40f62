"""Section 3: accuracy of FL, SFL and PiPar with DP off and on."""

import numpy as np

from cmlbed_report import stats
from cmlbed_report.tables import ratio_text

from .constants import METHODS
from .learning import SETTLED_RANGE, failed_to_learn, settled_text, trivial_rate
from .runsets import compare_methods, grouped, run_epsilon, run_sets
from .text import fmt, md_table, row_ci


class Accuracy:
    def accuracy(self):
        self.add("## 3. Accuracy: FL, SFL and PiPar with DP off and on\n\n")
        args = self.args
        self.add(
            "`%s`: 1 server + 3 devices, iid shares, batch 32, SGD lr 0.05, 10 mini-batches "
            "per device and round, %s rounds, split 2, PiPar with 4 micro-batches; fast "
            "unpaced links (time is not measured here). Networks: %s; data: %s "
            "(synthetic = CIFAR-shaped 3x32x32). DP on: `%s` for sfl and pipar, `%s` for "
            "fl. That is far less noise than in section 2: there every method stays near "
            "chance; here the noise's norm is 0.3x to 2x the signal's, by method and network "
            "(worked out in scripts/studies/reproduction.sh), and the epsilon the runs record is too "
            "large to protect anything. It shows whether the methods still agree when noise "
            "enters their training, not a useful privacy level. Final accuracy = the last "
            "round's, mean ± 95%% interval over the seeds; PiPar / FL and SFL / FL are "
            "ratios of those means (Fieller).\n\n"
            % (args.accuracy_config, args.accuracy_rounds, args.accuracy_networks,
               args.accuracy_datasets, args.dp_accuracy_split, args.dp_accuracy_fl))
        wanted = {"%s-%s-%s-dp%s" % (d, n, m, dp): (d, n, m, dp)
                  for d in args.accuracy_datasets.split() for n in args.accuracy_networks.split()
                  for m in METHODS for dp in ("off", "on")}
        sets = run_sets(self.store, "accuracy", wanted.get)
        groups_drawn, rows, missing_groups = [], [], []
        for dataset in args.accuracy_datasets.split():
            for net in args.accuracy_networks.split():
                present = {(m, dp): sets[(dataset, net, m, dp)] for m in METHODS for dp in ("off", "on")
                           if (dataset, net, m, dp) in sets and sets[(dataset, net, m, dp)].runs()}
                if len(present) < 2 * len(METHODS):
                    missing_groups.append((dataset, net, 2 * len(METHODS) - len(present)))
                if not present:
                    continue
                self.note_sets("accuracy %s x %s" % (dataset, net), present.values())
                drawn = {}
                for dp in ("off", "on"):
                    run_lists = {m: present[(m, dp)].runs() for m in METHODS if (m, dp) in present}
                    if not run_lists:
                        continue
                    rows.append(self._accuracy_row(dataset, net, dp, present, run_lists, drawn))
                groups_drawn.append((dataset, net, drawn))
        if not rows:
            self.add("**Not run yet.** These runs take about %s a seed on a 2-core machine; they "
                     "are not part of the default run. Produce them with `scripts/studies/reproduction.sh "
                     "--only accuracy,report` (or `--full`), or on a cluster with "
                     "`jobs/submit-reproduction.sh` (one array element per dataset and "
                     "network), then `scripts/studies/reproduction.sh --report-only`.\n\n" % "an hour")
            self.pending.append("accuracy (`scripts/studies/reproduction.sh --only accuracy,report`)")
            return
        if missing_groups:
            text = ", ".join("%s x %s (%d of 6 runs missing: `scripts/studies/reproduction.sh --job "
                             "'accuracy %s %s'`)" % (d, n, k, d, n) for d, n, k in missing_groups)
            self.add("Not run yet: %s; or all of them with the Slurm array "
                     "(`jobs/submit-reproduction.sh`), then `scripts/studies/reproduction.sh "
                     "--report-only`.\n\n" % text)
            self.pending.append("accuracy groups %s" % ", ".join(
                "%s x %s" % (d, n) for d, n, _ in missing_groups))
        self.add(md_table(["data", "network", "DP", "trivial rate", "FL final accuracy (n; "
                           "last 5 rounds' largest range)", "SFL", "PiPar", "SFL / FL",
                           "PiPar / FL", "pipar's epsilon", "runs"], rows))
        self.add("\nThe trivial rate is the accuracy of the best constant answer (the test "
                 "set's most common class), as the runs record it (root attribute "
                 "trivial_accuracy; '-' for runs made before it); a method whose 95%% interval "
                 "does not clear it has **failed** to learn, and no comparison rests on it. The "
                 "range in brackets is max - min of the last five rounds' accuracy, the largest "
                 "over the seeds: below %.2f (%d points) means settled.\n\n"
                 % (SETTLED_RANGE, round(100 * SETTLED_RANGE)))
        self.add(
            "FL and SFL share FedAvg's mathematics (a mini-batch is one batch-norm batch on "
            "both sides of the cut); PiPar is SFL with micro-batches whose gradients "
            "accumulate, the same step, except that batch-norm layers (in VGG-5 and "
            "MobileNetV3 alike) normalise each micro-batch with its own statistics. "
            "With DP on, pipar draws its noise per micro-batch, so its noise is another sample "
            "of the same distribution as sfl's, and fl uses another mechanism (DP-FedAvg on "
            "the averaged model): FL's accuracy with DP is not expected to match the split "
            "methods'.\n\n")
        self._accuracy_picture(groups_drawn)
        self.add("![accuracy per round](%s)\n\n" % self.link(self.image("accuracy")))

    def _accuracy_row(self, dataset, net, dp, present, run_lists, drawn):
        """One row of the table: the (dataset, net) group's runs with DP dp, compared
        against FL; adds its groups to drawn and PiPar / FL to the evidence."""
        self.measured_runs(sum(len(v) for v in run_lists.values()))
        groups, _ = grouped(run_lists)
        base = "fl" if "fl" in groups else next(iter(groups))
        numbers = compare_methods(groups, METHODS, base, self.from_round)
        drawn.update({(m, dp): groups[m] for m in groups})
        ratios = {}
        for m in ("sfl", "pipar"):
            if m in numbers and "fl" in numbers:
                ratios[m] = stats.ratio_of_means(
                    [p["final_accuracy"] for p in numbers[m]["per_run"]],
                    [p["final_accuracy"] for p in numbers["fl"]["per_run"]])
        all_runs = [r for g in groups.values() for r in g.runs]
        trivial = trivial_rate(all_runs)
        failed = {m: failed_to_learn([p["final_accuracy"] for p in numbers[m]["per_run"]],
                                     trivial) for m in numbers}
        where = "%s, %s" % (dataset, net)
        if dp == "off" and "pipar" in ratios:
            # FL is the baseline: a comparison with an FL that did not learn
            # is no evidence (nor is one whose trivial rate is not recorded).
            if failed.get("fl") is False:
                self.evidence["accuracy"].append((ratios["pipar"], where))
            else:
                self.evidence.setdefault("accuracy_failed", []).append(
                    "%s (%s)" % (where, "FL at or below the trivial rate %.3f" % trivial
                                 if failed.get("fl") else "no trivial rate recorded"))
        return [dataset, net, dp, fmt(trivial, "%.3f")] + [
            ("%s (n %d; %s)%s" % (row_ci(numbers[m], "final_accuracy", "%.4f"),
                                  numbers[m]["n"], settled_text(groups[m].runs),
                                  "; **failed**: not above the trivial rate"
                                  if failed[m] else ""))
            if m in numbers else "not run" for m in METHODS] + [
            ratio_text(ratios["sfl"]) if "sfl" in ratios else "-",
            ratio_text(ratios["pipar"]) if "pipar" in ratios else "-",
            fmt(run_epsilon(groups["pipar"].runs[0]) if "pipar" in groups else None, "%.3g"),
            self.cite.cite(*[e for m in METHODS if (m, dp) in present
                             for e in present[(m, dp)].ok_entries()])]

    def _accuracy_picture(self, groups_drawn):
        """Accuracy per round, mean and 95% band over the seeds, one panel per group."""
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, len(groups_drawn), figsize=(4.3 * len(groups_drawn), 3.6),
                                 squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for ax, (dataset, net, drawn) in zip(axes[0], groups_drawn):
            for (method, dp), group in sorted(drawn.items()):
                n_rounds = min(len(r.rounds) for r in group.runs)
                acc = np.array([r.rounds["test_accuracy"][:n_rounds] for r in group.runs])
                means = [stats.mean_ci(acc[:, k]) for k in range(n_rounds)]
                mean = np.array([m[0] for m in means])
                half = np.array([m[1] if np.isfinite(m[1]) else 0 for m in means])
                x = np.arange(1, n_rounds + 1)
                ok = np.isfinite(mean)
                ax.plot(x[ok], mean[ok], "-" if dp == "off" else "--", color=colours[method],
                        label="%s, DP %s (n %d)" % (method, dp, group.n))
                ax.fill_between(x[ok], (mean - half)[ok], (mean + half)[ok],
                                color=colours[method], alpha=0.15, lw=0)
            ax.set_title("%s, %s" % (net, dataset), fontsize=9)
            ax.set_xlabel("round")
            ax.set_ylabel("test accuracy (mean, 95% band)")
            ax.grid(lw=0.3, alpha=0.5)
        axes[0][0].legend(fontsize=6)
        fig.tight_layout()
        save(fig, self.image("accuracy"))
