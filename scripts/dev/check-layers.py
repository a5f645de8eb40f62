#!/usr/bin/env python3
"""Checks that every include in include/ and src/ points to a lower layer.

The layers are the block in docs/explanation/architecture.md ("N  area, area  what it holds"). An
area may include its own headers and those of areas on lower lines; not a higher line,
not another area on its own line. Exit 0 when every include keeps that rule; else
exit 1 with one line per offending include: file:line, the include, and why.

  python3 scripts/dev/check-layers.py [--root DIR]   check a tree (default: this checkout)
  python3 scripts/dev/check-layers.py --self-test    check the checker on a scratch tree
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
LAYER_LINE = re.compile(r"^(\d+)\s+([a-z_]+(?:\s*,\s*[a-z_]+)*)(?:\s{2,}|$)")
SOURCE_SUFFIXES = (".hpp", ".h", ".cpp", ".cc", ".hpp.in")
# Headers directly under cmlbed/ (generated at build time) and the area they count as.
TOP_LEVEL_HEADERS = {"version.hpp": "base"}


def read_layers(root):
    """Area -> layer number, from the first fenced block of docs/explanation/architecture.md."""
    path = os.path.join(root, "docs", "explanation", "architecture.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    layers = {}
    for line in (block.group(1).splitlines() if block else []):
        m = LAYER_LINE.match(line)
        if m:
            for area in re.split(r"\s*,\s*", m.group(2)):
                layers[area] = int(m.group(1))
    if not layers:
        sys.exit(f"{path}: no layer block found (lines like '0  base  what it holds')")
    return layers


def area_of_path(rel):
    """Area of a file under include/cmlbed/<area>/ or src/<area>/, else None."""
    parts = rel.replace(os.sep, "/").split("/")
    if len(parts) >= 4 and parts[0] == "include" and parts[1] == "cmlbed":
        return parts[2]
    if len(parts) >= 3 and parts[0] == "src":
        return parts[1]
    return None


def area_of_include(root, including_rel, target):
    """(area, None) for an include of the project, (None, None) for a system or
    library header, (None, reason) when it cannot be placed."""
    if target.startswith("cmlbed/"):
        rest = target[len("cmlbed/"):]
        if "/" in rest:
            return rest.split("/", 1)[0], None
        if rest in TOP_LEVEL_HEADERS:
            return TOP_LEVEL_HEADERS[rest], None
        return None, "a header directly under cmlbed/ belongs to no area"
    here = os.path.dirname(os.path.join(root, including_rel))
    candidate = os.path.normpath(os.path.join(here, target))
    if os.path.exists(candidate):
        rel = os.path.relpath(candidate, root)
        area = area_of_path(rel)
        if area is None:
            return None, f"resolves to {rel}, which is in no area"
        return area, None
    return None, None  # not a file of this tree: a system or library header


def source_files(root):
    for top in ("include", "src"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def check(root):
    """List of problems, one line each."""
    layers = read_layers(root)
    problems = []
    for rel in source_files(root):
        area = area_of_path(rel)
        if area is None:
            continue  # src/version.hpp.in and the like: no area, no project includes
        if area not in layers:
            problems.append(f"{rel}: area '{area}' is not in the layers of docs/explanation/architecture.md")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(2)
            if m.group(1) == "<" and not target.startswith("cmlbed/"):
                continue
            included, reason = area_of_include(root, rel, target)
            where = f'{rel}:{number}: #include {m.group(1)}{target}{">" if m.group(1) == "<" else chr(34)}'
            if reason:
                problems.append(f"{where}: {reason}")
                continue
            if included is None or included == area:
                continue
            if included not in layers:
                problems.append(f"{where}: area '{included}' is not in the layers of "
                                "docs/explanation/architecture.md")
            elif layers[included] > layers[area]:
                problems.append(f"{where}: {area} (layer {layers[area]}) must not include "
                                f"{included} (layer {layers[included]}, higher)")
            elif layers[included] == layers[area]:
                problems.append(f"{where}: {area} and {included} stand side by side "
                                f"(layer {layers[area]}) and must not include each other")
    return problems


def self_test(real_root):
    """Builds a scratch tree with the real layer block and known offences."""
    files = {
        "include/cmlbed/base/ok.hpp": '#include <string>\n',
        "include/cmlbed/net/ok.hpp": '#include "cmlbed/base/ok.hpp"\n#include "cmlbed/trace/t.hpp"\n',
        "include/cmlbed/trace/t.hpp": '#include "cmlbed/version.hpp"\n',
        "src/net/ok.cpp": '#include "cmlbed/net/ok.hpp"\n#include "private.hpp"\n#include <mpi.h>\n',
        "src/net/private.hpp": "\n",
        # offences, each on line 2 of its file:
        "include/cmlbed/base/up.hpp": '#pragma once\n#include "cmlbed/config/config.hpp"\n',
        "src/net/side.cpp": '// x\n#include "cmlbed/model/zoo.hpp"\n',
        "src/config/angle.cpp": '// x\n#include <cmlbed/train/method.hpp>\n',
        "src/data/relative.cpp": '// x\n#include "../train/private.hpp"\n',
        "src/train/private.hpp": "\n",
        "src/model/nowhere.cpp": '// x\n#include "cmlbed/loose.hpp"\n',
        "src/brandnew/new_area.cpp": "\n",
    }
    expected = {
        "include/cmlbed/base/up.hpp:2", "src/net/side.cpp:2", "src/config/angle.cpp:2",
        "src/data/relative.cpp:2", "src/model/nowhere.cpp:2", "src/brandnew/new_area.cpp",
    }
    scratch = tempfile.mkdtemp(prefix="check-layers-")
    try:
        os.makedirs(os.path.join(scratch, "docs", "explanation"))
        shutil.copy(os.path.join(real_root, "docs", "explanation", "architecture.md"),
                    os.path.join(scratch, "docs", "explanation", "architecture.md"))
        for rel, text in files.items():
            path = os.path.join(scratch, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        problems = check(scratch)
    finally:
        shutil.rmtree(scratch)
    found = {p.split(": ", 1)[0] for p in problems}
    for p in problems:
        print("  caught:", p)
    if found != expected:
        print(f"self-test FAILED: missed {sorted(expected - found)}, "
              f"wrongly flagged {sorted(found - expected)}")
        return 1
    print(f"self-test passed: all {len(expected)} planted offences caught, nothing else")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--root", default=default_root, help="checkout to check")
    parser.add_argument("--self-test", action="store_true",
                        help="check that planted offences in a scratch tree are caught")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.root)
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layers of docs/explanation/architecture.md")
        return 1
    layers = read_layers(args.root)
    order = " < ".join(", ".join(a for a in layers if layers[a] == n)
                       for n in sorted(set(layers.values())))
    print(f"every include points down: {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
