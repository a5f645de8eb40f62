"""What the random-configuration generators share (scripts/tools/random-configs.py,
scripts/tools/crowded-configs.py): the command line, writing each draw to DIR/NAME.ini and
checking it with `cmlbed run --dry-run` (a draw cmlbed refuses is a bug in its generator:
the script says which and fails). A generator supplies only its draws."""

import argparse
import os
import subprocess
import sys


def write_checked_draws(program, description, draw):
    """Parse --count --seed --out --cmlbed, then for K = 1..count write the draw
    `draw(seed, K, out_dir)` -> (name, INI text, ranks) to out_dir/name.ini, check it,
    and print its path."""
    parser = argparse.ArgumentParser(prog=program, description=description)
    parser.add_argument("--count", type=int, required=True, help="how many draws")
    parser.add_argument("--seed", type=int, required=True, help="the draws' seed")
    parser.add_argument("--out", required=True, help="directory for the configurations")
    parser.add_argument("--cmlbed", default="build/cmlbed", help="binary that checks each draw (--dry-run)")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")
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
