#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Size cost of cutting a `.conda`'s pkg tar.zst into independent zstd frames.

Issue 18 asks whether a pkg-*.tar.zst made of concatenated zstd frames (which
every zstd reader accepts: a zstd file may hold several frames) loses more
than 0.5 % in size on the CUDA libraries against the one-frame stream the
conda writer makes today; the chunk cache would serve such frames only if it
does not. This script measures it on a tar of the same tree as
`archive_bench.py` (the largest CUDA libraries up to --min-gb, plus the CUDA
headers as many small files), at the writer's settings: level --level (19,
the conda writer's default), zstd's multithreaded mode with --threads
workers, overlap log 3 (`conda/write.cpp`), content checksum.

Variants (each the whole tar, frames concatenated):
  one         one frame over the whole tar (today's writer)
  per-file    a frame per tar member (its header, data and padding): the
              issue's "frames cut at file boundaries"
  cached      what a cached path would write: the data of each file of at
              least --large-mib starts its own frames, cut every --frame-mib
              (a grafted library's frames then depend only on its bytes);
              everything between (headers, small files) in one frame per
              stretch

Every variant's frames are decompressed again (python3-zstandard) and must
give the tar back byte for byte. Sizes are exact; CPU is this process's
user+sys per variant (zstandard releases the GIL in its C workers).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import resource
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from archive_bench import make_wheel_tree  # noqa: E402
from benchlib import log  # noqa: E402


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def write_tar(tree: Path, out: Path) -> list[tuple[int, int, int]]:
    """Sorted ustar/pax tar of `tree`; returns (header start, data start, data
    size) per member, in order."""
    members = sorted(p for p in tree.rglob("*") if p.is_file())
    spans = []
    with open(out, "wb") as f, tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in members:
            info = tar.gettarinfo(str(p), arcname=str(p.relative_to(tree)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 1700000000
            start = f.tell()
            with open(p, "rb") as src:
                tar.addfile(info, src)
            end = f.tell()
            data_start = end - ((info.size + 511) // 512) * 512
            spans.append((start, data_start, info.size))
    return spans


def cuts_per_file(spans: list[tuple[int, int, int]], total: int) -> list[int]:
    return sorted({0, total} | {s for s, _, _ in spans})


def cuts_cached(spans, total, large: int, frame: int) -> list[int]:
    cuts = {0, total}
    for _, data, size in spans:
        if size < large:
            continue
        for off in range(0, size, frame):
            cuts.add(data + off)
        cuts.add(data + size)
    return sorted(cuts)


def compress_frames(tar: Path, cuts: list[int], params: zstandard.ZstdCompressionParameters) -> tuple[int, str]:
    """Compresses each [cut_i, cut_i+1) as its own frame; returns the total
    size and the SHA-256 of the decompressed concatenation."""
    size = 0
    check = hashlib.sha256()
    dctx = zstandard.ZstdDecompressor()
    with open(tar, "rb") as f:
        for a, b in zip(cuts, cuts[1:]):
            f.seek(a)
            data = f.read(b - a)
            cctx = zstandard.ZstdCompressor(compression_params=params)
            frame = cctx.compress(data)
            size += len(frame)
            back = dctx.decompress(frame, max_output_size=len(data))
            check.update(back)
    return size, check.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-gb", type=float, default=1.25)
    ap.add_argument("--level", type=int, default=19)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--large-mib", type=float, default=8)
    ap.add_argument("--frame-mib", type=float, default=32)
    ap.add_argument("--variants", default="one,per-file,cached")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="conda-frames-", dir=args.workdir))
    try:
        tree, source, total_files_bytes, files = make_wheel_tree(work, int(args.min_gb * 1e9))
        tar = work / "pkg.tar"
        spans = write_tar(tree, tar)
        total = tar.stat().st_size
        want = hashlib.sha256(tar.read_bytes()).hexdigest()
        params = zstandard.ZstdCompressionParameters.from_level(
            args.level, threads=args.threads, overlap_log=3, write_checksum=1,
            write_content_size=1)
        variants = {
            "one": [0, total],
            "per-file": cuts_per_file(spans, total),
            "cached": cuts_cached(spans, total, int(args.large_mib * 2**20), int(args.frame_mib * 2**20)),
        }
        print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs; "
              f"{platform.release()}; load {os.getloadavg()[0]:.1f}; python3-zstandard {zstandard.__version__} "
              f"(libzstd {zstandard.ZSTD_VERSION}); tar {total} bytes, {files} files from {source}; "
              f"level {args.level}, {args.threads} workers, overlap log 3, checksum")
        print("| variant | frames | bytes | vs one | CPU s |")
        print("|---|---|---|---|---|")
        base = None
        for name in args.variants.split(","):
            cuts = variants[name]
            t0 = cpu_seconds()
            size, digest = compress_frames(tar, cuts, params)
            cpu = cpu_seconds() - t0
            if digest != want:
                raise SystemExit(f"error: variant {name}: frames do not decompress to the tar")
            if name == "one":
                base = size
            rel = f"{(size / base - 1) * 100:+.3f} %" if base else "—"
            print(f"| {name} | {len(cuts) - 1} | {size} | {rel} | {cpu:.1f} |", flush=True)
            log(f"{name}: {size} bytes, {cpu:.1f} s CPU, load {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
