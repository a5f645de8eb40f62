"""scripts/studies/adasplit_settling.py (the AdaSplit comparison run until accuracy settles): the
last-round, last-10 and round-10 accuracies, the movement over the last 5 rounds and the
settled verdict, on synthetic results files whose curves are known."""

import math

import adasplit_settling as settling
import synthetic
from cmlbed_report.results import load_runs
from cmlbed_report.summary import group_runs


def _row(tmp_path, name, method, curves, personalised=False):
    files = []
    for seed, curve in enumerate(curves, start=1):
        rounds = [dict(round=r, t_start_ns=r * 10**9, t_end_ns=(r + 1) * 10**9, test_accuracy=a,
                       bytes_up=1000, bytes_down=500)
                  for r, a in enumerate(curve)]
        files.append(str(synthetic.write(
            tmp_path / ("%s.seed%d.h5" % (name, seed)), method, rounds=rounds,
            sections={"experiment": {"seed": str(seed)},
                      "train": {"personalised": "true" if personalised else "false"}})))
    groups = group_runs(load_runs(files))
    assert len(groups) == 1
    return settling.group_row(groups[0])


def test_a_settled_curve_and_one_that_swings(tmp_path):
    # 20 rounds: seed s climbs to 0.80 + s/1000 and stays within 0.3 points at the end.
    steady = [[min(0.8, 0.1 * (r + 1)) + s / 1000 + (0.003 if r % 2 else 0) for r in range(20)] for s in (1, 2, 3)]
    row = _row(tmp_path, "sl-personalised", "sl", steady, personalised=True)
    assert row["label"] == "sl personalised" and row["n"] == 3 and row["rounds"] == 20
    mean, half, _ = row["final"]
    assert math.isclose(mean, 0.8 + 0.002 + 0.003)  # round 19 is odd: +0.003
    assert half > 0
    assert math.isclose(row["round10"][0], 0.8 + 0.002 + 0.003)  # round index 9 is odd
    assert math.isclose(row["swing"], 0.3, abs_tol=1e-9)
    assert "| yes |" in settling.table([row])
    assert math.isclose(row["gb"], 20 * 1500 / 1e9)

    swinging = [[0.2 if r % 2 else 0.4 for r in range(20)] for _ in range(3)]
    row = _row(tmp_path, "fl", "fl", swinging)
    assert row["label"] == "fl"
    assert math.isclose(row["swing"], 20.0)
    assert math.isclose(row["tail"][0], 0.3)
    assert "| no |" in settling.table([row])
