#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool repair` on a torch-like macOS wheel vs the delocate-equivalent
pipeline (issue 17).

Builds, at run time (tests/bundle/macos_fixtures.sh, clang-14 + ld64.lld-14),
the torch-like wheel of the tests with a large __DATA blob in
torch/lib/libtorchlike.dylib (--size-mb, half random bytes and half a
repeated pattern, so it compresses the way real code roughly does): the
extension needs @rpath/libtorchlike.dylib, which needs Homebrew's libomp by
its absolute install name (the wheel has its own torch/lib/libomp.dylib) and
@rpath/libgraft.dylib through a build rpath.

Rows (median wall and user+sys CPU over --runs, fresh output directory
each run, measured through bench/rusage_exec.c; the chunk cache is off,
LIBPKG_NO_CACHE=1, so every run is cold):
  - pkgtool repair WHEEL -w OUT --dyld-library-path BREW
  - the same with --baseline-pkgtool (an older build), when given
  - the delocate-equivalent pipeline: unzip; `llvm-otool-14 -L` and `-l` on
    every .so/.dylib; cp of the bundled library; one
    llvm-install-name-tool-14 call per change pkgtool made (each -change,
    -id, -delete_rpath, -add_rpath; a duplicate rpath is deleted and added
    back); `zip -r -6` (pkgtool's level 6) of the tree. delocate also runs
    `codesign` after every call and rewrites RECORD; neither is done here,
    which only flatters the pipeline.

--input zipfile re-zips the wheel with Python's zipfile (deflate level 6,
one stream per member, as setuptools' bdist_wheel writes wheels) before
anything runs: the edited dylib then has no restart points and pkgtool
splices it block by block; the default (`pkgtool wheel pack`) has them.

Checked: both outputs have the same members; every Mach-O member has the same
install names, id and rpaths (llvm-objdump-14) in both; pkgtool's output is
no larger. Issue 17's target: ≥ 5× faster. Exit 0 when met, 1 when not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from benchlib import (HERE, WALL_CPU_HEADER, Launcher, cold_run, human_ratio, log, machine_line, median_at,
                      repair_bench_args, require_tools, rewrite_input, run_text, table, wall_cpu_row)

SOURCE = HERE.parent


def build_wheel(work: Path, size_mb: int, pkgtool: str) -> Path:
    env = dict(os.environ, PKGTOOL=pkgtool, LIBPKG_SOURCE_DIR=str(SOURCE),
               LIBPKG_PYTHON=sys.executable)
    script = (f'source "{SOURCE}/tests/bundle/macos_fixtures.sh"; '
              f'build_torchlike "{work}/t" arm64-apple-macos11 arm64-apple-macos12 '
              f'{size_mb * 1024 * 1024}')
    p = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build the wheel:\n{p.stdout}\n{p.stderr}")
    return work / "t/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl"


def pipeline_script(plan: dict, wheel: Path, brew: Path) -> str:
    """The delocate-equivalent steps as one shell script (run in a fresh
    directory), making the changes pkgtool's plan lists."""
    lines = ["set -e", f'unzip -q "{wheel}" -d tree', "cd tree",
             # delocate asks otool about every library-looking file.
             "find . -name '*.so' -o -name '*.dylib' | sort | while read -r f; do "
             'llvm-otool-14 -L "$f" >/dev/null; llvm-otool-14 -l "$f" >/dev/null; done']
    for g in plan["grafts"]:
        lines.append(f'mkdir -p "$(dirname "{g["member"]}")"')
        lines.append(f'cp "{g["realpath"]}" "{g["member"]}"')
    tool = "llvm-install-name-tool-14"
    for e in plan["edits"]:
        f = e["member"]
        if e["id"]:
            lines.append(f'{tool} -id "{e["id"]}" "{f}"')
        for old, new in e["changes"]:
            lines.append(f'{tool} -change "{old}" "{new}" "{f}"')
        if e["rpaths_after"] is not None:
            before, after = e["rpaths_before"], e["rpaths_after"]
            for r in before:
                if r not in after:
                    lines.append(f'{tool} -delete_rpath "{r}" "{f}"')
            for r in after:
                if r not in before:
                    lines.append(f'{tool} -add_rpath "{r}" "{f}"')
        # llvm-install-name-tool-14 -delete_rpath removes the first of two
        # equal LC_RPATHs: one call per duplicate.
        for w in e["why"]:
            if w.startswith("drop duplicate rpath "):
                r = w[len("drop duplicate rpath "):]
                lines.append(f'{tool} -delete_rpath "{r}" "{f}"')
    lines.append(f'zip -q -r -6 ../out.whl .')
    return "\n".join(lines) + "\n"


def macho_view(zpath: Path, work: Path) -> dict:
    """Per Mach-O member: llvm-objdump-14's dylibs, id and rpaths."""
    d = work / ("view-" + zpath.stem)
    shutil.rmtree(d, ignore_errors=True)
    with zipfile.ZipFile(zpath) as z:
        z.extractall(d)
    out = {}
    for f in sorted(d.rglob("*")):
        if f.suffix not in (".so", ".dylib"):
            continue
        p = run_text(["llvm-objdump-14", "--macho", "--dylibs-used", "--dylib-id", "--rpaths", str(f)])
        out[str(f.relative_to(d))] = p.stdout.replace(str(f), "FILE")
    shutil.rmtree(d)
    return out


def main() -> int:
    a = repair_bench_args(__doc__).parse_args()
    require_tools("clang-14", "llvm-install-name-tool-14", "llvm-otool-14", "llvm-objdump-14", "zip", "unzip",
                  a.pkgtool)
    with tempfile.TemporaryDirectory(prefix="macho-repair-bench.", dir=a.tmpdir) as tmp:
        work = Path(tmp)
        log(f"building the torch-like wheel with a {a.size_mb} MiB libtorchlike ...")
        wheel = build_wheel(work, a.size_mb, a.pkgtool)
        writer = rewrite_input(wheel, a.input)
        brew = work / "t/brew"
        launcher = Launcher(work)
        with zipfile.ZipFile(wheel) as z:
            macho_bytes = sum(i.file_size for i in z.infolist()
                              if i.filename.endswith((".so", ".dylib")))
        p = run_text([a.pkgtool, "repair", str(wheel), "--dyld-library-path", str(brew),
                      "--dry-run", "--json"])
        if p.returncode:
            raise SystemExit(f"error: plan failed: {p.stderr}")
        plan = json.loads(p.stdout)
        script = pipeline_script(plan, wheel, brew)
        (work / "pipeline.sh").write_text(script)
        calls = script.count("llvm-install-name-tool-14 ")
        ours, theirs, base = [], [], []
        for run in range(a.runs):
            d = work / f"run{run}"
            (d / "pipe").mkdir(parents=True)
            ours.append(cold_run(launcher, [a.pkgtool, "repair", str(wheel), "-w", str(d / "ours"),
                                         "--dyld-library-path", str(brew)], d))
            theirs.append(cold_run(launcher, [shutil.which("bash"), str(work / "pipeline.sh")], d / "pipe"))
            if a.baseline_pkgtool:
                base.append(cold_run(launcher, [a.baseline_pkgtool, "repair", str(wheel), "-w",
                                             str(d / "base"), "--dyld-library-path", str(brew)], d))
            log(f"run {run}: pkgtool {ours[-1][0]:.2f} s ({ours[-1][1]:.2f} s CPU), pipeline "
                f"{theirs[-1][0]:.2f} s ({theirs[-1][1]:.2f} s CPU)" +
                (f", baseline {base[-1][0]:.2f} s ({base[-1][1]:.2f} s CPU)" if base else ""))
            if run == 0:
                [ours_whl] = list((d / "ours").glob("*.whl"))
                pipe_whl = d / "pipe/out.whl"
                with zipfile.ZipFile(ours_whl) as z1, zipfile.ZipFile(pipe_whl) as z2:
                    # The SBOM pkgtool adds has no counterpart in the pipeline.
                    m1 = {n for n in z1.namelist() if not n.endswith("/") and "/sboms/" not in n}
                    m2 = {n for n in z2.namelist() if not n.endswith("/")}
                if m1 != m2:
                    print(f"error: members differ: {sorted(m1 ^ m2)}", file=sys.stderr)
                    return 1
                v1, v2 = macho_view(ours_whl, work), macho_view(pipe_whl, work)
                if v1 != v2:
                    print(f"error: install names differ:\n{json.dumps([v1, v2], indent=1)}", file=sys.stderr)
                    return 1
                size_ours, size_pipe = ours_whl.stat().st_size, pipe_whl.stat().st_size
                size_base = (next((d / "base").glob("*.whl")).stat().st_size if base else None)
            shutil.rmtree(d)
        mo, mt = median_at(ours, 0), median_at(theirs, 0)
        co, ct = median_at(ours, 1), median_at(theirs, 1)
        print(f"{machine_line()}; "
              f"wheel {wheel.stat().st_size / 1e6:.0f} MB with {macho_bytes / 1e6:.0f} MB of Mach-O "
              f"(written by {writer}); runs {a.runs} (median); chunk cache off")
        print(f"pipeline: {calls} llvm-install-name-tool-14 calls, {len(plan['grafts'])} library copied")
        rows = [wall_cpu_row("pkgtool repair", ours, size_ours, theirs)]
        if base:
            rows.append(wall_cpu_row("baseline pkgtool repair", base, size_base, theirs))
        rows.append(wall_cpu_row("delocate-equivalent pipeline", theirs, size_pipe, theirs))
        print(table(WALL_CPU_HEADER, rows, a.markdown))
        print("checked: same members, same install names/ids/rpaths (llvm-objdump-14); "
              f"pkgtool's output {'no larger' if size_ours <= size_pipe else 'LARGER'}")
        met = mt / mo >= 5 and size_ours <= size_pipe
        print(f"CPU: pkgtool {co:.2f} s, pipeline {ct:.2f} s ({human_ratio(ct / co)})")
        print(f"target (≥ 5× faster, output no larger): {'met' if met else 'NOT met'}")
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
