"""scripts/cmlbed-report on results files of short real runs: its numbers against the
raw events, the Perfetto export against the HDF5 events, the pictures, and clear errors
for bad input."""

import json
import math
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from conftest import report
from cmlbed_report import idle_causes, perfetto, summary
from cmlbed_report.results import Run, load_runs

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def runs_in(d):
    return load_runs(sorted(str(p) for p in d.glob("*.h5")))


def naive_union_s(intervals):
    """Reference: merge sorted intervals one by one."""
    total, current = 0, None
    for start, end in sorted(intervals):
        if current and start <= current[1]:
            current[1] = max(current[1], end)
        else:
            if current:
                total += current[1] - current[0]
            current = [start, end]
    if current:
        total += current[1] - current[0]
    return total * 1e-9


def busy_from_events(run, rank, lo, hi):
    compute, wait = run.lane_names.index("compute"), run.kind_names.index("wait")
    spans = []
    for e in run.events[rank]:
        if e["lane"] == compute and e["kind"] != wait:
            start, end = max(int(e["t_start_ns"]), lo), min(int(e["t_end_ns"]), hi)
            if end > start:
                spans.append((start, end))
    return naive_union_s(spans)


def test_summary_numbers_match_the_events(runs_dir):
    for run in runs_in(runs_dir):
        rows = summary.round_rows(run)
        server_busy = 0.0
        for row, r in zip(rows, run.rounds):
            lo, hi = int(r["t_start_ns"]), int(r["t_end_ns"])
            wall = (hi - lo) * 1e-9
            assert row["wall_s"] == pytest.approx(wall, abs=1e-9)
            busy = [busy_from_events(run, rank, lo, hi) for rank in range(run.mpi_size)]
            assert busy[0] > 0 or run.method == "fl"
            assert row["server_busy_s"] == pytest.approx(busy[0], abs=1e-6)
            assert row["server_idle_s"] == pytest.approx(wall - busy[0], abs=1e-6)
            device_idle = np.mean([wall - b for b in busy[1:]])
            assert row["device_idle_s"] == pytest.approx(device_idle, abs=1e-6)
            assert row["server_idle_pct"] == pytest.approx(100 * (wall - busy[0]) / wall)
            server_busy += busy[0]
            # Bytes: what the devices sent up and the server sent down in that round.
            send = run.kind_names.index("send")
            up = sum(int(e["bytes"]) for rank in range(1, run.mpi_size)
                     for e in run.events[rank] if e["kind"] == send and e["round"] == r["round"])
            down = sum(int(e["bytes"]) for e in run.events[0]
                       if e["kind"] == send and e["round"] == r["round"])
            assert row["mb_up"] == pytest.approx(up / 1e6) and up > 0
            assert row["mb_down"] == pytest.approx(down / 1e6) and down > 0
        numbers = summary.run_numbers(run)
        assert numbers["server_busy_s"] == pytest.approx(server_busy, abs=1e-5)
        assert numbers["total_s"] == pytest.approx(sum(r["wall_s"] for r in rows))
        assert numbers["rounds"] == 2 and numbers["complete"]
        accuracies = [r["test_accuracy"] for r in rows]
        assert numbers["final_accuracy"] == accuracies[-1]
        assert numbers["best_accuracy"] == max(accuracies)
        # The file's own summary, written by cmlbed, agrees.
        assert numbers["server_idle_s"] == pytest.approx(run.summary["server_idle_s"], rel=1e-9)
        assert numbers["mean_round_s"] == pytest.approx(run.summary["mean_round_s"], rel=1e-9)


def test_runs_are_compared_with_the_baseline_of_the_same_experiment(runs_dir):
    runs = runs_in(runs_dir)
    rows = {row["run"]: row for row in summary.compare(runs)}
    assert rows["pipar-20mbit"]["baseline"] == "fl-20mbit"
    assert rows["sfl-20mbit"]["baseline"] == "fl-20mbit"
    assert rows["fl-50mbit"]["baseline"] == "fl-50mbit"
    pipar, fl = rows["pipar-20mbit"], rows["fl-20mbit"]
    assert pipar["speedup"] == pytest.approx(fl["mean_round_s"] / pipar["mean_round_s"])
    assert pipar["server_idle_reduction"] == pytest.approx(
        fl["server_idle_s"] / pipar["server_idle_s"])
    assert pipar["micro_batches"] == "4" and pipar["split"] == "3"
    assert pipar["links"] == "20mbit/unshaped" and fl["split"] == "-"
    # An explicit file as the baseline is used for every run.
    rows = summary.compare(runs, baseline=str(runs_dir / "sfl-20mbit.h5"))
    assert {row["baseline"] for row in rows} == {"sfl-20mbit"}


def test_summary_command_writes_text_csv_and_markdown(runs_dir, tmp_path):
    files = sorted(runs_dir.glob("*.h5"))
    status, out, err = report("summary", *files, "--csv", tmp_path / "runs.csv",
                              "--markdown", tmp_path / "runs.md",
                              "--rounds-csv", tmp_path / "rounds.csv")
    assert status == 0, err
    for name in ("fl-20mbit", "sfl-20mbit", "pipar-20mbit", "fl-50mbit"):
        assert name in out
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0].startswith("run,method,model,split,micro_batches")
    assert len(lines) == 1 + len(files)
    header = lines[0].split(",")
    pipar = dict(zip(header, next(l for l in lines if l.startswith("pipar")).split(",")))
    expected = summary.run_numbers(Run(str(runs_dir / "pipar-20mbit.h5")))
    assert float(pipar["server_idle_s"]) == pytest.approx(expected["server_idle_s"])
    assert len((tmp_path / "rounds.csv").read_text().splitlines()) == 1 + 2 * len(files)
    markdown = (tmp_path / "runs.md").read_text()
    assert markdown.count("\n## ") == len(files) and "| pipar-20mbit | pipar |" in markdown


def test_perfetto_trace_matches_the_events_one_to_one(runs_dir, tmp_path):
    path = runs_dir / "pipar-20mbit.h5"
    out = tmp_path / "trace.json"
    status, _, err = report("perfetto", path, "-o", out)
    assert status == 0, err
    trace = json.loads(out.read_text())["traceEvents"]
    run = Run(str(path))
    names = {e["pid"]: e["args"]["name"] for e in trace
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {1: "server", 2: "device 1", 3: "device 2"}  # pid = rank + 1
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace
               if e["ph"] == "M" and e["name"] == "thread_name"}
    tids = [tid for _, tid in threads]
    assert len(set(tids)) == len(tids) and not set(tids) & set(names), "tids unique, no pid"
    complete = [e for e in trace if e["ph"] == "X"]
    got = sorted((e["pid"] - 1, threads[(e["pid"], e["tid"])].split(" #")[0], e["cat"],
                  round(e["ts"] * 1e3), round(e["dur"] * 1e3), e["args"]["micro_batch"],
                  e["args"]["bytes"]) for e in complete)
    want = sorted((rank, run.lane_names[e["lane"]], run.kind_names[e["kind"]],
                   int(e["t_start_ns"]), int(e["t_end_ns"]) - int(e["t_start_ns"]),
                   int(e["micro_batch"]), int(e["bytes"]))
                  for rank in range(run.mpi_size) for e in run.events[rank])
    assert got == want
    # Events on one thread nest (Perfetto requires it for complete events); transfers
    # do not even nest, so that a flow end finds exactly one transfer.
    by_thread = {}
    for e in sorted(complete, key=lambda e: (e["ts"], -e["dur"])):
        stack = by_thread.setdefault((e["pid"], e["tid"]), [])
        while stack and stack[-1] <= e["ts"] + 1e-6:
            stack.pop()
        if threads[(e["pid"], e["tid"])].startswith("compute"):
            assert not stack or e["ts"] + e["dur"] <= stack[-1] + 1e-6, e
        else:
            assert not stack, e
        stack.append(e["ts"] + e["dur"])
    # One flow per message, from the send to the receive of the same message: every send
    # and every receive takes part exactly once.
    def enclosing(flow_end):
        inside = [e for e in complete if (e["pid"], e["tid"]) == (flow_end["pid"], flow_end["tid"])
                  and e["ts"] <= flow_end["ts"] <= e["ts"] + e["dur"]]
        assert len(inside) == 1, flow_end
        return inside[0]
    starts = {e["id"]: e for e in trace if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace if e["ph"] == "f"}
    assert set(starts) == set(ends)
    bound = [(enclosing(starts[i]), enclosing(ends[i])) for i in starts]
    assert {id(s) for s, _ in bound} == {id(e) for e in complete if e["cat"] == "send"}
    assert {id(r) for _, r in bound} == {id(e) for e in complete if e["cat"] == "recv"}
    for sent, received in bound:
        assert sent["cat"] == "send" and received["cat"] == "recv" and ends
        assert sent["args"]["peer"] == received["args"]["rank"]
        assert received["args"]["peer"] == sent["args"]["rank"]
        for key in ("round", "batch", "micro_batch", "bytes"):
            assert sent["args"][key] == received["args"][key]
    assert all(e["bp"] == "e" for e in ends.values())


def test_timeline_pictures(runs_dir, tmp_path, cli):
    one = tmp_path / "one.png"
    status, _, err = report("timeline", runs_dir / "pipar-20mbit.h5", "-o", one)
    assert status == 0, err
    several = tmp_path / "several.png"
    status, _, err = cli("timeline", runs_dir / "fl-20mbit.h5", runs_dir / "sfl-20mbit.h5",
                            runs_dir / "pipar-20mbit.h5", "--rounds", "1", "-o", several)
    assert status == 0, err
    for picture in (one, several):
        assert picture.read_bytes().startswith(PNG_MAGIC) and picture.stat().st_size > 10000
    status, _, err = cli("timeline", runs_dir / "fl-20mbit.h5", "--rounds", "7",
                            "-o", tmp_path / "x.png")
    assert status == 1 and "has no round 7" in err and "Traceback" not in err
    for spec in ("1-0", "1-", "x"):
        status, _, err = cli("timeline", runs_dir / "fl-20mbit.h5", "--rounds", spec,
                             "-o", tmp_path / "x.png")
        assert status == 1 and "--rounds" in err, (spec, err)


def test_idle_and_accuracy_pictures(runs_dir, tmp_path, cli):
    files = sorted(runs_dir.glob("*.h5"))
    for command in ("idle", "accuracy"):
        out = tmp_path / (command + ".png")
        status, _, err = cli(command, *files, "-o", out)
        assert status == 0, err
        assert out.read_bytes().startswith(PNG_MAGIC) and out.stat().st_size > 5000


def test_incomplete_run_is_summarised_with_a_note(truncated_run, cli):
    status, out, err = cli("summary", truncated_run)
    assert status == 0, err
    assert "incomplete: 1 of 2 rounds" in err and "incomplete" in out


def bad(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("command", ["summary", "timeline", "perfetto", "idle", "accuracy"])
def test_bad_files_give_one_clear_line(command, tmp_path, stopped_run, runs_dir, cli):
    text = bad(tmp_path, "notes.h5", b"round,wall\n0,1.0\n")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    cut = bad(tmp_path, "cut.h5", (runs_dir / "fl-20mbit.h5").read_bytes()[:3000])
    cases = [(text, "is not an HDF5 file"), (other, "not a cmlbed results file"),
             (cut, "is cut short"), (stopped_run, "holds no completed round"),
             (tmp_path / "missing.h5", "no such file")]
    for path, message in cases:
        out_file = tmp_path / ("o.json" if command == "perfetto" else "o.png")
        args = [command, path] + ([] if command == "summary" else ["-o", out_file])
        status, out, err = cli(*args)
        assert status == 1, (path, out, err)
        assert message in err and "Traceback" not in err, err


def test_unwritable_output_and_bad_arguments(runs_dir, tmp_path, cli):
    status, _, err = cli("perfetto", runs_dir / "fl-20mbit.h5", "-o",
                            tmp_path / "no" / "such" / "dir.json")
    assert status == 1 and "does not exist" in err
    status, _, err = cli("timeline", runs_dir / "fl-20mbit.h5", "-o", tmp_path)
    assert status == 1 and "is a directory" in err
    status, _, err = cli("timeline", runs_dir / "fl-20mbit.h5", "-o", tmp_path / "x.json")
    assert status == 1 and "must end in .png" in err
    status, _, err = cli("summary")
    assert status == 2 and "usage" in err
    status, _, err = cli("summary", runs_dir / "fl-20mbit.h5", "--baseline", "adasplit")
    assert status == 1 and "baseline 'adasplit'" in err


def test_a_python_without_h5py_gets_told_what_to_install(runs_dir):
    # -S hides Debian's dist-packages, so h5py cannot be imported; the mark says the
    # script has handed over once already, so it has no other Python to try.
    status, out, err = report("summary", runs_dir / "fl-20mbit.h5",
                              python=["/usr/bin/python3", "-S"],
                              env={"CMLBED_REPORT_REEXEC": "1"})
    assert status == 3, (out, err)
    assert "apt-get install python3-h5py python3-numpy python3-matplotlib" in err
    assert "Traceback" not in err


def test_a_python_without_h5py_hands_over_to_debians(runs_dir):
    status, out, err = report("summary", "--brief", runs_dir / "fl-20mbit.h5",
                              python=["/usr/bin/python3", "-S"])
    assert status == 0, err
    assert "fl-20mbit" in out


def test_another_python_without_h5py_hands_over_to_debians(runs_dir):
    other = shutil.which("python3", path=os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if not p.startswith("/usr/")))
    if other is None or subprocess.run([other, "-c", "import h5py"],
                                       stderr=subprocess.DEVNULL).returncode == 0:
        pytest.skip("no python3 without h5py outside /usr on PATH (e.g. pyenv's)")
    status, out, err = report("summary", "--brief", runs_dir / "fl-20mbit.h5", python=[other])
    assert status == 0, err
    assert "fl-20mbit" in out


def test_a_run_without_timeline_has_unknown_idle_time_and_no_pictures(untimed_run, runs_dir,
                                                                        tmp_path, cli):
    run = Run(str(untimed_run))
    assert np.isnan(run.rounds["busy_s"]).all() and np.isnan(run.rounds["idle_s"]).all()
    # Bytes come from the server's counters: the same as the timed twin's events.
    twin = Run(str(runs_dir / "fl-20mbit.h5"))
    assert list(run.rounds["bytes_up"]) == list(twin.rounds["bytes_up"])
    assert list(run.rounds["bytes_down"]) == list(twin.rounds["bytes_down"])
    numbers = summary.run_numbers(run)
    assert math.isnan(numbers["server_idle_s"]) and numbers["mb_up"] > 0
    status, out, err = cli("summary", "--brief", untimed_run)
    assert status == 0, err
    for command in ("timeline", "perfetto"):
        status, _, err = cli(command, untimed_run, "-o", tmp_path / "x.png")
        assert status == 1 and "holds no events" in err, err


# --- issue 10, on the real runs: whatever columns and events this cmlbed writes -------------

def documented_round_columns():
    """{name: type} from the /rounds table of docs/reference/results-format.md."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "docs", "reference", "results-format.md")
    text = open(path).read().split("## `/rounds`", 1)[1].split("\n## ", 1)[0]
    columns = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[0].endswith("`"):
            columns[cells[0].strip("`")] = cells[1]
    return columns


def test_every_rounds_column_the_binary_writes_is_documented(runs_dir):
    documented = documented_round_columns()
    assert {"round", "wall_s", "busy_s", "idle_s"} <= set(documented)
    run = Run(str(runs_dir / "pipar-20mbit.h5"))
    for name, shape in run.round_columns().items():
        assert name in documented, "/rounds column %r is not in docs/reference/results-format.md" % name
        field = run.rounds.dtype[name]
        base = field.subdtype[0] if field.subdtype else field
        expected = {"i": "int%d", "f": "float%d"}[base.kind] % (8 * base.itemsize)
        if shape == "per-rank":
            expected += "[mpi_size]"
        assert documented[name] == expected, (name, documented[name], expected)


def test_tflops_and_messages_of_real_runs(runs_dir):
    runs = {run.name: run for run in runs_in(runs_dir)}
    numbers = {name: summary.run_numbers(run) for name, run in runs.items()}
    fl, sfl = numbers["fl-20mbit"], numbers["sfl-20mbit"]
    if not runs["fl-20mbit"].has_column("flops"):  # a cmlbed before issue 10
        assert math.isnan(fl["device_tflops"]) and math.isnan(sfl["messages_up"])
        return
    # Same data, same model: FL's devices do what SFL's devices and server do together.
    assert fl["device_tflops"] > 0 and sfl["server_tflops"] > 0
    assert fl["device_tflops"] == pytest.approx(sfl["device_tflops"] + sfl["server_tflops"],
                                                rel=1e-6)
    # Messages: every round moves at least one message each way per device.
    for row in numbers.values():
        assert row["messages_up"] >= 2 * 2 and row["messages_down"] >= 2 * 2


def test_idle_causes_of_real_runs_add_up_to_the_idle_time(runs_dir):
    for run in runs_in(runs_dir):
        why_not = idle_causes.availability(run)
        if why_not:  # a cmlbed before issue 10 records no waits
            assert "no wait events" in why_not
            continue
        for rank, causes in enumerate(idle_causes.run_causes(run)):
            # The breakdown's busy time is /rounds busy_s, so the parts add up to idle_s.
            assert causes.idle_s == pytest.approx(run.rounds["idle_s"][:, rank].sum(),
                                                  abs=1e-6)
            assert sum(causes.waiting.values()) + causes.other_s == pytest.approx(
                causes.idle_s, abs=1e-6)
        if run.method != "fl":
            server = idle_causes.run_causes(run)[0]
            assert server.waiting["activation"] > 0, idle_causes.describe(server)


def test_the_main_jobs_report_command(runs_dir, tmp_path):
    # What scripts/main-job.sh prints after its runs, now that `cmlbed compare` is gone.
    files = [runs_dir / ("%s-20mbit.h5" % m) for m in ("fl", "sfl", "pipar")]
    status, out, err = report("summary", "--brief", "--idle-causes", *files,
                              "--markdown", tmp_path / "s.md", "--csv", tmp_path / "s.csv")
    assert status == 0, err
    assert "== runs" in out and "== idle causes" in out and "srv TFLOPs" in out
    for name in ("fl-20mbit", "sfl-20mbit", "pipar-20mbit"):
        assert "\n%s (" % name in out
    assert "## Idle causes" in (tmp_path / "s.md").read_text()


def test_summary_names_runs_that_stopped_before_their_first_round(stopped_run, runs_dir, cli):
    """A file with zero rounds (valid from its first byte) is left out of the summary with
    a note saying '0 of R rounds'; alone it is an error that says the same."""
    status, out, err = cli("summary", "--brief", stopped_run, runs_dir / "fl-20mbit.h5")
    assert status == 0, err
    assert "0 of 2 rounds" in err and "left out" in err, err
    assert "fl-20mbit" in out and "stopped" not in out, out
    status, out, err = cli("summary", stopped_run)
    assert status == 1 and "0 of 2 rounds" in err and "Traceback" not in err, err
