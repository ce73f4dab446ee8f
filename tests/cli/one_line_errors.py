#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Command-line mistakes are one line: `error: ...`, exit 2, nothing else.

Every frontend binary (pkgtool, its `patchelf` and `install_name_tool`
entry points, check_binary and every driver under drivers/) and every pkgtool
command and subcommand gets an unknown option: stderr must be exactly one
line starting with `error:` and naming the option, stdout empty, exit 2.
The commands are not listed here: they are read from the built binary
(`pkgtool NAME` for an unknown NAME lists them, as does each group), so a
new subcommand is covered without touching this test; the drivers are every
executable the build put under drivers/. Then each command's --help must
work (exit 0, text on stdout, nothing on stderr), and a table of other
mistakes (missing value, bad number, excluded options, missing required
option, no subcommand) must be one line too, for CLI11 and the hand-written
parsers alike.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing, one_line_error  # noqa: E402

PKGTOOL = Path(os.environ.get("PKGTOOL", ""))
BINARY_DIR = Path(os.environ.get("LIBPKG_BINARY_DIR", ""))
BOGUS = "--polish-no-such-option"
PROBE = "polish-no-such-subcommand"

failures: list[str] = []
checked = 0


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def expect_one_line(what: str, argv: list[str], cwd: Path, mentions: str | None = None) -> str:
    """argv must exit 2 with exactly one `error:` line on stderr (naming
    `mentions` when given) and nothing on stdout. Returns the line."""
    global checked
    checked += 1
    problem, line = one_line_error(argv, mentions=mentions, stdout_empty=True, cwd=cwd,
                                   timeout=120)
    if problem:
        failures.append(f"{what}: {problem}")
    return line


def expect_help(what: str, argv: list[str], cwd: Path) -> None:
    global checked
    checked += 1
    r = run(argv, cwd)
    if r.returncode != 0 or not r.stdout.strip() or r.stderr:
        failures.append(f"{what} --help: exit {r.returncode}, stdout {len(r.stdout)} bytes, "
                        f"stderr {r.stderr[:300]!r}")


def listed(line: str) -> list[str] | None:
    """The names of "unknown [sub]command 'X' (one of: a, b, c)"."""
    m = re.search(r"unknown (?:sub)?command '[^']*' \(one of: ([^)]*)\)", line)
    return [n.strip() for n in m.group(1).split(",")] if m else None


def subcommands(prefix: list, cwd: Path) -> list[str] | None:
    """What `prefix PROBE` lists: the subcommands of a group, None for a
    command that takes no subcommand."""
    r = run([*prefix, PROBE], cwd)
    lines = r.stderr.splitlines()
    return listed(lines[0]) if lines else None


def leaves(prefix: list, cwd: Path) -> list[list]:
    """Every command under `prefix`, read from the binary, recursively."""
    names = subcommands(prefix, cwd)
    if names is None:
        return [prefix]
    expect_one_line(f"{' '.join(map(str, prefix[1:])) or 'pkgtool'} {PROBE}",
                    [*prefix, PROBE], cwd, PROBE)
    out = []
    for name in names:
        out += leaves([*prefix, name], cwd)
    return out


def frontend_binaries() -> list[Path]:
    """check_binary and every driver the build produced (executables in
    checks/*/ and drivers/*/)."""
    found = []
    for folder in ("checks", "drivers"):
        for sub in sorted((BINARY_DIR / folder).iterdir()):
            if not sub.is_dir():
                continue
            for f in sorted(sub.iterdir()):
                if f.is_file() and f.stat().st_mode & stat.S_IXUSR and not f.suffix:
                    found.append(f)
    return found


def main() -> None:
    if not PKGTOOL.is_file() or not BINARY_DIR.is_dir():
        missing("PKGTOOL and LIBPKG_BINARY_DIR (run through ctest)")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        # pkgtool itself: no command, an unknown one.
        expect_one_line("pkgtool without a command", [PKGTOOL], cwd, "missing command")
        if subcommands([PKGTOOL], cwd) is None:
            failures.append(f"pkgtool {PROBE} does not list the commands")
        cmds = leaves([PKGTOOL], cwd)
        groups = {tuple(c[:2]) for c in cmds if len(c) > 2}
        if len(groups) < 8 or len(cmds) < 40:
            failures.append(f"only {len(cmds)} commands in {len(groups)} groups found: "
                            f"{[' '.join(map(str, c[1:])) for c in cmds]}")
        for group in sorted(groups):
            expect_one_line(f"{group[1]} without a subcommand", list(group), cwd,
                            "missing subcommand")
        for cmd in cmds:
            name = " ".join(map(str, cmd[1:]))
            expect_one_line(f"{name} {BOGUS}", [*cmd, BOGUS], cwd, BOGUS)
            # Also after a positional argument and another option.
            expect_one_line(f"{name} x {BOGUS}", [*cmd, "x", BOGUS], cwd, BOGUS)
            expect_help(name, [*cmd, "--help"], cwd)

        # The other frontends.
        binaries = frontend_binaries()
        names = {b.name for b in binaries}
        for want in ("check_binary", "manywheel", "libtorch", "conda", "wheel_macos"):
            if want not in names:
                failures.append(f"frontend {want} not found under {BINARY_DIR} ({sorted(names)})")
        entry = PKGTOOL.parent
        binaries += [entry / "patchelf", entry / "install_name_tool"]
        for b in binaries:
            expect_one_line(f"{b.name} {BOGUS}", [b, BOGUS], cwd, BOGUS)
            expect_one_line(f"{b.name} x {BOGUS}", [b, "x", BOGUS], cwd, BOGUS)
            expect_help(b.name, [b, "--help"], cwd)

        # Other mistakes, CLI11 and hand-written parsers alike.
        P = PKGTOOL
        table = [
            ("CLI11 missing value", [P, "repair", "a.whl", "-w"], "-w"),
            ("CLI11 bad number", [P, "repair", "a.whl", "-w", "out", "-j", "many"], "many"),
            ("CLI11 out of range", [P, "libtorch", "pack", "t", "--version", "1", "--build-hash",
                                    "h", "-z", "12"], "12"),
            ("CLI11 not a member", [P, "census", "f.so", "--expect", "newest"], "newest"),
            ("CLI11 excluded options", [P, "stats", "query", "select 1", "--json", "--table"],
             "--table"),
            ("CLI11 required option", [P, "libtorch", "name"], "--version"),
            ("CLI11 unexpected positional", [P, "matrix", "extra"], "extra"),
            ("hand parser missing value", [P, "zip", "extract", "a.zip", "-d"], "-d"),
            ("hand parser bad number", [P, "wheel", "pack", "dir", "-z", "fast"], "fast"),
            ("hand parser missing input", [P, "wheel", "verify"], None),
            ("hand parser conflicting options", [P, "conda", "pack", "p", "--name", "n",
                                                 "--version", "1", "--placeholder", "/x",
                                                 "--no-placeholder"], None),
            ("cache: option of another subcommand", [P, "cache", "clear", "--to", "1G"], "--to"),
            ("patchelf missing value", [entry / "patchelf", "--set-rpath"], "--set-rpath"),
            ("patchelf conflict", [entry / "patchelf", "--set-rpath", "a", "--remove-rpath", "f"],
             "--remove-rpath"),
            ("patchelf without a file", [entry / "patchelf", "--print-rpath"], "filename"),
            ("install_name_tool missing value", [entry / "install_name_tool", "-id"], "-id"),
            ("lipo without a mode", [P, "macho", "lipo", "f"], None),
            ("check_binary bad number", [BINARY_DIR / "checks/check_binary/check_binary", "w.whl",
                                         "--timeout", "soon"], "soon"),
            ("check_binary without artifact", [BINARY_DIR / "checks/check_binary/check_binary"],
             "artifact"),
            ("driver missing value", [BINARY_DIR / "drivers/manywheel/manywheel", "--wheel"],
             "--wheel"),
            ("driver out of range", [BINARY_DIR / "drivers/libtorch/libtorch", "--level", "10"],
             "10"),
            ("driver exclusive inputs", [BINARY_DIR / "drivers/libtorch/libtorch", "--tree", "t",
                                         "--wheel", "w.whl", "--no-env", "--build-env",
                                         "libtorch cpu"], "--tree"),
        ]
        # No driver has -L (pkgtool repair's -L is --lib-sdir): the drivers
        # that take library directories refuse it naming --lib-path.
        for name in ("manywheel", "wheel_macos", "libtorch"):
            driver = BINARY_DIR / f"drivers/{name}/{name}"
            table += [(f"{name} -L DIR", [driver, "--wheel", "w.whl", "-L", "/opt/lib"],
                       "--lib-path"),
                      (f"{name} -LDIR", [driver, "--wheel", "w.whl", "-L/opt/lib"], "--lib-path")]
        for what, argv, mentions in table:
            expect_one_line(what, argv, cwd, mentions)

    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print(f"{checked} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
