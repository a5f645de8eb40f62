"""scripts/studies/privacy_accuracy.py (the page of scripts/studies/privacy-accuracy.sh): Welch's interval
on a hand-worked example, the epsilon formula against the C++ test's figure and the
replace-one rule, the study's three decisions on hand-made numbers (the clip, the smallest
epsilon within 5 points or "none up to epsilon = 10", settled or not), and the page on
synthetic results files: written from the .h5 files, rebuilt from the kept digests alone,
refused for a mix of binaries."""

import math
import os
import shutil

import h5py
import pytest

import privacy_accuracy as pa
import synthetic
from cmlbed_report.archive import write_provenance


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


# --- the clip --------------------------------------------------------------------------

def test_the_smallest_clip_within_2_points_of_dp_off_is_chosen():
    # DP off 0.800: C = 1 (0.300) and C = 3 (0.770, 3 points below) miss, C = 10 (0.785)
    # and C = 30 (0.801) are within: the smaller, 10.
    assert pa.choose_clip({30: 0.801, 1: 0.300, 10: 0.785, 3: 0.770}, 0.800) == (10, True)
    # Every clip within: the smallest.
    assert pa.choose_clip({5: 0.79, 20: 0.80}, 0.80) == (5, True)


def test_without_a_clip_within_2_points_the_best_is_taken_and_the_goal_not_met():
    assert pa.choose_clip({1: 0.20, 3: 0.60, 10: 0.70}, 0.80) == (10, False)
    # A tie for the best: the smaller clip.
    assert pa.choose_clip({3: 0.70, 10: 0.70, 1: 0.2}, 0.80) == (3, False)
    with pytest.raises(ValueError):
        pa.choose_clip({}, 0.8)


# --- the smallest epsilon --------------------------------------------------------------

def test_the_smallest_epsilon_is_where_accuracy_last_stays_within_5_points():
    # DP off 0.80: clipping alone and epsilon 100 and 30 within 5 points, 10 is 10 points
    # below; 3 is within again (noise), but accuracy did not *stay* within: 30.
    points = [(math.inf, 0.80), (10.0, 0.70), (100.0, 0.79), (3.0, 0.78), (30.0, 0.76)]
    assert pa.smallest_epsilon_within(points, 0.80) == 30.0
    assert pa.epsilon_verdict(30.0) == "none up to epsilon = 10 (smallest within 5 points: 30)"


def test_an_epsilon_up_to_10_within_5_points_is_named():
    points = [(math.inf, 0.80), (50.0, 0.79), (8.5, 0.77), (2.0, 0.60)]
    assert pa.smallest_epsilon_within(points, 0.80) == 8.5
    assert pa.epsilon_verdict(8.5) == "epsilon = 8.5"
    assert pa.epsilon_verdict(10.0) == "epsilon = 10"


def test_none_up_to_10_when_only_clipping_alone_or_nothing_is_within():
    only_clipping = [(math.inf, 0.80), (1000.0, 0.50), (9.0, 0.10)]
    assert math.isinf(pa.smallest_epsilon_within(only_clipping, 0.80))
    assert pa.epsilon_verdict(math.inf).startswith("none up to epsilon = 10 (only clipping alone")
    clipping_costs = [(math.inf, 0.70), (1000.0, 0.79)]
    assert pa.smallest_epsilon_within(clipping_costs, 0.80) is None
    assert pa.epsilon_verdict(None) == "none up to epsilon = 10 (no cell within 5 points)"


# --- settled -----------------------------------------------------------------------------

def test_a_curve_still_rising_has_not_settled():
    rising = [[0.50, 0.60, 0.70, 0.72, 0.74, 0.76, 0.78]]  # last 5: 0.70 .. 0.78
    assert math.isclose(pa.settling_span(rising), 0.08)
    assert math.isclose(pa.settling_trend(rising), 0.08)
    assert not pa.settled(rising)


def test_settled_is_judged_on_the_mean_over_the_seeds_and_needs_less_than_2_points():
    # Each seed jitters by 2 points, in opposite phase: the mean (0.81) does not move.
    a = [0.5, 0.80, 0.82, 0.80, 0.82, 0.80]
    b = [0.6, 0.82, 0.80, 0.82, 0.80, 0.82]
    assert pa.settling_span([a, b]) < 1e-12 and pa.settled([a, b])
    assert math.isclose(pa.settling_span([a]), 0.02)
    assert not pa.settled([a])  # moved by 2 points: not less than 2
    assert pa.settled([[0.1, 0.800, 0.810, 0.805, 0.815, 0.819]])  # 1.9 points


def test_settled_needs_5_rounds_and_cuts_the_seeds_to_the_shortest():
    assert math.isnan(pa.settling_span([[0.8, 0.8, 0.8, 0.8]]))
    assert not pa.settled([[0.8, 0.8, 0.8, 0.8]])
    # The longer seed's sixth round (0.2) is not compared with a round the other lacks.
    assert pa.settled([[0.8] * 5, [0.8] * 5 + [0.2]])


# --- the page from results files ---------------------------------------------------------

DELTA = 1e-5


def _write_cell(runs, name, curves, clip=None, sigma=None, binary="abc123"):
    """One cell, one file per seed (NAME.seedS.h5) with its provenance."""
    privacy = ({"mechanism": "gaussian", "noise_multiplier": repr(sigma), "clip": repr(clip),
                "adjacency": "add-remove"} if clip is not None else {"mechanism": "none"})
    paths = []
    for seed, curve in enumerate(curves, start=1):
        path = str(runs / ("%s.seed%d.h5" % (name, seed)))
        synthetic.write(
            path, "pipar", rounds=[dict(round=r, t_start_ns=r * 10**9, t_end_ns=(r + 1) * 10**9,
                                        test_accuracy=a, test_loss=1.0) for r, a in enumerate(curve)],
            sections={"experiment": {"seed": str(seed), "rounds": str(len(curve))},
                      "privacy": privacy, "train": {"local_iterations": "10"}})
        with h5py.File(path, "a") as f:
            f.attrs["git_revision"] = binary
            f.attrs["trivial_accuracy"] = 0.115
            f.attrs["hosts"] = ["testhost"]
            if sigma:
                f.attrs["privacy_releases"] = len(curve)
                f.attrs["privacy_delta"] = DELTA
                f.attrs["privacy_epsilon"] = pa.gaussian_epsilon(sigma, len(curve), DELTA, 1)
        paths.append(path)
    write_provenance(paths, {"command": ["cmlbed", "run"], "started": "2026-12-07T12:00:00Z",
                             "seconds": 60.0, "status": 0, "cmlbed": "cmlbed test (git %s)" % binary,
                             "study": "bash scripts/studies/privacy-accuracy.sh --test"})


def _flat(level, rounds=6):
    return [level] * rounds


def _study(tmp_path, binary_of_noisy="abc123"):
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    _write_cell(runs, "pipar-off", [_flat(0.80), _flat(0.81), _flat(0.79)])
    _write_cell(runs, "pipar-c1-s0", [_flat(0.60)] * 3, clip=1.0, sigma=0.0)
    _write_cell(runs, "pipar-c5-s0", [_flat(0.79)] * 3, clip=5.0, sigma=0.0)
    _write_cell(runs, "pipar-c20-s0", [_flat(0.80)] * 3, clip=20.0, sigma=0.0)
    # At the chosen clip (5): sigma 0.1 within 5 points, still rising; sigma 1 at chance.
    _write_cell(runs, "pipar-c5-s0.1", [[0.5, 0.70, 0.72, 0.74, 0.76, 0.77]] * 3, clip=5.0, sigma=0.1,
                binary=binary_of_noisy)
    _write_cell(runs, "pipar-c5-s1", [_flat(0.11)] * 3, clip=5.0, sigma=1.0)
    return tmp_path / "results"


def _report(tmp_path, results, archive, doc, *extra):
    return pa.main(["report", "--results", str(results), "--archive", str(archive),
                    "--doc", str(doc), "--image", str(tmp_path / "picture.png")] + list(extra))


def test_the_page_from_results_files_and_again_from_the_kept_digests_alone(tmp_path):
    results = _study(tmp_path)
    archive = tmp_path / "kept"
    assert _report(tmp_path, results, archive, tmp_path / "page.md") == 0
    page = (tmp_path / "page.md").read_text()
    assert "| pipar | 5 | 3 | 0.790 ± 0.000 | 0.115 |" in page and "**chosen**" in page
    assert "| pipar | 1 | 3 | 0.600 ± 0.000 | 0.115 |" in page
    assert "no (range 0.070, drift +0.072)" in page  # sigma 0.1 still rising
    assert "yes (range 0.000, drift +0.000)" in page
    eps = pa.gaussian_epsilon(0.1, 6, DELTA, 1)
    assert "| pipar | 5 | 0.790 against 0.800" in page
    assert "none up to epsilon = 10 (smallest within 5 points: %.3g)" % eps in page
    assert "One binary, as every results file records it: cmlbed test (git abc123)." in page and "--test" in page
    assert os.path.exists(tmp_path / "picture.png")
    assert len(list((archive / "runs").glob("*.h5.json"))) == 18
    shutil.rmtree(results)  # a clean clone: the digests alone
    assert _report(tmp_path, results, archive, tmp_path / "again.md") == 0
    assert (tmp_path / "again.md").read_text() == page


def test_runs_of_two_binaries_are_refused_or_flagged(tmp_path, capsys):
    results = _study(tmp_path, binary_of_noisy="def456")
    assert _report(tmp_path, results, "none", tmp_path / "page.md") == 2
    assert "2 binaries" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "page.md")
    assert _report(tmp_path, results, "none", tmp_path / "page.md", "--allow-mixed-binaries") == 0
    assert "**Flagged: these runs come from 2 binaries" in (tmp_path / "page.md").read_text()


def test_choose_clip_prints_the_clip_for_the_sweep(tmp_path, capsys):
    results = _study(tmp_path)
    assert pa.main(["choose-clip", "--results", str(results), "--archive", "none",
                    "--method", "pipar", "--rounds", "6"]) == 0
    assert capsys.readouterr().out == "5\n"
    assert pa.main(["choose-clip", "--results", str(results), "--archive", "none",
                    "--method", "fl", "--rounds", "6"]) == 1


def test_runs_of_two_round_counts_are_refused(tmp_path, capsys):
    results = _study(tmp_path)
    _write_cell(results / "runs", "pipar-c5-s3", [_flat(0.1, rounds=7)] * 3, clip=5.0, sigma=3.0)
    assert _report(tmp_path, results, "none", tmp_path / "page.md") == 2
    assert "different round counts (6 in" in capsys.readouterr().err
