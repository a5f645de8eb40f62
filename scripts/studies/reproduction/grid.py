"""Section 1, the PiPar grid: networks x uplink rates x FL / SFL / PiPar, measured where
measured, else simulated, with the profiles behind it."""

import math
import os

import numpy as np

from cmlbed_report import emulation, stats
from cmlbed_report.summary import RAW_DATA_NOTE

from .constants import METHODS
from .runsets import SFL_AT_PIPAR, compare_methods, grid_key, grouped, per_round, run_sets
from .text import ci_text, fmt, md_table, rate_text


class Grid:
    def grid(self):
        args = self.args
        networks, rates = args.networks.split(), [float(r) for r in args.rates.split()]
        measured = run_sets(self.store, "measured", grid_key)
        simulated = run_sets(self.store, "simulated", grid_key)
        profiles = {n: self.store.entry(os.path.join(self.results, "profiles", n + ".json"))
                    for n in networks}
        cells = self._grid_cells(networks, rates, measured, simulated)
        self.add("## 1. PiPar grid: six networks x five uplink rates x FL / SFL / PiPar\n\n")
        self.add(
            "Settings (`%s`): CIFAR-10-shaped synthetic data (3x32x32, 10 classes), 1 server + "
            "4 devices, batch 32, SGD; each cell overrides `model.name` and the links "
            "(uplink U mbit, downlink 2.5 U, burst 32 KiB). **Devices are paced with "
            "`devices.flops = 2GFLOP/s`** (every device stage lasts its FLOPs / 2e9 s; "
            "`devices.slowdown` is not used), the server runs at this machine's speed "
            "(1 LibTorch thread). Rounds: %s; `%s` makes a round one local epoch, 16 "
            "mini-batches over each device's 512 samples. FL trains the whole model on the device; SFL's split and "
            "PiPar's split and micro-batch count are `auto` (the planner's choice, "
            "docs/explanation/simulator.md, at least one layer on the device unless a config asks for "
            "split 0) from the network's profile measured here (`cmlbed profile`, "
            "server + 1 device, 3 repeats after 1 warm-up). A cell is **measured** when "
            "FL, SFL and PiPar ran for real (`mpirun -np 5 cmlbed run`, %d seeds, run seed "
            "by seed across the methods so that the host's drift spreads over all of them; "
            "`model.split = auto` with `--plan.profile`, each seed planning on its own; "
            "SFL also at the split PiPar's run of the same seed chose), else "
            "**simulated** (`cmlbed plan` for the choice, then `cmlbed simulate` with that "
            "profile and the same device count, %s; deterministic, so simulated once). "
            "Speedup = FL's mean round time / PiPar's; server idle reduction = FL's server "
            "idle seconds per round / PiPar's (section 0's definitions, computed by "
            "`cmlbed-report summary`'s code).\n\n"
            % (args.grid_config, self._grid_rounds_text(cells), args.grid_config, args.repeats,
               self._host_cores_text(simulated)))
        self._profiles(networks, profiles)

        rows, heat = self._grid_table(networks, rates, cells, simulated)
        self.add("### The grid\n\n")
        self.add(md_table(
            ["network", "uplink", "cell (n = seeds)", "FL round s", "SFL round s (split)",
             "PiPar round s (split, micro-batches)", "PiPar device FLOPs share",
             "FL server idle s/round", "PiPar server idle s/round", "PiPar speedup vs FL",
             "PiPar vs SFL", "server idle reduction vs FL",
             "PiPar with split >= 1, where the cell's is 0: round s (P, m), speedup / idle "
             "reduction vs FL", "runs"], rows))
        self.add("\nMeasured cells: mean ± 95%% half-width over the seeds (n in the cell column; "
                 "rounds %d.. of each run), ratios with Fieller's 95%% interval in brackets, "
                 "'no difference measured' where it includes 1, '> X' where the denominator's "
                 "interval reaches 0 (section 0). Simulated cells: one simulation; ± is the "
                 "simulator's validated error band, not a confidence interval (%s). A split "
                 "marked `*`: %s; the cell is kept out of the headline figures, and the "
                 "next-to-last column gives the planner's fastest candidate with at least one "
                 "layer on the device, simulated, where a cell's own split is 0.\n\n"
                 % (self.from_round, self._band_source(), RAW_DATA_NOTE.lstrip("* ")))
        self.add(self._emulation_note())
        if any(cells):
            self._grid_pictures(networks, rates, heat, cells)
            self.add("![speedup and server idle reduction over the grid](%s)\n\n"
                     % self.link(self.image("grid")))
            self.add("![round time per method against the uplink rate](%s)\n\n"
                     % self.link(self.image("rounds")))
        self.headline["cells"] = (
            sorted((n, r) for (n, r), c in cells.items() if "measured" in c),
            sorted((n, r) for (n, r), c in cells.items() if "measured" not in c),
            [(n, r) for n in networks for r in rates if (n, r) not in cells])
        self._grid_headline(cells)
        self._factors(cells)
        self._sittings([cell["measured"] for _, cell in sorted(cells.items()) if "measured" in cell])
        self._why(heat, networks, rates, cells)
        self._measured_vs_simulated(cells)
        pending = [(n, r) for n in networks for r in rates if (n, r) not in cells]
        if pending:
            self.pending.append(
                "grid cells without results: %s (measured by `scripts/studies/reproduction.sh --job "
                "'measured NET RATE'`, `--full` or the Slurm array; simulated by `--only "
                "profiles,simulate` where the network has a profile)" % ", ".join(
                    "%s/%s" % (n, rate_text(r)) for n, r in pending))
        self.add("Cells measured by this report's default run: `%s` (script variable "
                 "MEASURED); the other cells are measured by `scripts/studies/reproduction.sh "
                 "--full` or the Slurm array `jobs/submit-reproduction.sh` "
                 "(`jobs/reproduction.sbatch`, one cell or accuracy group per element), whose "
                 "results this report folds in when they are in `%s` (and keeps in `%s`).\n\n"
                 % (self.args.measured, self.results, self.args.archive))

    def _grid_cells(self, networks, rates, measured, simulated):
        """{(net, rate): {"measured": cell, "simulated": cell}} of the cells with runs of
        FL, SFL and PiPar."""
        cells = {}
        for net in networks:
            for rate in rates:
                for source, files in (("measured", measured), ("simulated", simulated)):
                    sets = {m: files.get((net, rate, m)) for m in METHODS + (SFL_AT_PIPAR,)}
                    if any(sets[m] is None for m in METHODS):
                        continue
                    cell = self._cell(net, rate, source, sets)
                    if cell:
                        cells.setdefault((net, rate), {})[source] = cell
        return cells

    def _grid_table(self, networks, rates, cells, simulated):
        """The grid's rows (measured where measured, else simulated) and the values of its
        picture; notes which measured cells are evidence and which are not faithful."""
        rows, heat = [], {key: np.full((len(networks), len(rates)), np.nan)
                          for key in ("speedup", "idle")}
        heat["measured"] = np.zeros((len(networks), len(rates)), bool)
        heat["raw"] = np.zeros((len(networks), len(rates)), bool)
        heat["text"] = {}
        for i, net in enumerate(networks):
            for j, rate in enumerate(rates):
                cell = cells.get((net, rate))
                if not cell:
                    why = "no profile (see above)" if net in self.failed_profiles else "pending"
                    rows.append([net, rate_text(rate), why] + ["-"] * 12)
                    continue
                source = "measured" if "measured" in cell else "simulated"
                c = cell[source]
                if source == "measured":
                    where = "%s/%s" % (net, rate_text(rate))
                    if c["emulation"] == "unknown":
                        self.unjudged.append(where)
                    if emulation.trusted(c["emulation"]) or c["emulation"] == "unknown":
                        self.evidence["grid"].append(c)
                    else:
                        self.unfaithful.append("%s (%s)" % (where, c["emulation"]))
                heat["measured"][i, j] = source == "measured"
                heat["raw"][i, j] = c["raw"]
                for key in ("speedup", "idle"):
                    heat[key][i, j], heat["text"][(key, i, j)] = self._heat_value(c[key], source)
                rows.append(self._grid_row(c, cell, simulated))
        return rows, heat

    def _profiles(self, networks, profiles):
        profile_rows = []
        self.failed_profiles = {}
        for net in networks:
            p = profiles[net]
            data = p.read_json()
            if data is None:
                log = self.store.source(os.path.join(self.results, "profiles", net + ".log"))
                first = ""
                if p.provenance.get("status", 0) != 0 and log:
                    first = next((l.strip() for l in open(log, errors="replace")
                                  if l.startswith("cmlbed:")), "")
                    self.failed_profiles[net] = (first, p)
                profile_rows.append([net, "failed %s" % self.cite.cite(p) if first else "not run",
                                     "-", "-", "-", "-"])
                continue
            server = next(r for r in data["ranks"] if r["role"] == "server")
            batch = data["batch_sizes"][-1]
            seconds = sum(l["forward_s"][-1] + l["backward_s"][-1] for l in server["layers"])
            flops = 3 * batch * sum(l["flops_per_sample"] for l in server["layers"])
            params = sum(l["parameters"] for l in server["layers"])
            profile_rows.append([
                net, "%.1f" % (params / 1e6), "%.0f" % (flops / 3 / batch / 1e6),
                "%.3f" % seconds, "%.1f" % (flops / seconds / 1e9),
                "%.1fx %s" % (flops / seconds / 2e9, self.cite.cite(p))])
        self.add("Profiles (this machine's server, batch 32; training FLOPs taken as 3 x "
                 "forward):\n\n")
        self.add(md_table(["network", "M params", "MFLOPs/sample fwd",
                           "server fwd+bwd s (batch 32)", "server GFLOP/s",
                           "server / device speed"], profile_rows))
        self.add("\n")
        if self.failed_profiles:
            self.add(
                "**%s: `cmlbed profile` fails** (`%s`): the profile measures every layer at "
                "the batch sizes 1, 2, 4, ... 32, and a batch-norm layer in training mode on a "
                "1x1 feature map cannot take a batch of 1. So these networks have no profile, "
                "hence no simulated cells and no `auto` (which profiles too); their measured "
                "cells use the split and micro-batch count of "
                "`configs/pipar-networks/NET.ini` instead (marked fixed). A fix belongs in "
                "`cmlbed profile` (start the ladder at 2 for such layers, or profile in "
                "evaluation mode), not in this report.\n\n"
                % (", ".join(sorted(self.failed_profiles)),
                   next(iter(self.failed_profiles.values()))[0].replace("cmlbed: failed: ", "")))
            self.pending.append("simulated cells of %s: `cmlbed profile` fails on them (batch "
                                "norm at batch size 1; a cmlbed bug, see section 1)"
                                % ", ".join(sorted(self.failed_profiles)))

    @staticmethod
    def _heat_value(ratio, source):
        """(value drawn, its label) of a ratio in the grid picture."""
        if source == "measured" and ratio.verdict == stats.LOWER_BOUND:
            return ratio.bound, "> %.1fx" % ratio.bound
        if not np.isfinite(ratio.value):
            return math.nan, ""
        value = ratio.value
        text = ("%.1fx" if value < 100 else "%.0fx") % value
        if source == "measured" and ratio.verdict == stats.NO_DIFFERENCE:
            text = "%s\nno diff." % text
        return value, text

    @staticmethod
    def _first_reason(cell):
        """The first reason of the cell's worst run's verdict, shortened."""
        for group in cell["groups"].values():
            for run in group.runs:
                if emulation.verdict(run) == cell["emulation"] and emulation.reasons(run):
                    reason = emulation.reasons(run)[0]
                    return reason if len(reason) <= 160 else reason[:157] + "..."
        return "no reason recorded"

    def _emulation_note(self):
        """How many measured cells' emulation held (docs/explanation/fidelity.md)."""
        measured = len(self.evidence["grid"]) + len(self.unfaithful)
        text = ""
        if self.unfaithful:
            text += ("%d of %d measured cells were not faithful emulations: %s. Their times are "
                     "partly this host's; they are labelled in the cell column and kept out of the "
                     "headline figures and the conclusions. " % (
                         len(self.unfaithful), measured, ", ".join(self.unfaithful)))
        if self.unjudged:
            text += ("%d of %d measured cells were made before cmlbed judged its emulation "
                     "(emulation unknown): %s. " % (len(self.unjudged), measured, ", ".join(self.unjudged)))
        return text + "\n\n" if text else ""

    def _grid_row(self, c, cell, simulated):
        rows, source = c["rows"], c["source"]
        fl, sfl, pipar = rows["fl"], rows["sfl"], rows["pipar"]
        share = pipar["device_tflops"] / (pipar["device_tflops"] + pipar["server_tflops"])
        fl_idle, pipar_idle = per_round(fl, "server_idle_s"), per_round(pipar, "server_idle_s")
        if source == "measured":
            n = sorted({row["n"] for row in rows.values()})
            label = "measured, n = %s" % "/".join(str(k) for k in n)
            if c["legacy"]:
                label += " (made before seeds)"
            if c["emulation"] in ("degraded", "broken"):  # unknown ones are counted below the grid
                label += "; emulation %s" % c["emulation"]
            if c["split_groups"]:
                label += "; seeds chose differently: %s" % "; ".join(
                    "%s %s" % (m, ", ".join("P %s m %s (n %d)" % (g.runs[0].option("model.split"),
                                                                  g.runs[0].option("pipar.micro_batches"),
                                                                  g.n) for g in gs))
                    for m, gs in c["split_groups"].items())
            idle_fmt = lambda mh: ci_text(mh[0], mh[1], "%.3f")  # noqa: E731
        else:
            label = "simulated"
            idle_fmt = lambda mh: fmt(mh[0], "%.3f")  # noqa: E731
        fixed = ", fixed" if c["net"] in self.failed_profiles else ""
        return [c["net"], rate_text(c["rate"]), label,
                self._time_cell(fl, "mean_round_s", source),
                "%s (P %s)" % (self._time_cell(sfl, "mean_round_s", source), self._split(sfl)),
                "%s (P %s, m %s%s)" % (self._time_cell(pipar, "mean_round_s", source),
                                       self._split(pipar), pipar["micro_batches"], fixed),
                "%.0f%%" % (100 * share) if np.isfinite(share) else "-",
                idle_fmt(fl_idle), idle_fmt(pipar_idle),
                self._ratio_cell(c["speedup"], source), self._ratio_cell(c["vs_sfl"], source),
                self._ratio_cell(c["idle"], source, band=False),
                self._split_one(c, cell, simulated), self.cite.cite(*c["entries"])]

    @staticmethod
    def _host_cores_text(simulated):
        """How the simulated cells shared the host's cores, from their stored options."""
        shared = set()
        for s in simulated.values():
            for run in s.runs():
                cores = run.option("plan.host_cores") or "0"
                # `placement` (the default since issue 53): the host's cores, as this host placed them.
                shared.add((int(cores) if cores.isdigit() else -1, run.option("plan.host_slice") or "0ms"))
        if not shared:
            return "no simulated cell read"
        texts = []
        for cores, slice_ in sorted(shared):
            texts.append("each rank on cores of its own (`plan.host_cores = 0`)" if cores == 0 else
                         "the ranks sharing this host's cores (`plan.host_cores = placement`)" if cores < 0 else
                         "the ranks sharing %d cores as in a measured cell (`--plan.host_cores=%d "
                         "--plan.host_slice=%s`)" % (cores, cores, slice_))
        return "; some cells ".join(texts)

    def _split_one(self, c, cell, simulated):
        """PiPar with at least one layer on the device where the cell's own split is 0:
        the simulated -p1 file against the simulated cell's FL."""
        if not c["raw"]:
            return "(the cell's own)"
        p1 = simulated.get((c["net"], c["rate"], "pipar-p1"))
        if p1 is None or not p1.runs() or "simulated" not in cell:
            return "-"
        groups, _ = grouped({"fl": cell["simulated"]["groups"]["fl"].runs, "pipar": p1.runs()})
        row = compare_methods(groups, ("fl", "pipar"), "fl", self.from_round)["pipar"]
        c["p1"] = row
        return "%.3f (P %s, m %s), %s / %s %s" % (
            row["mean_round_s"], row["split"], row["micro_batches"],
            self._sim_ratio_text(row["speedup_ratio"]),
            self._sim_ratio_text(row["server_idle_reduction_ratio"], band=False),
            self.cite.cite(*p1.ok_entries()))

    def _grid_rounds_text(self, cells):
        """The cells' rounds as their runs ran them (kept digests may predate the config)."""
        shown = [c for cell in cells.values() for c in cell.values()]
        counts = sorted({c["mini_batches"] for c in shown if c["mini_batches"] is not None})
        rounds = sorted({r.configured_rounds for c in shown for g in c["groups"].values()
                         for r in g.runs})
        if not counts:
            return "(no cell read yet)"
        text = "%s mini-batches of 32 per device and round, %s rounds" % (
            " or ".join(str(k) for k in counts), " or ".join(str(k) for k in rounds))
        if len(counts) > 1:
            text += " (cells differ: see the mini-batches column of 'The gain taken apart')"
        if self.args.mode == "quick":
            text += " (quick mode: overridden smaller, see the commands)"
        return text
