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
import datetime
import json
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests/driver/common"))
from benchlib import Launcher, human_mb, human_ratio, log, run_text, table, write_dist_info  # noqa: E402
from repair_bench import EPOCH, KEEP_NAME_GLOBS, PATCHELF, SHELL_PIPELINE  # noqa: E402
import cuda_standin  # noqa: E402

CUDA = Path("/usr/local/cuda")
LINKED = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9", "libnvrtc.so.13",
          "libcupti.so.13", "libnccl.so.2"]


def build_wheel(work: Path, pkgtool: str) -> Path:
    tree = work / "tree"
    (tree / "torch").mkdir(parents=True)
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    src = work / "c.c"
    src.write_text("int cudaRuntimeGetVersion(int*);\n"
                   "int probe(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n")
    p = run_text(["gcc", "-O1", "-fPIC", "-shared", "-o", str(tree / f"torch/_C{ext}"), str(src),
                  "-Wl,--no-as-needed", f"-L{CUDA / 'lib64'}"] + [f"-l:{n}" for n in LINKED])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build torch/_C:\n{p.stderr}")
    (tree / "torch/__init__.py").write_text("")
    # torch/lib exists in a torch wheel (the old steps copy into it).
    (tree / "torch/lib").mkdir()
    p = run_text(["gcc", "-shared", "-fPIC", "-Wl,-soname,libtorch_global_deps.so", "-o",
                  str(tree / "torch/lib/libtorch_global_deps.so"), "-x", "c", "/dev/null"])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build libtorch_global_deps.so:\n{p.stderr}")
    write_dist_info(tree, "torch", "2.9.0", "cuda_bench")
    out = work / "input"
    out.mkdir()
    p = run_text([pkgtool, "wheel", "pack", str(tree), "-d", str(out)], env=dict(os.environ, SOURCE_DATE_EPOCH=EPOCH))
    if p.returncode != 0:
        raise SystemExit(f"error: pkgtool wheel pack: {p.stderr}")
    return next(out.glob("*.whl"))


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
        wheel = build_wheel(work, pkgtool)
        libs = cuda_standin.table_libraries(pkgtool, "13.0")
        lacking = [l for l in libs if not (Path(l["path"]).exists() or (CUDA / "lib64" / Path(l["path"]).name).exists())]
        standin = work / "standin"
        cuda_standin.make_root(standin, lacking, "13.0")
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        env["SOURCE_DATE_EPOCH"] = EPOCH
        driver = [manywheel, "--no-env", "--wheel", str(wheel), "--cuda", "13.0", "--cuda-root", str(CUDA),
                  "--cuda-root", str(standin), "--level", "6", "-j", str(args.jobs), "--no-check"]
        dry = run_text(driver + ["-o", str(work / "dry"), "--dry-run", "--json"], env=env)
        if dry.returncode != 0:
            raise SystemExit(f"error: manywheel --dry-run: {dry.stderr}")
        grafts = json.loads(dry.stdout)["plan_detail"]["grafts"]
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
        load = os.getloadavg()
        print(f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; {platform.release()}; "
              f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (shared machine); {len(grafts)} libraries, "
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
