"""cmlbed-report c3: accuracy under a bandwidth and a client-compute budget (AdaSplit's
accounting, docs/explanation/c3-accounting.md), its budget units, and the table and picture across
methods; on hand-computed files (tests/python/synthetic.py) and on short real runs of
fl, sl, sfl and pipar."""

import json

import numpy as np
import pytest

import synthetic
from conftest import report
from cmlbed_report import c3, summary, tradeoff
from cmlbed_report.budget_units import BudgetError, parse_bytes, parse_flops
from cmlbed_report.results import Run, load_runs

S = 10**9
GB = 10**9
TFLOP = 10**12
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NAN = float("nan")


# --- budget units ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("10GB", 10 * GB), ("10gb", 10 * GB), ("10 GB", 10 * GB), ("3.6GB", 3.6 * GB),
    ("500MB", 500e6), ("1kB", 1000), ("2GiB", 2 * 2**30), ("1KiB", 1024), ("1e10", 1e10),
    ("123", 123), ("0.5TB", 0.5e12), (".5GB", 0.5 * GB)])
def test_sizes_are_bytes_with_the_reports_powers_of_1000(text, expected):
    assert parse_bytes(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [
    ("5TFLOP", 5 * TFLOP), ("500GFLOP", 500e9), ("5 tflops", 5 * TFLOP), ("2.5e12", 2.5e12),
    ("1PFLOP", 1e15), ("3MFLOPs", 3e6), ("7kflop", 7e3), ("42FLOP", 42)])
def test_flop_counts_take_si_prefixes(text, expected):
    assert parse_flops(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, says", [
    ("10g", "ambiguous"), ("10m", "10MB"), ("10gbit", "not bits"), ("8mbps", "not bits"),
    ("0", "positive"), ("-1GB", "positive number"), ("GB", "positive number"),
    ("10XB", "unknown unit 'XB'"), ("nan", "positive number"), ("1e999GB", "finite")])
def test_bad_sizes_are_refused_with_what_is_allowed(text, says):
    with pytest.raises(BudgetError, match=says):
        parse_bytes(text)


@pytest.mark.parametrize("text, says", [
    ("5T", "unknown unit 'T'"), ("5TB", "unknown unit 'TB'"), ("0TFLOP", "positive"),
    ("five", "positive number"), ("5TFLOPx", "unknown unit")])
def test_bad_flop_counts_are_refused(text, says):
    with pytest.raises(BudgetError, match=says):
        parse_flops(text)


# --- hand-computed budgets ------------------------------------------------------------------

def _four_rounds(tmp_path, accuracy=(0.5, NAN, 0.7, 0.8), new_columns=True, name="run.h5"):
    """1 server + 2 devices, 4 rounds: each round 1 GB up and 0.5 GB down, the devices
    0.4 and 0.6 TFLOP, the server 5 TFLOP (not client compute). Cumulative after each
    round: 1.5, 3, 4.5, 6 GB and 1, 2, 3, 4 client TFLOP."""
    rounds = []
    for i, acc in enumerate(accuracy):
        row = dict(round=i, t_start_ns=i * S, t_end_ns=(i + 1) * S, bytes_up=GB,
                   bytes_down=GB // 2, test_accuracy=acc, test_loss=1.0)
        if new_columns:
            row["flops"] = [5 * TFLOP, 0.4 * TFLOP, 0.6 * TFLOP]
            row["device_accuracy"] = [NAN, acc - 0.1, acc + 0.1]
        rounds.append(row)
    path = synthetic.write(tmp_path / name, "sfl", rounds=rounds, new_columns=new_columns,
                           sections={"evaluation": {"scope": "per-device"},
                                     "experiment": {"rounds": str(len(accuracy))}})
    return Run(str(path))


def test_totals_final_accuracy_and_the_notebook_ratio(tmp_path):
    n = c3.budget_numbers(_four_rounds(tmp_path), 100 * GB, 100 * TFLOP)
    assert n["total_gb"] == pytest.approx(6.0)
    assert n["bytes_up"] == 4 * GB and n["bytes_down"] == 2 * GB
    assert n["client_tflops"] == pytest.approx(4.0)  # the server's 20 TFLOP are not counted
    assert n["final_accuracy"] == pytest.approx(0.8) and n["final_accuracy_round"] == 3
    assert n["final_device_accuracy"] == pytest.approx([0.7, 0.9])
    assert n["evaluation_scope"] == "per-device"
    assert n["notebook_ratio"] == pytest.approx(0.8 / (4.0 * 6.0))
    assert n["notebook_ratio_label"] == "authors' notebook ratio (not the paper's C3-Score)"
    assert n["within_bandwidth_budget"] and n["within_compute_budget"]
    assert n["budget_status"] == "not exhausted" and n["exhausted_in_round"] is None
    assert n["accuracy_at_budget"] == pytest.approx(0.8) and n["rounds_within_budgets"] == 4
    assert "never exhausts" in n["budget_note"]


@pytest.mark.parametrize("bandwidth, compute, within, exhausted_by, at_budget, at_round", [
    # Exactly at the budget is within it: 4.5 GB and 3 TFLOP after round 2.
    (4.5 * GB, 3 * TFLOP, 3, ["bandwidth", "compute"], 0.7, 2),
    # Only compute runs out (round 1 takes it to 2 > 1.5 TFLOP): round 0's accuracy.
    (100 * GB, 1.5 * TFLOP, 1, ["compute"], 0.5, 0),
    # Only bandwidth, in round 3 (6 > 5 GB); round 1 was not evaluated, round 2 was.
    (5 * GB, 100 * TFLOP, 3, ["bandwidth"], 0.7, 2),
    # Rounds 0 and 1 fit 3 GB; round 1 did not evaluate, so round 0 counts.
    (3 * GB, 100 * TFLOP, 2, ["bandwidth"], 0.5, 0),
])
def test_the_accuracy_when_a_budget_runs_out(tmp_path, bandwidth, compute, within,
                                             exhausted_by, at_budget, at_round):
    n = c3.budget_numbers(_four_rounds(tmp_path), bandwidth, compute)
    assert n["budget_status"] == "exhausted"
    assert n["rounds_within_budgets"] == within and n["exhausted_in_round"] == within
    assert n["exhausted_by"] == exhausted_by
    assert n["accuracy_at_budget"] == pytest.approx(at_budget)
    assert n["accuracy_at_budget_round"] == at_round
    assert n["within_bandwidth_budget"] == ("bandwidth" not in exhausted_by)
    assert n["within_compute_budget"] == ("compute" not in exhausted_by)
    # The final accuracy and the totals do not depend on the budgets.
    assert n["final_accuracy"] == pytest.approx(0.8) and n["total_gb"] == pytest.approx(6)


def test_no_round_qualifies_or_none_within_was_evaluated(tmp_path):
    run = _four_rounds(tmp_path)
    n = c3.budget_numbers(run, 1 * GB, 100 * TFLOP)  # round 0 already sends 1.5 GB
    assert n["accuracy_at_budget"] is None and n["rounds_within_budgets"] == 0
    assert "no round qualifies" in n["budget_note"]
    late = _four_rounds(tmp_path, accuracy=(NAN, NAN, 0.7, 0.8), name="late.h5")
    n = c3.budget_numbers(late, 3 * GB, 100 * TFLOP)
    assert n["accuracy_at_budget"] is None and n["rounds_within_budgets"] == 2
    assert "no evaluated round within both budgets" in n["budget_note"]


def test_a_file_without_flops_cannot_check_the_compute_budget(tmp_path):
    n = c3.budget_numbers(_four_rounds(tmp_path, new_columns=False), 100 * GB, 100 * TFLOP)
    assert n["client_tflops"] is None and n["within_compute_budget"] is None
    assert n["budget_status"] == "unknown" and n["accuracy_at_budget"] is None
    assert n["notebook_ratio"] is None and n["final_device_accuracy"] is None
    assert "no flops column" in n["budget_note"]
    assert n["within_bandwidth_budget"] and n["total_gb"] == pytest.approx(6)


def test_the_c3_command_text_and_json(tmp_path, cli):
    path = _four_rounds(tmp_path).path
    status, out, err = cli("c3", path, "--bandwidth-budget", "5GB", "--compute-budget", "5TFLOP")
    assert status == 0, err
    assert "0.8000, round 3, evaluation per-device (per device: 0.7000 0.9000)" in out
    assert "6.0000 GB (up 4.0000, down 2.0000; GB = 10^9 bytes)" in out
    assert "4.0000 TFLOP" in out
    assert "5 GB: exceeded (120.0% used)" in out and "5 TFLOP: within (80.0% used)" in out
    assert "0.7000: bandwidth budget exhausted in round 3 (the 4th round of 4)" in out
    # The one mention of the C3-Score says that the ratio is not it.
    assert out.count("C3-Score") == 1
    assert "authors' notebook ratio (not the paper's C3-Score)  0.03333" in out
    status, out, err = cli("c3", path, "--bandwidth-budget", "5GB", "--compute-budget",
                           "5TFLOP", "--json", "-")
    assert status == 0, err
    document = json.loads(out)
    assert document["bandwidth_budget_bytes"] == 5e9
    assert document["compute_budget_flops"] == 5e12
    (run,) = document["runs"]
    assert run["accuracy_at_budget"] == pytest.approx(0.7)
    assert run["exhausted_by"] == ["bandwidth"]


def test_bad_command_lines_exit_2_with_one_clear_line(tmp_path, cli):
    path = _four_rounds(tmp_path).path
    for args, says in [
            (["--bandwidth-budget", "10g", "--compute-budget", "5TFLOP"], "ambiguous"),
            (["--bandwidth-budget", "10GB", "--compute-budget", "5T"], "unknown unit 'T'"),
            (["--bandwidth-budget", "10GB"], "required: --compute-budget"),
            (["--compute-budget", "5TFLOP"], "required: --bandwidth-budget")]:
        status, out, err = cli("c3", path, *args)
        assert status == 2 and says in err and out == "", (args, err)
    status, _, err = cli("c3", "--bandwidth-budget", "1GB", "--compute-budget", "1TFLOP")
    assert status == 2 and "FILE" in err
    # Files and outputs as for every command: exit 1, one line.
    status, _, err = cli("c3", tmp_path / "none.h5", "--bandwidth-budget", "1GB",
                         "--compute-budget", "1TFLOP")
    assert status == 1 and "no such file" in err
    status, _, err = cli("c3", path, "--bandwidth-budget", "1GB", "--compute-budget", "1TFLOP",
                         "--plot", tmp_path / "x.txt")
    assert status == 1 and "must end in .png" in err
    status, _, err = cli("c3", path, "--bandwidth-budget", "1GB", "--compute-budget", "1TFLOP",
                         "--markdown", tmp_path / "no" / "such" / "t.md")
    assert status == 1 and "does not exist" in err


def test_labels_name_what_tells_runs_of_one_method_apart(tmp_path):
    def ada(name, **options):
        return str(synthetic.write(tmp_path / name, "adasplit",
                                   sections={"adasplit": {k: str(v) for k, v in options.items()}}))
    runs = load_runs([str(synthetic.write(tmp_path / "fl.h5", "fl")),
                      ada("k3.h5", local_fraction=0.3, selected=3),
                      ada("k9.h5", local_fraction=0.9, selected=3),
                      ada("k9b.h5", local_fraction=0.9, selected=3)])
    assert tradeoff.run_labels(runs) == [
        "fl", "adasplit local_fraction=0.3", "adasplit local_fraction=0.9 (k9)",
        "adasplit local_fraction=0.9 (k9b)"]


# --- real runs ------------------------------------------------------------------------------

def _sent_bytes(run):
    send = run.kind_names.index("send")
    evaluate = run.kind_names.index("evaluate")
    total = 0
    for rank in range(run.mpi_size):
        events = run.events[rank]
        # Sends of the evaluation phase (after the rank's first evaluate event of a
        # round) go past the links and are not the round's traffic.
        for r in run.rounds["round"]:
            of_round = events[events["round"] == r]
            evals = of_round[of_round["kind"] == evaluate]
            cutoff = evals["t_start_ns"].min() if len(evals) else np.iinfo(np.int64).max
            sends = of_round[(of_round["kind"] == send) & (of_round["t_start_ns"] < cutoff)]
            total += int(sends["bytes"].sum())
    return total


def test_real_runs_bytes_and_client_flops(runs_dir, per_device_runs):
    files = sorted(str(p) for d in (runs_dir, per_device_runs) for p in d.glob("*.h5"))
    for run in load_runs(files):
        n = c3.budget_numbers(run, 10 * GB, 5 * TFLOP)
        assert n["total_gb"] * GB == pytest.approx(_sent_bytes(run)), run.path
        flops = run.rounds["flops"]
        assert n["client_tflops"] * TFLOP == pytest.approx(flops[:, 1:].sum())
        assert 0 < n["client_tflops"] and n["total_gb"] > 0
        accuracy = run.rounds["test_accuracy"]
        assert n["final_accuracy"] == pytest.approx(accuracy[~np.isnan(accuracy)][-1])
        # Budgets set to what the run had used after its first round: round 0 counts.
        first_bytes = float(run.rounds["bytes_up"][0] + run.rounds["bytes_down"][0])
        first_flops = float(flops[0, 1:].sum())
        at = c3.budget_numbers(run, first_bytes, 1e30)
        assert at["rounds_within_budgets"] == 1 and at["exhausted_by"] == ["bandwidth"]
        assert at["accuracy_at_budget"] == pytest.approx(accuracy[0])
        at = c3.budget_numbers(run, 1e30, first_flops)
        assert at["rounds_within_budgets"] == 1 and at["exhausted_by"] == ["compute"]


def test_per_device_runs_score_the_devices(per_device_runs):
    for run in load_runs(sorted(str(p) for p in per_device_runs.glob("*.h5"))):
        n = c3.budget_numbers(run, 10 * GB, 5 * TFLOP)
        assert n["evaluation_scope"] == "per-device"
        devices = n["final_device_accuracy"]
        assert len(devices) == 2 and all(0 <= a <= 1 for a in devices)
        # test_accuracy is the devices' scores weighted by their test samples.
        assert min(devices) - 1e-9 <= n["final_accuracy"] <= max(devices) + 1e-9


def test_the_table_and_picture_of_fl_sl_sfl_pipar(per_device_runs, tmp_path):
    files = [per_device_runs / ("%s.h5" % m) for m in ("fl", "sl", "sfl", "pipar")]
    md, png, js = tmp_path / "table.md", tmp_path / "tradeoff.png", tmp_path / "c3.json"
    status, out, err = report("c3", *files, "--bandwidth-budget", "10GB", "--compute-budget",
                              "5TFLOP", "--markdown", md, "--plot", png, "--json", js)
    assert status == 0, err
    assert png.read_bytes()[:8] == PNG_MAGIC
    runs = load_runs([str(f) for f in files])
    document = json.loads(js.read_text())
    assert [r["method"] for r in document["runs"]] == ["fl", "sl", "sfl", "pipar"]
    lines = md.read_text().splitlines()
    assert lines[0].startswith("| method | accuracy | GB up+down | client TFLOPs | mean round s "
                               "| server idle % |")
    rows = [line.split(" | ") for line in lines[2:6]]
    assert [r[0].strip("| ") for r in rows] == ["fl", "sl", "sfl", "pipar"]
    for run, row, numbers in zip(runs, rows, document["runs"]):
        expected = summary.run_numbers(run)
        assert float(row[1]) == pytest.approx(numbers["final_accuracy"], abs=5e-5)
        assert float(row[2]) == pytest.approx(numbers["total_gb"], abs=5e-5)
        assert float(row[3]) == pytest.approx(numbers["client_tflops"], abs=5e-5)
        assert float(row[4]) == pytest.approx(expected["mean_round_s"], abs=5e-4)
        assert float(row[5]) == pytest.approx(expected["server_idle_pct"], abs=0.05)
        assert row[6] == "yes"  # a few MB and GFLOPs: far within 10 GB and 5 TFLOP
    by_method = {r["method"]: r for r in document["runs"]}
    # FL trains the whole LeNet on the devices, the split methods only [0, 2).
    assert by_method["fl"]["client_tflops"] > 2 * by_method["sfl"]["client_tflops"]
    # PiPar is SplitFed with another schedule: the same bytes and the same FLOPs.
    assert by_method["pipar"]["total_gb"] == pytest.approx(by_method["sfl"]["total_gb"])
    assert by_method["pipar"]["client_tflops"] == pytest.approx(by_method["sfl"]["client_tflops"])
    # FL sends two models per device and round; the split methods every activation and
    # gradient, more here.
    assert by_method["fl"]["total_gb"] < by_method["sfl"]["total_gb"]
