#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""CPU time (user+sys) of a re-signing `pkgtool macho edit -id` on a big
signed dylib: two pkgtool builds side by side (e.g. with and without a
change), and llvm-install-name-tool-14 for the ratio.

The dylib is macho_bench.py's (~--size-mb MB arm64, random `__DATA`, signed
with `pkgtool macho sign`). Every run edits a fresh copy (the copy is not
timed); the two pkgtool builds run in random order within each round; CPU is
the child's user+sys from getrusage(RUSAGE_CHILDREN) (microseconds, unlike
/usr/bin/time's 10 ms ticks), which a loaded machine disturbs far less than
wall time. Every pkgtool output must pass `pkgtool macho verify`.
Prints medians; exit 0, or 2 on usage errors.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import macho_bench


def cpu_seconds(argv: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pkgtool", required=True)
    ap.add_argument("--baseline-pkgtool", required=True, help="the other build (e.g. main's)")
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--llvm-runs", type=int, default=5)
    a = ap.parse_args()
    tools = {"pkgtool": a.pkgtool, "baseline": a.baseline_pkgtool}
    for t in tools.values():
        if not Path(t).is_file():
            print(f"error: {t}: no such pkgtool", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="macho-edit-cpu-") as tmp:
        work = Path(tmp)
        lib = macho_bench.build_dylib(work, a.size_mb)
        subprocess.run([a.pkgtool, "macho", "sign", str(lib)], check=True, capture_output=True)
        cpu: dict[str, list[float]] = {"pkgtool": [], "baseline": [], "llvm-install-name-tool-14": []}
        for i in range(a.runs):
            for who in random.sample(sorted(tools), len(tools)):
                copy = work / f"{who}.dylib"
                shutil.copy(lib, copy)
                cpu[who].append(cpu_seconds([tools[who], "macho", "edit", "-id", f"/n/{i}/libbig.dylib",
                                             str(copy)]))
                subprocess.run([a.pkgtool, "macho", "verify", str(copy)], check=True, capture_output=True)
            if i < a.llvm_runs:
                copy = work / "llvm.dylib"
                shutil.copy(lib, copy)
                cpu["llvm-install-name-tool-14"].append(
                    cpu_seconds(["llvm-install-name-tool-14", "-id", f"/n/{i}/libbig.dylib", str(copy)]))
    med = {k: statistics.median(v) for k, v in cpu.items()}
    for k, v in cpu.items():
        print(f"{k}: median user+sys {med[k] * 1000:.2f} ms over {len(v)} runs "
              f"(min {min(v) * 1000:.1f}, max {max(v) * 1000:.1f})")
    llvm = med["llvm-install-name-tool-14"]
    print(f"llvm-install-name-tool-14 / pkgtool: {llvm / med['pkgtool']:.0f}x; "
          f"/ baseline: {llvm / med['baseline']:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
