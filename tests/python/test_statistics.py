"""Repeated runs (issue 38): the t quantile, mean ± 95% half-width, Fieller's ratio
interval and its rules, the grouping of seed files in `summary` (text, Markdown, CSV),
the split-0 mark, and the intervals in the pictures. Hand-worked numbers; synthetic
results files (tests/python/synthetic.py), no cmlbed run."""

import csv
import math

import numpy as np
import pytest

import synthetic
from cmlbed_report import plots, stats, summary, timeline
from cmlbed_report.results import load_runs

S = 10**9


# --- the t quantile ------------------------------------------------------------------------

@pytest.mark.parametrize("df, expected", [(1, 12.7062), (2, 4.3027), (4, 2.7764),
                                          (10, 2.2281), (30, 2.0423)])
def test_t_quantile_against_the_table(df, expected):
    assert stats.t_quantile(0.975, df) == pytest.approx(expected, abs=5e-5)


def test_t_quantile_against_closed_forms():
    # df 1 is the Cauchy distribution, df 2 has t = (2p - 1) sqrt(2 / (4 p (1 - p))).
    for p in (0.6, 0.9, 0.975, 0.995):
        assert stats.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)),
                                                       rel=1e-10)
        assert stats.t_quantile(p, 2) == pytest.approx(
            (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))), rel=1e-10)
    assert stats.t_quantile(0.025, 4) == pytest.approx(-2.7764, abs=5e-5)
    # Large df tends to the normal quantile 1.95996.
    assert stats.t_quantile(0.975, 10**6) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        stats.t_quantile(1.0, 3)


# --- mean and interval ---------------------------------------------------------------------

def test_interval_by_hand():
    # 1, 2, 3: mean 2, s = 1, half-width t(0.975, 2) / sqrt(3) = 4.3027 / 1.7321.
    mean, half, n = stats.mean_ci([1, 2, 3])
    assert (mean, n) == (2.0, 3)
    assert half == pytest.approx(2.4842, abs=1e-4)
    mean, half, n = stats.mean_ci([5.0])
    assert mean == 5.0 and n == 1 and math.isnan(half)
    assert math.isnan(stats.mean_ci([1.0, math.nan])[0])


# --- ratio of means ------------------------------------------------------------------------

def test_fieller_interval_solves_its_equation():
    a, b = [4.0, 4.2, 3.9], [2.0, 2.1, 1.95]
    r = stats.ratio_of_means(a, b)
    assert r.verdict == stats.ABOVE_1 and r.value == pytest.approx(np.mean(a) / np.mean(b))
    ma, mb = np.mean(a), np.mean(b)
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 3
    t = 4.302652729749  # df = min(3, 3) - 1 = 2
    for end in (r.low, r.high):  # the ends of {R : (ma - R mb)^2 <= t^2 (va + R^2 vb)}
        assert (ma - end * mb) ** 2 == pytest.approx(t * t * (va + end * end * vb), rel=1e-9)
    assert r.low < r.value < r.high
    # No spread at all: the interval shrinks to the point.
    flat = stats.ratio_of_means([3.0, 3.0], [2.0, 2.0])
    assert flat.low == pytest.approx(1.5) and flat.high == pytest.approx(1.5)


def test_ratio_rules():
    assert stats.ratio_of_means([1.0, 2.0], [1.0, 2.0], same=True).verdict == stats.BASELINE
    single = stats.ratio_of_means([4.0], [2.0, 2.2])
    assert single.verdict == stats.SINGLE_RUN and single.value == pytest.approx(4.0 / 2.1)
    assert math.isnan(single.low)
    overlap = stats.ratio_of_means([4.0, 4.2, 3.9], [4.1, 3.95, 4.15])
    assert overlap.verdict == stats.NO_DIFFERENCE and overlap.low < 1 < overlap.high
    # Denominator 0.01, 0.3, 0.02: its interval 0.11 ± 0.409 reaches 0.
    near_zero = stats.ratio_of_means([2.0, 2.0, 2.0], [0.01, 0.3, 0.02])
    half = 4.302652729749 * np.std([0.01, 0.3, 0.02], ddof=1) / math.sqrt(3)
    assert near_zero.verdict == stats.LOWER_BOUND and math.isnan(near_zero.value)
    assert near_zero.bound == pytest.approx(2.0 / (0.11 + half))
    assert stats.ratio_of_means([1.0, 1.1], [0.0, 0.0]).verdict == stats.UNDEFINED
    assert stats.ratio_of_means([1.0, math.nan], [1.0, 2.0]).verdict == stats.UNDEFINED
    assert stats.ratio_of_means([2.0, 2.1, 2.2], [4.0, 4.1, 4.2]).verdict == stats.BELOW_1


# --- summary over seed files ---------------------------------------------------------------

def seeded(tmp_path, stem, method, walls, server_idle=1.0, sections=None, rounds=2):
    """One file per seed, STEM.seed<S>.h5 as `cmlbed run --repeats` names them: `rounds`
    rounds of walls[i] seconds, the server idle server_idle[i] seconds of each."""
    idles = server_idle if isinstance(server_idle, list) else [server_idle] * len(walls)
    paths = []
    for seed, (wall, idle) in enumerate(zip(walls, idles), 1):
        table = [dict(round=k, t_start_ns=round(k * wall * S), t_end_ns=round((k + 1) * wall * S),
                      bytes_up=10**6, bytes_down=10**6, messages_up=4, messages_down=4,
                      busy_s=[wall - idle, wall / 2, wall / 2], idle_s=[idle, wall / 2, wall / 2],
                      flops=[1e12, 1e12, 1e12], test_loss=1.0, test_accuracy=0.5 + 0.01 * seed)
                 for k in range(rounds)]
        options = {"experiment": {"seed": str(seed), "rounds": str(rounds)},
                   "output": {"file": "results/%s.seed%d.h5" % (stem, seed)}}
        for section, values in (sections or {}).items():
            options.setdefault(section, {}).update(values)
        paths.append(str(synthetic.write(tmp_path / ("%s.seed%d.h5" % (stem, seed)), method,
                                         rounds=table, sections=options)))
    return paths


FL_WALLS = [4.0, 4.2, 3.9]


def read_csv(path):
    return {row["run"]: row for row in csv.DictReader(open(path))}


def test_three_seeds_are_one_row_with_intervals(tmp_path, cli):
    files = seeded(tmp_path, "q-fl", "fl", FL_WALLS)
    csv_path, md_path = tmp_path / "runs.csv", tmp_path / "runs.md"
    status, out, err = cli("summary", "--brief", *files, "--csv", csv_path,
                           "--markdown", md_path)
    assert status == 0, err
    rows = read_csv(csv_path)
    assert list(rows) == ["q-fl"]
    row = rows["q-fl"]
    assert row["n"] == "3" and row["seeds"] == "1 2 3"
    half = 4.302652729749 * np.std(FL_WALLS, ddof=1) / math.sqrt(3)
    assert float(row["mean_round_s"]) == pytest.approx(np.mean(FL_WALLS))
    assert float(row["mean_round_s_ci95"]) == pytest.approx(half, rel=1e-6)
    header = next(csv.reader(open(csv_path)))
    # Each figure's half-width right after it, named after it.
    for figure in ("mean_round_s", "total_s", "server_idle_s", "server_idle_pct",
                   "device_idle_s", "mb_up", "messages_up", "server_tflops",
                   "final_accuracy", "best_accuracy"):
        assert header[header.index(figure) + 1] == figure + "_ci95"
    assert header[header.index("speedup") + 1:header.index("speedup") + 4] == [
        "speedup_ci95_low", "speedup_ci95_high", "speedup_verdict"]
    assert row["speedup"] == "1.0" and row["speedup_verdict"] == "baseline"
    assert row["speedup_ci95_low"] == "" and row["speedup_ci95_high"] == ""
    line = next(l for l in out.splitlines() if l.startswith("q-fl "))
    assert "%.3f ± %.3f" % (np.mean(FL_WALLS), half) in line
    assert "%.3f ± %.3f" % (np.mean(FL_WALLS), half) in md_path.read_text()


def test_a_lone_run_has_n_1_and_no_interval(tmp_path, cli):
    fl = seeded(tmp_path, "fl", "fl", [4.0])
    sfl = synthetic.write(tmp_path / "sfl.h5", "sfl", rounds=[
        dict(round=k, t_start_ns=k * 5 * S, t_end_ns=(k + 1) * 5 * S) for k in range(2)],
        sections={"experiment": {"rounds": "2"}})
    status, out, err = cli("summary", "--brief", *fl, sfl, "--csv", tmp_path / "r.csv")
    assert status == 0, err
    rows = read_csv(tmp_path / "r.csv")
    assert rows["fl"]["n"] == rows["sfl"]["n"] == "1"
    assert rows["sfl"]["mean_round_s_ci95"] == "" and rows["sfl"]["speedup_verdict"] == "single_run"
    assert float(rows["sfl"]["speedup"]) == pytest.approx(0.8)
    assert "0.80x (n=1)" in out and "±" not in out.split("\n", 1)[1]  # below the heading


def test_seed_groups_are_compared_with_the_baseline_group(tmp_path, cli):
    files = (seeded(tmp_path, "q-fl", "fl", FL_WALLS)
             + seeded(tmp_path, "q-pipar", "pipar", [2.0, 2.1, 1.95], server_idle=0.5))
    status, out, err = cli("summary", "--brief", *files, "--csv", tmp_path / "r.csv")
    assert status == 0, err
    assert "no fl run has the same settings" not in err  # seeds do not split the experiment
    row = read_csv(tmp_path / "r.csv")["q-pipar"]
    assert row["baseline"] == "q-fl" and row["speedup_verdict"] == "above_1"
    expected = stats.ratio_of_means(FL_WALLS, [2.0, 2.1, 1.95])
    assert float(row["speedup_ci95_low"]) == pytest.approx(expected.low)
    assert float(row["speedup_ci95_high"]) == pytest.approx(expected.high)
    assert "%.2fx [%.2f, %.2f]" % (expected.value, expected.low, expected.high) in out


def test_a_ratio_whose_interval_includes_1_is_no_difference(tmp_path, cli):
    files = (seeded(tmp_path, "q-fl", "fl", FL_WALLS)
             + seeded(tmp_path, "q-sfl", "sfl", [4.1, 3.95, 4.15]))
    status, out, err = cli("summary", "--brief", *files, "--csv", tmp_path / "r.csv",
                           "--markdown", tmp_path / "r.md")
    assert status == 0, err
    line = next(l for l in out.splitlines() if l.startswith("q-sfl "))
    assert "no difference measured" in line
    assert "1.0" not in line.split("q-fl", 1)[1].split("no difference")[0]  # no speedup shown
    assert "no difference measured" in (tmp_path / "r.md").read_text()
    assert read_csv(tmp_path / "r.csv")["q-sfl"]["speedup_verdict"] == "no_difference"


def test_a_denominator_near_zero_prints_a_lower_bound(tmp_path, cli):
    idles = [0.01, 0.3, 0.02]
    files = (seeded(tmp_path, "q-fl", "fl", FL_WALLS, server_idle=2.0)
             + seeded(tmp_path, "q-pipar", "pipar", [3.0, 3.1, 2.9], server_idle=idles))
    status, out, err = cli("summary", "--brief", *files, "--csv", tmp_path / "r.csv")
    assert status == 0, err
    half = 4.302652729749 * np.std(idles, ddof=1) / math.sqrt(3)
    bound = 2.0 / (np.mean(idles) + half)  # numerator mean / the interval's upper end
    line = next(l for l in out.splitlines() if l.startswith("q-pipar "))
    assert "> %.2fx" % bound in line
    row = read_csv(tmp_path / "r.csv")["q-pipar"]
    assert row["server_idle_reduction_verdict"] == "lower_bound"
    assert row["server_idle_reduction"] == "" and row["server_idle_reduction_ci95_high"] == ""
    assert float(row["server_idle_reduction_ci95_low"]) == pytest.approx(bound)
    # The point figure 2.0 / 0.11 = 18.18x appears nowhere.
    assert "18.18" not in out


def test_runs_of_another_experiment_or_one_file_twice_are_not_repeats(tmp_path, capsys):
    a = seeded(tmp_path, "a", "pipar", [2.0, 2.1])
    b = seeded(tmp_path, "b", "pipar", [2.0], sections={"pipar": {"micro_batches": "1"}})
    groups = summary.group_runs(load_runs(a + b + a[:1]))
    assert [(g.label, g.n) for g in groups] == [("a", 2), ("b", 1)]
    assert "given twice" in capsys.readouterr().err


# --- split 0 ---------------------------------------------------------------------------------

def test_split_0_is_marked_as_raw_data_uploaded(tmp_path, cli):
    fl = seeded(tmp_path, "fl", "fl", [4.0], sections={"model": {"split": "0"}})
    p0 = seeded(tmp_path, "p0", "pipar", [3.0], sections={"model": {"split": "0"}})
    p2 = seeded(tmp_path, "p2", "sfl", [3.0], sections={"model": {"split": "2"}})
    status, out, err = cli("summary", "--brief", *(fl + p0 + p2), "--csv", tmp_path / "r.csv",
                           "--markdown", tmp_path / "r.md")
    assert status == 0, err
    cells = {l.split()[0]: l.split()[3] for l in out.splitlines() if l[:3] in ("fl ", "p0 ", "p2 ")}
    assert cells == {"fl": "-", "p0": "0*", "p2": "2"}
    assert summary.RAW_DATA_NOTE in out
    rows = read_csv(tmp_path / "r.csv")
    assert [rows[k]["raw_data_uploaded"] for k in ("fl", "p0", "p2")] == ["false", "true", "false"]
    assert rows["p0"]["split"] == "0"
    markdown = (tmp_path / "r.md").read_text()
    assert "| p0 | pipar | lenet | 0\\* |" in markdown
    assert "\\* split 0: raw data uploaded" in markdown
    # Without a split-0 run there is no footnote.
    status, out, _ = cli("summary", "--brief", *(fl + p2))
    assert summary.RAW_DATA_NOTE not in out


def test_a_device_at_split_0_or_a_replan_to_0_is_marked(tmp_path):
    import h5py
    one = seeded(tmp_path, "one", "sfl", [3.0], sections={"model": {"split": "2"},
                                                         "device.2": {"split": "0"}})
    assert summary.run_numbers(load_runs(one)[0])["raw_data_uploaded"]
    replanned = seeded(tmp_path, "re", "pipar", [3.0], sections={"model": {"split": "2"}})
    assert not summary.run_numbers(load_runs(replanned)[0])["raw_data_uploaded"]
    with h5py.File(replanned[0], "a") as f:
        for name, values in {"round": [1, 1], "device": [1, 2], "split": [2, 0],
                             "micro_batches": [4, 4], "changed": [0, 1]}.items():
            f.create_dataset("plan/replans/" + name, data=np.array(values, dtype=float))
    assert summary.run_numbers(load_runs(replanned)[0])["raw_data_uploaded"]


# --- pictures ----------------------------------------------------------------------------------

@pytest.fixture
def kept_figure(monkeypatch):
    """The figure a drawing function would save, kept open for inspection."""
    figures = []
    for module in (plots, timeline):
        monkeypatch.setattr(module, "save", lambda fig, path, **kw: figures.append(fig))
    yield figures
    import matplotlib.pyplot as plt
    for fig in figures:
        plt.close(fig)


def test_idle_bars_show_intervals_for_groups(tmp_path, kept_figure):
    idles = [1.0, 1.5, 0.8]
    files = (seeded(tmp_path, "q-fl", "fl", FL_WALLS, server_idle=idles)
             + seeded(tmp_path, "q-pipar", "pipar", [2.0, 2.1, 1.95], server_idle=0.5)
             + seeded(tmp_path, "lone", "sfl", [3.0], server_idle=1.2))
    plots.idle_bars(load_runs(files), str(tmp_path / "idle.png"))
    idle_ax, speed_ax = kept_figure[0].axes
    assert [t.get_text() for t in idle_ax.get_xticklabels()] == ["fl n=3", "pipar n=3", "sfl"]
    bars = lambda ax: [c for c in ax.containers if hasattr(c, "errorbar")]  # noqa: E731
    server = bars(idle_ax)[0]
    assert [b.get_height() for b in server] == pytest.approx([np.mean(idles), 0.5, 1.2])
    segments = server.errorbar.lines[2][0].get_segments()
    lengths = [abs(s[1][1] - s[0][1]) for s in segments]
    half = 4.302652729749 * np.std(idles, ddof=1) / math.sqrt(3)
    assert lengths[0] == pytest.approx(2 * half) and lengths[2] == 0  # lone run: no bar
    speed = bars(speed_ax)[0]
    expected = stats.ratio_of_means(FL_WALLS, [2.0, 2.1, 1.95])
    (low, high) = [p[1] for p in speed.errorbar.lines[2][0].get_segments()[1]]
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_accuracy_curves_draw_a_band_for_a_group(tmp_path, kept_figure):
    files = seeded(tmp_path, "q-fl", "fl", FL_WALLS) + seeded(
        tmp_path, "lone", "sfl", [3.0])
    plots.accuracy_curves(load_runs(files), str(tmp_path / "acc.png"))
    ax = kept_figure[0].axes[0]
    assert len(ax.lines) == 2  # one curve per group, not per file
    bands = ax.collections
    assert len(bands) == 1  # only the group of three has a band
    accuracies = [0.51, 0.52, 0.53]
    half = 4.302652729749 * np.std(accuracies, ddof=1) / math.sqrt(3)
    ys = bands[0].get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(0.52 + half) and ys.min() == pytest.approx(0.52 - half)


def test_timeline_titles_give_the_groups_round_time(tmp_path, kept_figure):
    files = seeded(tmp_path, "q-fl", "fl", FL_WALLS[:2])
    import h5py
    for path in files:  # one compute event per rank, so that there is something to draw
        with h5py.File(path, "a") as f:
            for rank in range(3):
                del f["ranks/%d/events" % rank]
                data = np.zeros(1, dtype=synthetic.event_dtype())
                for key, value in synthetic.event("forward", 0, S // 2).items():
                    data[key][0] = value
                f.create_dataset("ranks/%d/events" % rank, data=data)
    timeline.draw(load_runs(files), str(tmp_path / "t.png"))
    titles = [ax.get_title(loc="left") for ax in kept_figure[0].axes]
    half = 12.7062047 * np.std(FL_WALLS[:2], ddof=1) / math.sqrt(2)
    assert "seed 1 of 2" in titles[0] and "seed 2 of 2" in titles[1]
    assert "%.3f ± %.3f s" % (np.mean(FL_WALLS[:2]), half) in titles[0]
