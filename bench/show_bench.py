#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of `pkgtool show` and `check_binary --no-runtime` on the
repaired torch-like wheel (the input of repair_bench.py, repaired once by
`pkgtool repair` with its CUDA libraries grafted), against `auditwheel show`
when an auditwheel is given (--auditwheel PATH, e.g. the wrapper
bench/get_auditwheel.sh prints).

Rows: median wall time, user+sys and peak RSS (wait4, bench/rusage_exec.c)
over --runs, warm page cache, the load average (uptime) before and after.
Every run must succeed; `show --json` must be the same in every run.
With --auditwheel, the platform tag `auditwheel show` reports ("is consistent
with the following platform tag") and the libraries it says need grafting
are compared with `pkgtool show --json`'s tags.as_is and graft list, and
printed; a difference is reported, not an error (the timings still count).
With --unpack, `pkgtool wheel unpack` rows too (into a fresh directory under
--tmpdir each run, removed after it, so the disk holds one unpacked copy).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import Launcher, log, run_text, table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import repair_bench as rb  # noqa: E402


def uptime() -> str:
    return run_text(["uptime"]).stdout.strip()


def auditwheel_facts(text: str) -> tuple[str | None, list[str] | None]:
    """(platform tag, sonames to graft) from `auditwheel show`'s text; the
    list is None when auditwheel stops before listing them (it does after a
    symbol-version constraint: "This constrains the platform tag to")."""
    flat = " ".join(text.split())
    m = re.search(r'consistent with the following platform tag: "([^"]+)"', flat)
    libs: list[str] | None = None
    j = re.search(r"required by the wheel: (\{.*?\})", flat)
    if j:
        libs = sorted(json.loads(j.group(1)))
    elif "requires no external shared libraries" in flat:
        libs = []
    return (m.group(1) if m else None), libs


def pkgtool_facts(text: str) -> tuple[str | None, list[str]]:
    d = json.loads(text)
    return d["tags"]["as_is"], sorted(e["soname"] for e in d["external_libraries"] if e["graft"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgtool", default=rb.DEFAULT_PKGTOOL)
    ap.add_argument("--check-binary", default=str(HERE.parent / "build/checks/check_binary/check_binary"))
    ap.add_argument("--auditwheel", default=None, help="auditwheel executable (optional)")
    ap.add_argument("--baseline-pkgtool", default=None, help="an older pkgtool to time alongside")
    ap.add_argument("--baseline-check-binary", default=None, help="an older check_binary to time alongside")
    ap.add_argument("--wheel", default=None, help="a repaired wheel (default: build and repair the fixture)")
    ap.add_argument("--save-wheel", default=None, help="copy the repaired fixture wheel into this directory")
    ap.add_argument("--unpack", action="store_true", help="also time `pkgtool wheel unpack` (and the baseline's)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tmpdir", default=None)
    args = ap.parse_args()
    if not args.wheel and not rb.CUDA_LIB.is_dir():
        print(f"skipped: {rb.CUDA_LIB} not found")
        return 0
    with tempfile.TemporaryDirectory(prefix="show-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        launcher = Launcher(work)
        if args.wheel:
            wheel = Path(args.wheel)
        else:
            fx = rb.build_fixture(work, args.pkgtool, rb.policy_whitelist(HERE.parent))
            out = work / "repaired"
            argv = [args.pkgtool, "repair", str(fx.wheel), "-w", str(out), "--lib-dir", "torch/lib",
                    "--lib-path", str(rb.CUDA_LIB), "--no-cache"]
            for inc in rb.INCLUDED:
                argv += ["--include", inc]
            env = dict(os.environ, SOURCE_DATE_EPOCH=rb.EPOCH)
            p = run_text(argv, env=env)
            if p.returncode != 0:
                raise SystemExit(f"error: repair: {p.stderr}")
            wheel = next(out.glob("*.whl"))
            if args.save_wheel:
                Path(args.save_wheel).mkdir(parents=True, exist_ok=True)
                shutil.copy2(wheel, Path(args.save_wheel) / wheel.name)
        size = wheel.stat().st_size
        log(f"wheel: {wheel.name}, {size / 1e6:.1f} MB")
        rows = {
            "pkgtool show --json": [args.pkgtool, "show", "--json", str(wheel)],
            "check_binary --no-runtime": [args.check_binary, "--no-runtime", str(wheel)],
        }
        if args.baseline_pkgtool:
            rows["baseline pkgtool show --json"] = [args.baseline_pkgtool, "show", "--json", str(wheel)]
        if args.baseline_check_binary:
            rows["baseline check_binary --no-runtime"] = [args.baseline_check_binary, "--no-runtime", str(wheel)]
        if args.unpack:
            rows["pkgtool wheel unpack"] = [args.pkgtool, "wheel", "unpack", str(wheel), "-d", "{dest}"]
            if args.baseline_pkgtool:
                rows["baseline pkgtool wheel unpack"] = [args.baseline_pkgtool, "wheel", "unpack", str(wheel),
                                                         "-d", "{dest}"]
        if args.auditwheel:
            rows["auditwheel show"] = [args.auditwheel, "show", str(wheel)]
        before = uptime()
        samples: dict[str, list] = {k: [] for k in rows}
        first_json = None
        last_out: dict[str, str] = {}
        for i in range(args.runs):
            for name, argv in rows.items():
                dest = work / "unpacked"
                shutil.rmtree(dest, ignore_errors=True)
                s = launcher.run([str(dest) if a == "{dest}" else a for a in argv])
                shutil.rmtree(dest, ignore_errors=True)
                if "check_binary" in name and os.WIFEXITED(s.status) and os.WEXITSTATUS(s.status) == 1:
                    pass  # checks ran and some failed: the timing still counts
                elif not s.ok:
                    raise SystemExit(f"error: {name}: {s.describe_failure()}")
                if "pkgtool show" in name:
                    text = re.sub(r"/[^\"]*?libpkg-repair-[^/\"]*/wheel", "<tree>", s.stdout)
                    if first_json is None:
                        first_json = text
                    elif text != first_json:
                        raise SystemExit("error: show --json differs between runs")
                samples[name].append(s)
                last_out[name] = s.stdout
        after = uptime()
        out_rows = []
        for name, ss in samples.items():
            out_rows.append([
                name,
                f"{statistics.median(s.wall_s for s in ss):.3f}",
                f"{min(s.wall_s for s in ss):.3f}–{max(s.wall_s for s in ss):.3f}",
                f"{statistics.median(s.user_s + s.sys_s for s in ss):.3f}",
                f"{statistics.median(s.rss_kib for s in ss) / 1024:.1f}",
            ])
        print(f"wheel: {wheel.name} ({size} bytes), {args.runs} runs each, interleaved")
        print(f"load before: {before}")
        print(f"load after:  {after}")
        print(table(["command", "median wall s", "min–max s", "user+sys s", "peak RSS MiB"], out_rows, True))
        if args.auditwheel:
            aw_tag, aw_libs = auditwheel_facts(last_out["auditwheel show"])
            pk_tag, pk_libs = pkgtool_facts(last_out["pkgtool show --json"])
            same = aw_tag == pk_tag and aw_libs == pk_libs
            print(f"platform tag: auditwheel show {aw_tag}, pkgtool show {pk_tag}; to graft: "
                  f"auditwheel {'not reported' if aw_libs is None else aw_libs or 'none'}, "
                  f"pkgtool {pk_libs or 'none'}"
                  + ("" if same else "  ** DIFFERENT **"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
