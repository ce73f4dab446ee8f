# SPDX-License-Identifier: BSD-3-Clause
"""Helpers the Python test scripts share (the Python side of harness.sh).

A script imports it after putting this folder on sys.path:

    sys.path.insert(0, str(Path(__file__).resolve().parents[N] / "lib"))
    from testlib import Checks, missing, readelf_dynamic, require_tools, skip_no_gpu
    from testlib import case, check, finish, run   # scripts made of test cases
    from testlib import one_line_error             # a refusal: exit 2, one line

Two ways to count results, for two shapes of script: `Checks` collects soft
checks (every check runs, the summary counts them); `case`/`check`/`finish`
run a script as independent test cases (a failed check ends its case, the
other cases still run).

A skip is not a pass: the only reason to skip (exit 77) is a property of the
machine that scripts/setup.sh cannot change (no GPU / CUDA toolkit; see
tests/skip-allowlist.txt). A missing tool, interpreter, header or built
target is a failure (exit 1), because setup.sh or the build provides it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys


def skip_no_gpu(reason: str) -> None:
    """Exit with ctest's skip code: only for a GPU / CUDA toolkit the
    machine does not have."""
    print(f"SKIP: {reason}", flush=True)
    sys.exit(77)


def missing(what: str) -> None:
    """Fail (exit 1): something the test needs is not there, and
    scripts/setup.sh (or the build) would have provided it."""
    print(f"FAIL: {what} (scripts/setup.sh installs the tools; build the targets)",
          file=sys.stderr, flush=True)
    sys.exit(1)


def abort(what: str) -> None:
    """Fail (exit 1) now: a step every later check needs went wrong."""
    print(f"FAIL: {what}", file=sys.stderr, flush=True)
    sys.exit(1)


class Checks:
    """Counts checks and collects failures: the Python side of harness.sh's
    pass/fail/finish. A failed check is printed at once (with its detail)
    and the run goes on; status() says how it ended."""

    def __init__(self) -> None:
        self.count = 0
        self.failures: list[str] = []

    def check(self, cond, what: str, detail: str = "") -> bool:
        """One check: passes when cond is true; returns cond as a bool."""
        self.count += 1
        if not cond:
            self.failures.append(what)
            print(f"FAIL: {what}", file=sys.stderr, flush=True)
            if detail:
                print("  " + detail[:4000].replace("\n", "\n  "), file=sys.stderr, flush=True)
        return bool(cond)

    def eq(self, what: str, got, want) -> bool:
        """got == want, both shown when not."""
        return self.check(got == want, f"{what}: got {got!r}, expected {want!r}")

    def fail(self, what: str, detail: str = "") -> None:
        """A check that failed."""
        self.check(False, what, detail)

    def status(self) -> int:
        """Prints the summary; 1 when a check failed (or none ran), else 0."""
        if self.failures:
            print(f"{len(self.failures)} check(s) FAILED, {self.count - len(self.failures)} passed",
                  flush=True)
            return 1
        if self.count == 0:
            print("FAIL: no check ran", file=sys.stderr, flush=True)
            return 1
        print(f"PASS: {self.count} checks", flush=True)
        return 0

    def finish(self) -> None:
        """Exits with status()."""
        sys.exit(self.status())


def sanitized_build() -> bool:
    """True in the AddressSanitizer/UBSan build's test run (tests/CMakeLists.txt
    sets LIBPKG_SANITIZED=1 there)."""
    return os.environ.get("LIBPKG_SANITIZED") == "1"


def data_rows(rows: list, representatives) -> list:
    """The rows a test that repeats ONE code path over many data rows (every
    CUDA table version, say) runs: all of them in the normal build; in the
    sanitized build only those `representatives(rows)` picks. That pass
    looks for memory errors in our code paths, which each row walks the
    same way; the normal pass checks every row's data. Keeps the whole
    test suite inside the CI's time budget (scripts/test.sh)."""
    if not sanitized_build():
        return list(rows)
    kept = list(representatives(rows))
    if not kept:
        raise ValueError("data_rows: the representatives of a non-empty list are empty")
    return kept


def newest_per_major(versions: list) -> list:
    """The newest version of each major ("11.8" of 11.x), in the list's order."""
    newest = {}
    for v in versions:
        major = v.split(".")[0]
        if major not in newest or tuple(map(int, v.split("."))) > tuple(map(int, newest[major].split("."))):
            newest[major] = v
    keep = set(newest.values())
    return [v for v in versions if v in keep]


def require_tools(*tools: str) -> None:
    """Fails (missing) unless every tool is on PATH."""
    for tool in tools:
        if shutil.which(tool) is None:
            missing(f"{tool} not installed")


def readelf_dynamic_entries(path, *readelf_args: str) -> list:
    """Every dynamic entry `readelf -dW` prints, in order, as (tag, value):
    tag without parentheses ("NEEDED", "FLAGS_1"), value the bracketed
    string for string entries, else the rest of the line. readelf_args go
    before the path (e.g. "-D" for a file without section headers)."""
    out = subprocess.run(["readelf", "-dW", *readelf_args, str(path)],
                         capture_output=True, text=True, errors="surrogateescape")
    if out.returncode != 0:
        raise AssertionError(f"readelf -dW {path} failed:\n{out.stderr}")
    entries = []
    for line in out.stdout.splitlines():
        m = re.match(r"^\s*0x[0-9a-fA-F]+\s+\((\w+)\)\s+(.*?)\s*$", line)
        if m:
            b = re.match(r"^[^\[]*\[(.*)\]$", m.group(2))
            entries.append((m.group(1), b.group(1) if b else m.group(2)))
    return entries


def readelf_dynamic(path) -> dict:
    """NEEDED (a list, in order), SONAME, RPATH and RUNPATH (None when
    absent; the last one when repeated) as `readelf -dW` prints them: the
    independent oracle of the dynamic section."""
    facts: dict = {"NEEDED": [], "SONAME": None, "RPATH": None, "RUNPATH": None}
    for tag, value in readelf_dynamic_entries(path):
        if tag == "NEEDED":
            facts["NEEDED"].append(value)
        elif tag in facts:
            facts[tag] = value
    return facts


def one_line_error(argv, *, starts: str = "error: ", mentions: str | None = None,
                   pattern: "re.Pattern | None" = None, stdout_empty: bool = False,
                   **run_kw) -> "tuple[str | None, str]":
    """Runs argv (stdin /dev/null, text output; run_kw go to subprocess.run,
    e.g. cwd, env, timeout) and checks the shape of every refusal (README
    "Errors and exit codes"): exit 2 and exactly one line on stderr, which
    starts with `starts`, contains `mentions` and matches `pattern` when
    given; with stdout_empty nothing on stdout either. Returns (problem,
    line): problem is None when all holds, else what did not, the command
    and its stderr; line is the first stderr line ("" when none)."""
    run_kw.setdefault("timeout", 300)
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, **run_kw)
    lines = r.stderr.splitlines()
    problems = []
    if r.returncode != 2:
        problems.append(f"exit {r.returncode}, expected 2")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, expected 1")
    elif not lines[0].startswith(starts):
        problems.append(f"the line does not start with {starts!r}")
    elif pattern is not None and not pattern.search(lines[0]):
        problems.append(f"the line does not match /{pattern.pattern}/")
    if mentions and mentions not in r.stderr:
        problems.append(f"stderr does not name {mentions!r}")
    if stdout_empty and r.stdout:
        problems.append(f"stdout not empty: {r.stdout[:200]!r}")
    if not problems:
        return None, lines[0]
    return (f"{'; '.join(problems)}\n    $ {' '.join(map(str, argv))}\n"
            f"    stderr: {r.stderr[:600]!r}", lines[0] if lines else "")


# --- checks and cases (the Python side of harness.sh's fail/check/finish) ---

class Failure(AssertionError):
    """A check that did not hold; its message says what was expected."""


def check(cond, message: str) -> None:
    """Raises Failure(message) unless cond: inside a `case` the case fails
    and the others still run; at the top level the script stops, exit 1."""
    if not cond:
        raise Failure(message)


def run(argv, expect=None, **kw) -> subprocess.CompletedProcess:
    """Runs argv capturing text output; with expect= (an exit status) a
    different status is a Failure showing both outputs."""
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)
    if expect is not None and p.returncode != expect:
        raise Failure(f"{' '.join(map(str, argv))}: exit {p.returncode}, expected {expect}\n"
                      f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


_FAILED_CASES: list = []


def case(fn):
    """Decorator: runs the test case at once, recording a failure (with its
    traceback) instead of stopping, so every case of a script reports."""
    try:
        fn()
        print(f"ok   {fn.__name__}", flush=True)
    except Exception as e:  # noqa: BLE001 - report every failing case
        import traceback
        traceback.print_exc()
        print(f"FAIL {fn.__name__}: {e}", flush=True)
        _FAILED_CASES.append(fn.__name__)
    return fn


def finish() -> None:
    """Ends a script of cases: exit 1 naming the failed ones, else 0."""
    if _FAILED_CASES:
        print(f"{len(_FAILED_CASES)} failed: {', '.join(_FAILED_CASES)}", flush=True)
        sys.exit(1)
    print("all passed", flush=True)
    sys.exit(0)
