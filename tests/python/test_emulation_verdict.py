"""cmlbed-report and the emulation verdict (root attributes `emulation`,
`emulation_reasons`; docs/explanation/fidelity.md): the summary's `emulation` column per
run and per group (a group is as good as its worst run), its footnote, the CSV, and
--require-faithful's refusal (exit 2, one line). Synthetic files (tests/python/synthetic.py);
tests/emulation_verdict_job.sh checks the same on real runs."""

import csv

import h5py

import synthetic
from cmlbed_report import emulation
from cmlbed_report.frames import load
from cmlbed_report.results import load_runs

S = 10**9


def write_run(tmp_path, name, method, seed, verdict=None, reasons=""):
    rounds = [dict(round=k, t_start_ns=k * 2 * S, t_end_ns=(k * 2 + 1) * S, wall_s=1.0,
                   busy_s=[0.5, 0.5, 0.5], idle_s=[0.5, 0.5, 0.5], test_accuracy=0.5)
              for k in range(2)]
    path = tmp_path / ("%s.seed%d.h5" % (name, seed))
    synthetic.write(path, method, rounds=rounds,
                    sections={"experiment": {"seed": str(seed), "rounds": "2"},
                              "output": {"file": path.name}})
    if verdict is not None:
        with h5py.File(path, "a") as f:
            f.attrs["emulation"] = verdict
            f.attrs["emulation_reasons"] = reasons
            f.attrs["emulation_placement"] = "vm: 3 ranks on 2 cores (0-1)"
    return str(path)


def test_verdicts_of_runs_and_groups(tmp_path):
    paths = [write_run(tmp_path, "fl", "fl", 1, "faithful"),
             write_run(tmp_path, "fl", "fl", 2, "degraded", "server waited for a core"),
             write_run(tmp_path, "sfl", "sfl", 1, "faithful"),
             write_run(tmp_path, "old", "pipar", 1)]
    runs = load_runs(paths)
    assert [emulation.verdict(r) for r in runs] == ["faithful", "degraded", "faithful", "unknown"]
    assert emulation.reasons(runs[1]) == ["server waited for a core"]
    assert emulation.worst(["faithful", "broken", "degraded"]) == "broken"
    assert emulation.worst(["faithful", "unknown"]) == "unknown"
    assert emulation.worst(["simulated", "faithful"]) == "faithful"
    note = emulation.note(runs)
    assert "emulation degraded: fl.seed2: server waited for a core" in note
    assert "emulation unknown: old.seed1: written by a cmlbed that did not judge" in note
    assert "sfl" not in note
    frame = load(paths[1])
    assert frame.emulation == "degraded" and frame.emulation_reasons == ["server waited for a core"]
    assert frame.emulation_placement == "vm: 3 ranks on 2 cores (0-1)"


def test_summary_column_footnote_and_refusal(tmp_path, cli):
    good = [write_run(tmp_path, "fl", "fl", s, "faithful") for s in (1, 2)]
    mixed = [write_run(tmp_path, "pipar", "pipar", 1, "faithful"),
             write_run(tmp_path, "pipar", "pipar", 2, "broken", "held stages ran past their lengths")]
    status, out, err = cli("summary", "--brief", *good, *mixed, "--csv", tmp_path / "g.csv",
                           "--markdown", tmp_path / "g.md")
    assert status == 0, err
    rows = {row["run"]: row for row in csv.DictReader(open(tmp_path / "g.csv"))}
    assert rows["fl"]["emulation"] == "faithful"
    assert rows["pipar"]["emulation"] == "broken"  # its worst run
    assert "emulation broken: pipar.seed2: held stages ran past their lengths" in out
    assert "pipar.seed2: held stages ran past" in (tmp_path / "g.md").read_text()
    header = out.splitlines()[1]
    assert "emulation" in header

    status, out, err = cli("summary", "--brief", "--require-faithful", *good, *mixed)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "1 of 4 runs are not faithful emulations: pipar.seed2 (broken)" in err
    status, out, err = cli("summary", "--brief", "--require-faithful", *good)
    assert status == 0, err
