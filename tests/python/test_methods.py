"""The method table in Python (scripts/cmlbed_report/methods.py): a results file's own
copy (root attribute method_table) and, for files written before it (and the synthetic
files of these tests), the binary's (`cmlbed info --methods --json`); the report reads
traits from it, not method names."""

import json
import os
import subprocess
import sys

import pytest

import synthetic
from cmlbed_report import digest, methods, summary
from cmlbed_report.errors import ReportError
from cmlbed_report.results import Run

from conftest import ROOT

# Methods of the table as it is now and which of them split the model; more may come.
TODAY = ["fl", "sl", "sfl", "pipar", "sfl2", "adasplit", "transfer"]
SPLITTING = {"sl", "sfl", "pipar", "sfl2", "adasplit"}


def _row(name, **traits):
    row = dict(name=name, summary="a test row", trains=True, splits_model=False,
               micro_batches=False, simulatable=True)
    row.update(traits)
    return row


# The table of a cmlbed with a method that the binary here does not know.
OWN_TABLE = {"methods": [_row("fl", averages=True),
                         _row("relay", splits_model=True, micro_batches=True)]}


def _relay(tmp_path):
    return Run(str(synthetic.write(
        tmp_path / "relay.h5", "relay", attrs={"method_table": json.dumps(OWN_TABLE)},
        sections={"model": {"split": "0"}, "pipar": {"micro_batches": "3"}})))


def test_a_file_that_stores_the_table_is_read_with_its_own(tmp_path):
    run = _relay(tmp_path)
    assert methods.names(run.method_table) == ["fl", "relay"]
    assert methods.has(run.method_table, "relay", "splits_model")
    assert run.method_traits["micro_batches"]
    # The report goes by the traits: split 0 of a method that splits the model uploads
    # raw data, and its micro-batches are pipar.micro_batches as for pipar.
    assert summary.raw_data_uploaded(run)
    row = summary.run_numbers(run)
    assert (row["model"], row["split"], row["micro_batches"]) == ("lenet", "0", "3")
    assert "relay" in summary.method_sections([run])
    # A digest keeps the table (it is short here) and reads as its file.
    path = tmp_path / "relay.json"
    digest.write(run, str(path))
    assert digest.DigestRun(str(path)).method_table == run.method_table


def test_the_binary_prints_the_table_as_json():
    table = methods.table_from_binary()
    assert methods.table_from_binary() is table  # asked once
    assert [name for name in methods.names(table) if name in TODAY] == TODAY
    for name in TODAY:
        assert methods.has(table, name, "splits_model") == (name in SPLITTING), name
        assert methods.has(table, name, "trains") == (name != "transfer"), name
        assert methods.has(table, name, "micro_batches") == (name == "pipar"), name
    assert all(set(row) >= {"summary", "simulatable", "noise", "privacy_mechanisms",
                            "personalised"} for row in table)


def test_a_file_without_a_table_reads_the_binarys(tmp_path):
    fl = Run(str(synthetic.write(tmp_path / "fl.h5", "fl")))
    assert "method_table" not in fl.attrs
    assert fl.method_table == methods.table_from_binary()
    numbers = {method: summary.run_numbers(Run(str(synthetic.write(
        tmp_path / (method + ".h5"), method, sections={"model": {"split": "0"}}))))
        for method in ("fl", "sfl", "pipar", "transfer")}
    assert [numbers[m]["model"] for m in ("fl", "transfer")] == ["lenet", "-"]
    assert [numbers[m]["split"] for m in ("fl", "sfl", "transfer")] == ["-", "0", "-"]
    assert [numbers[m]["micro_batches"] for m in ("sfl", "pipar")] == ["-", "4"]
    assert [numbers[m]["raw_data_uploaded"] for m in ("fl", "sfl", "pipar", "transfer")] == [
        False, True, True, False]
    unknown = Run(str(synthetic.write(tmp_path / "new.h5", "newmethod")))
    with pytest.raises(ReportError, match="new.h5: method 'newmethod' is not in the method table"):
        unknown.method_traits


def test_a_real_run_stores_the_binarys_table(runs_dir):
    run = Run(str(runs_dir / "sfl-20mbit.h5"))
    assert methods.table_of_file(run.attrs) == methods.table_from_binary()
    assert run.method_traits["splits_model"]


def _script(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return str(path)


def test_no_binary_or_a_bad_table_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CMLBED", raising=False)
    monkeypatch.setattr(methods, "ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ReportError, match="set CMLBED to the binary, or build cmlbed"):
        methods.table_from_binary()
    with pytest.raises(ReportError, match="cannot run .*nosuch.*set CMLBED"):
        methods.table_from_binary(str(tmp_path / "nosuch"))
    old = _script(tmp_path / "old", "echo \"unrecognised option '--json'\" >&2; exit 2\n")
    with pytest.raises(ReportError, match="exit status 2.*--json.*older than --json"):
        methods.table_from_binary(old)
    garbled = _script(tmp_path / "garbled", "echo '[1, 2]'\n")
    with pytest.raises(ReportError, match="not the method table as JSON"):
        methods.table_from_binary(garbled)
    assert methods.table_of_file({}) is None
    with pytest.raises(ReportError, match="x.h5 .root attribute method_table.: not the method"):
        methods.table_of_file({"method_table": "{cut sh"}, "x.h5")


def test_the_generators_check_their_methods_against_the_table(tmp_path):
    generator = os.path.join(ROOT, "scripts", "tools", "random-configs.py")
    sys.path.insert(0, os.path.dirname(generator))
    try:
        import config_draws
    finally:
        sys.path.pop(0)
    config_draws.check_methods("test", ["fl", "sfl2", "adasplit"])  # every one simulatable
    with pytest.raises(SystemExit, match="test: method.s. nosuch of its list are not in"):
        config_draws.check_methods("test", ["fl", "nosuch"])
    with pytest.raises(SystemExit, match="test: method.s. transfer of its list are not simulatable"):
        config_draws.check_methods("test", ["transfer"])
    # Without a binary the generator stops before it draws.
    done = subprocess.run([sys.executable, generator, "--count", "1", "--seed", "1", "--out",
                           str(tmp_path), "--cmlbed", str(tmp_path / "nosuch")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 1 and "random-configs.py: cannot run" in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())
