#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool conda pack` with the segment writers and the chunk cache against
the writer before them (issue 18).

The tree is archive_bench.py's (the largest CUDA libraries up to --min-gb
plus the CUDA headers). Rows, each a median of --runs, all in one run
(interleaved), outputs checked:
  reference     --ref-pkgtool (a build of the code before: one libarchive
                bzip2 stream for .tar.bz2, one multithreaded zstd frame for
                .conda) with the same flags
  bzip2 -9      (with --format tar.bz2) the bzip2 tool over the same tar,
                single-threaded: the size every reader's reference
  no cache      pkgtool conda pack -j N --no-cache
  cold cache    the same with a fresh --cache-dir
  warm cache    the same cache again (the next configuration or day)
  other package, warm   another package (other name, an extra file first)
                holding the same files over the warm cache
Every output of ours must be byte-identical to the no-cache one; the
reference's and ours must extract (cph) to the same tree.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from archive_bench import make_wheel_tree  # noqa: E402
from benchlib import Launcher, log, run_text, table  # noqa: E402

EPOCH = "1700000000"


def tree_digest(root: Path) -> dict[str, tuple[int, str]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = (p.stat().st_size, run_text(["sha256sum", str(p)]).stdout.split()[0])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgtool", default=str(HERE.parent / "build/tools/pkgtool/pkgtool"))
    ap.add_argument("--ref-pkgtool", required=True, help="pkgtool built from the code before")
    ap.add_argument("--format", choices=["tar.bz2", "conda"], default="tar.bz2")
    ap.add_argument("--level", type=int, default=None, help="-l for conda (default 19), --bz2-level (9)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--min-gb", type=float, default=1.25)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    level = args.level or (9 if args.format == "tar.bz2" else 19)
    level_flag = ["--bz2-level", str(level)] if args.format == "tar.bz2" else ["-l", str(level)]
    ext = "." + args.format
    with tempfile.TemporaryDirectory(prefix="conda-cache-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        launcher = Launcher(work)
        tree, source, total, files = make_wheel_tree(work, int(args.min_gb * 1e9))
        prefix = tree / "benchpkg"
        other = work / "other-prefix"
        shutil.copytree(prefix, other, copy_function=os.link)
        (other / "aaa-first.txt").write_text("a file of the other package, sorted first\n")
        env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)

        def pack(tool: str, src: Path, name: str, out: Path, extra: list[str]):
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            s = launcher.run([tool, "conda", "pack", str(src), "--name", name, "--version", "1.0",
                              "--format", args.format, "-o", str(out), "-j", str(args.jobs),
                              *level_flag, *extra], env=env)
            if not s.ok:
                raise SystemExit(f"error: {tool} conda pack: {s.describe_failure()}\n{s.stderr[-2000:]}")
            return s, next(out.glob("*" + ext))

        rows = ["reference", "no cache", "cold cache", "warm cache", "other package, warm"]
        if args.format == "tar.bz2":
            rows.insert(1, "bzip2 -9 (tar)")
        samples = {r: [] for r in rows}
        sizes = {}
        cache = work / "cache"
        for i in range(args.runs):
            # Alternate which of the two uncached writers goes first; bzip2
            # compresses the no-cache output's tar, the warm rows need the
            # cold one before them.
            first = ["no cache", "reference"] if i % 2 == 0 else ["reference", "no cache"]
            order = first + [r for r in rows if r not in first]
            for r in order:
                load = os.getloadavg()[0]
                if r == "reference":
                    s, f = pack(args.ref_pkgtool, prefix, "benchpkg", work / "out-ref", [])
                elif r.startswith("bzip2"):
                    tar = work / "pkg.tar"
                    with open(tar, "wb") as t:
                        subprocess.run(["bzip2", "-dc", str(next((work / "out-none").glob("*" + ext)))],
                                       stdout=t, check=True)
                    # rusage_exec runs its program by path (execv, no PATH search).
                    s = launcher.run(["/bin/sh", "-c", f"bzip2 -{level} -c '{tar}' > '{work / 'ref.tar.bz2'}'"])
                    if not s.ok:
                        raise SystemExit(f"error: bzip2 -{level}: {s.describe_failure()}")
                    f = work / "ref.tar.bz2"
                elif r == "no cache":
                    s, f = pack(args.pkgtool, prefix, "benchpkg", work / "out-none", ["--no-cache"])
                elif r == "cold cache":
                    shutil.rmtree(cache, ignore_errors=True)
                    s, f = pack(args.pkgtool, prefix, "benchpkg", work / "out-cold", ["--cache-dir", str(cache)])
                elif r == "warm cache":
                    s, f = pack(args.pkgtool, prefix, "benchpkg", work / "out-warm", ["--cache-dir", str(cache)])
                else:
                    s, f = pack(args.pkgtool, other, "otherpkg", work / "out-other", ["--cache-dir", str(cache)])
                samples[r].append(s)
                sizes[r] = f.stat().st_size
                log(f"run {i + 1} {r}: {s.wall_s:.1f} s wall, {s.user_s + s.sys_s:.1f} s CPU, "
                    f"{s.rss_kib / 1024:.0f} MiB, {sizes[r]} bytes, load {load:.1f}")
            none = (work / "out-none").glob("*" + ext)
            ref_bytes = next(none).read_bytes()
            for r in ("cold cache", "warm cache"):
                out = work / ("out-cold" if r.startswith("cold") else "out-warm")
                if next(out.glob("*" + ext)).read_bytes() != ref_bytes:
                    raise SystemExit(f"error: run {i + 1}: {r} output differs from --no-cache's")
            if i == 0:
                trees = []
                for out in ("out-ref", "out-none", "out-other"):
                    dest = work / f"x-{out}"
                    shutil.rmtree(dest, ignore_errors=True)
                    p = run_text(["cph", "x", str(next((work / out).glob("*" + ext))), "--dest", str(dest)])
                    if p.returncode != 0:
                        raise SystemExit(f"error: cph x {out}: {p.stderr}")
                    d = tree_digest(dest)
                    trees.append({k: v for k, v in d.items() if not k.startswith("info/") and k != "aaa-first.txt"})
                    shutil.rmtree(dest)
                if not (trees[0] == trees[1] == trees[2]):
                    raise SystemExit("error: cph extracts the packages to different trees")
                log("outputs: cold and warm == no cache; cph extracts reference, ours, other to the same files")
        la = os.getloadavg()
        print(f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; {platform.release()}; "
              f"load average {la[0]:.1f} {la[1]:.1f} {la[2]:.1f} (shared machine); tree {files} files, "
              f"{total / 1e9:.2f} GB from {source}; {args.format} level {level}, -j {args.jobs}; "
              f"runs {args.runs} (medians)")
        med = statistics.median
        base_w = med(s.wall_s for s in samples["reference"])
        base_c = med(s.user_s + s.sys_s for s in samples["reference"])
        body = []
        for r in rows:
            w = med(s.wall_s for s in samples[r])
            c = med(s.user_s + s.sys_s for s in samples[r])
            body.append([r, f"{w:.1f}", f"{c:.1f}", f"{med(s.rss_kib for s in samples[r]) / 1024:.0f}",
                         str(sizes[r]), f"{(sizes[r] / sizes['reference'] - 1) * 100:+.3f} %",
                         f"{base_w / w:.2f}×", f"{base_c / c:.2f}×"])
        print(table(["row", "wall s", "user+sys s", "peak RSS MiB", "bytes", "size vs reference",
                     "wall × reference", "CPU × reference"], body, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
