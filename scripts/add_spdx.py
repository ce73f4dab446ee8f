#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Adds the SPDX license line to every tracked source file that lacks it, or
with --check lists the ones that lack it (exit 1). The license is LICENSE's
(BSD-3-Clause); one line at the top, after a shebang if there is one."""
import subprocess
import sys
from pathlib import Path

TAG = "SPDX-License-Identifier: BSD-3-Clause"
# Comment (start, end) per kind of file.
LINE_HASH = ("#", "")
LINE_SLASH = ("//", "")
BLOCK = ("/*", " */")
COMMENT = {".cpp": LINE_SLASH, ".hpp": LINE_SLASH, ".h": LINE_SLASH, ".cc": LINE_SLASH,
           ".c": BLOCK, ".cu": BLOCK, ".map": BLOCK,  # C sources, linker version scripts
           ".py": LINE_HASH, ".pyi": LINE_HASH, ".sh": LINE_HASH, ".cmake": LINE_HASH,
           ".pc": LINE_HASH}
NAMES = {"CMakeLists.txt": LINE_HASH}
# Crafted inputs and generated data are not source (fuzz seeds and crashers,
# the wheel metadata templates a comment would corrupt).
SKIP_PARTS = {"fixtures", "corpus", "seeds", "crashers"}
SKIP_NAMES = {"METADATA.in", "WHEEL.in"}


def comment_of(p: Path):
    """The comment style of a source file, or None when it is not one. A
    template (NAME.EXT.in) is its EXT; a file without a suffix is a script
    when it starts with a shebang."""
    if p.name in NAMES:
        return NAMES[p.name]
    suffix = Path(p.stem).suffix if p.suffix == ".in" else p.suffix
    if suffix in COMMENT:
        return COMMENT[suffix]
    if not p.suffix:
        with open(p, "rb") as f:
            if f.read(2) == b"#!":
                return LINE_HASH
    return None


def files(root: Path):
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
    if listing.returncode == 0:
        names = listing.stdout.decode().split("\0")
    else:  # not a git checkout (a source tarball): every file but build trees
        names = [str(p.relative_to(root)) for p in root.rglob("*")
                 if not p.relative_to(root).parts[0].startswith(("build", ".git", "out"))]
    for rel in names:
        if not rel:
            continue
        p = root / rel
        if (SKIP_PARTS & set(p.parts) or p.name in SKIP_NAMES or not p.is_file()
                or p.is_symlink()):
            continue
        comment = comment_of(p)
        if comment:
            yield p, comment


def main() -> int:
    check = "--check" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--check"]
    root = Path(args[0] if args else ".").resolve()
    missing = []
    for path, (start, end) in files(root):
        text = path.read_text(encoding="utf-8")
        if TAG in "\n".join(text.splitlines()[:3]):
            continue
        missing.append(path.relative_to(root))
        if check:
            continue
        line = f"{start} {TAG}{end}\n"
        if text.startswith("#!"):
            first, _, rest = text.partition("\n")
            text = first + "\n" + line + rest
        else:
            text = line + text
        path.write_text(text, encoding="utf-8")
    if check:
        for m in missing:
            print(f"{m}: no '{TAG}' line at the top")
        print(f"spdx: {len(missing)} file(s) without the license line")
        return 1 if missing else 0
    print(f"spdx: added the license line to {len(missing)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
