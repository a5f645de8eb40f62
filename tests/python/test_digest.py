"""Digests of results files (scripts/cmlbed_report/digest.py) and the reproduction
report's archive of them (archive.py): a digest gives the same numbers as its file, and
a run whose results file is gone is read from the archive. On files written with h5py
(synthetic.py); tests/reproduction_report.sh does the same on real runs."""

import json
import math
import os
import shutil

import pytest

import synthetic
from cmlbed_report import archive, digest
from cmlbed_report.errors import ReportError
from cmlbed_report.results import Run
from cmlbed_report.summary import compare, run_numbers

S = 10**9


def _rounds():
    return [dict(round=0, t_start_ns=0, t_end_ns=2 * S, bytes_up=1000, bytes_down=3000,
                 test_accuracy=0.25, test_loss=2.0, busy_s=[0.5, 1.5, 1.25],
                 idle_s=[1.5, 0.5, 0.75], messages_up=4, flops=[1e9, 2e9, 3e9]),
            dict(round=1, t_start_ns=2 * S, t_end_ns=5 * S, bytes_up=1000, bytes_down=3000,
                 test_accuracy=float("nan"), test_loss=float("nan"), busy_s=[1, 2, 2.5],
                 idle_s=[2, 1, 0.5], messages_up=4, flops=[1e9, 2e9, 3e9])]


def _same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float) and math.isnan(a[key]):
            assert math.isnan(b[key]), key
        else:
            assert a[key] == b[key], key


def test_a_digest_gives_the_numbers_of_its_results_file(tmp_path):
    fl = Run(synthetic.write(tmp_path / "fl.h5", "fl", rounds=_rounds()))
    pipar = Run(synthetic.write(tmp_path / "pipar.h5", "pipar", rounds=_rounds(),
                                sections={"pipar": {"micro_batches": "8"}}))
    pipar_file = pipar.path
    digest.write(pipar, str(tmp_path / "pipar.h5.json"))
    kept = digest.DigestRun(str(tmp_path / "pipar.h5.json"), pipar_file)
    assert kept.name == "pipar" and kept.path == pipar_file
    _same(run_numbers(pipar), run_numbers(kept))
    for a, b in zip(compare([fl, pipar], baseline=fl.path), compare([fl, kept], baseline=fl.path)):
        _same(a, b)
    assert kept.rounds.dtype == pipar.rounds.dtype
    assert kept.option("pipar.micro_batches") == "8"
    with pytest.raises(ReportError, match="keeps no events"):
        kept.require_events()


def test_writing_the_same_digest_again_changes_nothing(tmp_path):
    run = Run(synthetic.write(tmp_path / "fl.h5", "fl", rounds=_rounds()))
    target = str(tmp_path / "fl.h5.json")
    assert digest.write(run, target)
    assert not digest.write(run, target)


def test_long_attributes_are_left_out_and_named(tmp_path):
    path = synthetic.write(tmp_path / "sim.h5", "pipar", rounds=_rounds())
    import h5py
    with h5py.File(path, "a") as f:
        f.attrs["profile"] = "x" * 10000
        f.attrs["privacy_epsilon"] = 3.5
    data = digest.digest(Run(path))
    assert data["left_out"] == ["profile"]
    assert data["attrs"]["privacy_epsilon"] == 3.5


def test_a_file_that_is_not_a_digest_is_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ReportError, match="not a cmlbed results digest"):
        digest.DigestRun(str(bad))


def _provenance(path, status=0):
    with open(str(path) + ".run.json", "w") as f:
        json.dump({"command": ["cmlbed", "run"], "status": status, "cmlbed": "test"}, f)


def test_the_archive_keeps_a_run_whose_results_file_is_gone(tmp_path):
    results, kept = tmp_path / "results", tmp_path / "kept"
    (results / "measured").mkdir(parents=True)
    (results / "profiles").mkdir()
    run_path = synthetic.write(results / "measured" / "vgg5-10mbit-fl.h5", "fl", rounds=_rounds())
    _provenance(run_path)
    failed = synthetic.write(results / "measured" / "vgg5-10mbit-sfl.h5", "sfl", rounds=_rounds())
    _provenance(failed, status=1)
    (results / "profiles" / "vgg5.json").write_text('{"format": "cmlbed-profile"}')
    _provenance(results / "profiles" / "vgg5.json")
    store = archive.Archive(str(results), str(kept))
    assert store.refresh() == (1, 2)  # one run (not the failed one); the profile and its provenance
    assert store.refresh() == (0, 0)
    numbers = run_numbers(store.entry(str(run_path)).load())
    shutil.rmtree(results)
    os.makedirs(results)
    store = archive.Archive(str(results), str(kept))
    assert store.glob("measured/*.h5") == [str(run_path)]
    entry = store.entry(str(run_path))
    assert entry.ok and entry.archived and entry.provenance["cmlbed"] == "test"
    _same(numbers, run_numbers(entry.load()))
    assert not store.entry(str(failed)).ok
    assert store.read_json(str(results / "profiles" / "vgg5.json")) == {"format": "cmlbed-profile"}


def test_a_failed_rerun_leaves_the_kept_run_in_the_report(tmp_path):
    results, kept = tmp_path / "results", tmp_path / "kept"
    (results / "dp").mkdir(parents=True)
    path = synthetic.write(results / "dp" / "main-fl-dpoff.h5", "fl", rounds=_rounds())
    _provenance(path)
    archive.Archive(str(results), str(kept)).refresh()
    _provenance(path, status=1)  # the same run again, failed
    store = archive.Archive(str(results), str(kept))
    assert store.refresh() == (0, 0)
    entry = store.entry(str(path))
    assert entry.archived and entry.provenance["status"] == 0 and entry.load() is not None
