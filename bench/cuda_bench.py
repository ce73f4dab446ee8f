#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of the manywheel driver with the built-in CUDA 13.0 table
against the old script's steps done by hand on the same input.

The input is a torch-like wheel built here: torch/_C.<EXT_SUFFIX> links
this machine's libcudart, libcublas, libcublasLt, libcudnn, libnvrtc,
libcupti and libnccl (/usr/local/cuda). The 13.0 table's files the toolkit
lacks (cusparseLt, cuFile, nvshmem, the RDMA stack) are tiny stand-ins
generated in a second root, as tests/driver/manywheel's real_cuda13_full
case does; the rest is the real toolkit (about 1.4 GB).

Rows (one run each by default: the inputs are large and the machine may be
shared; the header records the load average):
  old script's steps  repair_bench.py's SHELL_PIPELINE (builder-scripts.md
                      §2.4: unzip; cp each library into torch/lib; sha256
                      rename except libnvrtc-builtins*/libcudnn*/libcublas*;
                      patchelf --print-needed | grep + --replace-needed on
                      every .so for every library; patchelf --set-rpath;
                      RECORD with openssl; zip -r -6) over exactly the files
                      the driver's --dry-run plan grafts.
  manywheel           `manywheel --wheel W --cuda 13.0 --cuda-root
                      /usr/local/cuda --cuda-root STANDIN --level 6
                      --no-check` (check_binary is not part of the old
                      steps either).

Both outputs are checked before their numbers count: zipfile reads every
member (CRC) and the two hold the same member set.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchlib import (CUDA, Launcher, cuda13_standin, cuda_wheel, driver_env, human_mb, human_ratio, log,  # noqa: E402
                      planned_grafts, shared_machine_line, table)
from repair_bench import EPOCH, KEEP_NAME_GLOBS, PATCHELF, SHELL_PIPELINE  # noqa: E402

def members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        bad = z.testzip()
        if bad:
            raise SystemExit(f"error: {wheel}: bad CRC in {bad}")
        return {i.filename for i in z.infolist() if not i.is_dir()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(HERE.parent / "build"), help="libpkg build directory")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    pkgtool = str(Path(args.build) / "tools/pkgtool/pkgtool")
    manywheel = str(Path(args.build) / "drivers/manywheel/manywheel")
    if not (CUDA / "lib64/libcudart.so.13").exists():
        print(f"skipped: no CUDA 13 toolkit at {CUDA}")
        return 0
    with tempfile.TemporaryDirectory(prefix="cuda-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        launcher = Launcher(work)
        py = f"{sys.version_info[0]}.{sys.version_info[1]}"
        wheel = cuda_wheel(work, pkgtool, py, "cuda_bench", EPOCH)
        standin = cuda13_standin(work, pkgtool)
        env = driver_env(EPOCH)
        driver = [manywheel, "--no-env", "--wheel", str(wheel), "--cuda", "13.0", "--cuda-root", str(CUDA),
                  "--cuda-root", str(standin), "--level", "6", "-j", str(args.jobs), "--no-check"]
        grafts = planned_grafts(driver + ["-o", str(work / "dry")], env)
        deps = work / "deps.txt"
        deps.write_text("".join(f"{g['source']}\n" for g in grafts))
        size = sum(Path(g["source"]).stat().st_size for g in grafts)
        log(f"input {wheel.name}; {len(grafts)} libraries, {size / 1e9:.2f} GB to bundle")
        script = work / "pipeline.sh"
        script.write_text(SHELL_PIPELINE)
        senv = dict(env, PATCHELF_BIN=PATCHELF)
        rows = {"shell": [], "ours": []}
        outs = {}
        for i in range(args.runs):
            for side in (("shell", "ours") if i % 2 == 0 else ("ours", "shell")):
                out = work / f"out-{side}-{i}"
                out.mkdir()
                if side == "shell":
                    s = launcher.run([shutil.which("bash") or "/bin/bash", str(script), str(wheel), str(out), str(work / f"x-{i}"), str(deps),
                                      " ".join(KEEP_NAME_GLOBS)], env=senv)
                else:
                    s = launcher.run(driver + ["-o", str(out)], env=env)
                if not s.ok:
                    raise SystemExit(f"error: {side}: {s.describe_failure()}\n{s.stderr[-2000:]}")
                rows[side].append(s)
                outs[side] = next(out.glob("*.whl"))
        ms, mo = members(outs["shell"]), members(outs["ours"])
        # Both use the sha256[:8] rule. The one expected difference: the old
        # steps copy libnvrtc-builtins.so under the table's (link) name, the
        # driver names it by its SONAME libnvrtc-builtins.so.13.0.
        only_shell, only_ours = ms - mo, mo - ms
        # The driver also writes the CycloneDX SBOM of its grafts (issue 15);
        # the old steps had none.
        only_ours = {m for m in only_ours if not m.endswith(".dist-info/sboms/pkgtool.cdx.json")}
        renamed = {s for s in only_shell if any(o.startswith(s + ".") for o in only_ours)}
        if only_shell - renamed or len(only_ours) != len(renamed):
            raise SystemExit(f"error: member sets differ: {sorted(only_shell | only_ours)}")
        print(f"{shared_machine_line()}; {len(grafts)} libraries, "
              f"{size / 1e9:.2f} GB; runs {args.runs}; output {outs['ours'].stat().st_size / 1e6:.0f} MB "
              f"(shell {outs['shell'].stat().st_size / 1e6:.0f} MB)")
        med = lambda xs, f: sorted(f(x) for x in xs)[len(xs) // 2]  # noqa: E731
        sw, ow = med(rows["shell"], lambda s: s.wall_s), med(rows["ours"], lambda s: s.wall_s)
        sr, orss = med(rows["shell"], lambda s: s.rss_kib), med(rows["ours"], lambda s: s.rss_kib)
        header = ["pipeline", "wall s", "user+sys s", "peak RSS MiB", "speed-up", "RSS ratio"]
        body = [["old script's steps (unzip, cp, patchelf, openssl, zip -r -6)", f"{sw:.1f}",
                 f"{med(rows['shell'], lambda s: s.user_s + s.sys_s):.1f}", human_mb(sr), "1.00×", "1"],
                [f"manywheel --cuda 13.0 --level 6 -j {args.jobs} --no-check", f"{ow:.1f}",
                 f"{med(rows['ours'], lambda s: s.user_s + s.sys_s):.1f}", human_mb(orss),
                 human_ratio(sw / ow), f"1/{sr / orss:.1f}"]]
        print(table(header, body, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
