"""The reproduction report's "What we conclude" (scripts/studies/reproduction_report.py): each
claim's verdict computed from intervals (conclusions() and its rules), and the report
written from synthetic seed files (tests/python/synthetic.py) with the verdicts, n, ±
and the rounds-2.. window in place. No cmlbed run."""

import os
import subprocess
import sys

import pytest

import synthetic
from cmlbed_report import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "studies"))
import reproduction_report as rr  # noqa: E402

S = 10**9
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ratio(numerator, denominator):
    return stats.ratio_of_means(numerator, denominator)


ABOVE = ratio([4.0, 4.2, 3.9], [2.0, 2.1, 1.95])            # about 2.0x, interval above 1
LARGE = ratio([40.0, 42.0, 39.0], [1.0, 1.05, 0.97])        # about 40x, interval above 1
SAME = ratio([4.0, 4.2, 3.9], [4.1, 3.95, 4.15])            # no difference measured
BELOW = ratio([2.0, 2.1, 2.2], [4.0, 4.1, 4.2])             # below 1
BOUND = ratio([2.0, 2.0, 2.0], [0.01, 0.3, 0.02])           # "> X", X about 4.3
SINGLE = stats.ratio_of_means([4.0], [2.0])                  # n = 1


def cell(speedup, idle=None, raw=False, heterogeneous=False, trace=False, where="cell", m="4",
         pipelining=None):
    """A measured grid cell as conclusions() reads it; PiPar at m micro-batches, the
    pipelining factor (SFL at PiPar's split over PiPar) given or left out."""
    return {"speedup": speedup, "idle": idle or speedup, "raw": raw, "m": m,
            "heterogeneous": heterogeneous, "trace": trace, "where": where,
            "split": "2", "sfl_split": "3", "vs_sfl": SAME,
            "same_split": {"speedup": pipelining} if pipelining else None}


def verdicts(evidence):
    return {c["claim"]: c for c in rr.conclusions(evidence)}


def test_every_claim_of_both_papers_has_a_verdict_and_a_reason():
    claims = rr.conclusions({})
    assert len(claims) == 14
    assert {c["paper"] for c in claims} == {"PiPar", "AdaSplit"}
    for c in claims:  # nothing measured: nothing can be decided, and each says why
        assert c["verdict"] == rr.NOT_TESTABLE and c["reason"]


def test_a_gain_is_confirmed_by_an_interval_above_1_and_cites_the_largest():
    v = verdicts({"grid": [cell(ABOVE, where="a"), cell(LARGE, where="b"), cell(SAME, where="c")]})
    faster = v["training faster than FL"]
    assert faster["verdict"] == rr.CONFIRMED
    assert "(b)" in faster["evidence"] and "[" in faster["evidence"]
    assert "2 of 3" in faster["reason"]
    # 40x [low, high] does not reach 34.6x unless its interval does.
    up_to = v["training up to 34.6x faster than FL"]
    assert up_to["verdict"] == (rr.CONFIRMED if LARGE.high >= 34.6 else rr.NOT_CONFIRMED)
    assert LARGE.high >= 34.6  # the example is built to reach it
    small = verdicts({"grid": [cell(ABOVE)]})["training up to 34.6x faster than FL"]
    assert small["verdict"] == rr.NOT_CONFIRMED and "ends at %.2fx" % ABOVE.high in small["reason"]


def test_no_difference_or_below_1_is_not_confirmed_and_n_1_is_not_testable():
    v = verdicts({"grid": [cell(SAME), cell(BELOW)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_CONFIRMED
    assert "1 no difference measured, 1 below 1" in v["training faster than FL"]["reason"]
    assert v["training up to 34.6x faster than FL"]["verdict"] == rr.NOT_CONFIRMED
    v = verdicts({"grid": [cell(SINGLE)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_TESTABLE
    assert "n = 1" in v["training faster than FL"]["reason"]


def test_split_0_cells_never_carry_a_claim():
    # A huge gain at split 0 (raw data uploaded) is left out: only the split >= 1 cell counts.
    v = verdicts({"grid": [cell(LARGE, raw=True), cell(SAME)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_CONFIRMED
    v = verdicts({"grid": [cell(LARGE, raw=True)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_TESTABLE
    assert "split >= 1" in v["training faster than FL"]["reason"]


def test_pipar_claims_rest_on_cells_where_it_pipelines():
    # At m = 1 PiPar runs SFL's schedule: its 40x over FL there is splitting's, no claim
    # of PiPar's rests on it; the pipelining claim reads SFL / PiPar at PiPar's split.
    v = verdicts({"grid": [cell(LARGE, m="1", pipelining=ABOVE), cell(SAME, m="8", pipelining=SAME)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_CONFIRMED
    assert v["pipelining itself speeds training (SFL / PiPar at PiPar's split)"]["verdict"] == rr.NOT_CONFIRMED
    v = verdicts({"grid": [cell(LARGE, m="1"), cell(ABOVE, m="2; 4", pipelining=ABOVE, where="p")]})
    assert v["training faster than FL"]["verdict"] == rr.CONFIRMED
    assert "(p)" in v["training faster than FL"]["evidence"]
    piped = v["pipelining itself speeds training (SFL / PiPar at PiPar's split)"]
    assert piped["verdict"] == rr.CONFIRMED and "(p)" in piped["evidence"]
    # Seeds that chose m = 1 and m = 4: not a pipelined cell.
    v = verdicts({"grid": [cell(LARGE, m="1; 4", pipelining=ABOVE)]})
    assert v["training faster than FL"]["verdict"] == rr.NOT_TESTABLE
    assert "m >= 2" in v["training faster than FL"]["reason"]
    # Without sfl-atp runs, SFL's own run counts where it chose PiPar's split.
    c = cell(ABOVE, m="4")
    c["sfl_split"], c["vs_sfl"] = "2", ABOVE
    assert rr.pipelining(c) is ABOVE
    assert rr.pipelining(cell(ABOVE, m="4")) is None


def test_a_lower_bound_counts_as_above_1_but_only_up_to_its_x():
    assert BOUND.verdict == stats.LOWER_BOUND and BOUND.bound > 1
    v = verdicts({"grid": [cell(ABOVE, idle=BOUND)]})
    assert v["server idle time lower than FL's"]["verdict"] == rr.CONFIRMED
    assert "> %.2fx" % BOUND.bound in v["server idle time lower than FL's"]["evidence"]
    magnitude = v["server idle time down by up to 64.1x vs FL"]
    assert magnitude["verdict"] == rr.NOT_CONFIRMED and "only '> " in magnitude["reason"]
    huge = ratio([700.0, 700.0, 700.0], [0.01, 0.3, 0.02])  # > X with X above 64.1
    assert huge.verdict == stats.LOWER_BOUND and huge.bound > 64.1
    v = verdicts({"grid": [cell(ABOVE, idle=huge)]})
    assert v["server idle time down by up to 64.1x vs FL"]["verdict"] == rr.CONFIRMED


def test_same_accuracy_needs_every_interval_within_the_margin():
    close = ratio([0.861, 0.862, 0.860], [0.860, 0.861, 0.862])
    wide = ratio([0.80, 0.90, 0.70], [0.80, 0.85, 0.75])
    apart = ratio([0.70, 0.71, 0.70], [0.86, 0.86, 0.87])
    claim = "same accuracy as FL"
    assert verdicts({"accuracy": [(close, "a")]})[claim]["verdict"] == rr.CONFIRMED
    v = verdicts({"accuracy": [(close, "a"), (wide, "b")]})[claim]
    assert v["verdict"] == rr.NOT_CONFIRMED and "wider than 1 +- 2%" in v["reason"]
    v = verdicts({"accuracy": [(close, "a"), (apart, "b")]})[claim]
    assert v["verdict"] == rr.NOT_CONFIRMED and "differs" in v["reason"]
    assert verdicts({"accuracy": [(SINGLE, "a")]})[claim]["verdict"] == rr.NOT_TESTABLE


def test_dp_heterogeneity_and_traces():
    dp = {"on": {"speedup": ABOVE, "idle": BOUND}, "off": {"speedup": LARGE, "idle": LARGE}}
    v = verdicts({"dp": dp})
    assert v["the speedup holds with differential privacy (round time only)"]["verdict"] == rr.CONFIRMED
    dp["on"]["speedup"] = SAME
    assert verdicts({"dp": dp})["the speedup holds with differential privacy (round time only)"]["verdict"] == rr.NOT_CONFIRMED
    v = verdicts({"grid": [cell(ABOVE)], "runs_seen": 9})
    het = v["the gain holds with heterogeneous devices"]
    assert het["verdict"] == rr.NOT_TESTABLE and "none of the 9 measured runs" in het["reason"]
    v = verdicts({"grid": [cell(ABOVE), cell(SAME, heterogeneous=True, trace=True)]})
    assert v["the gain holds with heterogeneous devices"]["verdict"] == rr.NOT_CONFIRMED
    assert v["the gain holds with changing bandwidth"]["verdict"] == rr.NOT_CONFIRMED


def test_the_heterogeneity_part_decides_the_condition_claims():
    het, bw = "the gain holds with heterogeneous devices", "the gain holds with changing bandwidth"
    # The part's runs replace the grid's cells: here the grid has none with the condition.
    v = verdicts({"grid": [cell(ABOVE)], "conditions": {
        "heterogeneous": [(ABOVE, "heterogeneous, PiPar planned per device")],
        "changing-bandwidth": [(SAME, "changing-bandwidth, PiPar planned per device")]}})
    assert v[het]["verdict"] == rr.CONFIRMED and "heterogeneous, PiPar planned" in v[het]["evidence"]
    assert "experiments (PiPar planned per device" in v[het]["reason"]
    assert v[bw]["verdict"] == rr.NOT_CONFIRMED
    # Ran, but no faithful experiment: not testable, and said so.
    v = verdicts({"conditions": {"heterogeneous": []}})
    assert v[het]["verdict"] == rr.NOT_TESTABLE and "not every run of it was a faithful" in v[het]["reason"]
    # Not run: the reason names the part to run.
    v = verdicts({"runs_seen": 4})
    assert v[bw]["verdict"] == rr.NOT_TESTABLE and "--only heterogeneity,report" in v[bw]["reason"]
    assert rr.heterogeneity_key("changing-bandwidth-pipar-replan") == ("changing-bandwidth", "pipar-replan")
    assert rr.heterogeneity_key("heterogeneous-fl") == ("heterogeneous", "fl")


def test_adasplit_claims():
    bytes_ratio = ratio([0.2769, 0.2769], [0.0333, 0.0333])  # 8.32x with no spread
    near = {"accuracy": {"sfl": ABOVE}, "bytes": {"sfl": bytes_ratio},
            "personalised": {"sfl": False}, "expected": (8.33, "the schedule")}
    v = verdicts({"adasplit": near})
    accuracy = v["higher accuracy than SplitFed"]
    assert accuracy["verdict"] == rr.NOT_TESTABLE and "not like for like" in accuracy["reason"]
    assert v["fewer bytes than SplitFed"]["verdict"] == rr.CONFIRMED
    factor = v["8.13x fewer bytes than SplitFed"]
    assert factor["verdict"] == rr.CONFIRMED and "8.33x" in factor["reason"]
    assert v["higher accuracy than SL"]["verdict"] == rr.NOT_TESTABLE
    assert "no SL run" in v["higher accuracy than SL"]["reason"]
    near["personalised"]["sfl"] = True
    confirmed = verdicts({"adasplit": near})["higher accuracy than SplitFed"]
    assert confirmed["verdict"] == rr.CONFIRMED and "personalised SplitFed" in confirmed["reason"]
    near["accuracy"]["sfl"] = SAME
    assert verdicts({"adasplit": near})["higher accuracy than SplitFed"]["verdict"] == rr.NOT_CONFIRMED
    near["bytes"]["sfl"] = ratio([0.0044, 0.0044], [0.00066, 0.00066])  # 6.67x
    v = verdicts({"adasplit": near})["8.13x fewer bytes than SplitFed"]
    assert v["verdict"] == rr.NOT_CONFIRMED and "misses 8.13x" in v["reason"]


def test_a_baseline_below_the_trivial_rate_has_failed_and_carries_no_verdict():
    # Personalised SplitFed at 0.615 / 0.402 / 0.567 on devices of two classes each
    # (trivial rate 0.5): its interval reaches below 0.5, so it failed.
    assert rr.failed_to_learn([0.615, 0.402, 0.567], 0.5) is True
    assert rr.failed_to_learn([0.81, 0.80, 0.83], 0.5) is False
    assert rr.failed_to_learn([0.81, 0.80], float("nan")) is None  # runs made before the rate
    assert rr.failed_to_learn([0.45], 0.5) is True  # n = 1: the mean
    near = {"accuracy": {"sfl": ABOVE}, "bytes": {}, "personalised": {"sfl": True},
            "failed": {"sfl": (True, 0.5)}}
    v = verdicts({"adasplit": near})["higher accuracy than SplitFed"]
    assert v["verdict"] == rr.NOT_TESTABLE and "failed to learn" in v["reason"] and "0.500" in v["reason"]
    near["failed"]["sfl"] = (None, float("nan"))
    v = verdicts({"adasplit": near})["higher accuracy than SplitFed"]
    assert v["verdict"] == rr.NOT_TESTABLE and "predate the trivial rate" in v["reason"]
    near["failed"]["sfl"] = (False, 0.5)
    assert verdicts({"adasplit": near})["higher accuracy than SplitFed"]["verdict"] == rr.CONFIRMED
    # PiPar vs FL: groups whose FL did not learn are left out, and said so.
    v = verdicts({"accuracy": [], "accuracy_failed": ["synthetic, vgg5 (FL at or below the trivial rate 0.100)"]})
    same = v["same accuracy as FL"]
    assert same["verdict"] == rr.NOT_TESTABLE and "no group whose FL baseline learns" in same["reason"]


def test_adasplit_accuracy_is_judged_against_the_personalised_baseline_where_it_ran():
    plain, personalised = {"personalised": False}, {"personalised": True}
    assert rr.accuracy_baseline({"sfl": plain, "sfl-personalised": personalised}, "sfl") == "sfl-personalised"
    assert rr.accuracy_baseline({"sfl": plain}, "sfl") == "sfl"
    assert rr.accuracy_baseline({"sfl": plain, "sfl-personalised": plain}, "sfl") == "sfl"
    assert rr.accuracy_baseline({"sl-personalised": personalised}, "sl") == "sl-personalised"
    assert rr.accuracy_baseline({}, "sl") is None


def test_the_simulator_band_is_the_largest_error_of_the_held_out_tables(tmp_path):
    band = rr.simulator_band()
    assert band is not None and len(band["tables"]) == 2
    assert band["largest"] == max(t["largest"] for t in band["tables"]) < 1
    pages = []
    for name, largest in (("a.md", "9.9"), ("b.md", "31.3")):
        page = tmp_path / name
        page.write_text("Generated by x on 2026-12-04 05:53 UTC (...)\n\n"
                        "21 of 21 rows within both goals; median |error| of the round time 1.8%%, "
                        "largest %s%%.\n" % largest)
        pages.append(str(page))
    table = rr.read_prediction_table(pages[0])
    assert (table["within"], table["rows"]) == (21, 21)
    assert (table["median"], table["largest"]) == pytest.approx((0.018, 0.099))
    assert table["generated"] == "2026-12-04 05:53 UTC"
    assert rr.simulator_band(pages)["largest"] == pytest.approx(0.313)
    # One table missing: no band, rather than one from part of the evidence.
    assert rr.simulator_band(pages + [str(tmp_path / "missing.md")]) is None
    lo, hi = rr.band_interval(2.0, 0.1)
    assert (lo, hi) == pytest.approx((2.0 * 0.9 / 1.1, 2.0 * 1.1 / 0.9))


# --- the report from synthetic seed files ----------------------------------------------------

def seed_file(folder, stem, method, seed, walls, idles, split="3", accuracy=0.5, gb=1e6,
              sections=None):
    t, table = 0, []
    for k, (wall, idle) in enumerate(zip(walls, idles)):
        table.append(dict(round=k, t_start_ns=round(t * S), t_end_ns=round((t + wall) * S),
                          bytes_up=gb, bytes_down=gb, messages_up=4, messages_down=4,
                          busy_s=[wall - idle, wall / 2, wall / 2], idle_s=[idle, wall / 2, wall / 2],
                          flops=[1e12, 1e10, 1e10], test_loss=1.0, test_accuracy=accuracy))
        t += wall
    options = {"experiment": {"seed": str(seed), "rounds": str(len(walls))},
               "model": {"name": "lenet", "split": split},
               "output": {"file": "%s.seed%d.h5" % (stem, seed)}}
    for section, values in (sections or {}).items():
        options.setdefault(section, {}).update(values)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "%s.seed%d.h5" % (stem, seed))
    synthetic.write(path, method, rounds=table, sections=options)
    with open(path + ".run.json", "w") as f:
        f.write('{"command": ["mpirun", "cmlbed", "run"], "started": "2026-12-04T00:00:00Z", '
                '"seconds": 3.0, "status": 0, "host": "h", "load_after": "0 0 0", "cores": 2, '
                '"cmlbed": "cmlbed test", "seed": %d, "repeats": 3}' % seed)
    return path


def test_the_report_from_synthetic_seed_files(tmp_path):
    results = tmp_path / "results"
    measured = str(results / "measured")
    # Round 1 of every run is long, PiPar's longest (as if something slowed only it): with
    # the rounds-2.. window PiPar is clearly faster than FL, over every round it is not.
    for seed, (fl, sfl, pipar) in enumerate([(4.0, 2.5, 2.0), (4.2, 2.6, 2.1), (3.9, 2.4, 1.95)], 1):
        seed_file(measured, "lenet-10mbit-fl", "fl", seed, [40.0, fl, fl], [39.0, fl - 0.1, fl - 0.1],
                  split="0")
        seed_file(measured, "lenet-10mbit-sfl", "sfl", seed, [40.0, sfl, sfl], [20.0, 1.0, 1.0])
        seed_file(measured, "lenet-10mbit-pipar", "pipar", seed, [60.0, pipar, pipar],
                  [20.0, 0.5 + 0.01 * seed, 0.5 + 0.01 * seed])
    ada = str(results / "adasplit")
    for seed in (1, 2, 3):
        seed_file(ada, "sfl", "sfl", seed, [3.0, 3.0], [1.0, 1.0], accuracy=0.3, gb=2.0e6)
        seed_file(ada, "adasplit", "adasplit", seed, [1.0, 1.0], [0.5, 0.5], accuracy=0.9, gb=0.3e6,
                  sections={"adasplit": {"local_fraction": "0.6", "selected": "3"}})
    doc = tmp_path / "doc" / "reproduction.md"
    command = [sys.executable, os.path.join(ROOT, "scripts", "studies", "reproduction_report.py"),
               "--results", str(results), "--doc", str(doc), "--images", str(tmp_path / "images"),
               "--archive", str(tmp_path / "kept"), "--networks", "lenet", "--rates", "10",
               "--adasplit-methods", "sfl adasplit", "--repeats", "3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "predate seeds" not in done.stderr
    text = doc.read_text()
    row = next(l for l in text.splitlines() if l.startswith("| lenet | 10 mbit | measured"))
    assert "measured, n = 3" in row and row.count(" ± ") >= 5
    expected = stats.ratio_of_means([4.0, 4.2, 3.9], [2.0, 2.1, 1.95])
    assert "%.2fx [%.2f, %.2f]" % (expected.value, expected.low, expected.high) in row
    assert "rounds 2.. of each run" in text
    conclusions = text.split("## What we conclude", 1)[1].split("## Provenance", 1)[0]
    claims = {l.split(" | ")[1]: l for l in conclusions.splitlines() if l.startswith("| PiPar |")
              or l.startswith("| AdaSplit |")}
    assert len(claims) == 14
    assert "**confirmed**" in claims["training faster than FL"]
    assert "%.2fx [%.2f, %.2f]" % (expected.value, expected.low, expected.high) in claims["training faster than FL"]
    assert "**not confirmed**" in claims["training up to 34.6x faster than FL"]
    assert "**not testable here**" in claims["the speedup holds with differential privacy (round time only)"]
    assert "**confirmed**" in claims["fewer bytes than SplitFed"]
    assert "**not testable here**" in claims["higher accuracy than SplitFed"]  # not personalised
    assert "One binary behind every run: `cmlbed test`" in text
    # Every seed's digest is kept.
    kept = sorted(os.listdir(tmp_path / "kept" / "measured"))
    assert len([k for k in kept if k.endswith(".h5.json")]) == 9
    # Over every round (--from-round 1) the slow first round hides the gain.
    done = subprocess.run(command + ["--from-round", "1", "--doc", str(tmp_path / "all.md")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    every = (tmp_path / "all.md").read_text().split("## What we conclude", 1)[1]
    line = next(l for l in every.splitlines() if l.startswith("| PiPar | training faster than FL |"))
    assert "**confirmed**" not in line


def test_runs_made_before_seeds_warn_or_fail(tmp_path):
    results = tmp_path / "results" / "measured"
    for method in ("fl", "sfl", "pipar"):
        path = seed_file(str(results), "lenet-10mbit-" + method, method, 1, [4.0, 4.0], [1.0, 1.0])
        os.rename(path, str(results / ("lenet-10mbit-%s.h5" % method)))
        os.rename(path + ".run.json", str(results / ("lenet-10mbit-%s.h5.run.json" % method)))
    command = [sys.executable, os.path.join(ROOT, "scripts", "studies", "reproduction_report.py"),
               "--results", str(tmp_path / "results"), "--doc", str(tmp_path / "r.md"),
               "--images", str(tmp_path / "images"), "--archive", "none", "--networks", "lenet",
               "--rates", "10"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "warning: the runs of 1 groups predate seeds" in done.stderr
    assert "scripts/studies/reproduction.sh --full --repeats 3" in done.stderr
    assert "measured, n = 1 (made before seeds)" in (tmp_path / "r.md").read_text()
    done = subprocess.run(command + ["--strict-seeds", "--doc", str(tmp_path / "s.md")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 4 and "error: the runs of 1 groups predate seeds" in done.stderr
    assert not (tmp_path / "s.md").exists()
