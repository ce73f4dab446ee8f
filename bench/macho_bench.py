#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool macho edit -id` vs `llvm-install-name-tool-14 -id` on a big dylib.

Builds, at run time, an arm64 dylib of about --size-mb MB with clang-14 and
ld64.lld-14: one big initialised `__DATA` array (so the bytes are in the
file), then filled with random bytes so nothing about the file is sparse or
compressible. Every run edits a fresh copy (copying is not timed) and is
timed (perf_counter around the child) under `/usr/bin/time -f %M` (peak RSS KiB); the
table shows medians over --runs. Rows: pkgtool's default in-place edit,
pkgtool --in-place-atomic (temp file + rename) and llvm-install-name-tool-14.
Every result is checked: llvm-objdump-14 shows the new id, and pkgtool's
in-place and atomic outputs are byte-identical. Warm cache; no tool fsyncs.

Issue 17's target: in place ≥ 100× faster than llvm-install-name-tool-14
with ≤ 1/10 of its peak RSS. Exit 0 when met, 1 when not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import human_mb, human_ms, human_ratio, log, run_text, table

ARM64 = "arm64-apple-macos11"


def build_dylib(work: Path, size_mb: int) -> Path:
    src = work / "big.c"
    src.write_text(
        f"char big_data[{size_mb} * 1024 * 1024] = {{1}};\n"
        "int big_fn(void) { return big_data[0]; }\n"
    )
    out = work / "libbig.dylib"
    p = run_text(
        ["clang-14", "-target", ARM64, "-fuse-ld=lld", "-nostdlib", "-dynamiclib",
         "-Wl,-undefined,dynamic_lookup", "-Wl,-headerpad_max_install_names",
         "-install_name", "/opt/big/lib/libbig.dylib", "-o", str(out), str(src)]
    )
    if p.returncode != 0:
        raise SystemExit(f"error: cannot link the dylib:\n{p.stderr}")
    fill_random(out)
    return out


def fill_random(dylib: Path) -> None:
    """Overwrites the big array's bytes in the file with random bytes."""
    p2 = run_text(["llvm-otool-14", "-l", str(dylib)])
    if p2.returncode:
        raise SystemExit(f"error: cannot read {dylib}: {p2.stderr}")
    # The __data section's file offset and size from otool's load commands.
    lines = p2.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "sectname __data":
            fields = {}
            for l in lines[i + 1:i + 10]:
                k, _, v = l.strip().partition(" ")
                fields[k] = v.strip()
            offset, size = int(fields["offset"]), int(fields["size"], 16)
            break
    else:
        raise SystemExit(f"error: {dylib}: no __data section")
    with open(dylib, "r+b") as f:
        f.seek(offset)
        left = size
        while left:
            n = min(left, 1 << 24)
            f.write(os.urandom(n))
            left -= n


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds (perf_counter around the child: /usr/bin/time's %e has
    10 ms resolution, too coarse here) and peak RSS KiB (/usr/bin/time %M)."""
    start = time.perf_counter()
    p = run_text(["/usr/bin/time", "-f", "%M", *argv])
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed:\n{p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def dylib_id(path: Path) -> str:
    p = run_text(["llvm-objdump-14", "--macho", "--dylib-id", str(path)])
    return p.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pkgtool", default="/work/main/build/tools/pkgtool/pkgtool")
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    for tool in ("clang-14", "llvm-install-name-tool-14", "llvm-objdump-14", "llvm-otool-14", a.pkgtool):
        if not shutil.which(tool):
            print(f"error: {tool}: not found", file=sys.stderr)
            return 2

    with tempfile.TemporaryDirectory(prefix="macho-bench.", dir=a.tmpdir) as tmp:
        work = Path(tmp)
        log(f"building a {a.size_mb} MiB arm64 dylib ...")
        lib = build_dylib(work, a.size_mb)
        size = lib.stat().st_size
        new_id = "@rpath/libbig-renamed.dylib"
        rows = {
            "pkgtool macho edit -id (in place, default)": lambda f: [a.pkgtool, "macho", "edit", "-id", new_id, f],
            "pkgtool macho edit --in-place-atomic -id": lambda f: [a.pkgtool, "macho", "edit", "--in-place-atomic",
                                                                   "-id", new_id, f],
            "llvm-install-name-tool-14 -id": lambda f: ["llvm-install-name-tool-14", "-id", new_id, f],
        }
        results: dict[str, list[tuple[float, int]]] = {k: [] for k in rows}
        outputs: dict[str, Path] = {}
        for run in range(a.runs):
            for name, argv in rows.items():
                copy = work / f"run{run}.{len(outputs)}.dylib"
                shutil.copyfile(lib, copy)
                results[name].append(timed(argv(str(copy))))
                if dylib_id(copy) != new_id:
                    print(f"error: {name}: id not set", file=sys.stderr)
                    return 1
                if run == 0:
                    keep = work / f"out{len(outputs)}.dylib"
                    copy.rename(keep)
                    outputs[name] = keep
                else:
                    copy.unlink()
        names = list(rows)
        if not filecmp.cmp(outputs[names[0]], outputs[names[1]], shallow=False):
            print("error: in-place and atomic outputs differ", file=sys.stderr)
            return 1
        med = {k: (statistics.median(w for w, _ in v), statistics.median(r for _, r in v)) for k, v in results.items()}
        ref_wall, ref_rss = med[names[2]]
        table_rows = []
        for k in names:
            wall, rss = med[k]
            table_rows.append([k, human_ms(wall), human_mb(rss), human_ratio(ref_wall / wall),
                               human_ratio(ref_rss / rss)])
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; "
              f"load average {load}; dylib {size / 1e6:.0f} MB (arm64, random __DATA); runs {a.runs} (median)")
        print("(wall: time.perf_counter around `/usr/bin/time -f %M TOOL ...`, which adds ~1 ms; RSS: its %M)")
        print(table(["tool", "wall ms", "peak RSS MiB", "speed-up", "RSS ratio"], table_rows, a.markdown))
        wall, rss = med[names[0]]
        met = ref_wall / wall >= 100 and rss * 10 <= ref_rss
        print(f"target (≥ 100× faster, ≤ 1/10 RSS): {'met' if met else 'NOT met'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
