"""The report's fixed inputs: the papers' figures (quoted, not measured), the margins of
the claims about equality, the held-out tables of the simulator's band, the verdicts."""

import os

from cmlbed_report import stats

# The repository: this file is scripts/studies/reproduction/constants.py.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
METHODS = ("fl", "sfl", "pipar")
# The papers' own figures, quoted (not measured here) with their source.
PIPAR_PAPER = {"speedup": 34.6, "idle_reduction": 64.1,
               "source": "PiPar (Zhang et al., JPDC 193, 2024; arXiv 2302.12803), as quoted "
                         "in ../shared/DESIGN.md"}
ADASPLIT_PAPER = [  # method, accuracy %, GB; CIFAR-10 class-wise, 5 clients, LeNet
    ("adasplit", 91.63, 3.63), ("sfl", 65.76, 29.51), ("sl", 70.93, 25.98)]
ADASPLIT_PAPER_BYTES_RATIO = 29.51 / 3.63  # SplitFed's GB / AdaSplit's: 8.13x
# scripts/studies/adasplit-comparison.sh's budgets (10 GB, 5 TFLOP): they do not change the
# figures tabled here (final accuracy, totals), only c3's within-budget columns.
ADASPLIT_BUDGETS = (10e9, 5e12)
ADASPLIT_PAPER_SOURCE = ("AdaSplit (Chopra et al., arXiv 2112.01637), CIFAR-10 class-wise "
                         "split, 5 clients, LeNet; as quoted in ../shared/DESIGN.md")
# The option that makes a split baseline personalised (each device keeps its own
# device-side model and is scored on its own classes), as issue 38 names it. Runs
# without it (or with it false) deploy one global model.
PERSONALISED_OPTION = "train.personalised"
# The margins of the two claims that are about equality, not direction (stated in the
# report next to each verdict): "same accuracy" holds when every interval of PiPar's
# final accuracy over FL's lies within 1 +- ACCURACY_MARGIN; "8.13x fewer bytes" when our
# interval of SplitFed's bytes over AdaSplit's meets 8.13x within +-BYTES_FACTOR_TOLERANCE.
ACCURACY_MARGIN = 0.02
BYTES_FACTOR_TOLERANCE = 0.10
PREDICTION_ACCURACY_DOC = os.path.join(ROOT, "docs", "prediction-accuracy.md")
# The simulator's band comes from the tables of configurations drawn after it was tuned
# (held out), not from the configurations it was tuned on (prediction-accuracy.md).
HELD_OUT_TABLES = tuple(os.path.join(ROOT, "docs", page) for page in (
    "prediction-random-2.md", "prediction-crowded-2.md"))

CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE = "confirmed", "not confirmed", "not testable here"
# Verdicts of stats.ratio_of_means that carry an interval (or the bound of "> X").
WITH_INTERVAL = (stats.ABOVE_1, stats.BELOW_1, stats.NO_DIFFERENCE, stats.LOWER_BOUND)
