"""`cmlbed-report summary --from-round K` (issue 38: one averaging window, rounds 2..
when round 1 starts with full token buckets): every figure of a run over rounds K.., a
run with fewer rounds keeps all of them and is named, the default (every round) is
unchanged. Hand-worked numbers on synthetic files (tests/python/synthetic.py)."""

import csv

import numpy as np
import pytest

import synthetic
from cmlbed_report import stats, summary
from cmlbed_report.results import load_runs

S = 10**9


def write_run(tmp_path, name, method, walls, idles, seed=1, accuracy=None):
    """A run of len(walls) rounds: round k lasts walls[k] s with the server idle idles[k] s,
    1 MB up per round, 10^12 FLOPs per rank and round."""
    t, table = 0, []
    for k, (wall, idle) in enumerate(zip(walls, idles)):
        table.append(dict(round=k, t_start_ns=round(t * S), t_end_ns=round((t + wall) * S),
                          bytes_up=10**6, bytes_down=2 * 10**6, messages_up=4, messages_down=4,
                          busy_s=[wall - idle, wall / 2, wall / 2], idle_s=[idle, wall / 2, wall / 2],
                          flops=[1e12, 1e12, 1e12], test_loss=1.0,
                          test_accuracy=(accuracy[k] if accuracy else 0.5)))
        t += wall
    return str(synthetic.write(tmp_path / ("%s.seed%d.h5" % (name, seed)), method, rounds=table,
                               sections={"experiment": {"seed": str(seed), "rounds": str(len(walls))},
                                         "output": {"file": "%s.seed%d.h5" % (name, seed)}}))


def test_the_window_leaves_out_the_first_rounds(tmp_path):
    path = write_run(tmp_path, "fl", "fl", [10.0, 2.0, 4.0], [9.0, 1.0, 3.0],
                     accuracy=[0.9, 0.4, 0.6])
    run = load_runs([path])[0]
    every = summary.run_numbers(run)
    assert every["mean_round_s"] == pytest.approx(16 / 3) and every["rounds"] == 3
    assert every["first_round"] == 1 and not every["window_fallback"]
    steady = summary.run_numbers(run, from_round=2)
    assert steady["rounds"] == 2 and steady["first_round"] == 2
    assert steady["mean_round_s"] == pytest.approx(3.0)
    assert steady["total_s"] == pytest.approx(6.0)
    assert steady["server_idle_s"] == pytest.approx(4.0)
    assert steady["server_idle_pct"] == pytest.approx(100 * 4 / 6)
    assert steady["mb_up"] == pytest.approx(2.0) and steady["mb_down"] == pytest.approx(4.0)
    assert steady["messages_up"] == 8 and steady["server_tflops"] == pytest.approx(2.0)
    assert steady["device_tflops"] == pytest.approx(4.0)
    # The final accuracy is the last round's either way; the best is the window's.
    assert steady["final_accuracy"] == every["final_accuracy"] == pytest.approx(0.6)
    assert every["best_accuracy"] == pytest.approx(0.9)
    assert steady["best_accuracy"] == pytest.approx(0.6)
    # The same as Run.steady_round_s, which other scripts use for "rounds 2..".
    assert steady["mean_round_s"] == pytest.approx(run.steady_round_s())
    assert summary.run_numbers(run, from_round=3)["mean_round_s"] == pytest.approx(4.0)


def test_a_run_with_fewer_rounds_keeps_all_of_them(tmp_path):
    run = load_runs([write_run(tmp_path, "one", "fl", [5.0], [4.0])])[0]
    numbers = summary.run_numbers(run, from_round=2)
    assert numbers["rounds"] == 1 and numbers["first_round"] == 1
    assert numbers["window_fallback"] and numbers["mean_round_s"] == pytest.approx(5.0)
    with pytest.raises(Exception):
        summary.window(run, 0)


def test_groups_and_ratios_use_the_window(tmp_path):
    # Round 1 of every run is slow (full buckets aside, it is what the window leaves out).
    fl = [write_run(tmp_path, "fl", "fl", [20.0, w, w], [19.0, w - 0.1, w - 0.1], seed=s)
          for s, w in enumerate([4.0, 4.2, 3.9], 1)]
    pipar = [write_run(tmp_path, "pipar", "pipar", [30.0, w, w], [1.0, 0.5, 0.5], seed=s)
             for s, w in enumerate([2.0, 2.1, 1.95], 1)]
    groups = summary.group_runs(load_runs(fl + pipar))
    rows = summary.compare_groups(groups, "fl", from_round=2)
    assert [row["n"] for row in rows] == [3, 3]
    half = stats.mean_ci([4.0, 4.2, 3.9])[1]
    assert rows[0]["mean_round_s"] == pytest.approx(np.mean([4.0, 4.2, 3.9]))
    assert rows[0]["mean_round_s_ci95"] == pytest.approx(half)
    expected = stats.ratio_of_means([4.0, 4.2, 3.9], [2.0, 2.1, 1.95])
    assert rows[1]["speedup_ratio"].verdict == stats.ABOVE_1
    assert (rows[1]["speedup_ci95_low"], rows[1]["speedup_ci95_high"]) == pytest.approx(
        (expected.low, expected.high))
    assert rows[1]["server_idle_per_round_s"] == pytest.approx(0.5)
    # Over every round the slow first round makes PiPar the slower one.
    every = summary.compare_groups(groups, "fl")
    assert every[1]["speedup"] < 1


def read_csv(path):
    return {row["run"]: row for row in csv.DictReader(open(path))}


def test_the_command_line_option(tmp_path, cli):
    three = write_run(tmp_path, "fl", "fl", [10.0, 2.0, 4.0], [9.0, 1.0, 3.0])
    one = write_run(tmp_path, "short", "sfl", [5.0], [4.0])
    status, out, err = cli("summary", "--brief", "--from-round", "2", three, one,
                           "--csv", tmp_path / "w.csv", "--markdown", tmp_path / "w.md")
    assert status == 0, err
    rows = read_csv(tmp_path / "w.csv")
    assert float(rows["fl"]["mean_round_s"]) == pytest.approx(3.0)
    assert rows["fl"]["rounds"] == "2"
    assert float(rows["short"]["mean_round_s"]) == pytest.approx(5.0)
    note = "Figures over rounds 2.. of each run (--from-round 2); with fewer rounds than that, all rounds: short."
    assert note in out and note in (tmp_path / "w.md").read_text()
    # The default is every round, and says nothing about a window.
    status, out, err = cli("summary", "--brief", three, "--csv", tmp_path / "d.csv")
    assert status == 0, err
    assert float(read_csv(tmp_path / "d.csv")["fl"]["mean_round_s"]) == pytest.approx(16 / 3)
    assert "Figures over rounds" not in out
    # Rounds count from 1.
    for bad in ("0", "-1", "two"):
        status, out, err = cli("summary", "--from-round", bad, three)
        assert status == 2 and "is not a round number" in err
