"""Results files from short real runs of cmlbed (built by ctest; the binary and mpirun
come from the environment ctest sets), made once per test session."""

import os
import shutil
import subprocess
import sys

import h5py
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "cmlbed-report")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "studies"))
# The binary these tests run (ctest sets CMLBED_BINARY), and the one the report asks for
# the method table of files that do not store it (scripts/cmlbed_report/methods.py reads
# CMLBED; cmlbed-report started by a test inherits it).
BINARY = os.environ.get("CMLBED_BINARY", os.path.join(ROOT, "build", "cmlbed"))
os.environ["CMLBED"] = BINARY

# LeNet on synthetic data, 1 server + 2 devices, 2 rounds of 4 mini-batches: a few
# seconds per run, with real transfers over a shaped uplink.
SMALL_RUN = ["--data.dataset=synthetic", "--data.synthetic_train=600",
             "--data.synthetic_test=100", "--model.name=lenet", "--model.split=3",
             "--train.batch_size=32", "--train.local_iterations=4", "--experiment.rounds=2",
             "--devices.slowdown=2", "--output.overwrite=true"]


def _cmlbed(*args, ranks=3, check=True):
    mpiexec = os.environ.get("CMLBED_MPIEXEC", "mpirun")
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run([mpiexec, "-np", str(ranks), BINARY, "run"] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=240)
    if check and done.returncode != 0:
        raise RuntimeError("cmlbed failed (%d):\n%s" % (done.returncode, done.stdout))
    return done


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory):
    """fl, sfl and pipar with a 20 mbit uplink, and fl again with 50 mbit (another
    experiment for the baseline matching)."""
    d = tmp_path_factory.mktemp("runs")
    for name, method, rate in [("fl-20mbit", "fl", "20mbit"), ("sfl-20mbit", "sfl", "20mbit"),
                               ("pipar-20mbit", "pipar", "20mbit"),
                               ("fl-50mbit", "fl", "50mbit")]:
        _cmlbed("--experiment.method=" + method, "--network.uplink_rate=" + rate,
                "--output.file=%s/%s.h5" % (d, name), *SMALL_RUN)
    return d


@pytest.fixture(scope="session")
def per_device_runs(tmp_path_factory):
    """fl, sl, sfl and pipar as configs/adasplit/ sets them up, shrunk: label skew
    (shards, 2 of 4 classes per device), LeNet split after pool1, Adam, each device
    scored on its own classes (evaluation.scope = per-device); for the AdaSplit
    accounting (cmlbed-report c3) and its table and picture."""
    d = tmp_path_factory.mktemp("per-device")
    small = [a for a in SMALL_RUN if not a.startswith("--model.split=")] + ["--model.split=2"]
    for method in ("fl", "sl", "sfl", "pipar"):
        _cmlbed("--experiment.method=" + method, "--data.synthetic_classes=4",
                "--data.partition=shards", "--data.classes_per_device=2",
                "--evaluation.scope=per-device", "--train.optimizer=adam", "--train.lr=1e-3",
                "--network.uplink_rate=10mbit", "--network.downlink_rate=25mbit",
                "--output.file=%s/%s.h5" % (d, method), *small)
    return d


@pytest.fixture(scope="session")
def stopped_run(tmp_path_factory):
    """A run that ended before its first round completed: device 2 is 2000x slower and
    the server gives up after 2 s (experiment.timeout), leaving a valid file with no
    round."""
    path = tmp_path_factory.mktemp("stopped") / "stopped.h5"
    done = _cmlbed("--experiment.method=pipar", "--experiment.timeout=2s",
                   "--device.2.slowdown=2000", "--output.file=%s" % path, *SMALL_RUN,
                   check=False)
    assert done.returncode != 0, done.stdout
    assert path.exists(), done.stdout
    return path


@pytest.fixture(scope="session")
def untimed_run(tmp_path_factory):
    """fl-20mbit again, without a timeline (output.timeline = false): no events."""
    path = tmp_path_factory.mktemp("untimed") / "fl-untimed.h5"
    _cmlbed("--experiment.method=fl", "--network.uplink_rate=20mbit",
            "--output.timeline=false", "--output.file=%s" % path, *SMALL_RUN)
    return path


@pytest.fixture
def truncated_run(runs_dir, tmp_path):
    """What a run killed after its first round leaves (the C++ test of the writer checks
    that a SIGKILL leaves exactly this): one round in /rounds, an empty /summary."""
    path = tmp_path / "killed.h5"
    shutil.copy(runs_dir / "pipar-20mbit.h5", path)
    with h5py.File(path, "r+") as f:
        f["rounds"].resize((1,))
        for name in list(f["summary"].attrs):
            del f["summary"].attrs[name]
    return path


def report(*args, python=None, env=None):
    """Runs scripts/cmlbed-report as a user would; returns (status, stdout, stderr)."""
    command = list(python or []) + [REPORT] + [str(a) for a in args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, **(env or {})), timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def cli(capsys):
    """Runs cmlbed-report's main() in this process (much faster than a new Python for
    every case); returns (status, stdout, stderr)."""
    from cmlbed_report.cli import main

    def call(*args):
        try:
            status = main([str(a) for a in args])
        except SystemExit as e:  # argparse's usage errors
            status = e.code
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    return call
