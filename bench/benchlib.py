# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the benchmark scripts: timing launcher, formatting."""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_text(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# The pkgtool of this checkout's default build directory.
BUILT_PKGTOOL = str(HERE.parent / "build/tools/pkgtool/pkgtool")


def side_by_side_args(doc: str, size_mb: int, runs: int) -> argparse.ArgumentParser:
    """The options every pkgtool-against-another-tool bench takes: --pkgtool,
    --size-mb of the generated input, --runs (the table shows medians),
    --tmpdir and --markdown."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pkgtool", default=BUILT_PKGTOOL)
    ap.add_argument("--size-mb", type=int, default=size_mb)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--markdown", action="store_true")
    return ap


def missing_tool(*tools: str) -> str | None:
    """The first of `tools` not on PATH (nor an executable path), if any."""
    return next((t for t in tools if not shutil.which(t)), None)


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds (perf_counter around the child: /usr/bin/time's %e has
    10 ms resolution, too coarse here) and peak RSS KiB (/usr/bin/time %M)
    of one run of `argv`; a failed run ends the bench with its stderr."""
    start = time.perf_counter()
    p = run_text(["/usr/bin/time", "-f", "%M", *argv])
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed:\n{p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def medians(results: dict[str, list[tuple[float, int]]]) -> dict[str, tuple[float, float]]:
    """Per row name, the median wall seconds and median peak RSS KiB of its
    timed() samples."""
    return {k: (statistics.median(w for w, _ in v), statistics.median(r for _, r in v))
            for k, v in results.items()}


def machine_line() -> str:
    """"date: ... UTC; N CPUs; load average a b c": the machine's state,
    printed with every result (the machine is shared)."""
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; "
            f"load average {load}")


def human_mb(kib: float) -> str:
    mb = kib / 1024.0
    return f"{mb:.1f}" if mb < 100 else f"{mb:.0f}"


def human_ms(seconds: float) -> str:
    ms = seconds * 1000.0
    if ms < 10:
        return f"{ms:.2f}"
    if ms < 100:
        return f"{ms:.1f}"
    return f"{ms:.0f}"


def human_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    if r >= 100:
        return f"{r:.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


@dataclass
class Sample:
    wall_s: float
    rss_kib: int
    user_s: float
    sys_s: float
    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return os.WIFEXITED(self.status) and os.WEXITSTATUS(self.status) == 0

    def describe_failure(self) -> str:
        if os.WIFSIGNALED(self.status):
            what = f"killed by signal {os.WTERMSIG(self.status)}"
        else:
            what = f"exit {os.WEXITSTATUS(self.status)}"
        msg = self.stderr.strip().splitlines()
        return what + (f": {msg[0]}" if msg else "")


class Launcher:
    """Runs a command under rusage_exec and returns a Sample."""

    def __init__(self, workdir: Path):
        self.exe = workdir / "rusage_exec"
        self.result = workdir / "rusage_exec.out"
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise SystemExit("error: a C compiler (cc) is needed to build bench/rusage_exec.c")
        p = run_text([cc, "-O2", "-o", str(self.exe), str(HERE / "rusage_exec.c")])
        if p.returncode != 0:
            raise SystemExit(f"error: cannot build rusage_exec:\n{p.stderr}")

    def run(self, argv: list[str], env: dict | None = None) -> Sample:
        self.result.unlink(missing_ok=True)
        p = subprocess.run(
            [str(self.exe), str(self.result), *argv], capture_output=True, text=True, env=env
        )
        if p.returncode != 0 or not self.result.exists():
            raise RuntimeError(f"rusage_exec failed ({p.returncode}): {p.stderr.strip()}")
        wall_ns, rss, ut, st, status = self.result.read_text().split()
        return Sample(
            wall_s=int(wall_ns) / 1e9,
            rss_kib=int(rss),
            user_s=int(ut) / 1e6,
            sys_s=int(st) / 1e6,
            status=int(status),
            stdout=p.stdout,
            stderr=p.stderr,
        )


def write_dist_info(tree: Path, name: str, version: str, generator: str) -> str:
    """NAME-VERSION.dist-info (METADATA, WHEEL) for this Python on
    linux_x86_64; returns the tag."""
    info = tree / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    pytag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    tag = f"{pytag}-{pytag}-linux_x86_64"
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: false\n"
                                f"Tag: {tag}\n")
    return tag


def table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in [header] + rows]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])
