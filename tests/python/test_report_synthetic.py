"""cmlbed-report on small results files written with h5py (tests/python/synthetic.py) in
the layout of docs/reference/results-format.md: the columns and events of issue 10 (flops,
messages, device_accuracy, the `message` enum, `wait` events) with hand-computed
answers, and files of an older cmlbed without them. No test here runs cmlbed; the
tests on real runs are in test_report.py."""

import math

import h5py
import numpy as np
import pytest

import synthetic
from synthetic import event
from cmlbed_report import idle_causes, methods, perfetto, summary, tables, timeline
from cmlbed_report.results import Run, load_runs

S = 10**9  # nanoseconds per second


# --- 1. baseline matching: method sections are method-only by convention ------------------

def test_a_section_named_after_a_method_does_not_split_the_experiment(tmp_path):
    fl = synthetic.write(tmp_path / "fl.h5", "fl")
    # AdaSplit's own options differ from the defaults the fl run carries, and so do
    # PiPar's; neither makes it another experiment.
    ada = synthetic.write(tmp_path / "ada.h5", "adasplit",
                          sections={"adasplit": {"kappa": "0.5", "eta": "2"},
                                    "pipar": {"micro_batches": "8"},
                                    "output": {"file": "elsewhere.h5", "progress": "false"}})
    other_lr = synthetic.write(tmp_path / "lr.h5", "adasplit",
                               sections={"train": {"lr": "0.5"}})
    runs = load_runs([str(fl), str(ada), str(other_lr)])
    chosen = summary.choose_baselines(runs, "fl")
    assert [b.name for b in chosen[:2]] == ["fl", "fl"]
    # A real difference still counts: the lr run has no fl run of its own experiment.
    base = runs[0]
    assert summary.scenario(runs[2], summary.method_sections(runs)) != summary.scenario(
        base, summary.method_sections(runs))


def test_a_new_method_needs_no_edit_in_the_report(tmp_path, capsys):
    # "newmethod" is not in the method table: its section is method-only because a run of
    # it is here.
    fl = synthetic.write(tmp_path / "fl.h5", "fl", sections={"newmethod": {"knob": "1"}})
    new = synthetic.write(tmp_path / "new.h5", "newmethod", sections={"newmethod": {"knob": "7"}})
    runs = load_runs([str(fl), str(new)])
    assert "newmethod" not in methods.names(runs[0].method_table)
    assert [b.name for b in summary.choose_baselines(runs, "fl")] == ["fl", "fl"]
    assert "no fl run has the same settings" not in capsys.readouterr().err
    # Without the newmethod run among the files, [newmethod] is an ordinary section.
    assert summary.scenario(runs[0]) != summary.scenario(
        Run(str(synthetic.write(tmp_path / "fl2.h5", "fl", sections={"newmethod": {"knob": "7"}}))))


# --- 2. the reader takes the columns the file has ---------------------------------------------

def test_the_reader_classifies_the_columns_it_finds(tmp_path):
    new = Run(str(synthetic.write(tmp_path / "new.h5", mpi_size=4)))
    columns = new.round_columns()
    assert columns["flops"] == columns["device_accuracy"] == columns["busy_s"] == "per-rank"
    assert columns["messages_up"] == columns["bytes_up"] == columns["wall_s"] == "scalar"
    assert new.per_rank("flops").shape == (1, 4)
    assert new.message_names == synthetic.MESSAGES
    old = Run(str(synthetic.write(tmp_path / "old.h5", new_columns=False)))
    assert "flops" not in old.round_columns() and "busy_s" in old.round_columns()
    assert old.per_rank("flops") is None and old.scalar("messages_up") is None
    assert old.message_names is None


# --- 3. TFLOPs and messages in the summary -----------------------------------------------------

def two_rounds(tmp_path, new_columns=True):
    flops = [2e12, 1e12, 0.5e12]
    rounds = [dict(round=k, t_start_ns=k * S, t_end_ns=(k + 1) * S, bytes_up=10**6,
                   bytes_down=2 * 10**6, messages_up=10 + k, messages_down=5, flops=flops,
                   device_accuracy=[math.nan, 0.5, 0.7], test_accuracy=0.6, test_loss=1.0)
              for k in range(2)]
    if not new_columns:
        for r in rounds:
            for key in ("messages_up", "messages_down", "flops", "device_accuracy"):
                del r[key]
    return synthetic.write(tmp_path / ("new.h5" if new_columns else "old.h5"), "sfl",
                           rounds=rounds, sections={"experiment": {"rounds": "2"}},
                           new_columns=new_columns)


def test_summary_shows_server_and_device_tflops_and_messages(tmp_path, cli):
    run = Run(str(two_rounds(tmp_path)))
    numbers = summary.run_numbers(run)
    # Server = rank 0; devices = ranks 1.. together, over both rounds.
    assert numbers["server_tflops"] == pytest.approx(4.0)
    assert numbers["device_tflops"] == pytest.approx(3.0)
    assert (numbers["messages_up"], numbers["messages_down"]) == (21, 10)
    per_round = summary.round_rows(run)
    assert [r["messages_up"] for r in per_round] == [10, 11]
    assert per_round[1]["server_tflops"] == pytest.approx(2.0)
    assert per_round[1]["device_tflops"] == pytest.approx(1.5)
    csv_path, md_path = tmp_path / "runs.csv", tmp_path / "runs.md"
    status, out, err = cli("summary", run.path, "--csv", csv_path, "--markdown", md_path)
    assert status == 0, err
    assert "srv TFLOPs" in out and "dev TFLOPs" in out and "msgs up" in out
    header, row = csv_path.read_text().splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    assert float(values["server_tflops"]) == pytest.approx(4.0)
    assert float(values["device_tflops"]) == pytest.approx(3.0)
    assert values["messages_up"] == "21.0" and values["messages_down"] == "10.0"
    assert "| srv TFLOPs | dev TFLOPs |" in md_path.read_text()


def test_a_replanned_run_shows_each_change_of_split_and_micro_batches(tmp_path):
    # Two devices, split 4 and 4 micro-batches in the stored configuration (the first
    # plan); checks after rounds 1 (kept), 3 (device 2 to split 0) and 5 (both to split 0,
    # 8 micro-batches).
    path = synthetic.write(tmp_path / "replanned.h5", "pipar",
                           sections={"model": {"split": "4"}, "pipar": {"micro_batches": "4"}})
    with h5py.File(path, "a") as f:
        group = f.create_group("plan/replans")
        columns = {"round": [1, 1, 3, 3, 5, 5], "device": [1, 2] * 3,
                   "split": [4, 4, 4, 0, 0, 0], "micro_batches": [4, 4, 4, 4, 8, 8],
                   "changed": [0, 0, 1, 1, 1, 1]}
        for name, values in columns.items():
            group.create_dataset(name, data=np.array(values, dtype=np.float64))
    numbers = summary.run_numbers(Run(str(path)))
    assert numbers["split"] == "4>0/4@4>0@6"
    assert numbers["micro_batches"] == "4>8@6"
    plain = summary.run_numbers(Run(str(synthetic.write(tmp_path / "plain.h5", "pipar",
                                                        sections={"model": {"split": "4"}}))))
    assert plain["split"] == "4"


def test_an_older_file_without_the_new_columns_shows_dashes(tmp_path, cli):
    run = Run(str(two_rounds(tmp_path, new_columns=False)))
    numbers = summary.run_numbers(run)
    for key in ("server_tflops", "device_tflops", "messages_up", "messages_down"):
        assert math.isnan(numbers[key]), key
    assert numbers["mb_up"] == pytest.approx(2.0)
    text = tables.text_table([numbers], [c for c in tables.RUN_COLUMNS
                                          if c[0] in ("server_tflops", "messages_up")])
    assert text.splitlines()[1].split() == ["-", "-"]
    csv_path = tmp_path / "old.csv"
    status, _, err = cli("summary", run.path, "--csv", csv_path)
    assert status == 0, err
    header, row = csv_path.read_text().splitlines()
    assert dict(zip(header.split(","), row.split(",")))["server_tflops"] == ""


# --- 4. idle causes --------------------------------------------------------------------------

def waiting_server(tmp_path, name="waits.h5"):
    """One round, window [0 s, 10 s), three ranks:
    server busy [2,4) and [6,7) (3 s); waits for activations from device 1 [-1,2) (clipped
    to [0,2): 2 s) and [3,3.5) (inside busy: 0 s), from device 2 [4,6) and [7,9), for a
    model from device 1 [8.5,9.5) (overlaps device 2's wait on [8.5,9): shared); an
    evaluation after the window. Idle 7 s = activation 2 + 3.75 s, model 0.75 s,
    other 0.5 s ([9.5,10)).
    Device 1 busy the whole window; device 2 has no event at all."""
    a = "activation"
    server = [
        event("forward", 2 * S, 4 * S), event("backward", 6 * S, 7 * S),
        event("wait", -1 * S, 2 * S, message=a, peer=1, round_=0),
        event("wait", 3 * S, int(3.5 * S), message=a, peer=1),
        event("wait", 4 * S, 6 * S, message=a, peer=2),
        event("wait", 7 * S, 9 * S, message=a, peer=2),
        event("wait", int(8.5 * S), int(9.5 * S), message="model", peer=1),
        event("evaluate", 10 * S, 11 * S),
        event("recv", 1 * S, 2 * S, lane="uplink", message=a, peer=1, nbytes=100),
    ]
    device1 = [event("forward", 0, 10 * S),
               event("send", 1 * S, 2 * S, lane="uplink", message=a, peer=0, nbytes=100)]
    rounds = [dict(round=0, t_start_ns=0, t_end_ns=10 * S, busy_s=[3, 10, 0],
                   idle_s=[7, 0, 10])]
    return synthetic.write(tmp_path / name, "sfl", rounds=rounds,
                           events={0: server, 1: device1})


def test_split_window_by_hand():
    busy_ns, per_key = idle_causes.split_window(
        0, 100, [(10, 20), (15, 30)], [(0, 12), (5, 40), (50, 60), (90, 200)],
        ["a", "b", "c", "a"])
    # a: [0,5) alone + half of [5,10) + [90,100) clipped; b: half of [5,10) + [30,40).
    assert busy_ns == 20
    assert per_key == {"a": 17.5, "b": 12.5, "c": 10.0}
    assert idle_causes.split_window(0, 10, [], [], []) == (0, {})


def test_idle_causes_by_hand(tmp_path):
    run = Run(str(waiting_server(tmp_path)))
    assert idle_causes.availability(run) is None
    server, device1, device2 = idle_causes.run_causes(run)
    assert server.busy_s == pytest.approx(3.0) and server.idle_s == pytest.approx(7.0)
    assert dict(server.waiting) == pytest.approx({"activation": 5.75, "model": 0.75})
    assert server.by_peer[("activation", 2)] == pytest.approx(3.75)
    assert server.other_s == pytest.approx(0.5)
    # The same busy time as /rounds busy_s, so the parts add up to the table's idle time.
    assert [c.idle_s for c in (server, device1, device2)] == pytest.approx(
        list(run.rounds["idle_s"][0]))
    assert idle_causes.describe(server) == (
        "idle 70.0%: 57.5% waiting for activation (device 2 most), "
        "7.5% waiting for model (device 1), 5.0% other")
    assert idle_causes.describe(device1) == "idle 0.0%: 0.0% other"
    assert idle_causes.describe(device2) == "idle 100.0%: 100.0% other"


def test_u_shaped_waits_have_their_own_names(tmp_path):
    """A device waiting for an activation (the middle's output) and the server waiting for
    a gradient (the tail's) exist only in ushaped, and are named so."""
    server = [event("forward", 0, 2 * S),
              event("wait", 2 * S, 5 * S, message="gradient", peer=1),
              event("backward", 5 * S, 6 * S)]
    device1 = [event("forward", 0, 1 * S),
               event("wait", 1 * S, 3 * S, message="activation", peer=0),
               event("backward", 3 * S, 6 * S)]
    rounds = [dict(round=0, t_start_ns=0, t_end_ns=6 * S, busy_s=[3, 4], idle_s=[3, 2])]
    run = Run(str(synthetic.write(tmp_path / "u.h5", "ushaped", mpi_size=2, rounds=rounds,
                                  events={0: server, 1: device1})))
    server_causes, device_causes = idle_causes.run_causes(run)
    assert dict(server_causes.waiting) == pytest.approx({"tail gradient": 3.0})
    assert dict(device_causes.waiting) == pytest.approx({"middle output": 2.0})
    # The usual directions keep the message's name.
    assert idle_causes._cause_name("activation", 0) == "activation"
    assert idle_causes._cause_name("gradient", 2) == "gradient"


def test_summary_idle_causes_command(tmp_path, cli):
    waits = waiting_server(tmp_path)
    # An older cmlbed's file: events, but no message member and no waits.
    old = synthetic.write(tmp_path / "old.h5", "sfl", new_columns=False,
                          events={0: [event("forward", 0, S // 2)]})
    untimed = synthetic.write(tmp_path / "untimed.h5", "sfl",
                              sections={"output": {"timeline": "false"}})
    md = tmp_path / "runs.md"
    status, out, err = cli("summary", "--brief", "--idle-causes", waits, old, untimed,
                           "--markdown", md)
    assert status == 0, err
    assert "== idle causes" in out
    assert "  server     idle 70.0%: 57.5% waiting for activation (device 2 most)" in out
    # The others: unknown, and why.
    assert "old (sfl)\n  unknown: no wait events (written by a cmlbed that did not record " \
        "waits)" in out
    assert "untimed (sfl)\n  unknown: no events (output.timeline = false)" in out
    markdown = md.read_text()
    assert "## Idle causes" in markdown and "| waits | sfl | 0 | 70.0 | waiting for activation " \
        "| device 2 | 3.750 | 37.5 |" in markdown
    assert "old: unknown, no wait events" in markdown
    # Without the flag, no breakdown.
    status, out, _ = cli("summary", "--brief", waits)
    assert status == 0 and "idle causes" not in out


def test_timeline_draws_waits_hatched_with_a_legend_entry(tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr(timeline, "save", lambda fig, path, **kw: figures.append(fig))
    timeline.draw([Run(str(waiting_server(tmp_path)))], str(tmp_path / "t.png"))
    fig = figures[0]
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "wait (for a message)" in labels and "forward" in labels
    hatched = [c for ax in fig.axes for c in ax.collections if c.get_hatch()]
    assert len(hatched) == 1 and len(hatched[0].get_paths()) == 5  # the server's five waits


def test_perfetto_names_the_message(tmp_path):
    run = Run(str(waiting_server(tmp_path)))
    complete = [e for e in perfetto.trace_events(run) if e["ph"] == "X"]
    waits = [e for e in complete if e["cat"] == "wait"]
    assert {e["args"]["message"] for e in waits} == {"activation", "model"}
    assert {e["name"] for e in waits} == {"wait activation", "wait model"}
    forward = next(e for e in complete if e["cat"] == "forward")
    assert "message" not in forward["args"]  # message none: nothing to say
    old = Run(str(two_rounds(tmp_path, new_columns=False)))
    assert old.message_names is None


def test_perfetto_and_timeline_mark_stages_that_overran(tmp_path):
    """A held stage that ran past its length is named and coloured in the trace and
    outlined in the timeline; a kept one only says so in its args; old files say nothing."""
    device = [event("forward", 0, 2 * S, held="kept"), event("backward", 2 * S, 5 * S, held="overran"),
              event("step", 5 * S, 6 * S)]
    rounds = [dict(round=0, t_start_ns=0, t_end_ns=10 * S)]
    path = synthetic.write(tmp_path / "held.h5", "fl", rounds=rounds, events={0: [], 1: device, 2: []})
    run = Run(str(path))
    assert run.held_names == ["no", "kept", "overran"]
    stages = {e["cat"]: e for e in perfetto.trace_events(run) if e["ph"] == "X"}
    assert stages["backward"]["name"] == "backward (overran)"
    assert stages["backward"]["args"]["held"] == "overran" and stages["backward"]["cname"] == "terrible"
    assert stages["forward"]["args"]["held"] == "kept" and "cname" not in stages["forward"]
    assert "held" not in stages["step"]["args"]
    from cmlbed_report import timeline
    timeline.draw([run], str(tmp_path / "held.png"))
    assert (tmp_path / "held.png").stat().st_size > 0
    old = Run(str(two_rounds(tmp_path, new_columns=False)))
    assert old.held_names is None and not any(old.overran(e) for events in old.events for e in events)


# --- stages: stage lengths over the steady rounds, one file or two side by side ----------

def _staged(tmp_path, name, scale):
    """Two rounds of 10 s; round 0 (not steady) has a long forward that must not count.
    Round 1: the server's forwards of 1 and 3 s (x scale), the device's upload of 2 s."""
    server = [event("forward", 0, 9 * S, round_=0),
              event("forward", 10 * S, 10 * S + int(scale * S), round_=1),
              event("forward", 12 * S, 12 * S + int(3 * scale * S), round_=1),
              event("wait", 16 * S, 19 * S, round_=1, message="activation", peer=1)]
    device = [event("send", 10 * S, 12 * S, round_=1, lane="uplink", message="activation",
                    peer=0, nbytes=100)]
    rounds = [dict(round=0, t_start_ns=0, t_end_ns=10 * S),
              dict(round=1, t_start_ns=10 * S, t_end_ns=20 * S)]
    return synthetic.write(tmp_path / name, "sfl", rounds=rounds, events={0: server, 1: device})


def test_stage_table_by_hand(tmp_path):
    from cmlbed_report import stages
    table = stages.stage_table(Run(str(_staged(tmp_path, "a.h5", 1.0))))
    # Waits are idle time, not stages; round 0 is left out.
    assert set(table) == {("server", "forward"), ("devices", "send activation")}
    assert table[("server", "forward")] == pytest.approx((2, 2.0, 4.0))
    assert table[("devices", "send activation")] == pytest.approx((1, 2.0, 2.0))


def test_stages_command_compares_two_files(tmp_path, cli):
    a, b = _staged(tmp_path, "a.h5", 1.0), _staged(tmp_path, "b.h5", 0.5)
    status, out, err = cli("stages", a, b)
    assert status == 0, err
    forward = next(line for line in out.splitlines() if line.startswith("server forward"))
    assert forward.endswith("| -50.0%")
    assert "2000.000 ms" in forward and "1000.000 ms" in forward
    status, out, err = cli("stages", a, b, a)
    assert status == 1 and "one or two files" in err
