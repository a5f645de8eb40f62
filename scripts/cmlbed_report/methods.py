"""The method table (src/config/methods.cpp): what each method does, as a list of dicts,
one per method, in the table's order: {"name": "fl", "summary": ..., "trains": True,
"splits_model": False, "micro_batches": False, ..., "personalised": False | True |
"always", "simulatable": True, "noise": "model-updates", "privacy_mechanisms": [...]}.

Scripts ask the table instead of keeping lists of methods: a results file's own copy
(root attribute `method_table`, written since the attribute existed: table_of_file), or
the binary's (`cmlbed info --methods --json`: table_from_binary). Only the standard
library here: the configuration generators (scripts/tools/) import it too."""

import json
import os
import shutil
import subprocess

from .errors import ReportError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_from_binary = {}  # binary path -> its table
# The traits scripts read; every row has them.
REQUIRED = ("name", "trains", "splits_model", "micro_batches", "simulatable")


def _parse(text, where):
    """The "methods" list of the table's JSON text."""
    try:
        table = json.loads(text)["methods"]
        if not isinstance(table, list) or not all(isinstance(m, dict) for m in table):
            raise TypeError("not a list of methods")
        for row in table:
            missing = [key for key in REQUIRED if key not in row]
            if missing:
                raise ValueError("a method without %s" % ", ".join(missing))
    except (ValueError, KeyError, TypeError) as e:
        raise ReportError("%s: not the method table as JSON ({\"methods\": [...]}): %s"
                          % (where, e))
    return table


def table_of_file(attrs, where="the results file"):
    """The table a results file stores (its root attributes `attrs`, as Run.attrs holds
    them), or None for a file written before the attribute existed."""
    text = attrs.get("method_table")
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return _parse(str(text), "%s (root attribute method_table)" % where)


def binary():
    """The cmlbed binary to ask: $CMLBED when set, else <repo>/build/cmlbed when it
    exists, else `cmlbed` on PATH; None when there is none."""
    if os.environ.get("CMLBED"):
        return os.environ["CMLBED"]
    built = os.path.join(ROOT, "build", "cmlbed")
    if os.path.exists(built):
        return built
    return shutil.which("cmlbed")


def table_from_binary(path=None):
    """The table `cmlbed info --methods --json` prints (path: the binary; default:
    binary()), asked once per binary."""
    path = path or binary()
    if not path:
        raise ReportError("no cmlbed binary to ask for the method table: set CMLBED to the "
                          "binary, or build cmlbed (build/cmlbed)")
    if path not in _from_binary:
        command = [path, "info", "--methods", "--json"]
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            raise ReportError("cannot run %s for the method table (%s): set CMLBED to the "
                              "binary, or build cmlbed" % (" ".join(command), e))
        if done.returncode != 0:
            raise ReportError("%s failed (exit status %d): %s; a cmlbed older than --json? "
                              "Build cmlbed again, or set CMLBED to a newer binary"
                              % (" ".join(command), done.returncode,
                                 done.stderr.strip() or "no message"))
        _from_binary[path] = _parse(done.stdout, " ".join(command))
    return _from_binary[path]


def names(table):
    """The methods' names, in the table's order."""
    return [m["name"] for m in table]


def traits(table, name):
    """The row of method `name`; ReportError when the table has none."""
    for row in table:
        if row["name"] == name:
            return row
    raise ReportError("method %r is not in the method table (methods: %s)"
                      % (name, ", ".join(names(table))))


def has(table, name, trait):
    """Whether method `name` has `trait` (a key of its row: splits_model, trains, ...;
    personalised "always" counts as yes)."""
    row = traits(table, name)
    if trait not in row:
        raise ReportError("the method table has no trait %r (traits: %s)"
                          % (trait, ", ".join(sorted(row))))
    return bool(row[trait])

