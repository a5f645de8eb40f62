#!/usr/bin/env python3
"""Runs the shell blocks of the manual that are marked runnable, so that a guide that no
longer works fails CI.

A block is runnable when the line before its ```sh fence is `<!-- runnable -->`. The blocks
of one page run in order, in one bash session started at the repository root (so a later
block sees the files and variables of an earlier one), with `set -euo pipefail` and the
MPI environment of scripts/mpi-env.sh. Every line that calls `cmlbed run` or `cmlbed
simulate` and does not end in a backslash gets OVERRIDES appended (default: one round of
two mini-batches), so the guides stay fast. Blocks marked `<!-- runnable: needs ... -->`
(a Slurm cluster, root namespaces) are listed, not run: the ctests named in the marker
run them.

    scripts/dev/doc-blocks.py [--list] [--overrides "OPTS"] [PAGE.md ...]   # default: docs/tutorial.md docs/how-to/*.md

Exit status: 0 when every runnable block succeeded, 1 when one failed (its page, block
number, first line and output are printed), 2 for bad arguments.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OVERRIDES = "--experiment.rounds=1 --train.local_iterations=2"
MARKER = re.compile(r"^<!--\s*runnable(?::\s*(.*?))?\s*-->\s*$")
CMLBED_CALL = re.compile(r"\bcmlbed (run|simulate)\b")


def blocks(path):
    """[(line number, needs, text)] of the page's marked blocks; needs is None for a
    block that runs here, else the marker's reason."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        if i + 1 >= len(lines) or not re.match(r"^```(sh|bash)\s*$", lines[i + 1].strip()):
            raise SystemExit("doc-blocks: %s:%d: a runnable marker must be followed by a ```sh block"
                             % (path, i + 1))
        body = []
        for j in range(i + 2, len(lines)):
            if lines[j].strip().startswith("```"):
                break
            body.append(lines[j])
        else:
            raise SystemExit("doc-blocks: %s:%d: the block is not closed" % (path, i + 2))
        found.append((i + 2, m.group(1), "\n".join(body)))
    return found


def with_overrides(text, overrides):
    out = []
    for line in text.split("\n"):
        if overrides and CMLBED_CALL.search(line) and not line.rstrip().endswith("\\") \
                and not line.lstrip().startswith("#"):
            line = line.rstrip() + " " + overrides
        out.append(line)
    return "\n".join(out)


def run_page(path, overrides):
    runnable = [(n, text) for n, needs, text in blocks(path) if needs is None]
    if not runnable:
        return True
    script = ["set -euo pipefail", "cd %s" % shellquote(ROOT), "source scripts/mpi-env.sh"]
    for k, (n, text) in enumerate(runnable, 1):
        script.append("echo '=== doc-blocks: %s block %d (line %d)' >&2" % (os.path.relpath(path, ROOT), k, n))
        script.append(with_overrides(text, overrides))
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write("\n".join(script) + "\n")
        name = f.name
    start = time.time()
    result = subprocess.run(["bash", name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=ROOT)
    os.unlink(name)
    seconds = time.time() - start
    if result.returncode != 0:
        print(result.stdout[-6000:])
        last = re.findall(r"=== doc-blocks: (.*)", result.stdout)
        print("doc-blocks: FAILED %s (exit %d after %.0f s) in %s" % (
            os.path.relpath(path, ROOT), result.returncode, seconds, last[-1] if last else "its setup"))
        return False
    print("doc-blocks: %s: %d block(s) ok in %.0f s" % (os.path.relpath(path, ROOT), len(runnable), seconds))
    return True


def shellquote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--list", action="store_true", help="list the marked blocks, run nothing")
    parser.add_argument("--overrides", default=DEFAULT_OVERRIDES,
                        help="options appended to each cmlbed run/simulate line (default: %(default)s)")
    args = parser.parse_args()
    pages = args.pages or [os.path.join(ROOT, "docs", "tutorial.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "how-to", "*.md")))
    missing = [p for p in pages if not os.path.isfile(p)]
    if missing:
        print("doc-blocks: no such page: %s" % ", ".join(missing), file=sys.stderr)
        return 2
    if args.list:
        for page in pages:
            for n, needs, text in blocks(page):
                print("%s:%d %s: %s" % (os.path.relpath(page, ROOT), n, "runs" if needs is None
                                        else "not run here (%s)" % needs, text.split("\n")[0]))
        return 0
    ok = True
    for page in pages:
        ok = run_page(page, args.overrides) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
