# SPDX-License-Identifier: BSD-3-Clause
"""Runs check_binary and asserts on its JSON report.

Every run is validated against the report contract (schema name, each check
id exactly once in report order, counts, `passed` and the exit status agree,
skips carry a reason) before the case looks at the findings. The variables
that set expectations (DESIRED_CUDA, DESIRED_DEVTOOLSET, PACKAGE_TYPE and
their MATRIX_ forms) are removed from the environment unless a case sets
them, so the tests don't depend on the caller's shell.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import testlib  # noqa: E402

IDS = ["integrity", "cxx-abi", "symbol-versions", "dependencies", "rpath", "runtimes",
       "accelerator", "deployment-target", "code-signature", "import", "link", "link-wrong-abi", "gpu"]
RUNTIME_IDS = {"import", "link", "link-wrong-abi", "gpu"}
MACHO_IDS = {"deployment-target", "code-signature"}  # skipped on ELF-only packages
STATIC_IDS = set(IDS) - RUNTIME_IDS - MACHO_IDS
ENV_VARS = ["DESIRED_CUDA", "DESIRED_DEVTOOLSET", "PACKAGE_TYPE", "MATRIX_DESIRED_CUDA",
            "MATRIX_DESIRED_DEVTOOLSET", "MATRIX_PACKAGE_TYPE", "LD_LIBRARY_PATH", "LD_PRELOAD",
            "PYTHON"]


class Result:
    def __init__(self, argv, rc, stdout, stderr):
        self.argv, self.rc, self.stdout, self.stderr = argv, rc, stdout, stderr
        self.report = None

    def check(self, cid: str) -> dict:
        return next((c for c in (self.report or {}).get("checks", []) if c.get("id") == cid), {})

    def status(self, cid: str) -> str | None:
        return self.check(cid).get("status")

    def failing(self) -> set[str]:
        return {c["id"] for c in (self.report or {}).get("checks", []) if c.get("status") == "fail"}

    def problem_text(self, cid: str) -> str:
        c = self.check(cid)
        return "\n".join(f"{p.get('file', '')}: {p.get('message', '')}" for p in c.get("problems", []))

    def describe(self) -> str:
        """The report, one line per check, for failure messages."""
        if not self.report:
            return f"  (no report) stdout: {self.stdout[:1500]}\n  stderr: {self.stderr[:1500]}"
        lines = []
        for c in self.report.get("checks", []):
            lines.append(f"  {c.get('status', '?'):4} {c.get('id')}: {c.get('summary', '')}")
            for p in c.get("problems", [])[:6]:
                lines.append(f"         - {p.get('file', '')}: {p.get('message', '')}")
        if self.stderr.strip():
            lines.append(f"  stderr: {self.stderr.strip()[:800]}")
        return "\n".join(lines)


class Case(testlib.Checks):
    """One test case: testlib.Checks with the failures named by step, a
    scratch directory and check_binary's report contract; exits 0 or 1."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.binary = os.environ.get("CHECK_BINARY", "")
        if not self.binary or not Path(self.binary).is_file():
            testlib.missing(f"CHECK_BINARY ({self.binary or 'unset'}) is not a file: run through ctest")
        self.scratch = Path(tempfile.mkdtemp(prefix=f"check-{name}-"))
        self.step = ""

    # -- bookkeeping

    def log(self, msg: str) -> None:
        print(msg, flush=True)

    def begin(self, step: str) -> None:
        self.step = step
        self.log(f"--- {step}")

    def fail(self, msg: str, detail: str = "") -> None:
        self.check(False, f"[{self.step}] {msg}", detail)

    def expect(self, cond: bool, msg: str) -> bool:
        return self.check(cond, f"[{self.step}] {msg}")

    def missing(self, what: str):
        """Fails now: something scripts/setup.sh installs is not there."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        testlib.missing(what)

    def finish(self):
        if os.environ.get("TEST_KEEP") == "1":
            self.log(f"scratch kept: {self.scratch}")
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)
        super().finish()

    # -- running check_binary

    def run(self, artifact, *args, env: dict | None = None, json_out: bool = True,
            python: bool = True, timeout: int = 300) -> Result:
        argv = [self.binary, str(artifact)]
        if json_out:
            argv.append("--json")
        if python:
            argv += ["--python", "/usr/bin/python3"]
        argv += [str(a) for a in args]
        e = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
        e.update(env or {})
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        self.log(f"$ {shown + ' ' if shown else ''}{' '.join(argv[1:])}")
        try:
            p = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"check_binary timed out after {timeout}s: {' '.join(argv)}")
            return Result(argv, -1, "", "timeout")
        r = Result(argv, p.returncode, p.stdout, p.stderr)
        if json_out and p.returncode in (0, 1):
            try:
                r.report = json.loads(p.stdout)
            except json.JSONDecodeError as err:
                self.fail(f"--json output is not JSON ({err}): {p.stdout[:500]}")
                return r
            self.validate(r)
        return r

    def validate(self, r: Result) -> None:
        """The report contract, independent of the case."""
        rep = r.report
        ok = self.expect(isinstance(rep, dict) and rep.get("schema") == "libpkg-check/1",
                         f"schema is libpkg-check/1: {str(rep)[:200]}")
        if not ok:
            return
        ids = [c.get("id") for c in rep.get("checks", [])]
        self.expect(ids == IDS, f"every check id exactly once, in order: got {ids}")
        counts = {s: sum(1 for c in rep["checks"] if c.get("status") == s) for s in ("pass", "fail", "skip")}
        self.expect(rep.get("counts") == counts, f"counts {rep.get('counts')} match the checks {counts}")
        self.expect(sum(counts.values()) == len(rep["checks"]), "every status is pass, fail or skip")
        self.expect(rep.get("passed") is (counts["fail"] == 0), f"passed={rep.get('passed')} with {counts}")
        self.expect(r.rc == (0 if counts["fail"] == 0 else 1), f"exit {r.rc} agrees with {counts}")
        for c in rep["checks"]:
            if c.get("status") == "skip":
                self.expect(bool(c.get("summary")), f"skipped check {c.get('id')} gives a reason")
            if c.get("status") == "fail":
                self.expect(bool(c.get("problems")), f"failed check {c.get('id')} lists problems")

    def expect_findings(self, r: Result, failing: dict[str, list] | None = None, *,
                        must_pass=(), kind: str | None = None, may_fail=()) -> None:
        """Exactly the checks in `failing` fail (each needle, a string or a
        compiled regex, must appear in that check's problems); the checks in
        `must_pass` pass (not skip); every other check passes or skips."""
        failing = failing or {}
        if r.report is None:
            self.fail(f"no report (exit {r.rc}):\n{r.describe()}")
            return
        if kind:
            self.expect(r.report.get("kind") == kind, f"kind {r.report.get('kind')}, expected {kind}")
        got = r.failing() - set(may_fail)
        if not self.expect(got == set(failing), f"failing checks {sorted(got)}, expected {sorted(failing)}:\n"
                                                  f"{r.describe()}"):
            pass
        for cid, needles in failing.items():
            text = r.problem_text(cid)
            for n in needles:
                hit = n.search(text) if isinstance(n, re.Pattern) else n in text
                self.expect(bool(hit), f"{cid} problems name {getattr(n, 'pattern', n)!r}: got\n{text or '(none)'}")
        for cid in must_pass:
            self.expect(r.status(cid) == "pass", f"{cid} passes: got {r.status(cid)} "
                                                 f"({r.check(cid).get('summary', '')})")

    def expect_usage_error(self, r: Result, *needles: str) -> None:
        """Exit 2, 'error:' on stderr naming each needle."""
        self.expect(r.rc == 2, f"exit 2 for bad input, got {r.rc}: {r.stderr[:500]} {r.stdout[:300]}")
        self.expect("error:" in r.stderr, f"stderr has 'error:': {r.stderr[:500]}")
        for n in needles:
            self.expect(n in r.stderr, f"stderr names {n!r}: {r.stderr[:500]}")
