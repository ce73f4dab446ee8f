#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool wheel fuse` vs unzip + `llvm-lipo-14 -create` per file + zip.

Builds, at run time, two single-arch wheels of one project (arm64 macOS 11
and x86_64 macOS 10.15, clang-14 + ld64.lld-14), each with one dylib of
about --size-mb MiB (one big initialised `__DATA` array filled with random
nibbles, so it deflates to about half, like code) and a few small files,
packed by `pkgtool wheel pack` at level 6. Then, --runs times (median
reported; the rows take turns):

- `pkgtool wheel fuse A B -w OUT`;
- the pipeline it replaces: `unzip -q` both, `llvm-lipo-14 -create` for
  every file that differs and is Mach-O, `cp` B-only files, the WHEEL tag
  rewritten with sed, `zip -q -r -X -6` (no RECORD regeneration: the
  baseline is given that for free);
- per file: `pkgtool macho lipo -create` vs `llvm-lipo-14 -create` on the
  two dylibs.

Checks: the fused dylib equals llvm-lipo-14's output byte for byte, and
`pkgtool wheel verify` passes on the fused wheel. Wall is perf_counter
around the child, peak RSS from `/usr/bin/time -f %M`. Warm cache.

Issue 17's target: fuse no slower than llvm-lipo-14. Exit 0 when both rows
(wheel and per file) meet it, 1 when not, 2 on usage errors.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from benchlib import (human_mb, human_ms, human_ratio, log, machine_line, medians, missing_tool, run_text,
                      side_by_side_args, table, timed)

WHEEL = "demo-1.0-cp311-cp311-{}.whl"
DYLIB = "demo/.dylibs/libbig.dylib"
NIBBLES = bytes(i & 0x0F for i in range(256))


def section_range(dylib: Path) -> tuple[int, int]:
    p = run_text(["llvm-otool-14", "-l", str(dylib)])
    lines = p.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "sectname __data":
            fields = {}
            for l in lines[i + 1:i + 10]:
                k, _, v = l.strip().partition(" ")
                fields[k] = v.strip()
            return int(fields["offset"]), int(fields["size"], 16)
    raise SystemExit(f"error: {dylib}: no __data section")


def build_tree(work: Path, target: str, tag: str, size_mb: int) -> Path:
    tree = work / f"tree-{tag}"
    (tree / "demo/.dylibs").mkdir(parents=True)
    info = tree / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\n"
                                f"Tag: cp311-cp311-{tag}\n")
    (tree / "demo/__init__.py").write_text("from ._ext import *\n")
    src = work / "big.c"
    src.write_text(f"char big_data[{size_mb} * 1024 * 1024] = {{1}};\n"
                   "int big_fn(void) { return big_data[0]; }\n")
    out = tree / DYLIB
    p = run_text(["clang-14", "-target", target, "-fuse-ld=lld", "-nostdlib", "-dynamiclib",
                  "-Wl,-undefined,dynamic_lookup", "-install_name", "@rpath/libbig.dylib",
                  "-o", str(out), str(src)])
    if p.returncode:
        raise SystemExit(f"error: cannot link:\n{p.stderr}")
    offset, size = section_range(out)
    with open(out, "r+b") as f:
        f.seek(offset)
        left = size
        while left:
            n = min(left, 1 << 24)
            # Random nibbles: deflate halves them, as it does code.
            f.write(os.urandom(n).translate(NIBBLES))
            left -= n
    return tree


BASELINE = r"""
set -e
W=$1; A=$2; B=$3; OUT=$4
rm -rf "$W/a" "$W/b"; mkdir -p "$W/a" "$W/b" "$OUT"
unzip -q "$A" -d "$W/a"
unzip -q "$B" -d "$W/b"
cd "$W/b"
find . -type f | while read -r f; do
  if [ ! -e "$W/a/$f" ]; then mkdir -p "$W/a/$(dirname "$f")"; cp "$f" "$W/a/$f"
  elif ! cmp -s "$f" "$W/a/$f"; then
    case "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" in
      cffaedfe|cefaedfe|cafebabe) llvm-lipo-14 -create "$W/a/$f" "$f" -output "$W/a/$f.fat"
                                  mv "$W/a/$f.fat" "$W/a/$f" ;;
    esac
  fi
done
sed -i 's/^Tag: .*/Tag: cp311-cp311-macosx_10_15_universal2/' "$W/a/demo-1.0.dist-info/WHEEL"
cd "$W/a" && zip -q -r -X -6 "$OUT/demo-1.0-cp311-cp311-macosx_10_15_universal2.whl" .
"""



def main() -> int:
    a = side_by_side_args(__doc__, size_mb=200, runs=5).parse_args()
    tool = missing_tool("clang-14", "llvm-lipo-14", "llvm-otool-14", "unzip", "zip", a.pkgtool)
    if tool:
        print(f"error: {tool}: not found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fuse-bench.", dir=a.tmpdir) as tmp:
        work = Path(tmp)
        log(f"building two wheels with a {a.size_mb} MiB dylib each ...")
        wheels = work / "in"
        for target, tag in (("arm64-apple-macos11", "macosx_11_0_arm64"),
                            ("x86_64-apple-macos10.15", "macosx_10_15_x86_64")):
            tree = build_tree(work, target, tag, a.size_mb)
            p = run_text([a.pkgtool, "wheel", "pack", str(tree), "-d", str(wheels)])
            if p.returncode:
                raise SystemExit(p.stderr)
        wa = wheels / WHEEL.format("macosx_11_0_arm64")
        wb = wheels / WHEEL.format("macosx_10_15_x86_64")
        da, db = work / "tree-macosx_11_0_arm64" / DYLIB, work / "tree-macosx_10_15_x86_64" / DYLIB
        script = work / "baseline.sh"
        script.write_text(BASELINE)
        uni = WHEEL.format("macosx_10_15_universal2")
        rows = {
            "pkgtool wheel fuse": lambda o: [a.pkgtool, "wheel", "fuse", str(wa), str(wb), "-w", str(o)],
            "unzip + llvm-lipo-14 -create + zip -6": lambda o: ["bash", str(script), str(work / "x"), str(wa),
                                                                 str(wb), str(o)],
            "pkgtool macho lipo -create (one dylib pair)": lambda o: [a.pkgtool, "macho", "lipo", "-create", str(da),
                                                                       str(db), "-output", str(o / "fat")],
            "llvm-lipo-14 -create (one dylib pair)": lambda o: ["llvm-lipo-14", "-create", str(da), str(db),
                                                                 "-output", str(o / "fat")],
        }
        names = list(rows)
        results: dict[str, list[tuple[float, int]]] = {k: [] for k in rows}
        for run in range(a.runs):
            order = names[run % 2:] + names[:run % 2]
            for name in order:
                out = work / f"out{names.index(name)}"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                results[name].append(timed(rows[name](out)))
        # Checks: fuse's dylib equals llvm-lipo-14's; the wheel verifies.
        fused = work / "out0" / uni
        with zipfile.ZipFile(fused) as z:
            (work / "fused.dylib").write_bytes(z.read(DYLIB))
        if not filecmp.cmp(work / "fused.dylib", work / "out3" / "fat", shallow=False):
            print("error: the fused dylib differs from llvm-lipo-14's", file=sys.stderr)
            return 1
        if not filecmp.cmp(work / "out2" / "fat", work / "out3" / "fat", shallow=False):
            print("error: pkgtool macho lipo differs from llvm-lipo-14", file=sys.stderr)
            return 1
        if run_text([a.pkgtool, "wheel", "verify", str(fused)]).returncode:
            print("error: the fused wheel does not verify", file=sys.stderr)
            return 1
        med = medians(results)
        table_rows = []
        for i, k in enumerate(names):
            ref = names[1] if i < 2 else names[3]
            wall, rss = med[k]
            table_rows.append([k, human_ms(wall), human_mb(rss), human_ratio(med[ref][0] / wall)])
        print(f"{machine_line()}; "
              f"wheels {wa.stat().st_size / 1e6:.0f} + {wb.stat().st_size / 1e6:.0f} MB "
              f"(dylibs {da.stat().st_size / 1e6:.0f} + {db.stat().st_size / 1e6:.0f} MB); runs {a.runs} (median)")
        print(table(["command", "wall ms", "peak RSS MiB", "speed-up vs llvm-lipo row"], table_rows, a.markdown))
        met = med[names[0]][0] <= med[names[1]][0] and med[names[2]][0] <= med[names[3]][0]
        print(f"target (fuse no slower than llvm-lipo-14): {'met' if met else 'NOT met'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
