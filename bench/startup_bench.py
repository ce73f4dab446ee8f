#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Process start-up of libpkg programs: `PROGRAM --version` (or `--help`),
the commands interleaved run by run (a loaded, shared machine drifts: every
command sees the same load), median wall time and median CPU time
(user+sys of the child, from wait4) over --runs, with /bin/true as the
floor and the number of shared objects the dynamic loader opened.

    /usr/bin/python3 bench/startup_bench.py --runs 30 \\
        build/tools/pkgtool/pkgtool OLD/pkgtool [--markdown]

Each program runs as `PROGRAM --version`; `PROGRAM=ARGS` gives other
arguments (`check_binary=--help`)."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import machine_line, table  # noqa: E402


def once(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and user+sys CPU seconds of one run of argv."""
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def objects_loaded(argv: list[str]) -> int:
    p = subprocess.run(argv, capture_output=True, text=True,
                       env=dict(os.environ, LD_DEBUG="files"))
    return len(re.findall(r"file=\S+ \[\d+\];\s+needed by", p.stderr))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("programs", nargs="+", help="PROGRAM or PROGRAM=ARGS")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    commands = [["/bin/true"]]
    for p in args.programs:
        path, _, rest = p.partition("=")
        commands.append([os.path.abspath(path), *(rest.split() if rest else ["--version"])])
    for c in commands:  # warm the page cache
        once(c)
    samples: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(commands))}
    print(machine_line() + f"; runs {args.runs} (median), interleaved")
    for _ in range(args.runs):
        for i, c in enumerate(commands):
            samples[i].append(once(c))
    rows = []
    for i, c in enumerate(commands):
        wall = statistics.median(w for w, _ in samples[i]) * 1e3
        cpu = statistics.median(u for _, u in samples[i]) * 1e3
        rows.append([" ".join(c), f"{wall:.1f}", f"{cpu:.1f}", str(objects_loaded(c))])
    print(table(["command", "wall ms", "CPU ms (user+sys)", "DSOs loaded"], rows, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
