"""The reproduction report's runs, from the results folder and from an archive kept in
git (docs/reproduction-data/): the results folder (results/reproduction/, not in git)
holds the .h5 files and their provenance (FILE.run.json) of the runs made here; the
archive holds, for every run that succeeded, its digest (FILE.h5.json, digest.py) and
provenance, and copies of the small files beside the runs (profiles, plans, profile
logs). A report rewritten on a fresh checkout reads the archive; a run made since is read
from its .h5 and enters the archive. So the report keeps every run it was ever built
from, and a new cell is one new run, not a rerun of everything.

Paths handed around are logical: where the file is (or would be) under the results
folder; `Entry` resolves one to the results file or to its archived copy."""

import glob
import json
import os
import re
import shutil
import sys

from . import digest
from .errors import ReportError
from .results import Run

# The small files kept verbatim beside the digests (relative to the results folder).
COPIED = ("profiles/*.json", "profiles/*.log", "simulated/*.plan.txt", "rounds-simulated/*.plan.txt")
RUN_FILES = "*/*.h5"


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _succeeded(provenance):
    return bool(provenance) and provenance.get("status", 1) == 0


def write_provenance(paths, record):
    """Writes FILE.run.json, what refresh() and Entry read (the fields scripts/studies/reproduction.sh
    writes: command, started, seconds, status, host, load_after, cores, cmlbed), for each
    results file of one command; each seed of a `cmlbed run --repeats` run (FILE.seedS.h5)
    also gets its "seed" and "repeats" (how many files the command wrote)."""
    for path in paths:
        data = dict(record)
        seed = re.search(r"\.seed(\d+)\.h5$", path)
        if seed:
            data.update(seed=int(seed.group(1)), repeats=len(paths))
        with open(path + ".run.json", "w") as f:
            json.dump(data, f, indent=1)


class Archive:
    def __init__(self, results, kept):
        """results: the results folder; kept: the archive folder (None: no archive)."""
        self.results = results
        self.kept = kept

    def kept_path(self, path):
        """Where the archive keeps the logical path: FILE.h5 as its digest FILE.h5.json,
        other files as themselves; None without an archive."""
        if self.kept is None:
            return None
        rel = os.path.relpath(path, self.results)
        return os.path.join(self.kept, rel + (".json" if path.endswith(".h5") else ""))

    def refresh(self):
        """Copies into the archive every run of the results folder that succeeded (its
        digest and provenance) and the small files beside them; returns (runs, files)
        written or changed. A failed run leaves an archived good one alone."""
        if self.kept is None:
            return 0, 0
        runs = files = 0
        for path in sorted(glob.glob(os.path.join(self.results, RUN_FILES))):
            provenance = _read_json(path + ".run.json")
            if not _succeeded(provenance):
                continue
            try:
                run = Run(path)
            except ReportError as e:
                print("archive: note: %s not kept: %s" % (path, e), file=sys.stderr)
                continue
            target = self.kept_path(path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            changed = digest.write(run, target)
            changed |= _copy(path + ".run.json", os.path.join(
                os.path.dirname(target), os.path.basename(path) + ".run.json"))
            runs += changed
        for pattern in COPIED:
            for path in sorted(glob.glob(os.path.join(self.results, pattern))):
                if path.endswith(".run.json"):
                    continue
                target = self.kept_path(path)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                files += _copy(path, target)
                if os.path.exists(path + ".run.json"):
                    files += _copy(path + ".run.json", target + ".run.json")
        return runs, files

    def glob(self, pattern):
        """Logical paths matching pattern (relative to the results folder) in the results
        folder or the archive, sorted."""
        found = {p for p in glob.glob(os.path.join(self.results, pattern))
                 if not p.endswith(".run.json")}
        if self.kept is not None:
            suffix = ".json" if pattern.endswith(".h5") else ""
            for p in glob.glob(os.path.join(self.kept, pattern + suffix)):
                if p.endswith(".run.json") and not pattern.endswith(".run.json"):
                    continue
                rel = os.path.relpath(p, self.kept)
                found.add(os.path.join(self.results, rel[:len(rel) - len(suffix)] if suffix else rel))
        return sorted(found)

    def entry(self, path):
        return Entry(path, self)

    def read_json(self, path):
        """A JSON file (a profile) from the results folder, else from the archive."""
        source = self.source(path)
        return _read_json(source) if source else None

    def source(self, path):
        """The file to read for a logical path of a plain file: the results folder's, else
        the archive's copy; None when neither exists."""
        if os.path.exists(path):
            return path
        kept = self.kept_path(path)
        return kept if kept and os.path.exists(kept) else None


class Entry:
    """One run (or profile) with what produced it: the results folder's when that run
    succeeded, else the archive's."""

    def __init__(self, path, archive):
        self.path = path
        self.id = None  # the provenance number in the report, set when cited
        self.run = None
        self.archived = False
        here = _read_json(path + ".run.json")
        kept = archive.kept_path(path)
        kept_provenance = (_read_json(os.path.join(os.path.dirname(kept), os.path.basename(path)
                                                   + ".run.json")) if kept else None)
        if _succeeded(here) and os.path.exists(path):
            self.source, self.provenance = path, here
        elif _succeeded(kept_provenance) and os.path.exists(kept):
            self.source, self.provenance, self.archived = kept, kept_provenance, True
        else:
            # Not run, or failed: the provenance (if any) still says how it failed.
            self.source, self.provenance = None, here or kept_provenance or {}
        self.ok = self.source is not None

    def load(self):
        """The Run (a DigestRun when archived); None when missing, failed or empty."""
        if self.run is None and self.ok and self.path.endswith(".h5"):
            try:
                self.run = (digest.DigestRun(self.source, self.path) if self.archived
                            else Run(self.source))
                self.run.require_rounds()
            except ReportError as e:
                print("reproduction_report.py: note: %s" % e, file=sys.stderr)
                self.ok = False
                self.run = None
        return self.run

    def read_json(self):
        return _read_json(self.source) if self.source else None


def _copy(source, target):
    """Copies source to target unless their contents are equal; returns whether it wrote."""
    with open(source, "rb") as f:
        data = f.read()
    try:
        with open(target, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    shutil.copyfile(source, target)
    return True
