"""Split 0 is centralised training: the pictures' legends and the timeline's titles say
'raw data uploaded' for a split method at split 0, and nothing for split >= 1 or fl."""

import synthetic
from synthetic import event
from cmlbed_report import plots, timeline
from cmlbed_report.results import Run, load_runs
from cmlbed_report.summary import group_runs

S = 10**9


def _run(tmp_path, name, method, split):
    return synthetic.write(tmp_path / ("%s.h5" % name), method, sections={"model": {"split": str(split)}},
                           events={0: [event("forward", 0, S // 2)]})


def test_legends_mark_split_zero(tmp_path):
    runs = load_runs([str(_run(tmp_path, "fl", "fl", 0)), str(_run(tmp_path, "central", "pipar", 0)),
                      str(_run(tmp_path, "split", "sfl", 3))])
    labels = plots.group_labels(group_runs(runs))
    assert labels == ["fl", "pipar, split 0: raw data uploaded", "sfl"]


def test_timeline_title_marks_split_zero(tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr(timeline, "save", lambda fig, path, **kw: figures.append(fig))
    timeline.draw([Run(str(_run(tmp_path, "central", "pipar", 0))), Run(str(_run(tmp_path, "split", "pipar", 2)))],
                  str(tmp_path / "t.png"))
    titles = [ax.get_title(loc="left") for ax in figures[0].axes if ax.get_title(loc="left")]
    assert len(titles) == 2
    assert "split 0: raw data uploaded" in titles[0] and "raw data" not in titles[1]
