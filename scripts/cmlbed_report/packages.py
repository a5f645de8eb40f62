"""Run a script under a Python that has its packages: the python3 that started it when
that one imports them, else Debian's /usr/bin/python3 (where `apt-get install
python3-h5py ...` puts them, while the python3 on PATH may be a pyenv or virtual
environment without them), else exit 3 with the line that installs them. Standard
library only: it runs before the packages are known to be there (which is also why
cmlbed_report/__init__.py imports nothing heavy until asked)."""

import importlib
import os
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def handover_mark(program):
    """The environment variable that says `program` handed itself over once already:
    cmlbed-report -> CMLBED_REPORT_REEXEC, export-model.py -> CMLBED_EXPORT_MODEL_REEXEC."""
    name = os.path.splitext(program)[0]
    name = name[len("cmlbed-"):] if name.startswith("cmlbed-") else name
    return "CMLBED_" + name.upper().replace("-", "_") + "_REEXEC"


def first_missing(modules):
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            return module
    return None


def ensure(program, script, modules, also=(), also_for=""):
    """Return when this Python imports every one of `modules`. Else hand the process over
    to /usr/bin/python3 running `script` with the same arguments when that one imports
    them (once: the mark stops a loop, and it is not compared by path, since a virtual
    environment's python3 links to the same binary yet sees other packages); else print
    what is missing and how to install it and exit 3. `also`: packages that some
    commands need (`also_for`, e.g. "for pictures"), installed by the same line."""
    missing = first_missing(modules)
    if missing is None:
        return
    mark = handover_mark(program)
    if not os.environ.get(mark) and os.path.exists(SYSTEM_PYTHON):
        found = subprocess.run([SYSTEM_PYTHON, "-c", "import " + ", ".join(modules)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if found:
            os.environ[mark] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(script)] + sys.argv[1:])
    names = " and ".join([", ".join(modules[:-1]), modules[-1]] if len(modules) > 1 else modules)
    sys.stderr.write(
        "%s: error: the Python package '%s' is missing in %s.\n"
        "It needs %s%s. On Debian 12:\n"
        "  apt-get install %s\n"
        "(bash scripts/setup.sh installs them); then run it again: it uses %s when the\n"
        "python3 on PATH lacks them.\n"
        % (program, missing, sys.executable, names,
           " (and %s %s)" % (" and ".join(also), also_for) if also else "",
           " ".join("python3-" + m for m in list(modules) + list(also)), SYSTEM_PYTHON))
    sys.exit(3)
