"""cmlbed_report.load / load_many (frames.py): the DataFrames hold what the results
files hold, read by the report's own reader."""

import glob
import os

import numpy as np
import pytest

import cmlbed_report
from cmlbed_report.results import Run

pandas = pytest.importorskip("pandas", reason="python3-pandas is not installed")


def test_rounds_expand_per_rank_columns_and_keep_every_value(runs_dir):
    path = os.path.join(runs_dir, "pipar-20mbit.h5")
    loaded, raw = cmlbed_report.load(path), Run(path)
    assert loaded.method == "pipar" and loaded.ranks == 3 and not loaded.simulated
    assert len(loaded.rounds) == len(raw.rounds) == 2
    np.testing.assert_array_equal(loaded.rounds.wall_s, raw.rounds["wall_s"])
    for rank in range(3):
        np.testing.assert_array_equal(loaded.rounds["busy_s_%d" % rank], raw.rounds["busy_s"][:, rank])
        np.testing.assert_array_equal(loaded.rounds["flops_%d" % rank], raw.rounds["flops"][:, rank])
    assert "busy_s" not in loaded.rounds.columns
    assert loaded.config["experiment.method"] == "pipar"
    assert loaded.config["network.uplink_rate"] == "20mbit"
    assert loaded.attrs["method"] == "pipar" and isinstance(loaded.attrs["mpi_size"], int)
    assert loaded.summary["rounds"] == 2


def test_events_name_their_enums_and_count_as_the_file(runs_dir):
    path = os.path.join(runs_dir, "sfl-20mbit.h5")
    loaded, raw = cmlbed_report.load(path), Run(path)
    every = loaded.events()
    assert len(every) == sum(len(e) for e in raw.events)
    server = loaded.events(rank=0)
    assert (server["rank"] == 0).all() and len(server) == len(raw.events[0])
    assert set(server["kind"].astype(str)) <= set(raw.kind_names)
    sent = every[(every["kind"] == "send") & (every["message"] == "activation")]
    assert (sent["rank"] > 0).all() and (sent["peer"] == 0).all() and len(sent) > 0
    # Seconds from the first round's start: the first round's stages start at or after 0.
    assert (every["t_end_s"] >= every["t_start_s"]).all()
    np.testing.assert_allclose(every["t_start_s"], (every["t_start_ns"] - raw.rounds["t_start_ns"][0]) / 1e9)
    with pytest.raises(cmlbed_report.ReportError, match="ranks 0..2, not 3"):
        loaded.events(rank=3)


def test_load_many_adds_the_options_that_differ(runs_dir):
    table = cmlbed_report.load_many(os.path.join(runs_dir, "fl-*.h5"))
    assert sorted(set(table["run"])) == ["fl-20mbit", "fl-50mbit"]
    assert list(table.columns[:4]) == ["file", "run", "method", "seed"]
    assert "network.uplink_rate" in table.columns
    assert sorted(set(table["network.uplink_rate"])) == ["20mbit", "50mbit"]
    assert "model.name" not in table.columns  # the same in both
    assert len(table) == 4  # 2 rounds each
    every = cmlbed_report.load_many(sorted(glob.glob(os.path.join(runs_dir, "*.h5"))))
    assert set(every["method"]) == {"fl", "sfl", "pipar"}


def test_refusals_name_the_file_and_the_reason(runs_dir, tmp_path):
    with pytest.raises(cmlbed_report.ReportError, match="no file matches"):
        cmlbed_report.load_many(str(tmp_path / "nothing-*.h5"))
    with pytest.raises(cmlbed_report.ReportError, match="no files given"):
        cmlbed_report.load_many([])
    not_results = tmp_path / "not.h5"
    not_results.write_bytes(b"plain text")
    with pytest.raises(cmlbed_report.ReportError):
        cmlbed_report.load(str(not_results))
