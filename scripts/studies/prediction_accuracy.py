#!/usr/bin/env python3
"""The prediction-accuracy table (scripts/studies/prediction-accuracy.sh writes its inputs).

For each CONFIG:NAME:RANKS argument it reads RESULTS/NAME.run.h5 (measured) and
RESULTS/NAME.sim.h5 (`cmlbed simulate`, ranks sharing the host's cores), compares the
mean round wall time and the server's idle share over rounds 2.. (all rounds when there
is one), and writes a Markdown table (--doc) and RESULTS/DOC.json (DOC: the
table file's name without .md).
RESULTS/NAME.own-cores.sim.h5, when there, is the simulation with a core per rank: its
round time and CPU demand are shown beside. With --check ROUND_PCT
IDLE_POINTS it exits 1 when a row is outside either bound.

RESULTS/NAME.after.profile.json, when there, is a second profile taken right after the
measured run: how much the host's speed moved between the profile the simulation used
and the end of the run (`host drift`, from profile_drift) is shown beside each row.
`prediction_accuracy.py --drift BEFORE.json AFTER.json` prints that drift.

With --archive DIR every row's files are kept in DIR (the .h5 files as digests,
cmlbed_report.digest; the profiles, tries and steal as they are; the measured run's time),
and a row whose files are gone from RESULTS is read from there: the table can be written
again on a fresh checkout (docs/reproduction-data/prediction/TABLE/).
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import statistics
import sys

try:
    import h5py  # noqa: F401 (cmlbed_report reads the files with it)
except ImportError:
    sys.exit("prediction_accuracy.py: needs h5py (apt-get install python3-h5py; "
             "Debian's /usr/bin/python3 has it)")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/: cmlbed_report
from cmlbed_report import digest, emulation  # noqa: E402
from cmlbed_report.results import Run  # noqa: E402

RUN_KINDS = ("run", "sim", "own-cores.sim")  # BASE.KIND.h5
SMALL_FILES = ("profile.json", "after.profile.json", "tries", "steal")  # BASE.NAME


class RowFiles:
    """A row's files, BASE.*, from the results folder, else from the archive (None: no
    archive): the .h5 files kept as digests (BASE.KIND.h5.json), the small files as they
    are, and the measured run's file time (BASE.measured_at)."""

    def __init__(self, results, archive):
        self.results, self.archive = results, archive

    def path(self, base, suffix):
        """The file BASE.SUFFIX (a .h5 file's digest when only that is kept), or None."""
        here = os.path.join(self.results, "%s.%s" % (base, suffix))
        if os.path.exists(here):
            return here
        if self.archive:
            kept = os.path.join(self.archive, "%s.%s" % (base, suffix)) + (".json" if suffix.endswith(".h5") else "")
            if os.path.exists(kept):
                return kept
        return None

    def run(self, base, kind):
        path = self.path(base, kind + ".h5")
        if path is None:
            return None
        return digest.DigestRun(path, os.path.join(self.results, "%s.%s.h5" % (base, kind))) \
            if path.endswith(".json") else Run(path)

    def measured_at(self, base):
        path = self.path(base, "run.h5")
        if not path.endswith(".json"):
            return os.path.getmtime(path)
        return _number_in(os.path.join(self.archive, base + ".measured_at"), float)

    def bases(self, name):
        """The bases of a row's measurements: NAME.rep1 .. (--repeats), else NAME; those with
        a measured run and a simulation, here or kept."""
        found = set()
        for folder, ending in ((self.results, ".run.h5"), (self.archive, ".run.h5.json")):
            if folder:
                found |= {os.path.basename(f)[:-len(ending)] for f in
                          glob.glob(os.path.join(folder, glob.escape(name) + ".rep[0-9]*" + ending))}
        repeated = sorted(found, key=lambda b: int(b.rsplit(".rep", 1)[1]))
        return [b for b in repeated or [name] if self.path(b, "run.h5") and self.path(b, "sim.h5")]

    def keep(self, base):
        """Copies the row's files from the results folder into the archive."""
        if not self.archive or not os.path.exists(os.path.join(self.results, base + ".run.h5")):
            return
        os.makedirs(self.archive, exist_ok=True)
        for kind in RUN_KINDS:
            source = os.path.join(self.results, "%s.%s.h5" % (base, kind))
            if os.path.exists(source):
                digest.write(Run(source), os.path.join(self.archive, "%s.%s.h5.json" % (base, kind)))
        for name in SMALL_FILES:
            source = os.path.join(self.results, "%s.%s" % (base, name))
            if os.path.exists(source):
                shutil.copyfile(source, os.path.join(self.archive, "%s.%s" % (base, name)))
        with open(os.path.join(self.archive, base + ".measured_at"), "w") as f:
            f.write("%.0f\n" % os.path.getmtime(os.path.join(self.results, base + ".run.h5")))


def _compute_seconds(rank):
    """A rank's profiled compute: every layer's forward and backward at every batch size
    and its optimizer step, summed (a host that runs 10% slower makes it 10% larger)."""
    return sum(sum(layer["forward_s"]) + sum(layer["backward_s"]) + layer.get("step_s", 0.0)
               for layer in rank["layers"])


def profile_drift(before, after):
    """{"server": ratio, "devices": ratio}: the compute seconds of the second profile over
    the first, the server's and the median of the devices' (None without devices)."""
    ratios = {"server": None, "devices": []}
    later = {r["rank"]: r for r in after["ranks"]}
    for rank in before["ranks"]:
        other = later.get(rank["rank"])
        first = _compute_seconds(rank)
        if other is None or first <= 0:
            continue
        ratio = _compute_seconds(other) / first
        if rank["role"] == "server":
            ratios["server"] = ratio
        else:
            ratios["devices"].append(ratio)
    ratios["devices"] = statistics.median(ratios["devices"]) if ratios["devices"] else None
    return ratios


def largest_drift(drift):
    """The larger of the server's and the devices' |ratio - 1|."""
    return max(abs(r - 1) for r in drift.values() if r is not None)


def read_profile(path):
    with open(path) as f:
        return json.load(f)


def cpu_demand(run):
    """Cores the simulated schedule keeps computing, on average over its steady rounds:
    each rank's busy time times the share of it that runs on a CPU (the server 1; a device
    with devices.slowdown k, 1/k: the rest is slept). None when a device is paced
    (devices.flops: its CPU share depends on this machine's speed)."""
    shares = [1.0]
    for d in range(1, run.devices + 1):
        if run.option("devices.flops", d).strip():
            return None
        try:
            shares.append(1.0 / float(run.option("devices.slowdown", d) or 1))
        except ValueError:  # a distribution: drawn per device, not stored as a number
            return None
    kept = run.steady_rounds()
    busy = (kept["busy_s"] * shares).sum(axis=1)
    return float((busy / kept["wall_s"]).mean())


def _drift_text(drift):
    """The server's drift, and the devices' when they were profiled apart from it and
    drifted otherwise (devices with the server's threads are measured once, by rank 0)."""
    if not drift:
        return "-"
    texts = [None if drift[k] is None else f"{100 * (drift[k] - 1):+.0f}%" for k in ("server", "devices")]
    if texts[1] is None or texts[1] == texts[0]:
        return texts[0] or "-"
    return f"{texts[0] or '-'} / {texts[1]}"


def _number_in(path, kind):
    """The number prediction-accuracy.sh wrote to `path` (NAME.tries, NAME.steal), or None."""
    try:
        with open(path) as f:
            return kind(f.read().strip())
    except (OSError, ValueError):
        return None


def _compare(files, base):
    """One measurement of a row: BASE.run.h5 against BASE.sim.h5 (and BASE.own-cores.sim.h5,
    BASE.after.profile.json, BASE.tries, BASE.steal where there); files: RowFiles."""
    run, sim, own = (files.run(base, kind) for kind in RUN_KINDS)
    measured, measured_idle = run.steady_round_s(), run.steady_server_idle()
    simulated, simulated_idle = sim.steady_round_s(), sim.steady_server_idle()
    before, after = files.path(base, "profile.json"), files.path(base, "after.profile.json")
    drift = profile_drift(read_profile(before), read_profile(after)) if before and after else None
    number = (lambda name, kind: _number_in(files.path(base, name), kind) if files.path(base, name) else None)
    return {"method": run.method, "rounds": len(run.rounds), "measured_at": files.measured_at(base),
            "measured_round_s": measured, "simulated_round_s": simulated, "error": simulated / measured - 1,
            "server_idle_measured": measured_idle, "server_idle_simulated": simulated_idle,
            "idle_points": 100 * (simulated_idle - measured_idle), "simulated_cpu_demand": cpu_demand(own or sim),
            # A number, or `placement` (this host's cores, which the table shows as the word).
            "host_cores": (lambda v: int(v) if v.isdigit() else v)(sim.option("plan.host_cores") or "0"),
            "host_slice": sim.option("plan.host_slice") or "0ms",
            "own_cores_error": own.steady_round_s() / measured - 1 if own else None, "host_drift": drift,
            "emulation": emulation.verdict(run),
            "binaries": {str(r.attrs.get("git_revision", "?")) for r in (run, sim, own) if r is not None},
            "tries": number("tries", int), "steal": number("steal", float)}


def _tries_text(row):
    """The `tries` cell: the runs a single measurement took, or the repeats' errors."""
    if row["measurements"] == 1:
        return row["tries"] or "-"
    return f"{row['measurements']}: " + ", ".join(f"{100 * e:+.1f}%" for e in row["errors"])


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results")
    parser.add_argument("--doc")
    parser.add_argument("--machine", default="")
    parser.add_argument("--check", nargs=2, type=float, metavar=("ROUND_PCT", "IDLE_POINTS"))
    parser.add_argument("--drift", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="print the host drift between two profiles (largest |change|, %%) and exit")
    parser.add_argument("--steady", type=float, default=5.0, metavar="PCT",
                        help="the drift (%%) above which prediction-accuracy.sh measured a row again")
    parser.add_argument("--title", default="Prediction accuracy: `cmlbed simulate` against measured runs",
                        help="the table's heading")
    parser.add_argument("--command", default="scripts/studies/prediction-accuracy.sh",
                        help="the command that made the table, as its page names it")
    parser.add_argument("--intro", default="", help="a paragraph on where the configurations come from")
    parser.add_argument("--archive", help="keep every row's files here (digests of the .h5 "
                        "files) and read a row from here when its files are gone from --results")
    parser.add_argument("runs", nargs="*", help="CONFIG:NAME:RANKS")
    return parser


def _row(config, ranks, each, round_goal, idle_goal):
    """One config's row from its measurements (_compare's dicts)."""
    row = {"config": config, "method": each[0]["method"], "ranks": int(ranks),
           "rounds": each[0]["rounds"], "host_cores": each[0]["host_cores"],
           "host_slice": each[0]["host_slice"], "measurements": len(each)}
    # Over repeated measurements (prediction-accuracy.sh --repeats), each figure's median.
    for key in ("measured_round_s", "simulated_round_s", "error", "server_idle_measured",
                "server_idle_simulated", "idle_points", "simulated_cpu_demand", "own_cores_error"):
        values = [m[key] for m in each if m[key] is not None]
        row[key] = statistics.median(values) if values else None
    drifts = [m["host_drift"] for m in each if m["host_drift"]]
    row["host_drift"] = max(drifts, key=largest_drift) if drifts else None  # the largest
    steals = [m["steal"] for m in each if m["steal"] is not None]
    row["steal"] = max(steals) if steals else None
    row["tries"] = each[0]["tries"] if len(each) == 1 else sum(m["tries"] or 1 for m in each)
    row["errors"] = [m["error"] for m in each]
    row["emulation"] = emulation.worst([m["emulation"] for m in each])
    row["binaries"] = sorted(set().union(*(m["binaries"] for m in each)))
    row["within"] = abs(row["error"]) * 100 <= round_goal and abs(row["idle_points"]) <= idle_goal
    return row


def _table_line(r):
    return (
        f"| {r['config']} | {r['method']} | {r['ranks']} | {r['rounds']} | {r['measured_round_s']:.3f} | "
        f"{r['emulation']} | {r['simulated_round_s']:.3f} | {100 * r['error']:+.1f}% | {r['host_cores'] or '-'} | "
        f"{'-' if r['own_cores_error'] is None else format(100 * r['own_cores_error'], '+.1f') + '%'} | "
        f"{'-' if r['simulated_cpu_demand'] is None else format(r['simulated_cpu_demand'], '.2f')} | "
        f"{100 * r['server_idle_measured']:.1f}% / {100 * r['server_idle_simulated']:.1f}% | "
        f"{r['idle_points']:+.1f} | {_drift_text(r['host_drift'])} | "
        f"{'-' if r['steal'] is None else format(r['steal'], '.1f') + '%'} | {_tries_text(r)} | "
        f"{'yes' if r['within'] else 'no'} |")


def _page_head(args, rows, now, first, last, round_goal, idle_goal):
    return [
        "# " + args.title,
        "",
        f"Generated by `{args.command}` on {now} ({args.machine}); the runs",
        f"were measured {first} to {last} UTC (their results files' times). For each",
        "config, one `cmlbed profile` of all its ranks, `cmlbed simulate` with that profile",
        "and a measured `mpirun cmlbed run`, with the same settings (rounds: the config's, at",
        "most 3, except with rate traces). Compared: the mean round wall time and the",
        "server's idle share over rounds 2.. (the first round starts with full token buckets).",
        f"Goal: round time within {round_goal:g}%, server idle within {idle_goal:g} points.",
        "",
        *([args.intro, ""] if args.intro else []),
        "`simulated s` shares the host's cores among the ranks (`cores`: plan.host_cores,",
        "processor sharing of the stages' CPU work, docs/explanation/simulator.md), and a message that",
        "arrives while they are all busy reaches the waiting thread three half-slices of the",
        "host's scheduler late (plan.host_slice: "
        + ", ".join(sorted({r["host_slice"] for r in rows if r["host_cores"]}) or ["-"])
        + "); `own cores` is the",
        "simulation that gives every rank cores of its own, and `cores busy` what that",
        "schedule asks of the CPU: on average, how many ranks compute at once (server stages",
        "whole, a device's stretched stages 1/slowdown; `-` where devices are paced).",
        "",
        "`host drift`: the same profile taken again right after the measured run, against",
        "the one the simulation used (their compute seconds; the server's, and the median",
        "device's where devices were profiled apart and differ): how far this machine's speed",
        "moved in the minute or so a row takes. A row whose drift exceeded the script's bound",
        "was measured again (`tries`), up to its limit; the last try is shown. `steal`: of",
        "the CPU time during the measured run, the share the hypervisor gave to other guests",
        "while this one wanted to run (/proc/stat): cores the run did not have. A row measured",
        "N times (`--repeats N`: N profiles, simulations and runs in turn) shows the median",
        "of each figure over the N (drift and steal: the largest), and `tries` is",
        "`N: ` and each one's round-time error.",
        "",
        "`emulation`: the measured run's verdict (docs/explanation/fidelity.md); where it is",
        "not `faithful` the measured times are partly this host's, which the shared-cores",
        "simulation models and the own-cores one does not.",
        "",
        "| config | method | ranks | rounds | measured s | emulation | simulated s | error | cores | own cores: error | cores busy | server idle measured / simulated | points | host drift | steal | tries | within |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]


def _page_tail(args, rows, missing, within):
    errors = sorted(abs(r["error"]) for r in rows)
    median = statistics.median(errors)
    lines = ["", f"{within} of {len(rows)} rows within both goals; median |error| of the round "
             f"time {100 * median:.1f}%, largest {100 * errors[-1]:.1f}%."]
    binaries = sorted(set().union(*(r["binaries"] for r in rows)))
    lines.append(("The runs and simulations come from one binary, cmlbed git %s." % binaries[0])
                 if len(binaries) == 1 else
                 "The runs and simulations come from %d binaries (cmlbed git %s): not one sitting's "
                 "binary." % (len(binaries), ", ".join(binaries)))
    drifted = [r for r in rows if r["host_drift"] and largest_drift(r["host_drift"]) > args.steady / 100]
    if drifted:
        lines.append(f"{len(drifted)} rows with a host drift over {args.steady:g}% ({sum(r['within'] for r in drifted)} "
                     f"of them within both goals); {len(rows) - len(drifted)} rows steadier "
                     f"({sum(r['within'] for r in rows if r not in drifted)} within).")
    unfaithful = [r for r in rows if not emulation.trusted(r["emulation"])]
    if unfaithful:
        lines.append(f"{len(unfaithful)} of {len(rows)} measured rows were not faithful emulations "
                     f"({', '.join(r['config'] + ': ' + r['emulation'] for r in unfaithful)}); "
                     f"{sum(r['within'] for r in unfaithful)} of them within both goals.")
    if missing:
        lines.append(f"Not run (no results in {args.results}): {', '.join(missing)}.")
    lines.append("")
    return lines


def main():
    parser = _parser()
    args = parser.parse_args()
    if args.drift:
        drift = profile_drift(*(read_profile(p) for p in args.drift))
        print("%.1f" % (100 * largest_drift(drift)))
        return
    if not (args.runs and args.results and args.doc):
        parser.error("--results, --doc and CONFIG:NAME:RANKS are needed (or --drift)")

    round_goal, idle_goal = (args.check if args.check else (10.0, 5.0))
    rows = []
    missing = []
    measured_at = []  # the measured runs' file times: when the rows were measured
    files = RowFiles(args.results, args.archive)
    for run in args.runs:
        config, name, ranks = run.split(":")
        bases = files.bases(name)
        if not bases:
            missing.append(config)
            continue
        for base in bases:
            files.keep(base)
        each = [_compare(files, base) for base in bases]
        measured_at += [m["measured_at"] for m in each]
        rows.append(_row(config, ranks, each, round_goal, idle_goal))
    utc = datetime.timezone.utc
    now = datetime.datetime.now(utc).strftime("%Y-%m-%d %H:%M UTC")
    first, last = (datetime.datetime.fromtimestamp(t, utc).strftime("%Y-%m-%d %H:%M")
                   for t in (min(measured_at), max(measured_at)))
    within = sum(r["within"] for r in rows)
    lines = (_page_head(args, rows, now, first, last, round_goal, idle_goal)
             + [_table_line(r) for r in rows] + _page_tail(args, rows, missing, within))
    with open(args.doc, "w") as out:
        out.write("\n".join(lines))
    json_name = os.path.splitext(os.path.basename(args.doc))[0] + ".json"  # beside the table's rows
    os.makedirs(args.results, exist_ok=True)
    with open(os.path.join(args.results, json_name), "w") as out:
        json.dump({"generated": now, "machine": args.machine, "round_goal_pct": round_goal,
                   "idle_goal_points": idle_goal, "rows": rows}, out, indent=1)
    print("\n".join(line for line in lines if line.startswith("|") or "rows within" in line))
    if args.check and (within < len(rows) or missing):
        sys.exit(f"prediction_accuracy.py: {len(rows) - within} of {len(rows)} rows outside "
                 f"{round_goal:g}% / {idle_goal:g} points")


if __name__ == "__main__":
    main()
