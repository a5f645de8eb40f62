#!/usr/bin/env python3
"""A second, independent generator of random configurations (issue 53, part 5): crowded
hosts, real data, longer rounds.

    scripts/tools/crowded-configs.py --count N --seed S --out DIR [--cmlbed CMLBED]

writes DIR/crowded-S-K.ini for K = 1..N, each checked with `cmlbed run --dry-run` (a draw
it refuses is a bug here: the script says which and fails). The same --seed gives the
same files; each file's header names its seed and draw. scripts/studies/prediction-accuracy.sh
--generator crowded measures them against `cmlbed simulate`.

It draws what scripts/tools/random-configs.py does not:
  ranks      always more than this host's cores: 4 to 8 devices and the server, so every
             draw shares cores (on 2 cores: 2.5 to 4.5 ranks per core)
  data       Fashion-MNIST (the real files), iid, Dirichlet or class shards
  rounds     3 rounds of 6 to 12 mini-batches of 24 to 64 samples (the first generator:
             2-4 mini-batches of 16 or 32 synthetic samples)
  methods    fl, sl, sfl, sfl2, pipar or adasplit (sl one mini-batch per turn)
  models     lenet, vgg5 or mobilenetv3-small
  devices    each timed (devices.slowdown 1.5-9) or, in a third of the draws, paced
             (devices.flops 0.5-4 GFLOP/s); in sfl and pipar half the draws give
             the devices their own splits
  pipar      micro-batches of at least 4 samples (2 to 8 of them), in a third of the
             draws some devices their own count
  links      fast (50-200 mbit up, 2-4 times that down, delay 0.5-5 ms), so that compute
             and the host's sharing of it decide the round, not the links
Its random stream is seeded apart from the first generator's (seed * 7919 + 104729 +
draw), and its seeds are kept apart: seed 1 was looked at while the host model was
built, seed 2 was not (docs/explanation/simulator.md).
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from config_draws import write_checked_draws  # noqa: E402

MODELS = ["lenet", "vgg5", "mobilenetv3-small"]
# Frozen, not read from the method table: the draws of a seed are a held-out set of
# configurations (docs/prediction-crowded-*.md), which must stay the same draws when a
# method is added. At start the list is checked against the binary's table (every name a
# simulatable method).
METHODS = ["fl", "sl", "sfl", "sfl2", "pipar", "adasplit"]
LAYERS = {"lenet": 7, "vgg5": 7, "mobilenetv3-small": 16}


def draw(seed, number, _out_dir=None):
    """(name, INI text, ranks) of draw `number` of `seed` (it writes no other file)."""
    rng = random.Random(seed * 7919 + 104729 + number)
    name = "crowded-%d-%d" % (seed, number)
    model = rng.choice(MODELS)
    method = rng.choice(METHODS)
    devices = rng.randint(4, 8)
    batch = rng.choice([24, 32, 40, 48, 64])
    iterations = rng.randint(6, 12)
    paced = rng.random() < 1 / 3
    partition = rng.choice(["iid", "dirichlet", "shards"])
    own_splits = method in ("sfl", "pipar") and rng.random() < 0.5
    lines = ["# ranks: %d" % (devices + 1),
             "# A crowded draw: scripts/tools/crowded-configs.py --seed %d, draw %d (%s, %s, %d devices, %s)."
             % (seed, number, method, model, devices, "paced" if paced else "timed"),
             "", "[experiment]", "method = %s" % method, "rounds = 3", "seed = %d" % number,
             "", "[model]", "name = %s" % model]
    if method != "fl":
        lines.append("split = %d" % rng.randint(1, LAYERS[model] - 1))
    lines += ["", "[data]", "dataset = fashion-mnist", "partition = %s" % partition,
              "train_limit = %d" % (devices * batch * iterations * 2), "test_limit = 500"]
    if partition == "shards":  # every class on some device: devices x classes >= 10
        lines.append("classes_per_device = %d" % -(-10 // devices))
    lines += ["", "[train]", "batch_size = %d" % batch, "local_iterations = %d" % iterations]
    if method == "sl":
        lines += ["", "[sl]", "batches_per_turn = 1"]
    micro_choices = [m for m in (2, 4, 8) if batch // m >= 4]
    if method == "pipar":
        lines += ["", "[pipar]", "micro_batches = %d" % rng.choice(micro_choices)]
    if method == "adasplit":
        lines += ["", "[adasplit]", "local_fraction = 0.4", "selected = %d" % rng.randint(1, devices),
                  "orchestrator = %s" % rng.choice(["random", "ucb"])]
    lines += ["", "[output]", "file = results/crowded/%s.h5" % name, "overwrite = true"]
    own_micro = method == "pipar" and rng.random() < 1 / 3
    for d in range(1, devices + 1):
        up = rng.uniform(50, 200)
        own = ["", "[device.%d]" % d, "uplink_rate = %.1fmbit" % up,
               "downlink_rate = %.1fmbit" % (up * rng.uniform(2, 4)), "delay = %.1fms" % rng.uniform(0.5, 5)]
        if paced:
            own.append("flops = %.2fGFLOP/s" % rng.uniform(0.5, 4))
        else:
            own.append("slowdown = %.2f" % rng.uniform(1.5, 9))
        if own_splits and rng.random() < 0.5:
            own.append("split = %d" % rng.randint(1, LAYERS[model] - 1))
        if own_micro and rng.random() < 0.5:
            own.append("micro_batches = %d" % rng.choice(micro_choices))
        lines += own
    return name, "\n".join(lines) + "\n", devices + 1


def main():
    write_checked_draws("crowded-configs.py", __doc__.split("\n\n")[0], draw, METHODS)


if __name__ == "__main__":
    main()
