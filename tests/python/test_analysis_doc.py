"""docs/how-to/analyse-results.md runs: its Python blocks, in order and in one namespace, on small runs
written under the names the page uses (results/quickstart-METHOD.seedN.h5, 2 seeds)."""

import os
import re

import pytest

from conftest import ROOT, SMALL_RUN, _cmlbed

pytest.importorskip("pandas", reason="python3-pandas is not installed")
DOC = os.path.join(ROOT, "docs", "how-to", "analyse-results.md")


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_analysis_page_runs(tmp_path, monkeypatch, capsys):
    os.makedirs(tmp_path / "results")
    for method in ("fl", "sfl", "pipar"):
        _cmlbed("--experiment.method=" + method, "--repeats", "2",
                "--output.file=%s/results/quickstart-%s.h5" % (tmp_path, method), *SMALL_RUN)
    blocks = python_blocks(open(DOC).read())
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for number, block in enumerate(blocks, 1):
        try:
            exec(compile(block, "%s, python block %d" % (DOC, number), "exec"), namespace)
        except Exception as error:
            pytest.fail("python block %d of docs/how-to/analyse-results.md failed: %r\n%s" % (number, error, block))
    out = capsys.readouterr().out
    assert re.search(r"pipar +[0-9.]+ ± [0-9.]+ s per round \(2 seeds\)", out), out
    assert "pipar against fl:" in out
    assert (tmp_path / "results" / "pipar-round1.png").stat().st_size > 10000
