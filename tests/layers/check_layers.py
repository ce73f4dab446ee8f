#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks every #include of the library and the frontends against the layer
table in docs/architecture.md.

- A file in libpkg/{src,include/libpkg}/<layer>/ may include
  "libpkg/<other>/..." only when <other> is its own layer or listed in its
  row's "may include" column.
- Every layer folder must have a row (a new layer is a decision to write down).
- A frontend (tools/pkgtool, checks/check_binary, drivers/*, python/src) may
  include quoted headers only from its own folder or frontends/common/: two
  frontends share code through frontends/common, never each other.

Run with the repository root as the first argument (or LIBPKG_SOURCE_DIR).
Exit 0 when clean, 1 with one line per violation.
"""
import os
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_table(doc: Path) -> dict:
    text = doc.read_text(encoding="utf-8")
    marker = text.find("<!-- layers:")
    if marker < 0:
        sys.exit(f"error: {doc}: no '<!-- layers:' table marker")
    table = {}
    for line in text[marker:].splitlines()[1:]:
        if not line.startswith("|"):
            if table:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("layer", "") or set(cells[0]) <= set("-"):
            continue
        allowed = {c.strip() for c in cells[2].split(",")} - {"—", "-", ""}
        table[cells[0]] = allowed
    if not table:
        sys.exit(f"error: {doc}: the layer table is empty")
    return table


def sources(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".cpp", ".hpp", ".h", ".cc") and path.is_file():
            yield path


def check_library(root: Path, table: dict) -> list:
    problems = []
    folders = {}
    for base in (root / "libpkg/src", root / "libpkg/include/libpkg"):
        for d in sorted(p for p in base.iterdir() if p.is_dir()):
            folders.setdefault(d.name, []).append(d)
    for layer, dirs in folders.items():
        if layer not in table:
            problems.append(f"libpkg/*/{layer}: layer folder missing from the table in "
                            "docs/architecture.md")
            continue
        for d in dirs:
            for f in sources(d):
                for m in INCLUDE.finditer(f.read_text(encoding="utf-8", errors="replace")):
                    target = m.group(1)
                    if not target.startswith("libpkg/"):
                        continue
                    parts = target.split("/")
                    if len(parts) < 3:
                        continue
                    other = parts[1]
                    if other != layer and other not in table[layer]:
                        problems.append(f"{f.relative_to(root)}: {layer} includes {target} "
                                        f"({other} is not below {layer})")
    for layer in table:
        if layer not in folders:
            problems.append(f"docs/architecture.md: layer '{layer}' has no folder")
    return problems


def check_frontends(root: Path) -> list:
    problems = []
    common = root / "frontends/common"
    dirs = [root / "tools/pkgtool", root / "checks/check_binary", root / "python/src",
            common]
    drivers = root / "drivers"
    if drivers.is_dir():
        dirs += [d for d in sorted(drivers.iterdir()) if d.is_dir()]
    for d in dirs:
        if not d.is_dir():
            continue
        for f in sources(d):
            for m in INCLUDE.finditer(f.read_text(encoding="utf-8", errors="replace")):
                target = m.group(1)
                if target.startswith("libpkg/"):
                    continue
                if (f.parent / target).is_file() or (common / target).is_file():
                    continue
                problems.append(f"{f.relative_to(root)}: includes \"{target}\", which is "
                                "neither in its own folder nor in frontends/common/")
    return problems


def self_test() -> int:
    """The checker must catch what it claims to: a sideways include, an
    unlisted layer folder, and a frontend reaching into another's folder."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs/architecture.md").write_text(
            "<!-- layers: -->\n| layer | level | may include | what |\n|---|---|---|---|\n"
            "| base | base | — | x |\n| elf | formats | base | x |\n"
            "| wheel | packages | base | x |\n\n")
        for layer in ("base", "elf", "wheel", "extra"):
            (root / "libpkg/src" / layer).mkdir(parents=True)
            (root / "libpkg/include/libpkg" / layer).mkdir(parents=True)
        (root / "libpkg/src/elf/ok.cpp").write_text('#include "libpkg/base/error.hpp"\n')
        (root / "libpkg/src/wheel/bad.cpp").write_text('#include "libpkg/elf/view.hpp"\n')
        (root / "libpkg/src/base/bad.cpp").write_text('#include "libpkg/elf/view.hpp"\n')
        for d in ("tools/pkgtool", "checks/check_binary", "frontends/common"):
            (root / d).mkdir(parents=True)
        (root / "frontends/common/shared.hpp").write_text("\n")
        (root / "checks/check_binary/own.hpp").write_text("\n")
        (root / "tools/pkgtool/a.cpp").write_text(
            '#include "shared.hpp"\n#include "own.hpp"\n')
        (root / "checks/check_binary/b.cpp").write_text('#include "own.hpp"\n')
        problems = check_library(root, read_table(root / "docs/architecture.md")) + \
            check_frontends(root)
    expected = ["wheel/bad.cpp", "base/bad.cpp", "layer folder missing",
                'includes "own.hpp"']
    missing = [e for e in expected if not any(e in p for p in problems)]
    if missing or len(problems) != len(expected):
        print("self-test failed; found:", *problems, sep="\n  ")
        return 1
    print(f"self-test: {len(problems)} planted violations found")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["LIBPKG_SOURCE_DIR"])
    table = read_table(root / "docs/architecture.md")
    problems = check_library(root, table) + check_frontends(root)
    for p in problems:
        print(p)
    print(f"layers: {len(table)} layers checked, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
