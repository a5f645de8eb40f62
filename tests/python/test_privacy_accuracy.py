"""scripts/privacy_accuracy.py (the table of scripts/privacy-accuracy.sh): Welch's
interval on a hand-worked example, the epsilon formula against the C++ test's figure and
the replace-one rule, and the table and findings on synthetic results files."""

import math

import h5py

import privacy_accuracy as pa
import synthetic
from cmlbed_report.results import load_runs
from cmlbed_report.summary import group_runs


def test_welch_interval_by_hand():
    # a = 1, 2, 3 (mean 2, var 1), b = 4, 6, 8 (mean 6, var 4): se^2 = 1/3 + 4/3 = 5/3,
    # df = (5/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 25/9 / (17/18) = 2.9412, t(0.975, 2.9412)
    # = 3.2063 (between df 2: 4.3027 and df 3: 3.1824).
    difference, low, high = pa.welch([1, 2, 3], [4, 6, 8])
    assert difference == -4
    half = difference - low
    assert math.isclose(high, difference + half)
    assert 3.18 * math.sqrt(5 / 3) < half < 3.25 * math.sqrt(5 / 3)
    assert math.isnan(pa.welch([1], [2, 3])[1])  # one run: no interval


def test_epsilon_matches_the_recorded_formula_and_replace_one_doubles_the_sensitivity():
    # tests/test_privacy.cpp: one release at sigma 1, delta 1e-5 gives 5.2985.
    assert math.isclose(pa.gaussian_epsilon(1.0, 1, 1e-5, 1), 5.29853, rel_tol=1e-5)
    assert math.isclose(pa.gaussian_epsilon(2.0, 7, 1e-5, 2), pa.gaussian_epsilon(1.0, 7, 1e-5, 1))
    assert math.isinf(pa.gaussian_epsilon(0, 3, 1e-5, 1))


def _rows(tmp_path, accuracies_by_cell):
    files = []
    for (name, sigma), accuracies in accuracies_by_cell.items():
        for seed, accuracy in enumerate(accuracies, start=1):
            privacy = ({"mechanism": "gaussian", "noise_multiplier": str(sigma), "clip": "5",
                        "adjacency": "add-remove"} if sigma else {"mechanism": "none"})
            path = synthetic.write(
                tmp_path / ("%s.seed%d.h5" % (name, seed)), "pipar",
                rounds=[dict(round=0, t_start_ns=0, t_end_ns=10**9, test_accuracy=accuracy)],
                sections={"experiment": {"seed": str(seed)}, "privacy": privacy,
                          "train": {"local_iterations": "10"}})
            if sigma:
                with h5py.File(path, "a") as f:
                    f.attrs["privacy_releases"] = 3.0
                    f.attrs["privacy_delta"] = 1e-5
                    f.attrs["privacy_epsilon"] = pa.gaussian_epsilon(sigma, 3, 1e-5, 1)
            files.append(str(path))
    rows = [pa.cell(g) for g in group_runs(load_runs(files))]
    for row in rows:
        row["baseline"] = next(r for r in rows if not r["private"])
    return rows


def test_table_and_findings(tmp_path):
    rows = _rows(tmp_path, {("off", None): [0.70, 0.72, 0.74],
                            ("small", 0.01): [0.69, 0.73, 0.71],
                            ("large", 3.0): [0.10, 0.09, 0.11]})
    table = pa.table(rows)
    assert "no difference measured" in table  # sigma 0.01 against DP off
    assert "-0.620 [" in table                # sigma 3: 0.10 - 0.72, interval below 0
    findings = pa.findings(rows)
    assert "no accuracy loss measured down to epsilon %.3g" % pa.gaussian_epsilon(0.01, 3, 1e-5, 1) in findings
    assert "from sigma 3 " in findings and "reaches chance" in findings
