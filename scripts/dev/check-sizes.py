#!/usr/bin/env python3
"""Checks that the code stays in pieces a reader can hold: no source file under src/ and
no Python file under scripts/ over 600 lines, no function (C++ or Python) over 120 lines,
and, with --areas, no area (src/<area> + include/cmlbed/<area>) over 20% of the C++
code's lines. Exit 0 when all hold; else exit 1
with one line per offence. Prints the largest file, function and area either way.

  python3 scripts/dev/check-sizes.py [--root DIR] [--areas]
  python3 scripts/dev/check-sizes.py --self-test    check the checker on scratch sources

Functions are found by braces: a `{` opened directly inside a namespace, class, struct
or union (or at file level) that does not itself open such a scope starts a function
body (or a namespace-level initializer, which counts the same); it ends at its matching
`}`. Comments, string and character literals are ignored; a lambda counts as part of
the function it is in. Python functions (and methods) are found by its own parser: a
`def` from its line to its last, nested functions counted in their parents too.
"""
import argparse
import ast
import os
import re
import sys
import tempfile

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120
MAX_AREA_SHARE = 0.20
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
SCOPE_OPENER = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;()]*$")


def strip_code(text):
    """The text with comments and string/char literals blanked, line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(first line, line count, header) of every function body in C++ source text."""
    code = strip_code(text)
    lines = code.split("\n")
    stack = []  # per open brace: "scope" or ("function", start line, header)
    found = []
    pending = ""  # code since the last ; { or } (the header of the next brace)
    for number, line in enumerate(lines, 1):
        for ch in line + "\n":
            if ch == "{":
                inside_scope = all(entry == "scope" for entry in stack)
                header = pending.strip()
                if inside_scope and not SCOPE_OPENER.search(header) and not header.startswith("extern"):
                    stack.append(("function", number, " ".join(header.split())[-80:]))
                elif inside_scope:
                    stack.append("scope")
                else:
                    stack.append("block")
                pending = ""
            elif ch == "}":
                if stack:
                    entry = stack.pop()
                    if isinstance(entry, tuple):
                        found.append((entry[1], number - entry[1] + 1, entry[2]))
                pending = ""
            elif ch == ";":
                pending = ""
            else:
                pending += ch
    return found


def sources(root):
    for top in ("src", os.path.join("include", "cmlbed")):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root)


def python_sources(root):
    """Python files under scripts/: *.py, and scripts without a suffix whose first line
    names python."""
    for folder, dirs, files in os.walk(os.path.join(root, "scripts")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not name.endswith(".py"):
                if "." in name:
                    continue
                with open(path, "rb") as f:
                    if b"python" not in f.readline():
                        continue
            yield os.path.relpath(path, root)


def python_functions(text, rel="<text>"):
    """(first line, line count, name) of every def in Python source text."""
    return [(node.lineno, node.end_lineno - node.lineno + 1, node.name)
            for node in ast.walk(ast.parse(text, filename=rel))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def check_python(root):
    problems, biggest_file, biggest_function = [], (0, ""), (0, "")
    for rel in python_sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        count = text.count("\n")
        if count > MAX_FILE_LINES:
            problems.append(f"{rel}: {count} lines (at most {MAX_FILE_LINES})")
        biggest_file = max(biggest_file, (count, rel))
        for start, length, name in python_functions(text, rel):
            where = f"{rel}:{start} {name}"
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{where}: a function of {length} lines (at most {MAX_FUNCTION_LINES})")
            biggest_function = max(biggest_function, (length, where))
    print(f"Python: largest file: {biggest_file[1]} ({biggest_file[0]} lines); largest function: "
          f"{biggest_function[1]} ({biggest_function[0]} lines)")
    return problems


def area_of(rel):
    parts = rel.split(os.sep)
    if parts[0] == "src":
        return parts[1] if len(parts) > 2 else "(top)"
    return parts[2] if len(parts) > 3 else "(top)"


def check(root, areas_rule=True):
    problems, areas, biggest_file, biggest_function = [], {}, (0, ""), (0, "")
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        count = text.count("\n")
        areas[area_of(rel)] = areas.get(area_of(rel), 0) + count
        if rel.startswith("src") and count > MAX_FILE_LINES:
            problems.append(f"{rel}: {count} lines (at most {MAX_FILE_LINES})")
        biggest_file = max(biggest_file, (count, rel))
        for start, length, header in functions(text):
            where = f"{rel}:{start} {header}"
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{where}: a function of {length} lines (at most {MAX_FUNCTION_LINES})")
            biggest_function = max(biggest_function, (length, where))
    total = sum(areas.values()) or 1
    for area, count in sorted(areas.items()):
        if areas_rule and count / total > MAX_AREA_SHARE:
            problems.append(f"area {area}: {count} of {total} lines ({100 * count / total:.0f}%, at most "
                            f"{100 * MAX_AREA_SHARE:.0f}%)")
    largest_area = max(areas.items(), key=lambda item: item[1]) if areas else ("-", 0)
    print(f"largest file: {biggest_file[1]} ({biggest_file[0]} lines); largest function: "
          f"{biggest_function[1]} ({biggest_function[0]} lines); largest area: {largest_area[0]} "
          f"({100 * largest_area[1] / total:.0f}% of {total} lines)")
    return problems


def self_test():
    body = "\n".join(f"  x += {i};" for i in range(130))
    text = ("namespace a {\nnamespace {\nstruct S {\n  int f() {\n    return 1;\n  }\n};\n}\n"
            f"int long_one(int x) {{\n  if (x) {{\n{body}\n  }}\n  return x; // }} in a comment\n}}\n"
            'const char* s = "{{{";\n}\n')
    found = functions(text)
    lengths = sorted(length for _, length, _ in found)
    assert lengths == [3, 135], found
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src", "x"))
        os.makedirs(os.path.join(root, "src", "y"))
        with open(os.path.join(root, "src", "x", "a.cpp"), "w") as f:
            f.write(text)
        with open(os.path.join(root, "src", "y", "b.cpp"), "w") as f:
            f.write("int g() {\n  return 2;\n}\n" * 5)
        problems = check(root)
        assert any("long_one" in p for p in problems), problems
        assert any(p.startswith("area x") for p in problems), problems
        os.makedirs(os.path.join(root, "scripts", "room"))
        long_def = "def long_one():\n" + "".join(f"    x = {i}\n" for i in range(130))
        with open(os.path.join(root, "scripts", "room", "a.py"), "w") as f:
            f.write("class C:\n    def short(self):\n        return 1\n\n\n" + long_def + "\n" * 500)
        with open(os.path.join(root, "scripts", "tool"), "w") as f:
            f.write("#!/usr/bin/env python3\n" + long_def.replace("long_one", "in_a_tool"))
        with open(os.path.join(root, "scripts", "not-python"), "w") as f:
            f.write("#!/bin/sh\n" + "echo\n" * 700)
        problems = check_python(root)
        assert sorted(problems) == sorted([
            "scripts/room/a.py: 636 lines (at most 600)",
            "scripts/room/a.py:6 long_one: a function of 131 lines (at most 120)",
            "scripts/tool:2 in_a_tool: a function of 131 lines (at most 120)"]), problems
    print("check-sizes self-test: ok")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--areas", action="store_true", help="also fail when an area is over 20%% of the code")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return 0
    problems = check(args.root, args.areas) + check_python(args.root)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
