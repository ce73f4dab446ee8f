#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every tracked C and C++ file is as clang-format (the repository's
.clang-format) writes it.

Usage: check_format.py SOURCE_DIR

The files are what `git ls-files` lists under the folders holding code
(outside a git checkout: a walk of the same folders), with a C or C++
extension; `clang-format --dry-run -Werror --style=file` runs over them in
batches. A file off the format is named with clang-format's first
complaint, and the run fails (exit 1); so does a missing clang-format
(scripts/setup.sh installs it): a missing tool is not a pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

FOLDERS = ("libpkg", "tools", "checks", "drivers", "frontends", "tests", "bench", "python")
EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx")
BATCH = 64


def tracked(root: Path) -> list[str]:
    """The C/C++ files under FOLDERS, relative to root."""
    r = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *FOLDERS],
                       capture_output=True)
    if r.returncode == 0:
        names = [n for n in r.stdout.decode().split("\0") if n]
    else:  # not a git checkout (a source tarball): the same folders, walked
        names = []
        for folder in FOLDERS:
            for dirpath, dirnames, files in os.walk(root / folder):
                dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
                names += [str(Path(dirpath, f).relative_to(root)) for f in files]
    return sorted(n for n in names if n.endswith(EXTENSIONS) and (root / n).is_file())


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(sys.argv[1]).resolve()
    tool = shutil.which("clang-format")
    if tool is None:
        print("FAIL: clang-format not installed (scripts/setup.sh installs it)", file=sys.stderr)
        return 1
    if not (root / ".clang-format").is_file():
        print(f"FAIL: {root}/.clang-format missing", file=sys.stderr)
        return 1
    files = tracked(root)
    if not files:
        print(f"FAIL: no C/C++ file found under {root}", file=sys.stderr)
        return 1
    off: dict[str, str] = {}
    for i in range(0, len(files), BATCH):
        batch = files[i:i + BATCH]
        r = subprocess.run([tool, "--dry-run", "-Werror", "--style=file", *batch], cwd=root,
                           capture_output=True, text=True)
        if r.returncode == 0:
            continue
        for line in r.stderr.splitlines():
            name = line.split(":", 1)[0]
            if name in batch and name not in off:
                off[name] = line
        if not any(name in off for name in batch):
            print(f"FAIL: clang-format exit {r.returncode}:\n{r.stderr[:2000]}", file=sys.stderr)
            return 1
    for name, first in off.items():
        print(f"FAIL: {first}", file=sys.stderr)
    if off:
        print(f"{len(off)} of {len(files)} files are off the format: run "
              f"clang-format -i on them", file=sys.stderr)
        return 1
    print(f"PASS: {len(files)} files formatted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
