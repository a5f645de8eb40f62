"""Section 2: differential privacy on the main job, PiPar's gain with DP on."""

import numpy as np

from cmlbed_report.tables import ratio_text

from .constants import METHODS
from .runsets import compare_methods, dp_key, grouped, per_round, run_epsilon, run_sets
from .text import ci_text, fmt, md_table, row_ci


class Dp:
    def dp(self):
        self.add("## 2. Differential privacy: its cost, and PiPar's gain with DP on\n\n")
        self.add("What DP costs in accuracy across noise multipliers, with epsilon under both "
                 "adjacency relations, on the main job's settings (3 seeds a cell): "
                 "[privacy-accuracy.md](privacy-accuracy.md) (`bash scripts/studies/privacy-accuracy.sh`). "
                 "This section measures time.\n\n")
        sets = run_sets(self.store, "dp", dp_key)
        self.add(
            "The main job's settings (`configs/quickstart/{fl,sfl,pipar}.ini`: Fashion-MNIST, "
            "VGG-5 split 4, 1 server + 3 devices, devices `slowdown = 4`, 10/25 mbit, %s), "
            "each method with DP off and on. DP on: `%s` for sfl and pipar (each sample's "
            "activation clipped and noised on the device, inside its forward stage); `%s` for "
            "fl (DP-FedAvg: clipped updates, noise on the average) (docs/explanation/privacy.md). "
            "These configs pace devices with `devices.slowdown` (a stage lasts 4x what it "
            "took here), which keeps DP's own work in the device's time (`devices.flops` "
            "would pace it away, as it counts only the layers' FLOPs), but makes every time "
            "follow this machine's load: the script runs one pass per seed over the six "
            "configurations, every second pass in reverse order, and the table gives the "
            "mean ± 95%% interval over the passes (rounds %d..).\n\n"
            % ("shortened for the quick mode" if self.args.mode == "quick" else "3 rounds of 10 mini-batches",
               self.args.dp_split, self.args.dp_fl, self.from_round))
        missing = ["%s DP %s" % (m, dp) for m in METHODS for dp in ("off", "on")
                   if (m, dp) not in sets or not sets[(m, dp)].runs()]
        if missing:
            self.add("Not run yet (%s): `scripts/studies/reproduction.sh --only dp,report`.\n\n"
                     % ", ".join(missing))
            self.pending.append("DP on the main job (`scripts/studies/reproduction.sh --only dp,report`)")
            return
        self.note_sets("DP", sets.values())
        rows, numbers, gains = [], {}, {}
        for dp in ("off", "on"):
            run_lists = {m: sets[(m, dp)].runs() for m in METHODS}
            self.measured_runs(sum(len(v) for v in run_lists.values()))
            groups, _ = grouped(run_lists)
            vs_fl = compare_methods(groups, METHODS, "fl", self.from_round)
            vs_sfl = compare_methods(groups, ("sfl", "pipar"), "sfl", self.from_round)["pipar"]
            self.note_rows("DP %s" % dp, vs_fl.values())
            numbers[dp] = (groups, vs_fl)
            gains[dp] = {"speedup": vs_fl["pipar"]["speedup_ratio"],
                         "idle": vs_fl["pipar"]["server_idle_reduction_ratio"],
                         "vs_sfl": vs_sfl["speedup_ratio"]}
        self.evidence["dp"] = gains
        self.headline["dp"] = gains
        for method in METHODS:
            cost = compare_methods({"off": numbers["off"][0][method], "on": numbers["on"][0][method]},
                                   ("off", "on"), "off", self.from_round)["on"]
            for dp in ("off", "on"):
                row = numbers[dp][1][method]
                runs = numbers[dp][0][method].runs
                eps = run_epsilon(runs[0])
                rows.append([method, dp, row["n"], row_ci(row, "mean_round_s"),
                             ci_text(*per_round(row, "device_busy_s")),
                             ci_text(*per_round(row, "server_idle_s")),
                             "-" if dp == "off" else ratio_text(cost["speedup_ratio"]),
                             row_ci(row, "final_accuracy", "%.4f"), fmt(eps, "%.2f"),
                             self.cite.cite(*sets[(method, dp)].ok_entries())])
        self.add(md_table(["method", "DP", "n", "mean round s", "device busy s/round",
                           "server idle s/round", "round time DP off / on",
                           "final accuracy", "epsilon (delta 1e-5)", "runs"], rows))
        self.add(
            "\nPiPar against FL: speedup %s with DP off, %s with DP on; server idle reduction "
            "%s off, %s on. PiPar against SFL: %s off, %s on. 'round time DP off / on' below 1 "
            "means DP made the rounds longer; what DP costs (per-sample norms and one normal "
            "draw per activation element inside the forward stage; for fl the update's "
            "clipping once per round) shows there only when it exceeds this machine's load "
            "drift between passes. Accuracy after these short rounds: at this noise (its norm "
            "is sigma x sqrt(elements) = 0.5 x sqrt(3,136) = 28x the clipped activation's at "
            "VGG-5 split 4) the split methods stay near chance, and so does fl (noise of 0.1 "
            "per weight on the average of 3 devices); section 3 trains longer with less "
            "noise. Epsilon is the conservative record-level (split) or device-level (fl) "
            "figure the run recorded (docs/explanation/privacy.md states the adjacency relation); the two "
            "are not the same guarantee.\n\n"
            % (ratio_text(gains["off"]["speedup"]), ratio_text(gains["on"]["speedup"]),
               ratio_text(gains["off"]["idle"]), ratio_text(gains["on"]["idle"]),
               ratio_text(gains["off"]["vs_sfl"]), ratio_text(gains["on"]["vs_sfl"])))
        self._dp_picture(numbers)
        self.add("![round time with DP off and on](%s)\n\n" % self.link(self.image("dp")))

    def _dp_picture(self, numbers):
        """Round time and device busy time per method, DP off beside DP on."""
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        x = np.arange(len(METHODS))
        for ax, key, label in ((axes[0], "mean_round_s", "mean round s (95% CI)"),
                               (axes[1], "device_busy_s", "device busy s per round (95% CI)")):
            for k, (dp, colour) in enumerate((("off", "#4C72B0"), ("on", "#DD8452"))):
                if key == "mean_round_s":
                    vals = [numbers[dp][1][m][key] for m in METHODS]
                    errs = [numbers[dp][1][m][key + "_ci95"] for m in METHODS]
                else:
                    pairs = [per_round(numbers[dp][1][m], key) for m in METHODS]
                    vals, errs = [p[0] for p in pairs], [p[1] for p in pairs]
                errs = [e if np.isfinite(e) else 0 for e in errs]
                bars = ax.bar(x + (k - 0.5) * 0.38, vals, 0.38, yerr=errs, capsize=3,
                              color=colour, label="DP " + dp)
                ax.bar_label(bars, ["%.2f" % v for v in vals], fontsize=7)
            ax.set_xticks(x)
            ax.set_xticklabels(METHODS)
            ax.set_ylabel(label)
            ax.legend(fontsize=8)
        fig.suptitle("main job, DP off and on (mean of the seeds, 95% interval)", fontsize=9)
        fig.tight_layout()
        save(fig, self.image("dp"))
