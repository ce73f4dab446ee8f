#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool macho edit -id` (which re-signs) vs `llvm-install-name-tool-14 -id`
on a big signed dylib, thin and universal2.

Builds, at run time, an arm64 dylib of about --size-mb MB with clang-14 and
ld64.lld-14: one big initialised `__DATA` array (so the bytes are in the
file), then filled with random bytes so nothing about the file is sparse or
compressible, then re-signed with `pkgtool macho sign` so every page hash is
valid. The universal2 file is that dylib plus a small signed x86_64 slice
(`llvm-lipo-14 -create`). Every edit re-signs the arm64 slice (sign on edit,
only the header page rehashed). Every run edits a fresh copy (copying is not
timed) and is timed (perf_counter around the child) under `/usr/bin/time -f
%M` (peak RSS KiB); the tables show medians over --runs. Rows per file:
pkgtool's default in-place edit, pkgtool --in-place-atomic (temp file +
rename) and llvm-install-name-tool-14. Every result is checked:
llvm-objdump-14 shows the new id, pkgtool's in-place and atomic outputs are
byte-identical, and `pkgtool macho verify` (every page of every slice)
passes on pkgtool's output; whether llvm-install-name-tool-14's output
verifies is printed. Warm cache; no tool fsyncs.

Issue 17's target: in place ≥ 100× faster than llvm-install-name-tool-14
with ≤ 1/10 of its peak RSS, thin and fat. Exit 0 when met, 1 when not, 2 on
usage errors.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchlib import (human_mb, human_ms, human_ratio, log, machine_line, medians, missing_tool, run_text,
                      side_by_side_args, table, timed)

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



def dylib_id(path: Path) -> str:
    p = run_text(["llvm-objdump-14", "--macho", "--arch=all", "--dylib-id", str(path)])
    return p.stdout.strip().splitlines()[-1]


def build_fat(work: Path, thin: Path) -> Path:
    """`thin` plus a small signed x86_64 slice, as llvm-lipo-14 lays it out."""
    src = work / "small.c"
    src.write_text("int small_fn(void) { return 1; }\n")
    x86 = work / "libsmall.x86_64.dylib"
    p = run_text(["clang-14", "-target", "x86_64-apple-macos10.15", "-fuse-ld=lld", "-nostdlib",
                  "-dynamiclib", "-Wl,-undefined,dynamic_lookup", "-Wl,-headerpad_max_install_names",
                  "-Wl,-adhoc_codesign", "-install_name", "/opt/big/lib/libbig.dylib",
                  "-o", str(x86), str(src)])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot link the x86_64 dylib:\n{p.stderr}")
    fat = work / "libbig.universal2.dylib"
    p = run_text(["llvm-lipo-14", "-create", str(x86), str(thin), "-output", str(fat)])
    if p.returncode != 0:
        raise SystemExit(f"error: llvm-lipo-14 -create failed:\n{p.stderr}")
    return fat


def verifies(pkgtool: str, path: Path) -> bool:
    return run_text([pkgtool, "macho", "verify", str(path)]).returncode == 0


def bench_file(a, work: Path, lib: Path, kind: str) -> tuple[list[list[str]], bool] | None:
    """Times the three rows on copies of `lib`; None after printing an error."""
    new_id = "@rpath/libbig-renamed.dylib"
    rows = {
        "pkgtool macho edit -id (in place, re-signs)": lambda f: [a.pkgtool, "macho", "edit", "-id", new_id, f],
        "pkgtool macho edit --in-place-atomic -id": lambda f: [a.pkgtool, "macho", "edit", "--in-place-atomic",
                                                               "-id", new_id, f],
        "llvm-install-name-tool-14 -id": lambda f: ["llvm-install-name-tool-14", "-id", new_id, f],
    }
    results: dict[str, list[tuple[float, int]]] = {k: [] for k in rows}
    outputs: dict[str, Path] = {}
    for run in range(a.runs):
        for name, argv in rows.items():
            copy = work / f"{kind}.run{run}.{len(outputs)}.dylib"
            shutil.copyfile(lib, copy)
            results[name].append(timed(argv(str(copy))))
            if dylib_id(copy) != new_id:
                print(f"error: {kind}: {name}: id not set", file=sys.stderr)
                return None
            if run == 0:
                keep = work / f"{kind}.out{len(outputs)}.dylib"
                copy.rename(keep)
                outputs[name] = keep
            else:
                copy.unlink()
    names = list(rows)
    if not filecmp.cmp(outputs[names[0]], outputs[names[1]], shallow=False):
        print(f"error: {kind}: in-place and atomic outputs differ", file=sys.stderr)
        return None
    if not verifies(a.pkgtool, outputs[names[0]]):
        print(f"error: {kind}: pkgtool's output does not verify", file=sys.stderr)
        return None
    llvm_ok = verifies(a.pkgtool, outputs[names[2]])
    med = medians(results)
    ref_wall, ref_rss = med[names[2]]
    table_rows = []
    for k in names:
        wall, rss = med[k]
        label = k if k != names[2] else f"{k} (signature {'valid' if llvm_ok else 'INVALID'} after)"
        table_rows.append([f"{kind}: {label}", human_ms(wall), human_mb(rss), human_ratio(ref_wall / wall),
                           human_ratio(ref_rss / rss)])
    wall, rss = med[names[0]]
    return table_rows, ref_wall / wall >= 100 and rss * 10 <= ref_rss


def main() -> int:
    a = side_by_side_args(__doc__, size_mb=200, runs=5).parse_args()
    tool = missing_tool("clang-14", "llvm-install-name-tool-14", "llvm-objdump-14", "llvm-otool-14", "llvm-lipo-14", a.pkgtool)
    if tool:
        print(f"error: {tool}: not found", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="macho-bench.", dir=a.tmpdir) as tmp:
        work = Path(tmp)
        log(f"building a {a.size_mb} MiB arm64 dylib ...")
        thin = build_dylib(work, a.size_mb)
        p = run_text([a.pkgtool, "macho", "sign", str(thin)])
        if p.returncode != 0 or not verifies(a.pkgtool, thin):
            print(f"error: cannot sign {thin}: {p.stderr}", file=sys.stderr)
            return 1
        fat = build_fat(work, thin)
        all_rows, met = [], True
        for kind, lib in (("thin arm64", thin), ("universal2", fat)):
            got = bench_file(a, work, lib, kind)
            if got is None:
                return 1
            all_rows += got[0]
            met = met and got[1]
        print(f"{machine_line()}; thin {thin.stat().st_size / 1e6:.0f} MB (arm64, random __DATA, signed), "
              f"universal2 {fat.stat().st_size / 1e6:.0f} MB (+ signed x86_64); runs {a.runs} (median)")
        print("(wall: time.perf_counter around `/usr/bin/time -f %M TOOL ...`, which adds ~1 ms; RSS: its %M)")
        print(table(["file: tool", "wall ms", "peak RSS MiB", "speed-up", "RSS ratio"], all_rows, a.markdown))
        print(f"target (≥ 100× faster, ≤ 1/10 RSS, thin and fat): {'met' if met else 'NOT met'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
