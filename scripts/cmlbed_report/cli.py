"""cmlbed-report: tables, pictures and traces from cmlbed results files."""

import argparse
import os
import sys

from .errors import ReportError

EPILOG = """examples:
  cmlbed-report summary results/quickstart-*.h5
  cmlbed-report summary results/quickstart-*.seed*.h5 --csv runs.csv   # n, mean, _ci95
  cmlbed-report summary --from-round 2 results/quickstart-*.h5   # rounds 2.. of each run
  cmlbed-report summary results/sweep-*/*.h5 --csv runs.csv --markdown runs.md
  cmlbed-report summary --brief --idle-causes results/quickstart-*.h5
  cmlbed-report timeline results/quickstart-{fl,sfl,pipar}.h5 --rounds 0 -o timeline.png
  cmlbed-report perfetto results/quickstart-pipar.h5 -o pipar.json   # ui.perfetto.dev
  cmlbed-report idle results/quickstart-*.h5 -o idle.png
  cmlbed-report accuracy results/quickstart-*.h5 -o accuracy.png
  cmlbed-report stages results/pipar.h5 results/pipar-simulated.h5
  cmlbed-report c3 results/adasplit/*.h5 --bandwidth-budget 10GB --compute-budget 5TFLOP
  cmlbed-report c3 results/adasplit/*.h5 --bandwidth-budget 10GB --compute-budget 5TFLOP \
      --markdown table.md --plot tradeoff.png --json c3.json

exit status: 0 done, 1 a file could not be read or written, 2 bad command line,
3 a Python package is missing.  The file layout: docs/reference/results-format.md."""


def _parser():
    parser = argparse.ArgumentParser(
        prog="cmlbed-report", description=__doc__, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_summary(sub)
    _add_pictures(sub)
    _add_c3(sub)
    return parser


def _add_summary(sub):
    summary = sub.add_parser(
        "summary", help="tables per run and across runs, with speedups against a baseline",
        description="Per-round table of each run, then one row per run: method, model, "
                    "split, micro-batches, links, round and total wall time, server and "
                    "device busy/idle seconds and percentages, MB and messages up/down, "
                    "server and device training TFLOPs, final and best accuracy, and "
                    "speedup and idle-time reductions against a baseline run. Numbers come "
                    "from each file's /rounds table ('-' where an older file lacks a "
                    "column); --idle-causes explains idle time from the wait events. Runs "
                    "that differ only in experiment.seed (e.g. X.seed1.h5, X.seed2.h5 of "
                    "`cmlbed run --repeats`) form one row: n, mean ± 95% half-width "
                    "(Student t), ratios of means with Fieller's 95% interval; 'no "
                    "difference measured' where it includes 1, '> X' where the denominator "
                    "may be 0 (docs/explanation/statistics.md).")
    summary.add_argument("files", nargs="+", metavar="FILE")
    summary.add_argument("--baseline", default="fl", metavar="METHOD|FILE",
                         help="compare each run with the run of this method in the same "
                              "experiment (same configuration apart from the method), or "
                              "with this one file (a path or a file name without .h5) "
                              "or group of seeds (its name without .seed<S>); "
                              "default: fl, or the first file when no run is fl")
    summary.add_argument("--from-round", type=_round_number, default=1, metavar="K",
                         help="average every figure over rounds K.. of each run (counted "
                              "from 1; a run with fewer than K rounds keeps all of them, "
                              "and the table says which); e.g. 2 leaves out round 1, which "
                              "starts with full token buckets. Default 1: every round. "
                              "The per-round tables still show every round")
    summary.add_argument("--brief", action="store_true",
                         help="only the across-runs table, not each run's rounds")
    summary.add_argument("--csv", metavar="OUT",
                         help="also write the across-runs table as CSV: n and seeds, each "
                              "figure's mean with its 95%% half-width in <figure>_ci95, "
                              "each ratio with _ci95_low, _ci95_high and _verdict")
    summary.add_argument("--rounds-csv", metavar="OUT",
                         help="also write every run's per-round rows as CSV")
    summary.add_argument("--markdown", metavar="OUT", help="also write both tables as Markdown")
    summary.add_argument("--require-faithful", action="store_true",
                         help="refuse (exit 2) when a run's emulation is not faithful: "
                              "degraded, broken, or not judged (docs/explanation/fidelity.md)")
    summary.add_argument("--idle-causes", action="store_true",
                         help="also break each rank's idle time down by what it waited "
                              "for (activation, gradient, model, ...) and from whom, from "
                              "the timeline's wait events; the rest is 'other' (in the "
                              "Markdown too)")


def _add_pictures(sub):
    """timeline, perfetto, idle, accuracy and stages: one run or several, drawn."""
    timeline = sub.add_parser(
        "timeline", help="Gantt chart PNG of one or more runs on one time scale",
        description="One row per rank and lane (compute, uplink, downlink), server on "
                    "top, one colour per kind of event, micro-batch numbers where they "
                    "fit. Several files are drawn one above the other on the same time "
                    "scale.")
    timeline.add_argument("files", nargs="+", metavar="FILE")
    timeline.add_argument("-o", "--output", required=True, metavar="OUT.png")
    timeline.add_argument("--rounds", default="all", metavar="SPEC",
                          help="rounds to draw: all (default), N, N-M or N,M,...")
    timeline.add_argument("--title", help="a title above the chart")

    perfetto = sub.add_parser(
        "perfetto", help="Chrome/Perfetto trace JSON of a run (open in ui.perfetto.dev)",
        description="pid = rank ('server', 'device k'), tid = lane (transfers in flight "
                    "together spill onto 'uplink #2', ...), complete events in "
                    "microseconds of the run's time base, and a flow arrow from each "
                    "send to its receive.")
    perfetto.add_argument("file", metavar="FILE")
    perfetto.add_argument("-o", "--output", required=True, metavar="OUT.json")

    idle = sub.add_parser("idle", help="bar charts of server/device idle time and speedup "
                                         "(one bar per group of seeds, 95%% intervals)")
    idle.add_argument("files", nargs="+", metavar="FILE")
    idle.add_argument("-o", "--output", required=True, metavar="OUT.png")
    idle.add_argument("--baseline", default="fl", metavar="METHOD|FILE",
                      help="as for summary (default: fl)")

    accuracy = sub.add_parser("accuracy", help="time-to-accuracy curves (one per group of "
                                                 "seeds, with a 95%% band)")
    accuracy.add_argument("files", nargs="+", metavar="FILE")
    accuracy.add_argument("-o", "--output", required=True, metavar="OUT.png")

    stages = sub.add_parser(
        "stages", help="stage lengths of one run, or of two side by side (e.g. measured and "
                       "simulated)",
        description="For the server and the devices (pooled), every kind of compute stage "
                    "and of message sent, over the steady rounds (2..): how many per round, "
                    "their median length and their seconds per round; with a second file, "
                    "its median against the first's (where a simulation parts from the run "
                    "it predicts).")
    stages.add_argument("files", nargs="+", metavar="FILE", help="one or two results files")


def _add_c3(sub):
    c3 = sub.add_parser(
        "c3", help="accuracy under a bandwidth and a client-compute budget (AdaSplit's "
                   "accounting), a table and a picture across methods",
        description="Per run: final accuracy, GB that crossed the links (up + down, all "
                    "devices, all rounds; GB = 10^9 bytes), client TFLOPs (training FLOPs "
                    "of the devices, ranks >= 1), whether the run stays within each "
                    "budget, the accuracy of the last evaluated round within both budgets, "
                    "and the authors' notebook ratio accuracy / (TFLOPs x GB), which is not "
                    "the paper's C3-Score. --markdown and --plot compare the runs (method, "
                    "accuracy, GB, client TFLOPs, mean round time, server idle). "
                    "Definitions: docs/explanation/c3-accounting.md.")
    c3.add_argument("files", nargs="+", metavar="FILE")
    c3.add_argument("--bandwidth-budget", required=True, type=_bytes_budget, metavar="SIZE",
                    help="bytes the links may carry, up + down, all devices: 10GB = 10^10 "
                         "bytes (kB MB GB TB: powers of 1000, as the report prints; KiB MiB "
                         "GiB TiB: powers of 1024; a bare number: bytes)")
    c3.add_argument("--compute-budget", required=True, type=_flop_budget, metavar="FLOPS",
                    help="training FLOPs all devices together may spend: 5TFLOP, 500GFLOP, "
                         "2.5e12 (SI prefixes k M G T P)")
    c3.add_argument("--json", metavar="OUT",
                    help="also write the numbers as JSON ('-': to stdout, instead of the text)")
    c3.add_argument("--markdown", metavar="OUT",
                    help="also write one table of the runs: method, accuracy, GB up+down, "
                         "client TFLOPs, mean round time, server idle %%, budgets")
    c3.add_argument("--plot", metavar="OUT.png",
                    help="also draw accuracy against GB and against client TFLOPs, one "
                         "point per run")
    c3.add_argument("--title", help="a title above the picture")


def _round_number(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("'%s' is not a round number: give an integer >= 1 "
                                         "(rounds count from 1)" % text)
    return value


def _bytes_budget(text):
    from .budget_units import BudgetError, parse_bytes
    try:
        return parse_bytes(text)
    except BudgetError as e:
        raise argparse.ArgumentTypeError(str(e))


def _flop_budget(text):
    from .budget_units import BudgetError, parse_flops
    try:
        return parse_flops(text)
    except BudgetError as e:
        raise argparse.ArgumentTypeError(str(e))


def _write(path, text):
    try:
        with open(path, "w", encoding="utf-8") as f:  # '±' whatever the locale
            f.write(text)
    except OSError as e:
        raise ReportError("cannot write %s: %s" % (path, e.strerror or e))


def _check_output(path, extensions=None):
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ReportError("cannot write %s: it is a directory; give a file name" % path)
    if not os.path.isdir(directory):
        raise ReportError("cannot write %s: directory %s does not exist" % (path, directory))
    if extensions and os.path.splitext(path)[1].lower() not in extensions:
        raise ReportError("cannot write %s: a picture's name must end in %s"
                          % (path, ", ".join(extensions)))


def _runs_with_rounds(paths):
    """The runs of `paths` that hold at least one round, with a note on stderr for each
    file left out or incomplete (a sweep with one dead run is still summarised)."""
    from .results import load_runs
    runs = load_runs(paths, allow_empty=True)
    for r in runs:
        if len(r.rounds) == 0:
            print("cmlbed-report: note: %s holds 0 of %d rounds (the run stopped before its "
                  "first round ended); left out" % (r.path, r.configured_rounds), file=sys.stderr)
        elif not r.complete:
            print("cmlbed-report: note: %s is incomplete: %d of %d rounds (summarising "
                  "those)" % (r.path, len(r.rounds), r.configured_rounds), file=sys.stderr)
    runs = [r for r in runs if len(r.rounds) > 0]
    if not runs:
        load_runs(paths)  # raises: no file holds a completed round
    return runs


def run_c3(args):
    from . import c3, tradeoff
    for path in (args.markdown, args.json if args.json != "-" else None):
        if path:
            _check_output(path)
    if args.plot:
        from .plotting import PICTURE_FORMATS
        _check_output(args.plot, PICTURE_FORMATS)
    runs = _runs_with_rounds(args.files)
    rows = [c3.budget_numbers(run, args.bandwidth_budget, args.compute_budget) for run in runs]
    document = c3.report_json(rows, args.bandwidth_budget, args.compute_budget)
    if args.json == "-":
        sys.stdout.write(document)
    else:
        sys.stdout.write(c3.report_text(rows))
        if args.json:
            _write(args.json, document)
    if args.markdown or args.plot:
        table = tradeoff.comparison_rows(runs, rows)
        if args.markdown:
            _write(args.markdown, tradeoff.markdown(table, args.bandwidth_budget,
                                                    args.compute_budget))
        if args.plot:
            tradeoff.draw(table, args.plot, args.bandwidth_budget, args.compute_budget,
                          args.title)
    # Where the files went, on stderr when stdout carries the JSON.
    out = sys.stderr if args.json == "-" else sys.stdout
    for path in (args.json if args.json != "-" else None, args.markdown, args.plot):
        if path:
            print("wrote %s" % path, file=out)


def run(args):
    from . import idle_causes, plots, summary, tables, timeline, perfetto
    from .results import load_runs

    if args.command == "c3":
        run_c3(args)
        return
    if args.command == "stages":
        from . import stages
        sys.stdout.write(stages.report_text(load_runs(args.files)))
        return
    if args.command == "summary":
        runs = _runs_with_rounds(args.files)
        if args.require_faithful:
            from .emulation import require_faithful
            require_faithful(runs)
        rows = summary.compare_groups(summary.group_runs(runs), args.baseline,
                                      from_round=args.from_round)
        for path in (args.csv, args.rounds_csv, args.markdown):
            if path:
                _check_output(path)
        sys.stdout.write(tables.report_text(runs, rows, per_round=not args.brief,
                                             from_round=args.from_round))
        if args.idle_causes:
            sys.stdout.write("\n" + idle_causes.report_text(runs))
        if args.csv:
            _write(args.csv, tables.csv_text(rows, tables.GROUP_CSV_COLUMNS))
        if args.rounds_csv:
            _write(args.rounds_csv, tables.rounds_csv(runs))
        if args.markdown:
            text = tables.report_markdown(runs, rows, args.from_round)
            if args.idle_causes:
                text += idle_causes.report_markdown(runs)
            _write(args.markdown, text)
        return
    from .plotting import PICTURE_FORMATS
    _check_output(args.output, None if args.command == "perfetto" else PICTURE_FORMATS)
    if args.command == "timeline":
        timeline.draw(load_runs(args.files), args.output, args.rounds, args.title)
    elif args.command == "perfetto":
        try:
            document = perfetto.write_trace(load_runs([args.file])[0], args.output)
        except OSError as e:
            raise ReportError("cannot write %s: %s" % (args.output, e.strerror or e))
        print("%s: %d trace events" % (args.output, len(document["traceEvents"])))
        return
    elif args.command == "idle":
        plots.idle_bars(load_runs(args.files), args.output, args.baseline)
    elif args.command == "accuracy":
        plots.accuracy_curves(load_runs(args.files), args.output)
    print("wrote %s" % args.output)


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        run(args)
    except ReportError as e:
        print("cmlbed-report: error: %s" % e, file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        return 130
    return 0
