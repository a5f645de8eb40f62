#!/usr/bin/env python3
"""The reproduction report (docs/reproduction.md) from the results that
scripts/studies/reproduction.sh left in its results folder: the PiPar grid (measured and
simulated cells, measured-vs-simulated errors), DP on the main job, accuracy, the
AdaSplit comparison, and what we conclude about each claim of the two papers. Every
figure comes from results files of this cmlbed through scripts/cmlbed-report's own
definitions: the seeds of a run are grouped by cmlbed_report.summary.group_runs, and
means, 95% intervals (Student t) and ratios of means (Fieller) come from
summary.compare_groups and stats (docs/explanation/statistics.md), over rounds 2.. of each run
(--from-round); each run's command, date, machine and load come from the FILE.run.json
the script wrote beside it.

Run it through scripts/studies/reproduction.sh (which passes the settings it ran with); it needs
h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy python3-matplotlib) and
runs itself with /usr/bin/python3 when the python3 on PATH lacks them."""

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # scripts/: cmlbed_report
sys.path.insert(0, HERE)                   # the package reproduction/
from cmlbed_report import packages  # noqa: E402

if __name__ == "__main__":
    packages.ensure("reproduction_report.py", __file__, ["h5py", "numpy", "matplotlib"])

import argparse  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore", message="All-NaN slice")  # networks without cells

from cmlbed_report.errors import ReportError  # noqa: E402
from reproduction.band import band_interval, read_prediction_table, simulator_band  # noqa: E402
from reproduction.constants import CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE, ROOT  # noqa: E402
from reproduction.learning import failed_to_learn  # noqa: E402
from reproduction.report import Report  # noqa: E402
from reproduction.runsets import heterogeneity_key, pipelining  # noqa: E402
from reproduction.verdicts import accuracy_baseline, conclusions  # noqa: E402

# The report itself is the package reproduction/ beside this script; the names that
# tests/python/test_reproduction_conclusions.py takes from this module stay importable here.
__all__ = ["CONFIRMED", "NOT_CONFIRMED", "NOT_TESTABLE", "Report", "accuracy_baseline",
           "band_interval", "conclusions", "failed_to_learn", "heterogeneity_key", "main",
           "pipelining", "read_prediction_table", "simulator_band"]


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
    parser.add_argument("--adasplit-methods", default="fl sl sfl pipar adasplit sl-personalised sfl-personalised pipar-personalised")
    parser.add_argument("--repeats", type=int, default=3,
                        help="seeds each measured run should have (the report flags fewer)")
    parser.add_argument("--from-round", type=int, default=2,
                        help="average every time figure over rounds K.. of each run "
                             "(cmlbed-report summary --from-round; default 2)")
    parser.add_argument("--strict-seeds", action="store_true",
                        help="fail (status 4) instead of writing a report when measured runs "
                             "predate seeds (n = 1)")
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
    if args.from_round < 1 or args.repeats < 1:
        print("reproduction_report.py: --from-round and --repeats must be >= 1", file=sys.stderr)
        return 2
    os.makedirs(args.images, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.doc)), exist_ok=True)
    report = Report(args)
    try:
        runs, files = report.store.refresh()
        if args.archive:
            print("reproduction_report.py: %d run digests and %d files new or changed in %s"
                  % (runs, files, args.archive))
        report.grid()
        report.rounds()
        report.heterogeneity()
        report.dp()
        report.accuracy()
        report.adasplit()
        report.conclude()
        report.provenance()
        if report.legacy:
            message = (
                "reproduction_report.py: %s the runs of %d groups predate seeds (one NAME.h5 "
                "each, n = 1: no interval, so verdicts resting on them are 'not testable "
                "here'): %s. Regenerate them with: %s" % (
                    "error:" if args.strict_seeds else "warning:", len(report.legacy),
                    ", ".join(report.legacy[:6]) + (", ..." if len(report.legacy) > 6 else ""),
                              report.regenerate_command()))
            print(message, file=sys.stderr)
            if args.strict_seeds:
                return 4
        report.write()
    except ReportError as e:
        print("reproduction_report.py: error: %s" % e, file=sys.stderr)
        return 1
    print("reproduction_report.py: wrote %s and %s/reproduction-*.png" % (args.doc, args.images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
