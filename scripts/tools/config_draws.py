"""What the random-configuration generators share (scripts/tools/random-configs.py,
scripts/tools/crowded-configs.py): the command line, writing each draw to DIR/NAME.ini and
checking it with `cmlbed run --dry-run` (a draw cmlbed refuses is a bug in its generator:
the script says which and fails), and checking a generator's frozen list of methods
against the binary's method table. A generator supplies only its draws and that list."""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/
from cmlbed_report import methods  # noqa: E402
from cmlbed_report.errors import ReportError  # noqa: E402


def check_methods(program, listed, binary=None):
    """Exits with a clear message unless every method of a generator's list is in the
    method table of `binary` (`cmlbed info --methods --json`; default: methods.binary())
    and simulatable (its draws are measured against `cmlbed simulate`). The lists stay
    frozen (a held-out set of draws must not change when a method is added): this only
    says when one no longer fits the binary."""
    try:
        table = methods.table_from_binary(binary)
        known = methods.names(table)
        unknown = [m for m in listed if m not in known]
        if unknown:
            raise ReportError("method(s) %s of its list are not in the method table of %s "
                              "(methods: %s)" % (", ".join(unknown), binary or methods.binary(),
                                                 ", ".join(known)))
        refused = [m for m in listed if not methods.has(table, m, "simulatable")]
        if refused:
            raise ReportError("method(s) %s of its list are not simulatable (cmlbed info "
                              "--methods), and its draws are measured against cmlbed simulate"
                              % ", ".join(refused))
    except ReportError as e:
        sys.exit("%s: %s" % (program, e))


def write_checked_draws(program, description, draw, listed_methods):
    """Parse --count --seed --out --cmlbed, check the generator's methods
    (listed_methods, check_methods), then for K = 1..count write the draw
    `draw(seed, K, out_dir)` -> (name, INI text, ranks) to out_dir/name.ini, check it,
    and print its path."""
    parser = argparse.ArgumentParser(prog=program, description=description)
    parser.add_argument("--count", type=int, required=True, help="how many draws")
    parser.add_argument("--seed", type=int, required=True, help="the draws' seed")
    parser.add_argument("--out", required=True, help="directory for the configurations")
    parser.add_argument("--cmlbed", help="binary that checks the methods and each draw (--dry-run); "
                        "default: $CMLBED, else build/cmlbed of this checkout, else cmlbed on PATH")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")
    args.cmlbed = args.cmlbed or methods.binary()
    check_methods(program, listed_methods, args.cmlbed)
    os.makedirs(args.out, exist_ok=True)
    for number in range(1, args.count + 1):
        name, text, ranks = draw(args.seed, number, args.out)
        path = os.path.join(args.out, name + ".ini")
        with open(path, "w") as f:
            f.write(text)
        # The check asks whether cmlbed accepts the draw, not whether this host keeps its
        # pace: the pacing check (a profile of its own) stays off.
        check = subprocess.run([args.cmlbed, "run", "--config", path, "--dry-run", "--ranks", str(ranks),
                                "--plan.check_pacing=off"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if check.returncode != 0:
            sys.exit("%s: draw %d of seed %d (%s) is not a valid configuration:\n%s"
                     % (program, number, args.seed, path, check.stderr.strip()))
        print(path)
