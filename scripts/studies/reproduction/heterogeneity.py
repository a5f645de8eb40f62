"""Heterogeneous devices and changing bandwidth: the heterogeneity part's experiments."""

from cmlbed_report import emulation
from cmlbed_report.summary import Group, compare_groups, group_runs
from cmlbed_report.tables import ratio_text

from .learning import trivial_rate
from .runsets import (HETEROGENEITY_CLAIMED, HETEROGENEITY_CONDITIONS, HETEROGENEITY_RUNS,
                      heterogeneity_key, per_round, run_sets)
from .text import ci_text, fmt, md_table, row_ci


class Heterogeneity:
    def heterogeneity(self):
        """FL, SFL and PiPar on configs/heterogeneous.ini and configs/changing-bandwidth.ini
        (the heterogeneity part), and the speedups the conditions' claims rest on."""
        sets = run_sets(self.store, "heterogeneity", heterogeneity_key)
        self.add("### Heterogeneous devices and changing bandwidth\n\n")
        experiments = sorted({e for e, _ in sets})
        if not experiments:
            self.add("Not run yet: `scripts/studies/reproduction.sh --only heterogeneity,report`.\n\n")
            self.pending.append("heterogeneous devices and changing bandwidth "
                                "(`scripts/studies/reproduction.sh --only heterogeneity,report`)")
            return
        self.add(
            "PiPar's paper says its gains hold with heterogeneous devices and changing "
            "bandwidth. `configs/heterogeneous.ini`: 1 server + 4 devices, VGG-5 on "
            "Fashion-MNIST, devices 1.5x, 4x, 8x and 8x slower than this machine "
            "(`devices.slowdown`), links of 5-100 mbit with 2-30 ms delay. "
            "`configs/changing-bandwidth.ini`: 1 server + 3 devices whose links drop and "
            "partly recover mid-run (configs/traces/). Each runs FL, SFL, PiPar with one hand "
            "choice for every device, PiPar planned per device before round 1, and, where "
            "links follow traces, PiPar planned again after a round in which a link changed "
            "(`scripts/studies/heterogeneity-comparison.sh --list`), seed by seed across the runs. "
            "Mean and 95%% interval over the seeds (rounds %d..), ratios with Fieller's "
            "interval; a run whose emulation did not hold is marked, and its experiment's "
            "figures stay out of the conclusions. The claims rest on PiPar planned per "
            "device against FL.\n\n" % self.from_round)
        conditions = {}
        for experiment in experiments:
            items = self._heterogeneity_table(experiment, {
                name: sets[(experiment, name)] for name in HETEROGENEITY_RUNS
                if (experiment, name) in sets})
            if experiment in HETEROGENEITY_CONDITIONS:
                conditions[experiment] = items
        self.evidence["conditions"] = conditions

    def _heterogeneity_table(self, experiment, sets):
        """One experiment's table; returns [(PiPar planned vs FL speedup, where)] when
        FL and that PiPar ran and every run of the experiment was faithful, else []."""
        # Every seed of a run is one group, whatever the planner chose for it: the run
        # is "PiPar planned per device", not one plan.
        groups = {name: Group(s.runs()) for name, s in sets.items() if s.runs()}
        replanned = [n for n, g in groups.items() if len(group_runs(g.runs)) > 1]
        self.note_sets(experiment, sets.values())
        self.measured_runs(sum(g.n for g in groups.values()))
        self.add("**%s** (`configs/%s.ini`)\n\n" % (experiment, experiment))
        if "fl" not in groups:
            self.add("No FL run yet: no comparison.\n\n")
            return []
        names = [n for n in HETEROGENEITY_RUNS if n in groups]
        rows = dict(zip(names, compare_groups([groups[n] for n in names], baseline=groups["fl"].label,
                                              from_round=self.from_round)))
        vs_sfl = {}
        if "sfl" in groups:
            for name in names:
                if name.startswith("pipar"):
                    vs_sfl[name] = compare_groups([groups["sfl"], groups[name]], baseline=groups["sfl"].label,
                                                  from_round=self.from_round)[1]["speedup_ratio"]
        self.note_rows(experiment, rows.values())
        verdicts = {n: emulation.worst([emulation.verdict(r) for r in groups[n].runs]) for n in names}
        table = []
        for name in names:
            row, runs = rows[name], groups[name].runs
            table.append([HETEROGENEITY_RUNS[name], row["n"], row_ci(row, "mean_round_s"),
                          ci_text(*per_round(row, "server_idle_s")),
                          row_ci(row, "final_accuracy", "%.4f"), fmt(trivial_rate(runs), "%.3f"),
                          "-" if name == "fl" else ratio_text(row["speedup_ratio"]),
                          "-" if name == "fl" else ratio_text(row["server_idle_reduction_ratio"]),
                          ratio_text(vs_sfl[name]) if name in vs_sfl else "-", verdicts[name],
                          self.cite.cite(*sets[name].ok_entries())])
        self.add(md_table(["run", "n", "mean round s", "server idle s/round", "final accuracy",
                           "trivial rate", "speedup vs FL", "server idle reduction vs FL",
                           "speedup vs SFL", "emulation", "runs"], table))
        self.add("\n")
        if replanned:
            self.add("The planner chose differently for different seeds in %s; each row holds "
                     "all its seeds.\n\n" % ", ".join(HETEROGENEITY_RUNS[n] for n in replanned))
        if HETEROGENEITY_CLAIMED in rows:
            self.headline.setdefault("heterogeneity", []).append((
                experiment, rows[HETEROGENEITY_CLAIMED]["speedup_ratio"],
                emulation.worst(list(verdicts.values()))))
        unfaithful = [n for n in names if not emulation.trusted(verdicts[n])]
        if unfaithful:
            self.add("Not faithful (%s): the times of this experiment are partly this host's and "
                     "stay out of the conclusions.\n\n" % ", ".join(
                         "%s: %s" % (HETEROGENEITY_RUNS[n], verdicts[n]) for n in unfaithful))
            return []
        if HETEROGENEITY_CLAIMED not in rows:
            return []
        return [(rows[HETEROGENEITY_CLAIMED]["speedup_ratio"], "%s, %s" % (
            experiment, HETEROGENEITY_RUNS[HETEROGENEITY_CLAIMED]))]
