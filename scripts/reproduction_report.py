#!/usr/bin/env python3
"""The reproduction report (docs/reproduction.md) from the results that
scripts/reproduction.sh left in its results folder: the PiPar grid (measured and
simulated cells, measured-vs-simulated errors), DP on the main job, accuracy, and the
AdaSplit comparison. Every figure comes from results files of this cmlbed through
scripts/cmlbed-report's own definitions (cmlbed_report.summary.compare: round time,
speedup, idle = round wall time minus the union of compute); each run's command, date,
machine and load come from the FILE.run.json the script wrote beside it.

Run it through scripts/reproduction.sh (which passes the settings it ran with); it needs
h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy python3-matplotlib) and
runs itself with /usr/bin/python3 when the python3 on PATH lacks them."""

import os
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
REEXEC_MARK = "CMLBED_REPRODUCTION_REEXEC"


def _ensure_packages():
    missing = None
    for name in ("h5py", "numpy", "matplotlib"):
        try:
            __import__(name)
        except ImportError:
            missing = name
            break
    if missing is None:
        return
    if not os.environ.get(REEXEC_MARK) and os.path.exists(SYSTEM_PYTHON):
        ok = subprocess.run([SYSTEM_PYTHON, "-c", "import h5py, numpy, matplotlib"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if ok:
            os.environ[REEXEC_MARK] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write(
        "reproduction_report.py: error: the Python package '%s' is missing in %s.\n"
        "It needs h5py, numpy and matplotlib. On Debian 12:\n"
        "  apt-get install python3-h5py python3-numpy python3-matplotlib\n"
        "(bash scripts/setup.sh installs them); it uses %s when the python3 on PATH lacks "
        "them.\n" % (missing, sys.executable, SYSTEM_PYTHON))
    sys.exit(3)


if __name__ == "__main__":
    _ensure_packages()

import argparse  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402

import warnings  # noqa: E402

import numpy as np  # noqa: E402

warnings.filterwarnings("ignore", message="All-NaN slice")  # networks without cells

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from cmlbed_report.archive import Archive  # noqa: E402
from cmlbed_report.errors import ReportError  # noqa: E402
from cmlbed_report.c3 import budget_numbers  # noqa: E402
from cmlbed_report.summary import compare, run_numbers  # noqa: E402
from cmlbed_report.tradeoff import comparison_rows  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
METHODS = ("fl", "sfl", "pipar")
# The papers' own figures, quoted (not measured here) with their source.
PIPAR_PAPER = {"speedup": 34.6, "idle_reduction": 64.1,
               "source": "PiPar (Zhang et al., JPDC 193, 2024; arXiv 2302.12803), as quoted "
                         "in ../shared/DESIGN.md"}
ADASPLIT_PAPER = [  # method, accuracy %, GB; CIFAR-10 class-wise, 5 clients, LeNet
    ("adasplit", 91.6, 3.6), ("sfl", 65.8, 29.5), ("sl", 70.9, 26.0)]
# scripts/adasplit-comparison.sh's budgets (10 GB, 5 TFLOP): they do not change the
# figures tabled here (final accuracy, totals), only c3's within-budget columns.
ADASPLIT_BUDGETS = (10e9, 5e12)
ADASPLIT_PAPER_SOURCE = ("AdaSplit (Chopra et al., arXiv 2112.01637), CIFAR-10 class-wise "
                         "split, 5 clients, LeNet; as quoted in ../shared/DESIGN.md")


# --- reading -----------------------------------------------------------------------------
class Citations:
    """Provenance numbers [n] in order of first citation; the appendix lists them."""

    def __init__(self):
        self.entries = []

    def cite(self, *entries):
        refs = []
        for e in entries:
            if e is None:
                continue
            if e.id is None:
                self.entries.append(e)
                e.id = len(self.entries)
            refs.append(e.id)
        return _refs(refs)


def _refs(ids):
    ids = sorted(set(ids))
    if not ids:
        return ""
    # Ranges keep long lists short: [3-5, 9].
    parts, start = [], ids[0]
    for a, b in zip(ids, ids[1:] + [None]):
        if b != a + 1:
            parts.append(str(start) if start == a else "%d-%d" % (start, a))
            start = b
    return "[%s]" % ", ".join(parts)


def grid_files(store, source):
    """{(net, rate, method): Entry} of <results>/<source>/NET-RATEmbit-METHOD.h5."""
    out = {}
    for path in store.glob(os.path.join(source, "*.h5")):
        m = re.match(r"(.+)-(\d+(?:\.\d+)?)mbit-(fl|sfl|pipar)(-p1)?\.h5$", os.path.basename(path))
        if m:
            out[(m.group(1), float(m.group(2)), m.group(3) + (m.group(4) or ""))] = store.entry(path)
    return out


def cell_numbers(entries):
    """compare() of fl, sfl, pipar of one cell (FL the baseline); None if one is missing."""
    runs = [entries.get(m) and entries[m].load() for m in METHODS]
    if any(r is None for r in runs):
        return None
    rows = compare(runs, baseline=runs[0].path)
    return dict(zip(METHODS, rows)), dict(zip(METHODS, runs))


def _settled(run):
    acc = run.rounds["test_accuracy"]
    acc = acc[~np.isnan(acc)][-5:]
    return "range %.3f" % (acc.max() - acc.min()) if len(acc) else "-"


def _number_or_text(value):
    """Sort key of a table cell: numbers by value, before text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _epsilon(run):
    return float(run.attrs["privacy_epsilon"]) if "privacy_epsilon" in run.attrs else None


# --- formatting --------------------------------------------------------------------------
def fmt(value, spec="%.2f", dash="-"):
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return dash
    return spec % value


def rate_text(rate):
    return ("%g" % rate) + " mbit"


def md_table(headings, rows):
    out = ["| " + " | ".join(headings) + " |", "|" + "|".join("---" for _ in headings) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def command_text(entry):
    command = entry.provenance.get("command") or []
    return " ".join(shlex.quote(os.path.relpath(c, ROOT) if c.startswith(ROOT + "/") else c)
                    for c in command)


# --- the report --------------------------------------------------------------------------
class Report:
    def __init__(self, args):
        self.args = args
        self.results = args.results
        self.store = Archive(args.results, args.archive)
        self.doc_dir = os.path.dirname(os.path.abspath(args.doc))
        self.images = args.images
        self.cite = Citations()
        self.parts = []
        self.headline = {}
        self.pending = []

    def image(self, name):
        return os.path.join(self.images, "reproduction-%s.png" % name)

    def link(self, path):
        return os.path.relpath(os.path.abspath(path), self.doc_dir)

    def add(self, text):
        self.parts.append(text)

    # --- PiPar grid ------------------------------------------------------------------------
    def grid(self):
        args = self.args
        networks, rates = args.networks.split(), [float(r) for r in args.rates.split()]
        measured = grid_files(self.store, "measured")
        simulated = grid_files(self.store, "simulated")
        profiles = {n: self.store.entry(os.path.join(self.results, "profiles", n + ".json"))
                    for n in networks}
        cells = {}  # (net, rate) -> {"measured": (rows, runs, entries), "simulated": ...}
        for net in networks:
            for rate in rates:
                for source, files in (("measured", measured), ("simulated", simulated)):
                    entries = {m: files.get((net, rate, m)) for m in METHODS}
                    if any(e is None for e in entries.values()):
                        continue
                    numbers = cell_numbers(entries)
                    if numbers:
                        cells.setdefault((net, rate), {})[source] = numbers + (entries,)
        self.add("## 1. PiPar grid: six networks x five uplink rates x FL / SFL / PiPar\n\n")
        self.add(
            "Settings (`%s`): CIFAR-10-shaped synthetic data (3x32x32, 10 classes), 1 server + "
            "4 devices, batch 32, SGD; each cell overrides `model.name` and the links "
            "(uplink U mbit, downlink 2.5 U, burst 32 KiB). **Devices are paced with "
            "`devices.flops = 2GFLOP/s`** (every device stage lasts its FLOPs / 2e9 s; "
            "`devices.slowdown` is not used), the server runs at this machine's speed "
            "(1 LibTorch thread). Rounds are short, %s, since the round time is what "
            "the grid compares. FL trains the whole model on the device; SFL's split and "
            "PiPar's split and micro-batch count are `auto` (the planner's choice, "
            "docs/planning.md) from the network's profile measured here (`cmlbed profile`, "
            "server + 1 device, 3 repeats after 1 warm-up). A cell is **measured** when "
            "all three methods ran for real (`mpirun -np 5 cmlbed run`, `model.split = "
            "auto` with `--plan.profile`), else **simulated** (`cmlbed plan` for the "
            "choice, then `cmlbed simulate` with that profile and the same device count, %s). "
            "Speedup = FL's "
            "mean round time / PiPar's; server idle reduction = FL's server idle seconds per "
            "round / PiPar's (`cmlbed-report summary`'s definitions, computed by its "
            "code).\n\n" % (args.grid_config, self._grid_rounds_text(), self._host_cores_text(simulated)))
        profile_rows = []
        self.failed_profiles = {}
        self.vs_sfl = {}
        self.pipar_m = {}  # (net, rate) -> PiPar's micro-batch count (text)
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
                "evaluation mode), not in this report. The same limit would hit a pipar run "
                "with micro-batches of one sample on these networks.\n\n"
                % (", ".join(sorted(self.failed_profiles)),
                   next(iter(self.failed_profiles.values()))[0].replace("cmlbed: failed: ", "")))
            self.pending.append("simulated cells of %s: `cmlbed profile` fails on them (batch "
                                "norm at batch size 1; a cmlbed bug, see section 1)"
                                % ", ".join(sorted(self.failed_profiles)))

        # The grid table: one row per cell, the measured figures where there are any.
        rows, best = [], {"speedup": None, "idle": None}
        heat = {"speedup": np.full((len(networks), len(rates)), np.nan),
                "idle": np.full((len(networks), len(rates)), np.nan),
                "speedup_p1": np.full((len(networks), len(rates)), np.nan),
                "idle_p1": np.full((len(networks), len(rates)), np.nan),
                "measured": np.zeros((len(networks), len(rates)), bool)}
        for i, net in enumerate(networks):
            for j, rate in enumerate(rates):
                cell = cells.get((net, rate))
                if not cell:
                    why = "no profile (see below)" if net in self.failed_profiles else "pending"
                    rows.append([net, rate_text(rate), why] + ["-"] * 11)
                    continue
                source = "measured" if "measured" in cell else "simulated"
                numbers, runs, entries = cell[source]
                pipar = numbers["pipar"]
                speedup, idle = pipar["speedup"], pipar["server_idle_reduction"]
                vs_sfl = numbers["sfl"]["mean_round_s"] / pipar["mean_round_s"]
                self.vs_sfl[(net, rate)] = vs_sfl
                self.pipar_m[(net, rate)] = runs["pipar"].option("pipar.micro_batches")
                heat["speedup"][i, j], heat["idle"][i, j] = speedup, idle
                heat["measured"][i, j] = source == "measured"
                device_share = pipar["device_tflops"] / (pipar["device_tflops"] + pipar["server_tflops"])
                refs = self.cite.cite(*entries.values())
                p1_text, p1 = self._split_one(net, rate, runs, simulated, cell)
                if p1 is not None:
                    heat["speedup_p1"][i, j], heat["idle_p1"][i, j] = p1["speedup"], p1["server_idle_reduction"]
                    for key, value in (("speedup_p1", p1["speedup"]), ("idle_p1", p1["server_idle_reduction"])):
                        if np.isfinite(value) and (best.get(key) is None or value > best[key][0]):
                            best[key] = (value, net, rate, p1["source"], p1, p1["runs"])
                rows.append([
                    net, rate_text(rate), source,
                    fmt(numbers["fl"]["mean_round_s"], "%.3f"),
                    "%s (P %s)" % (fmt(numbers["sfl"]["mean_round_s"], "%.3f"), runs["sfl"].option("model.split")),
                    "%s (P %s, m %s%s)" % (fmt(pipar["mean_round_s"], "%.3f"), runs["pipar"].option("model.split"),
                                           runs["pipar"].option("pipar.micro_batches"),
                                           ", fixed" if net in self.failed_profiles else ""),
                    "%.0f%%" % (100 * device_share),
                    fmt(numbers["fl"]["server_idle_pct"], "%.1f"), fmt(pipar["server_idle_pct"], "%.1f"),
                    fmt(speedup, "%.2fx"), fmt(vs_sfl, "%.2fx"), fmt(idle, "%.2fx"), p1_text, refs])
                for key, value in (("speedup", speedup), ("idle", idle)):
                    if value is not None and not math.isnan(value) and (
                            best[key] is None or value > best[key][0]):
                        best[key] = (value, net, rate, source, pipar, runs)
        self.add("### The grid\n\n")
        self.add(md_table(["network", "uplink", "cell", "FL round s", "SFL round s (split)",
                           "PiPar round s (split, micro-batches)", "PiPar device FLOPs share",
                           "FL server idle %", "PiPar server idle %", "PiPar speedup vs FL",
                           "PiPar speedup vs SFL", "server idle reduction vs FL",
                           "PiPar with split >= 1: round s (P, m), speedup / idle reduction vs FL",
                           "runs"], rows))
        self.add("\nSplit 0 means the device sends its raw samples and the server trains the "
                 "whole model: the fastest choice where devices are slow and links fast "
                 "enough, but not split learning, whose point is that raw data stay on the "
                 "device. The last column is the planner's fastest candidate with at least "
                 "one layer on the device, from the same plan table, simulated; where the "
                 "cell's own split is >= 1 it repeats the cell's figures.\n")
        self.add("\n")
        if any(v is not None for v in best.values()):
            self._grid_pictures(networks, rates, heat, cells)
            self.add("![speedup and server idle reduction over the grid](%s)\n\n"
                     % self.link(self.image("grid")))
            self.add("![round time per method against the uplink rate](%s)\n\n"
                     % self.link(self.image("rounds")))
        self.headline["cells"] = (
            sorted((n, r) for (n, r), c in cells.items() if "measured" in c),
            sorted((n, r) for (n, r), c in cells.items() if "measured" not in c),
            [(n, r) for n in networks for r in rates if (n, r) not in cells])
        self._grid_headline(best, heat, networks, rates, cells)
        self._measured_vs_simulated(cells)
        pending = [(n, r) for n in networks for r in rates if (n, r) not in cells]
        if pending:
            self.pending.append(
                "grid cells without results: %s (measured by `scripts/reproduction.sh --job "
                "'measured NET RATE'`, `--full` or the Slurm array; simulated by `--only "
                "profiles,simulate` where the network has a profile)" % ", ".join(
                    "%s/%s" % (n, rate_text(r)) for n, r in pending))
        measured_missing = [c for c in self.args.measured.split()]
        self.add("Cells measured by this report's default run: `%s` (script variable "
                 "MEASURED); the other cells are measured by `scripts/reproduction.sh "
                 "--full` or the Slurm array `jobs/submit-reproduction.sh` "
                 "(`jobs/reproduction.sbatch`, one cell or accuracy group per element), whose "
                 "results this report folds in when they are in `%s` (and keeps in `%s`).\n\n"
                 % (" ".join(measured_missing), self.results, self.args.archive))

    @staticmethod
    def _host_cores_text(simulated):
        """How the simulated cells shared the host's cores, from their stored options."""
        shared = set()
        for entry in simulated.values():
            run = entry.load()
            if run is not None:
                shared.add((int(run.option("plan.host_cores") or 0), run.option("plan.host_slice") or "0ms"))
        if not shared:
            return "no simulated cell read"
        texts = []
        for cores, slice_ in sorted(shared):
            texts.append("each rank on cores of its own (`plan.host_cores = 0`)" if cores == 0 else
                         "the ranks sharing %d cores as in a measured cell (`--plan.host_cores=%d "
                         "--plan.host_slice=%s`)" % (cores, cores, slice_))
        return "; some cells ".join(texts)

    def _split_one(self, net, rate, runs, simulated, cell):
        """PiPar with at least one layer on the device: the auto run itself when its split
        is >= 1, else the simulated -p1 file; compared with the simulated cell's FL."""
        if int(runs["pipar"].option("model.split") or 0) >= 1:
            chosen_runs = runs
            entry = None
        else:
            entry = simulated.get((net, rate, "pipar-p1"))
            if entry is None or entry.load() is None or "simulated" not in cell:
                return "-", None
            chosen_runs = {"fl": cell["simulated"][1]["fl"], "pipar": entry.run}
        fl, pipar = chosen_runs["fl"], chosen_runs["pipar"]
        row = compare([fl, pipar], baseline=fl.path)[1]
        row["runs"] = {"pipar": pipar, "fl": fl}
        row["source"] = "simulated" if entry else ("measured" if "measured" in cell else "simulated")
        text = "%.3f (P %s, m %s), %.2fx / %.2fx%s" % (
            row["mean_round_s"], pipar.option("model.split"), pipar.option("pipar.micro_batches"),
            row["speedup"], row["server_idle_reduction"],
            " simulated %s" % self.cite.cite(entry) if entry else " (the cell's own)")
        return text, row

    def _grid_rounds_text(self):
        from configparser import ConfigParser
        c = ConfigParser(interpolation=None)
        c.read(os.path.join(ROOT, self.args.grid_config))
        text = "%s mini-batches per device and round, %s rounds" % (
            c.get("train", "local_iterations", fallback="?"),
            c.get("experiment", "rounds", fallback="?"))
        if self.args.mode == "quick":
            text += " (quick mode: overridden smaller, see the commands)"
        return text

    def _grid_pictures(self, networks, rates, heat, cells):
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(12, 0.55 * len(networks) + 2.2))
        for ax, key, title in ((axes[0], "speedup", "PiPar speedup of the round time vs FL"),
                               (axes[1], "idle", "server idle reduction vs FL (per round)")):
            values = heat[key]
            shown = np.log10(np.where(np.isfinite(values) & (values > 0), values, np.nan))
            im = ax.imshow(shown, cmap="viridis", aspect="auto")
            lo, hi = np.nanmin(shown), np.nanmax(shown)
            for i in range(len(networks)):
                for j in range(len(rates)):
                    v = values[i, j]
                    if np.isfinite(v):
                        dark = hi > lo and (shown[i, j] - lo) / (hi - lo) < 0.5
                        ax.text(j, i, ("%.1fx" if v < 100 else "%.0fx") % v + (
                            "\nmeasured" if heat["measured"][i, j] else ""),
                            ha="center", va="center", fontsize=7,
                            color="white" if dark else "black")
            ax.set_xticks(range(len(rates)))
            ax.set_xticklabels(["%g" % r for r in rates])
            ax.set_yticks(range(len(networks)))
            ax.set_yticklabels(networks)
            ax.set_xlabel("uplink mbit/s (downlink 2.5x)")
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, label="log10 of the factor")
        fig.tight_layout()
        save(fig, self.image("grid"))

        cols = min(3, len(networks))
        rows_n = (len(networks) + cols - 1) // cols
        fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.2 * rows_n), squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for k, net in enumerate(networks):
            ax = axes[k // cols][k % cols]
            for method in METHODS:
                for source, style in (("simulated", "-"), ("measured", "o")):
                    xs, ys = [], []
                    for rate in rates:
                        cell = cells.get((net, rate), {}).get(source)
                        if cell:
                            xs.append(rate)
                            ys.append(cell[0][method]["mean_round_s"])
                    if xs:
                        ax.plot(xs, ys, style, color=colours[method], ms=5,
                                mfc="none" if source == "measured" else None,
                                label="%s (%s)" % (method, source))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(net, fontsize=9)
            ax.set_xlabel("uplink mbit/s")
            ax.set_ylabel("mean round s")
            ax.grid(lw=0.3, alpha=0.5, which="both")
            if k == 0:
                ax.legend(fontsize=6)
        for k in range(len(networks), rows_n * cols):
            axes[k // cols][k % cols].axis("off")
        fig.tight_layout()
        save(fig, self.image("rounds"))

    def _grid_headline(self, best, heat, networks, rates, cells):
        if best["speedup"] is None:
            self.add("No grid cell has results yet: run `scripts/reproduction.sh`.\n\n")
            return
        s, i = best["speedup"], best["idle"]
        self.headline["speedup"] = s
        self.headline["idle"] = i
        self.add("### Maxima over the grid, against the paper\n\n")
        self.add(md_table(
            ["figure", "ours (max over the grid)", "where", "PiPar paper"],
            [["speedup of training (round time) vs FL", "%.1fx" % s[0],
              "%s, uplink %s (%s; PiPar split %s, %s micro-batches)" % (
                  s[1], rate_text(s[2]), s[3], s[5]["pipar"].option("model.split"),
                  s[5]["pipar"].option("pipar.micro_batches")), "%.1fx" % PIPAR_PAPER["speedup"]],
             ["server idle time reduction vs FL", "%.1fx" % i[0],
              "%s, uplink %s (%s; PiPar server idle %.1f%%)" % (
                  i[1], rate_text(i[2]), i[3], i[4]["server_idle_pct"]),
              "%.1fx" % PIPAR_PAPER["idle_reduction"]]]))
        if best.get("speedup_p1"):
            sp, ip = best["speedup_p1"], best["idle_p1"]
            self.headline["speedup_p1"], self.headline["idle_p1"] = sp, ip
            self.add("| same, PiPar with split >= 1 (raw data stay on the device) | %.1fx | %s, uplink "
                     "%s (%s; split %s, %s micro-batches) | |\n" % (
                         sp[0], sp[1], rate_text(sp[2]), sp[3], sp[4]["runs"]["pipar"].option("model.split"),
                         sp[4]["runs"]["pipar"].option("pipar.micro_batches")))
            self.add("| server idle reduction, split >= 1 | %.1fx | %s, uplink %s (%s) | |\n"
                     % (ip[0], ip[1], rate_text(ip[2]), ip[3]))
        self.add("\nThe paper's figures are quoted from %s, not measured here.\n\n"
                 % PIPAR_PAPER["source"])
        measured_vals = heat["speedup"][heat["measured"]]
        if measured_vals.size:
            k = np.nanargmax(np.where(heat["measured"], heat["speedup"], np.nan))
            self.add("Among measured cells only, the largest speedup is %.1fx (%s, uplink %s) "
                     "and the largest server idle reduction %.1fx.\n\n" % (
                         np.nanmax(measured_vals), networks[k // len(rates)],
                         rate_text(rates[k % len(rates)]),
                         np.nanmax(heat["idle"][heat["measured"]])))
        self._why(heat, networks, rates, cells)

    def _why(self, heat, networks, rates, cells):
        """What the data say about where the gain is large, in sentences built from it."""
        lines = []
        by_net = np.nanmax(heat["speedup"], axis=1)
        order = np.argsort(-np.nan_to_num(by_net, nan=-1))
        flops = {}
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if data:
                flops[net] = sum(l["flops_per_sample"] for l in data["ranks"][0]["layers"])
        ranked = [networks[k] for k in order if np.isfinite(by_net[k]) and networks[k] in flops]
        heavy_first = (len(ranked) >= 2 and
                       ranked[0] in sorted(flops, key=flops.get, reverse=True)[:max(1, len(flops) // 2)])
        heading = "Heavy networks gain most." if heavy_first else "Gain per network."
        lines.append("- **" + heading + "** Largest speedup per network: " + ", ".join(
            "%s %.1fx" % (networks[k], by_net[k]) for k in order if np.isfinite(by_net[k])) +
            ". FL makes each device train the whole model at 2 GFLOP/s; PiPar's planner "
            "leaves the device a thin first part (see the device FLOPs share column) and "
            "the server, %s faster than a device, does the rest. The ceiling of the gain "
            "is roughly the server/device speed ratio of the profile table, reached when "
            "the links are fast enough that the server's compute bounds PiPar's round."
            % self._speed_ratio_text(networks))
        trend = []
        for k, net in enumerate(networks):
            row = heat["speedup"][k]
            ok = np.isfinite(row)
            if ok.sum() >= 2:
                lo, hi = row[ok][0], row[ok][-1]
                trend.append((net, lo, hi))
        if trend:
            thin = [t for t in trend if t[1] > t[2]]
            lines.append(
                "- **Link rate.** Speedup at the thinnest vs the fastest uplink: " + ", ".join(
                    "%s %.1fx -> %.1fx" % t for t in trend) + ". " +
                ("For %s the gain is larger on thin links: FL sends the whole model up and "
                 "down every round, which the thin link makes long, while PiPar's "
                 "activations are small next to the model. " % ", ".join(t[0] for t in thin)
                 if thin else "") +
                ("For %s the gain grows with the rate: PiPar's per-sample activations "
                 "outweigh the model's bytes there, so a faster link helps PiPar more than "
                 "FL. " % ", ".join(t[0] for t in trend if t[1] <= t[2])
                 if len(thin) < len(trend) else ""))
        idle_by_net = np.nanmax(heat["idle"], axis=1)
        lines.append(
            "- **Server idle.** In FL the server only averages: its idle time is nearly the "
            "whole round. The reduction is FL's round divided by PiPar's remaining server "
            "idle, so it is largest where PiPar keeps the server busiest (server idle % "
            "column), not where the round is shortest; per network: " + ", ".join(
                "%s %.1fx" % (networks[k], idle_by_net[k]) for k in range(len(networks))
                if np.isfinite(idle_by_net[k])) + ". A ratio to a small remainder moves a lot "
            "with small changes of that remainder.")
        losing = [(networks[a], rates[b], heat["speedup"][a, b]) for a in range(len(networks))
                  for b in range(len(rates)) if np.isfinite(heat["speedup"][a, b]) and heat["speedup"][a, b] < 1]
        if losing:
            lines.append(
                "- **Where PiPar loses to FL:** %s. Light networks (few FLOPs per sample) "
                "leave FL little device work to save, while PiPar still sends every "
                "activation and gradient and the server runs every device's micro-batches "
                "one after another." % ", ".join("%s at %s (%.2fx)" % (n, rate_text(r), v)
                                                   for n, r, v in losing))
        slower = [(n, r, v) for (n, r), v in sorted(self.vs_sfl.items()) if v < 1]
        # With one micro-batch PiPar runs SFL's schedule: a difference is the machine's load.
        alike = [(n, r, v) for n, r, v in slower if self.pipar_m.get((n, r)) == "1"]
        slower = [c for c in slower if c not in alike]
        if alike:
            lines.append(
                "- **PiPar with one micro-batch** (the planner's choice) runs SFL's schedule, so "
                "its rounds differ from SFL's only by this machine's load: %s." %
                ", ".join("%s at %s (%.2fx vs SFL)" % (n, rate_text(r), v) for n, r, v in alike))
        if slower:
            lines.append(
                "- **Where PiPar is slower than SFL:** %s. PiPar's server is busy there "
                "almost the whole round (server idle column): the server bounds the round, "
                "and PiPar runs m smaller stages per mini-batch where SFL runs one, which on "
                "this CPU takes longer in all (per-layer call costs do not shrink with the "
                "micro-batch). %s" % (
                    ", ".join("%s at %s (%.2fx)" % (n, rate_text(r), v) for n, r, v in slower),
                    "These cells use a fixed m (no profile could be made for these networks); "
                    "the planner, given a profile, weighs this cost."
                    if all(n in self.failed_profiles for n, _, _ in slower) else ""))
        lines.append(
            "- **Why ours differs from 34.6x / 64.1x.** Our speedup is capped by this "
            "machine's server, one CPU core at the speeds of the profile table, against "
            "devices at 2 GFLOP/s; a GPU server (or slower devices) raises the cap in "
            "proportion. Our rounds are short (a few mini-batches), which weighs FL's "
            "per-round model exchange more than a full epoch would. The grid's devices "
            "are identical and paced exactly; the paper's testbed is not modelled here. "
            "PiPar's choices come from our planner (it simulates the real schedule, with "
            "one server serving every device), not from the authors' closed form.")
        self.add("### Where the gain is large, and why\n\n" + "\n".join(lines) + "\n\n")

    def _speed_ratio_text(self, networks):
        ratios = []
        for net in networks:
            data = self.store.read_json(os.path.join(self.results, "profiles", net + ".json"))
            if not data:
                continue
            server = next(r for r in data["ranks"] if r["role"] == "server")
            batch = data["batch_sizes"][-1]
            seconds = sum(l["forward_s"][-1] + l["backward_s"][-1] for l in server["layers"])
            flops = 3 * batch * sum(l["flops_per_sample"] for l in server["layers"])
            ratios.append(flops / seconds / 2e9)
        if not ratios:
            return "(no profile)"
        if round(min(ratios)) == round(max(ratios)):
            return "%.0fx" % ratios[0]
        return "%.0f-%.0fx" % (min(ratios), max(ratios))

    def _measured_vs_simulated(self, cells):
        rows, errors, points, busy = [], [], [], []
        for (net, rate), cell in sorted(cells.items()):
            if "measured" not in cell or "simulated" not in cell:
                continue
            m_numbers, m_runs, m_entries = cell["measured"]
            s_numbers, s_runs, s_entries = cell["simulated"]
            for method in METHODS:
                m, s = m_numbers[method], s_numbers[method]
                error = s["mean_round_s"] / m["mean_round_s"] - 1
                choice = lambda runs: ("P %s" % runs[method].option("model.split")) + (  # noqa: E731
                    ", m %s" % runs[method].option("pipar.micro_batches") if method == "pipar" else "")
                differs = method != "fl" and choice(m_runs) != choice(s_runs)
                same = "" if method == "fl" else (
                    "%s / %s" % (choice(m_runs), choice(s_runs)) if differs else choice(m_runs))
                per_round = lambda row, key: row[key] / row["rounds"]  # noqa: E731
                cell_busy = (per_round(m, "server_busy_s"), per_round(s, "server_busy_s"),
                             per_round(m, "device_busy_s"), per_round(s, "device_busy_s"))
                # A pair with different choices (a cell measured at its config's fixed
                # split, simulated at the planner's) predicts another run: shown, not counted.
                if not differs:
                    errors.append((abs(error), error, net, rate, method))
                    points.append((m["mean_round_s"], s["mean_round_s"], method))
                    busy.append(cell_busy)
                rows.append([net, rate_text(rate), method, same, "%.3f" % m["mean_round_s"],
                             "%.3f" % s["mean_round_s"],
                             "(other choice)" if differs else "%+.1f%%" % (100 * error),
                             "%.2f / %.2f" % cell_busy[:2], "%.2f / %.2f" % cell_busy[2:],
                             "%.1f / %.1f" % (m["server_idle_pct"], s["server_idle_pct"]),
                             self.cite.cite(m_entries[method], s_entries[method])])
        speedups = [(cell["measured"][0]["pipar"]["speedup"], cell["simulated"][0]["pipar"]["speedup"], net, rate)
                    for (net, rate), cell in sorted(cells.items())
                    if "measured" in cell and "simulated" in cell]
        self.add("### Measured against simulated\n\n")
        if not rows:
            self.add("No cell is both measured and simulated yet.\n\n")
            return
        self.add(md_table(["network", "uplink", "method", "choice (measured / simulated)",
                           "measured round s", "simulated round s", "error",
                           "server busy s/round measured / simulated",
                           "device busy s/round measured / simulated",
                           "server idle % measured / simulated", "runs"], rows))
        abs_errors = sorted(e[0] for e in errors)
        worst = max(errors)
        self.headline["sim_error"] = (float(np.median(abs_errors)), worst)
        negative = sum(1 for e in errors if e[1] < 0)
        server_excess = 100 * (np.median([b[0] / b[1] for b in busy if b[1] > 0.05]) - 1)
        self.add("\nError = simulated / measured - 1 of the mean round time, for pairs that ran "
                 "the same split and micro-batches (a row marked '(other choice)' compares a cell "
                 "measured at its config's fixed choice with the planner's, and is not counted). "
                 "Median |error| "
                 "%.1f%%, largest %+.1f%% (%s, %s, %s); %d of %d predictions are shorter than "
                 "the measured round. The busy columns say where: the measured runs put 5 ranks on "
                 "this machine's cores beside whatever else ran (load in the provenance; the "
                 "simulation shares the cores among the 5 ranks only), and the "
                 "server's stages took %.0f%% %s than its profile, measured alone, says "
                 "(median over these rows with server work); the devices' paced stages "
                 "overran their FLOPs / 2 GFLOP/s by a median %.0f%% (pacing can only sleep "
                 "the rest of a stage: when the real work on a shared core takes longer, "
                 "the stage does too). How close the simulator comes when a profile and its "
                 "run are taken on a quiet machine: docs/prediction-accuracy.md.\n\n" % (
                                               100 * float(np.median(abs_errors)),
                                               100 * worst[1], worst[2], rate_text(worst[3]), worst[4],
                                               negative, len(errors),
                                               abs(server_excess), "longer" if server_excess >= 0 else "less time",
                                               100 * (np.median([b[2] / b[3] for b in busy if b[3] > 0.05]) - 1)))
        if speedups:
            self.add("PiPar's speedup vs FL, measured / simulated, on the same cells: %s. The "
                     "simulated grid's speedups are those of a machine where the server's stages "
                     "run as profiled; on this machine, as loaded then, the measured ones are "
                     "%s.\n\n" % (
                         ", ".join("%s/%s %.2fx / %.2fx" % (n, rate_text(r), m, sm) for m, sm, n, r in speedups),
                         "lower in %d of %d cells (higher in the others)" % (
                             sum(1 for m, sm, _, _ in speedups if m < sm), len(speedups))))
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5, 4.4))
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for method in METHODS:
            xs = [p[0] for p in points if p[2] == method]
            ys = [p[1] for p in points if p[2] == method]
            ax.plot(xs, ys, "o", color=colours[method], label=method, ms=5)
        lo = min(min(p[0], p[1]) for p in points) * 0.8
        hi = max(max(p[0], p[1]) for p in points) * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured mean round s")
        ax.set_ylabel("simulated mean round s")
        ax.set_title("simulator vs runtime, grid cells measured here", fontsize=9)
        ax.grid(lw=0.3, alpha=0.5, which="both")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save(fig, self.image("measured-vs-simulated"))
        self.add("![measured vs simulated round time](%s)\n\n"
                 % self.link(self.image("measured-vs-simulated")))

    # --- DP on the main job ------------------------------------------------------------
    def dp(self):
        self.add("## 2. Differential privacy: its cost, and PiPar's gain with DP on\n\n")
        entries = {}
        for m in METHODS:
            for dp in ("off", "on"):
                # Pass 1, then passes 2, 3, ... (the table lists them in this order).
                paths = (self.store.glob(os.path.join("dp", "main-%s-dp%s.h5" % (m, dp))) +
                         self.store.glob(os.path.join("dp", "main-%s-dp%s-r*.h5" % (m, dp))))
                entries[(m, dp)] = [e for e in map(self.store.entry, paths) if e.load() is not None]
        self.add(
            "The main job's settings (`configs/quickstart/{fl,sfl,pipar}.ini`: Fashion-MNIST, "
            "VGG-5 split 4, 1 server + 3 devices, devices `slowdown = 4`, 10/25 mbit, %s), "
            "each method with DP off and on. DP on: `%s` for sfl and pipar (each sample's "
            "activation clipped and noised on the device, inside its forward stage); `%s` for "
            "fl (DP-FedAvg: clipped updates, noise on the average) (docs/privacy.md). "
            "These configs pace devices with `devices.slowdown` (a stage lasts 4x what it "
            "took here), which keeps DP's own work in the device's time (`devices.flops` "
            "would pace it away, as it counts only the layers' FLOPs), but makes every time "
            "follow this machine's load: the script runs the six configurations in several "
            "passes, the second in reverse order, and the table gives medians over the "
            "passes with every pass's value.\n\n"
            % ("shortened for the quick mode" if self.args.mode == "quick" else "3 rounds of 10 mini-batches",
               self.args.dp_split, self.args.dp_fl))
        if not all(entries.values()):
            missing = ["%s DP %s" % k for k, v in entries.items() if not v]
            self.add("Not run yet (%s): `scripts/reproduction.sh --only dp,report`.\n\n"
                     % ", ".join(missing))
            self.pending.append("DP on the main job (`scripts/reproduction.sh --only dp,report`)")
            return
        med = {}
        rows = []
        for method in METHODS:
            for dp in ("off", "on"):
                nums = [run_numbers(e.run) for e in entries[(method, dp)]]
                rounds = [n["mean_round_s"] for n in nums]
                busy = [n["device_busy_s"] / n["rounds"] for n in nums]
                idle = [n["server_idle_s"] / n["rounds"] for n in nums]
                med[(method, dp)] = {"round": float(np.median(rounds)), "busy": float(np.median(busy)),
                                     "idle": float(np.median(idle)),
                                     "idle_pct": float(np.median([n["server_idle_pct"] for n in nums]))}
                accs = sorted({round(n["final_accuracy"], 4) for n in nums})
                eps = _epsilon(entries[(method, dp)][0].run)
                off_busy = med[(method, "off")]["busy"]
                rows.append([method, dp, "%.3f (%s)" % (med[(method, dp)]["round"], ", ".join("%.2f" % r for r in rounds)),
                             "%.3f (%s)" % (med[(method, dp)]["busy"], ", ".join("%.2f" % b for b in busy)),
                             "-" if dp == "off" else "%+.1f%%" % (100 * (med[(method, dp)]["busy"] / off_busy - 1)),
                             "%.1f" % med[(method, dp)]["idle_pct"], " / ".join("%.4f" % a for a in accs),
                             fmt(eps, "%.2f"), self.cite.cite(*entries[(method, dp)])])
        self.add(md_table(["method", "DP", "mean round s, median (pass 1, 2, ...)",
                           "device busy s per round, median (each pass)", "device busy vs DP off",
                           "server idle %", "final accuracy", "epsilon (delta 1e-5)", "runs"], rows))
        passes = {}
        for dp in ("off", "on"):
            fl_r = [run_numbers(e.run)["mean_round_s"] for e in entries[("fl", dp)]]
            sfl_r = [run_numbers(e.run)["mean_round_s"] for e in entries[("sfl", dp)]]
            pp_r = [run_numbers(e.run)["mean_round_s"] for e in entries[("pipar", dp)]]
            n = min(len(fl_r), len(sfl_r), len(pp_r))
            passes[dp] = [(fl_r[k] / pp_r[k], sfl_r[k] / pp_r[k]) for k in range(n)]
        spread = max((max(v) / min(v) - 1) for v in
                     ([run_numbers(e.run)["device_busy_s"] for e in es] for es in entries.values())
                     if min(v) > 0)
        gain = {}
        for dp in ("off", "on"):
            p = med[("pipar", dp)]
            gain[dp] = (med[("fl", dp)]["round"] / p["round"], med[("sfl", dp)]["round"] / p["round"],
                        med[("fl", dp)]["idle"] / p["idle"] if p["idle"] > 0 else math.nan)
        self.headline["dp"] = gain
        holds = lambda b: "holds" if b > 1 else "does not hold"  # noqa: E731
        self.add(
            "\nFrom the medians: PiPar's speedup vs FL %.2fx with DP off, %.2fx with DP on (the "
            "gain %s); vs SFL %.2fx off, %.2fx on (%s). Server idle reduction vs FL: %.2fx "
            "off, %.2fx on. Pass by pass (each pass's own FL, SFL and PiPar runs): vs FL %s "
            "with DP off, %s with DP on; vs SFL %s off, %s on. What DP costs would show in "
            "the devices' busy time (per-sample norms and one normal draw per activation "
            "element, inside the forward stage; for fl the update's clipping once per round), "
            "but the passes of one configuration differ by up to %.0f%% in device busy "
            "time, more than DP changes it: on this shared machine DP's cost is below what "
            "these runs resolve, and the table's 'vs DP off' column is mostly load. Accuracy after these "
            "3 short rounds: at this noise (its norm is sigma x sqrt(elements) = 0.5 x "
            "sqrt(3,136) = 28x the clipped activation's at VGG-5 split 4) the split methods "
            "stay near chance, and so does fl (noise of "
            "0.1 per weight on the average of 3 devices); section 3 trains longer with less "
            "noise. Epsilon is the conservative record-level (split) or device-level (fl) "
            "figure the run recorded (docs/privacy.md); the two are not the same "
            "guarantee.\n\n"
            % (gain["off"][0], gain["on"][0], holds(gain["on"][0]),
               gain["off"][1], gain["on"][1], holds(gain["on"][1]), gain["off"][2], gain["on"][2],
               ", ".join("%.2fx" % g[0] for g in passes["off"]), ", ".join("%.2fx" % g[0] for g in passes["on"]),
               ", ".join("%.2fx" % g[1] for g in passes["off"]), ", ".join("%.2fx" % g[1] for g in passes["on"]),
               100 * spread))
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        x = np.arange(len(METHODS))
        for ax, key, label in ((axes[0], "round", "mean round s (median over passes)"),
                               (axes[1], "busy", "device busy s per round (median)")):
            for k, (dp, colour) in enumerate((("off", "#4C72B0"), ("on", "#DD8452"))):
                vals = [med[(m, dp)][key] for m in METHODS]
                bars = ax.bar(x + (k - 0.5) * 0.38, vals, 0.38, color=colour, label="DP " + dp)
                ax.bar_label(bars, ["%.2f" % v for v in vals], fontsize=7)
            ax.set_xticks(x)
            ax.set_xticklabels(METHODS)
            ax.set_ylabel(label)
            ax.legend(fontsize=8)
        fig.suptitle("main job, DP off and on", fontsize=9)
        fig.tight_layout()
        save(fig, self.image("dp"))
        self.add("![round time with DP off and on](%s)\n\n" % self.link(self.image("dp")))

    # --- accuracy -------------------------------------------------------------------------
    def accuracy(self):
        self.add("## 3. Accuracy: FL, SFL and PiPar with DP off and on\n\n")
        args = self.args
        self.add(
            "`%s`: 1 server + 3 devices, iid shares, batch 32, SGD lr 0.05, 10 mini-batches "
            "per device and round, %s rounds, split 2, PiPar with 4 micro-batches; fast "
            "unpaced links (time is not measured here). Networks: %s; data: %s "
            "(synthetic = CIFAR-shaped 3x32x32). DP on: `%s` for sfl and pipar, `%s` for "
            "fl. That is far less noise than in section 2: at section 2's settings the "
            "noise's norm would be 14x (MobileNetV3-Small) to 40x (VGG-5) the clipped "
            "activation's at split 2, and in section 2 every method stays near chance; here the noise's norm is 0.3x to 2x the "
            "signal's, by method and network (worked out in scripts/reproduction.sh), and "
            "the epsilon the runs record "
            "is too large to protect anything. It shows whether the methods still agree "
            "when noise enters their training, not a useful privacy level.\n\n"
            % (args.accuracy_config, args.accuracy_rounds, args.accuracy_networks,
               args.accuracy_datasets, args.dp_accuracy_split, args.dp_accuracy_fl))
        groups, rows, missing_groups = [], [], []
        for dataset in args.accuracy_datasets.split():
            for net in args.accuracy_networks.split():
                entries = {(m, dp): self.store.entry(os.path.join(
                               self.results, "accuracy", "%s-%s-%s-dp%s.h5" % (dataset, net, m, dp)))
                           for m in METHODS for dp in ("off", "on")}
                present = {k: e for k, e in entries.items() if e.load() is not None}
                if len(present) < len(entries):
                    missing_groups.append((dataset, net, len(entries) - len(present)))
                if not present:
                    continue
                groups.append((dataset, net, present))
                for dp in ("off", "on"):
                    runs = {m: present.get((m, dp)) for m in METHODS}
                    if not any(runs.values()):
                        continue
                    nums = {m: run_numbers(e.run) for m, e in runs.items() if e}
                    finals = [nums[m]["final_accuracy"] for m in nums]
                    rows.append([dataset, net, dp] + [
                        ("%.4f (%s; %d rounds)" % (nums[m]["final_accuracy"], _settled(runs[m].run),
                                                   nums[m]["rounds"])) if m in nums else "not run"
                        for m in METHODS] + ["%.4f" % (max(finals) - min(finals)),
                                             fmt(_epsilon(runs["pipar"].run) if runs["pipar"] else None, "%.3g"),
                                             self.cite.cite(*[e for e in runs.values() if e])])
        if not rows:
            self.add("**Not run yet.** These runs take about %s on a 2-core machine; they are "
                     "not part of the default run. Produce them with `scripts/reproduction.sh "
                     "--only accuracy,report` (or `--full`), or on a cluster with "
                     "`jobs/submit-reproduction.sh` (one array element per dataset and "
                     "network), then `scripts/reproduction.sh --report-only`.\n\n"
                     % "an hour")
            self.pending.append("accuracy (`scripts/reproduction.sh --only accuracy,report`)")
            return
        if missing_groups:
            text = ", ".join("%s x %s (%d of 6 runs missing: `scripts/reproduction.sh --job "
                             "'accuracy %s %s'`)" % (d, n, k, d, n) for d, n, k in missing_groups)
            self.add("Not run yet: %s; or all of them with the Slurm array "
                     "(`jobs/submit-reproduction.sh`), then `scripts/reproduction.sh "
                     "--report-only`.\n\n" % text)
            self.pending.append("accuracy groups %s" % ", ".join(
                "%s x %s" % (d, n) for d, n, _ in missing_groups))
        self.add(md_table(["data", "network", "DP", "FL final accuracy (last 5 rounds' range)",
                           "SFL", "PiPar", "spread (max - min final)", "pipar's epsilon",
                           "runs"], rows))
        self.add("\nThe range in brackets is max - min of the last five rounds' accuracy: "
                 "small means settled.\n")
        # A task every method solves exactly says that they agree, not how well they learn.
        solved = []
        for dataset, net, present in groups:
            finals = [run_numbers(e.run)["final_accuracy"] for (m, dp), e in present.items() if dp == "off"]
            if finals and min(finals) >= 0.99:
                solved.append("%s x %s" % (dataset, net))
        if solved:
            self.add("\nWith DP off every method ends at 99-100%% accuracy on %s: the samples "
                     "(per-class prototype patterns plus shifts and noise, README: Data) are separable, "
                     "so these groups show that the methods end alike and how DP's noise moves "
                     "each, not how hard a task they learn; Fashion-MNIST is the test of that.\n"
                     % ", ".join(solved))
        self.add(
            "\nFL and SFL share FedAvg's mathematics for a network without batch norm "
            "(VGG-5 here); PiPar is SFL with micro-batches whose gradients accumulate, the same "
            "step, except that batch-norm layers (MobileNetV3) see micro-batch statistics. "
            "With batch norm FL and SFL are not the same computation either (README: SplitFed "
            "is FedAvg's mathematics without batch norm), so for MobileNetV3 the table shows "
            "how far apart the three end, not a check of equality. Summing a mini-batch's gradient from micro-batches changes the order of the "
            "floating-point sums, and %s SGD steps carry such last-bit differences into "
            "small differences of accuracy. With DP on, pipar draws its noise per "
            "micro-batch (the noise's seed includes the micro-batch), so its noise is "
            "another sample of the same distribution as sfl's. "
            "With DP on, fl uses another mechanism (DP-FedAvg on the averaged model) than "
            "sfl and pipar (noise on every uploaded activation), so FL's accuracy with DP is "
            "not expected to match the split methods'; sfl and pipar share theirs.\n\n"
            % self._accuracy_steps())
        from cmlbed_report.plotting import pyplot, save
        plt = pyplot()
        fig, axes = plt.subplots(1, len(groups), figsize=(4.3 * len(groups), 3.6), squeeze=False)
        colours = {"fl": "#C44E52", "sfl": "#4C72B0", "pipar": "#55A868"}
        for ax, (dataset, net, present) in zip(axes[0], groups):
            for (method, dp), e in sorted(present.items()):
                r = e.run.rounds
                ok = ~np.isnan(r["test_accuracy"])
                ax.plot(r["round"][ok], r["test_accuracy"][ok], "-" if dp == "off" else "--",
                        color=colours[method], label="%s, DP %s" % (method, dp))
            ax.set_title("%s, %s" % (net, dataset), fontsize=9)
            ax.set_xlabel("round")
            ax.set_ylabel("test accuracy")
            ax.grid(lw=0.3, alpha=0.5)
        axes[0][0].legend(fontsize=6)
        fig.tight_layout()
        save(fig, self.image("accuracy"))
        self.add("![accuracy per round](%s)\n\n" % self.link(self.image("accuracy")))

    def _accuracy_steps(self):
        from configparser import ConfigParser
        c = ConfigParser(interpolation=None)
        c.read(os.path.join(ROOT, self.args.accuracy_config))
        try:
            return str(int(self.args.accuracy_rounds) * c.getint("train", "local_iterations"))
        except (ValueError, Exception):
            return "the"

    # --- AdaSplit ------------------------------------------------------------------------
    def _adasplit_rows(self, names):
        """(rows, entries) of the AdaSplit comparison's runs adasplit/NAME.h5 that exist:
        `cmlbed-report c3`'s numbers (tradeoff.comparison_rows), as adasplit-comparison.sh
        tables them."""
        entries = [self.store.entry(os.path.join(self.results, "adasplit", n + ".h5")) for n in names]
        entries = [e for e in entries if e.load() is not None]
        runs = [e.run for e in entries]
        budgets = [budget_numbers(r, ADASPLIT_BUDGETS[0], ADASPLIT_BUDGETS[1]) for r in runs]
        return comparison_rows(runs, budgets), entries

    def adasplit(self):
        self.add("## 4. AdaSplit: comparison table, kappa and eta sweeps\n\n")
        methods = self.args.adasplit_methods.split()
        rows, entries = self._adasplit_rows(methods)
        command = "`scripts/reproduction.sh --only adasplit,report`"
        if not rows:
            self.add("Not run yet: %s (or the Slurm array) runs the comparison's runs, "
                     "`scripts/adasplit-comparison.sh --list`.\n\n" % command)
            self.pending.append("the AdaSplit comparison (%s, about 30 minutes)" % command)
            return
        ours = {row["method"]: (row, e) for row, e in zip(rows, entries)}
        first = entries[0].run
        self.add(
            "Configs `configs/adasplit/{%s}.ini` (%s): 1 server + 5 devices, Fashion-MNIST "
            "with 2 classes per device, LeNet split after pool1, Adam, %d rounds of %s "
            "mini-batches, each device scored on its own classes, 10 mbit up / 25 mbit down; "
            "run by %s, one run per line of `scripts/adasplit-comparison.sh --list`. Numbers "
            "are `cmlbed-report c3`'s (docs/c3-accounting.md): accuracy of the last "
            "evaluated round (per-device runs: the devices' accuracies weighted by their test "
            "samples), bytes over all links and rounds, the devices' training FLOPs, the mean "
            "round wall time and the server's idle share. The authors' figures: %s.\n\n"
            % (",".join(methods), "the runs' settings as configured" if self.args.mode != "quick"
               else "quick mode: overridden smaller, see the commands",
               first.configured_rounds, first.option("train.local_iterations") or "?", command,
               ADASPLIT_PAPER_SOURCE))
        paper = {m: (a, gb) for m, a, gb in ADASPLIT_PAPER}
        table = []
        for method in ("adasplit", "sfl", "sl", "pipar", "fl"):
            if method not in ours:
                continue
            row, e = ours[method]
            p = paper.get(method)
            table.append([method, fmt(100 * row["final_accuracy"], "%.1f%%"), fmt(row["total_gb"], "%.4f"),
                          fmt(row["client_tflops"], "%.4f"), fmt(row["mean_round_s"], "%.3f"),
                          fmt(row["server_idle_pct"], "%.1f"),
                          "%.1f%%" % p[0] if p else "not reported", "%.1f" % p[1] if p else "-",
                          self.cite.cite(e)])
        self.add(md_table(["method", "accuracy (ours)", "GB up+down (ours)", "client TFLOPs (ours)",
                           "mean round s (ours)", "server idle % (ours)", "accuracy (authors)",
                           "GB (authors)", "run"], table))
        if "adasplit" in ours and "sfl" in ours:
            ratio = ours["sfl"][0]["total_gb"] / ours["adasplit"][0]["total_gb"]
            self.headline["adasplit_bytes"] = (ratio, paper["sfl"][1] / paper["adasplit"][1])
            by_accuracy = sorted((m for m in ours if m in paper),
                                 key=lambda m: -ours[m][0]["final_accuracy"])
            self.add(
                "\nBytes: AdaSplit sends %.1fx fewer bytes than SplitFed here, the authors "
                "%.1fx fewer: no gradients go down, eta of the N devices send per iteration "
                "of the global phase, and nothing is sent in the local phase. The totals differ "
                "by orders of magnitude because our runs are short rounds of 28x28 grey "
                "images, theirs full CIFAR-10 training. Accuracy, ours from high to low: %s "
                "(the authors: adasplit, sl, sfl). Our FL/SFL/PiPar deploy one global model "
                "that after a few rounds on 2-class shards still mixes the devices' classes, "
                "our SL keeps mostly the last device's classes, and AdaSplit's per-device "
                "masks give each device a personalised model scored on its own two classes, "
                "where Fashion-MNIST is easier than CIFAR-10. The C3-Score is not reported: "
                "its formula was not available (docs/c3-accounting.md gives the budget "
                "coordinates).\n\n" % (ratio, paper["sfl"][1] / paper["adasplit"][1],
                                         ", ".join(by_accuracy)))
        self._adasplit_sweep(
            "kappa", "kappa sweep (AdaSplit's local fraction; eta 3 of 5, UCB)",
            ["kappa (local fraction)"], lambda run: [run.option("adasplit.local_fraction")],
            "More local training (higher kappa) sends fewer bytes, since the global phase is "
            "shorter; where accuracy falls, the global phase has become too short to "
            "train the server's part for every device. The authors' sweep numbers were not "
            "available to us, so only the direction can be compared: they report the same "
            "trade-off (kappa trades accuracy for bandwidth and client compute; 0.6 is their "
            "default).")
        self._adasplit_sweep(
            "eta", "eta sweep (devices selected per iteration of the global phase) x orchestrator "
            "(kappa 0.6)", ["eta (selected of 5)", "orchestrator"],
            lambda run: [run.option("adasplit.selected"), run.option("adasplit.orchestrator")],
            "Fewer selected devices send fewer bytes in the global phase; the orchestrator "
            "decides which devices (UCB: those whose loss is high, discounted; random: "
            "uniformly). The authors' figures for this sweep were not available to us.")

    def _adasplit_sweep(self, prefix, title, headings, settings, comment):
        names = sorted({os.path.basename(p)[:-3] for p in
                        self.store.glob(os.path.join("adasplit", prefix + "*.h5"))})
        rows, entries = self._adasplit_rows(names)
        if not rows:
            return
        self.add("%s:\n\n" % title)
        table = [settings(e.run) + [fmt(100 * row["final_accuracy"], "%.1f%%"), fmt(row["total_gb"], "%.4f"),
                                    fmt(row["client_tflops"], "%.4f"), fmt(row["mean_round_s"], "%.3f"),
                                    self.cite.cite(e)]
                 for row, e in zip(rows, entries)]
        table.sort(key=lambda r: tuple(_number_or_text(c) for c in r[:len(headings)]))
        self.add(md_table(headings + ["accuracy", "GB up+down", "client TFLOPs", "mean round s", "run"], table))
        self.add("\n%s\n\n" % comment)

    # --- provenance ------------------------------------------------------------------------
    def provenance(self):
        self.add("## Provenance: every run behind the numbers\n\n")
        self.add("Each bracketed number [n] above names runs of this list: the command "
                 "(its config and overrides), when it started (UTC), how long it took, the "
                 "machine and its load average (1, 5, 15 min) when it ended, and the cmlbed "
                 "binary that ran it. Results files are under `%s/` (not committed; rerun the "
                 "command to get them); a run marked *kept* is read from its digest in `%s/` "
                 "(every table of the results file but the timeline, scripts/cmlbed_report/"
                 "digest.py), which git keeps when the results folder is gone.\n\n"
                 % (os.path.relpath(os.path.abspath(self.results), ROOT), self._archive_text()))
        self.add("<details><summary>%d runs</summary>\n\n" % len(self.cite.entries))
        rows = []
        for e in self.cite.entries:
            p = e.provenance
            rows.append(["[%d]" % e.id, "`%s`%s" % (os.path.relpath(e.path, self.results),
                                                     " (kept)" if e.archived else ""),
                         "`%s`" % command_text(e).replace("|", "\\|"), p.get("started", "-"),
                         fmt(p.get("seconds"), "%.0f s"),
                         "%s (%s cores)" % (p.get("host", "-"), p.get("cores", "-")),
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

    def _archive_text(self):
        return (os.path.relpath(os.path.abspath(self.args.archive), ROOT) if self.args.archive
                else os.path.relpath(os.path.abspath(self.results), ROOT))

    def write(self):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        try:
            revision = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()
        except OSError:
            revision = "?"
        started = [e.provenance["started"] for e in self.cite.entries if e.provenance.get("started")]
        version = subprocess.run([self.args.cmlbed, "--version"], capture_output=True,
                                 text=True).stdout.strip() if os.path.exists(self.args.cmlbed) else "?"
        binaries = {}
        for e in self.cite.entries:
            binaries[e.provenance.get("cmlbed", "?")] = binaries.get(e.provenance.get("cmlbed", "?"), 0) + 1
        kept = sum(e.archived for e in self.cite.entries)
        head = [
            "# Reproduction report: PiPar and AdaSplit on cmlbed\n\n",
            "Written by `scripts/reproduction.sh%s` on %s, host %s (%d cores, load average "
            "%s when the report was written), repository at %s, binary `%s` (%s), from the "
            "results in `%s/` and, for %d of its %d runs, their digests kept in `%s/`: runs "
            "that were already done are reused, so the runs behind it may come from several "
            "invocations (runs from %s to %s; binaries: %s). Do not edit by hand: every "
            "number below comes from a results file (or its kept digest) of the binary its "
            "provenance names, "
            "and the [n] after it points to the command that produced it, with its date, "
            "machine and load (Provenance, at the end).\n\n" % (
                {"default": "", "full": " --full", "quick": " --quick"}[self.args.mode],
                now, os.uname().nodename, os.cpu_count(),
                " ".join("%.2f" % x for x in os.getloadavg()), revision,
                os.path.relpath(self.args.cmlbed, ROOT) if self.args.cmlbed.startswith(ROOT)
                else self.args.cmlbed, version,
                os.path.relpath(os.path.abspath(self.results), ROOT), kept,
                len(self.cite.entries), self._archive_text(),
                min(started) if started else "-", max(started) if started else "-",
                ", ".join("%s (%d runs)" % kv for kv in sorted(binaries.items())) or "-")]
        body = self.parts
        self.parts = []
        summary = ["## Summary\n\n"]
        if "cells" in self.headline:
            measured, simulated, none = self.headline["cells"]
            summary.append("- Grid cells: %d measured (%s), %d simulated, %d without results.\n" % (
                len(measured), ", ".join("%s/%g" % c for c in measured) or "none", len(simulated), len(none)))
        if "speedup" in self.headline:
            s, i = self.headline["speedup"], self.headline["idle"]
            summary.append("- PiPar grid: largest speedup of the round time vs FL **%.1fx** "
                           "(%s, uplink %s, %s); largest server idle reduction vs FL **%.1fx** "
                           "(%s, uplink %s, %s). The paper: 34.6x and 64.1x.\n"
                           % (s[0], s[1], rate_text(s[2]), s[3], i[0], i[1], rate_text(i[2]), i[3]))
        if "speedup_p1" in self.headline:
            s, i = self.headline["speedup_p1"], self.headline["idle_p1"]
            summary.append("- With at least one layer on the device (split >= 1): speedup "
                           "**%.1fx** (%s, uplink %s, %s), server idle reduction **%.1fx** (%s, "
                           "uplink %s, %s).\n"
                           % (s[0], s[1], rate_text(s[2]), s[3], i[0], i[1], rate_text(i[2]), i[3]))
        if "sim_error" in self.headline:
            med, worst = self.headline["sim_error"]
            summary.append("- Simulator vs measured round time on the measured cells: median "
                           "|error| %.1f%%, largest %+.1f%% (%s, %s, %s).\n"
                           % (100 * med, 100 * worst[1], worst[2], rate_text(worst[3]), worst[4]))
        if "dp" in self.headline:
            g = self.headline["dp"]
            summary.append("- DP on the main job: PiPar vs FL %.2fx (DP off) / %.2fx (on); vs "
                           "SFL %.2fx / %.2fx.\n" % (g["off"][0], g["on"][0], g["off"][1], g["on"][1]))
        if "adasplit_bytes" in self.headline:
            ours, theirs = self.headline["adasplit_bytes"]
            summary.append("- AdaSplit sends %.1fx fewer bytes than SplitFed (the authors: "
                           "%.1fx).\n" % (ours, theirs))
        for p in self.pending:
            summary.append("- Pending: %s.\n" % p)
        summary.append("\n")
        text = "".join(head + summary + body)
        with open(self.args.doc, "w") as f:
            f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--mode", choices=("default", "full", "quick"), default="default")
    parser.add_argument("--grid-config", default="configs/reproduction/grid.ini")
    parser.add_argument("--accuracy-config", default="configs/reproduction/accuracy.ini")
    parser.add_argument("--networks", default="vgg5 vgg11 vgg16 resnet18 mobilenetv3-small mobilenetv3-large")
    parser.add_argument("--rates", default="5 10 25 50 100")
    parser.add_argument("--measured", default="")
    parser.add_argument("--accuracy-networks", default="vgg5 mobilenetv3-small")
    parser.add_argument("--accuracy-datasets", default="fashion-mnist synthetic")
    parser.add_argument("--accuracy-rounds", default="20")
    parser.add_argument("--dp-split", default="")
    parser.add_argument("--dp-fl", default="")
    parser.add_argument("--dp-accuracy-split", default="")
    parser.add_argument("--dp-accuracy-fl", default="")
    parser.add_argument("--adasplit-methods", default="fl sl sfl pipar adasplit")
    parser.add_argument("--cmlbed", default="build/cmlbed")
    parser.add_argument("--archive", default=os.path.join(ROOT, "docs", "reproduction-data"),
                        help="where digests of the runs are kept (in git), read when a results "
                             "file is gone; 'none': no archive")
    args = parser.parse_args()
    if args.archive == "none":
        args.archive = None
    args.cmlbed = os.path.abspath(args.cmlbed)
    if not os.path.isdir(args.results):
        print("reproduction_report.py: no results folder %s" % args.results, file=sys.stderr)
        return 1
    os.makedirs(args.images, exist_ok=True)
    report = Report(args)
    try:
        runs, files = report.store.refresh()
        if args.archive:
            print("reproduction_report.py: %d run digests and %d files new or changed in %s"
                  % (runs, files, args.archive))
        report.grid()
        report.dp()
        report.accuracy()
        report.adasplit()
        report.provenance()
        report.write()
    except ReportError as e:
        print("reproduction_report.py: error: %s" % e, file=sys.stderr)
        return 1
    print("reproduction_report.py: wrote %s and %s/reproduction-*.png" % (args.doc, args.images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
