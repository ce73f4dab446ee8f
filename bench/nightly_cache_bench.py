#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A nightly of 4 Python versions x 2 CUDA configurations through the
manywheel driver, run by `pkgtool nightly run`, with and without the chunk
cache (issue 18).

Input per Python version: the torch-like wheel of cuda_bench.py (benchlib.cuda_wheel: torch/_C links
this machine's libcudart, libcublas, libcublasLt, libcudnn, libnvrtc, libcupti
and libnccl), tagged cp3XY with the extension named for that Python; the
extensions differ per version (the version is compiled in), the CUDA
libraries they pull in do not. The driver grafts the CUDA 13.0 table's
libraries (25, about 1.46 GB; stand-ins for the few the toolkit lacks).

The two CUDA configurations: this machine has one toolkit (13.0). The
first configuration grafts it from /usr/local/cuda; the second from a copy
in which one byte is changed every 256 KiB inside every section the driver
does not read (code, read-only data, device code), so that no zip chunk of
it equals one of the first: what two CUDA versions (cu126, cu130) look like
to the cache. Both use the 13.0 table.

Each nightly is 8 jobs in `pkgtool nightly run -j QUEUES` queues (default:
the number of cores, the runner's own default), listed configuration by
configuration (all Pythons of the first, then of the second: the order a
user writes; the runner, not this script, makes jobs running at once be of
different configurations), each job `manywheel --wheel
W --build-env "manywheel 3.X cu130" --cuda-root ROOT --cuda-root STANDIN
--level 6 -j DRIVER_JOBS --no-check --json`. Variants, interleaved per run:
  no cache      every job --no-cache
  cache, cold   one fresh --cache-dir shared by the 8 jobs (the first job
                of each configuration fills it, the other three hit)
  cache, warm   the cold nightly's directory again (tomorrow's nightly)
(`--variants` picks some, e.g. `--variants "cache, cold"` to compare the
cold nightly's hits and misses between two builds' runners.)
Wall time and user+sys CPU of the whole runner (wait4 through
bench/rusage_exec.c: the runner waits for its jobs, so their CPU is in
it). Every job must succeed, and each job's wheel must be byte-identical
in all variants. The nightly's outputs are deleted after each run (8 GB).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from archive_bench import sha256_file  # noqa: E402
from benchlib import (CUDA, Launcher, cuda13_standin, cuda_wheel, driver_env, log, planned_grafts,  # noqa: E402
                      run_text, shared_machine_line, table)

EPOCH = "1700000000"
DATE = "2026_11_27"
# Sections the driver reads or edits (dynamic linking, versions, notes, the
# tables the loader uses): never changed in the second configuration.
KEEP_PREFIXES = (".dyn", ".gnu", ".rel", ".hash", ".note", ".interp", ".got", ".plt", ".init",
                 ".fini", ".eh_frame_hdr", ".tdata", ".tbss", ".ctors", ".dtors", ".preinit")
STEP = 256 << 10


def sections(path: Path) -> list[tuple[str, int, int]]:
    """(name, file offset, size) of the PROGBITS sections, from readelf."""
    out = run_text(["readelf", "-SW", str(path)]).stdout
    result = []
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[0].startswith("[") and parts[2] == "PROGBITS":
            result.append((parts[1], int(parts[4], 16), int(parts[5], 16)))
    return result


def perturbed_copy(src: Path, dst: Path) -> int:
    """Copies `src` to `dst` with one byte flipped every STEP bytes inside
    every section the driver does not read; returns the flips."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    flips = 0
    with open(dst, "r+b") as f:
        for name, off, size in sections(src):
            if name.startswith(KEEP_PREFIXES) or size == 0:
                continue
            for pos in range(off + min(size - 1, 64), off + size, STEP):
                f.seek(pos)
                b = f.read(1)
                f.seek(pos)
                f.write(bytes([b[0] ^ 0x5A]))
                flips += 1
    return flips


def vmstat() -> dict[str, int]:
    """/proc/vmstat's counters: the page cache's part of a run's system time
    (pages allocated, faulted, written back) shows in their deltas."""
    try:
        with open("/proc/vmstat") as f:
            return {k: int(v) for k, v in (line.split() for line in f)}
    except OSError:
        return {}


def vmstat_delta(before: dict[str, int], after: dict[str, int]) -> str:
    if not before or not after:
        return "no /proc/vmstat"
    d = lambda k: after.get(k, 0) - before.get(k, 0)  # noqa: E731
    alloc = sum(d(k) for k in after if k.startswith("pgalloc_"))
    return (f"{alloc * 4096 / 1e9:.1f} GB of pages allocated, {d('pgfault')} faults, "
            f"{d('pgpgout') * 1024 / 1e9:.1f} GB written out")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(HERE.parent / "build"), help="libpkg build directory")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queues", type=int, default=os.cpu_count() or 1, help="pkgtool nightly run -j")
    ap.add_argument("--driver-jobs", type=int, default=1, help="manywheel -j of each job")
    ap.add_argument("--pythons", default="3.10,3.11,3.12,3.13")
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--variants", default="no cache;cache, cold;cache, warm",
                    help="';'-separated subset of the variants (warm needs cold)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    # Absolute: the runner starts jobs in the nightly's directory.
    pkgtool = str(Path(args.build).resolve() / "tools/pkgtool/pkgtool")
    manywheel = str(Path(args.build).resolve() / "drivers/manywheel/manywheel")
    if not (CUDA / "lib64/libcudart.so.13").exists():
        raise SystemExit(f"error: no CUDA 13 toolkit at {CUDA}")
    pythons = args.pythons.split(",")
    with tempfile.TemporaryDirectory(prefix="nightly-cache-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        launcher = Launcher(work)
        wheels = {py: cuda_wheel(work, pkgtool, py, "nightly_cache_bench", EPOCH) for py in pythons}
        standin = cuda13_standin(work, pkgtool)
        env = driver_env(EPOCH)
        # The second configuration's root: the grafted toolkit files, changed.
        grafts = planned_grafts([manywheel, "--no-env", "--wheel", str(wheels[pythons[0]]), "--build-env",
                                 f"manywheel {pythons[0]} cu130", "--cuda-root", str(CUDA), "--cuda-root",
                                 str(standin), "-o", str(work / "dry")], env)
        other = work / "cuda-other"
        flips, size = 0, 0
        for g in grafts:
            src = Path(g["source"])
            size += src.stat().st_size
            if str(src).startswith(str(CUDA) + "/"):
                flips += perturbed_copy(src.resolve(), other / src.relative_to(CUDA))
        log(f"{len(grafts)} libraries, {size / 1e9:.2f} GB per job; second configuration: {flips} bytes changed")
        roots = {"cuA": [str(CUDA), str(standin)], "cuB": [str(other), str(standin)]}

        def jobs_file(variant: str, cache: Path | None) -> Path:
            jobs = []
            # Configuration-major, as a user lists them. A runner that starts
            # jobs in list order starts two Pythons of one configuration at
            # once on its queues, and both miss (the cache holds no lock while
            # compressing); the runner interleaves configurations ("chunk
            # groups", docs/nightly.md) since branch joborder.
            for cuda, root in roots.items():
                for py in pythons:
                    argv = [manywheel, "--no-env", "--wheel", str(wheels[py]), "--build-env",
                            f"manywheel {py} cu130", "--level", "6", "-j", str(args.driver_jobs),
                            "--no-check", "-o", "{artifact_dir}", "--json"]
                    for r in root:
                        argv += ["--cuda-root", r]
                    argv += ["--cache-dir", str(cache)] if cache else ["--no-cache"]
                    name = f"manywheel-py{py.replace('.', '_')}-{cuda}"
                    jobs.append({"name": name,
                                 "argv": ["sh", "-c", " ".join(f"'{a}'" for a in argv) + " > {summary}"],
                                 "env": {"SOURCE_DATE_EPOCH": EPOCH},
                                 "config": {"package_type": "manywheel", "python": py, "accelerator": cuda}})
            path = work / f"jobs-{variant}.json"
            path.write_text(json.dumps({"jobs": jobs}))
            return path

        all_variants = ["no cache", "cache, cold", "cache, warm"]
        variants = [v.strip() for v in args.variants.split(";")]
        if any(v not in all_variants for v in variants) or ("cache, warm" in variants
                                                             and "cache, cold" not in variants):
            raise SystemExit(f"error: --variants: a subset of {all_variants} (warm needs cold)")
        samples = {v: [] for v in variants}
        cache_counts = {v: [] for v in variants}
        reference: dict[str, str] = {}
        for i in range(args.runs):
            cache = work / f"cache-{i}"
            order = [v for v in (all_variants if i % 2 == 0 else ["cache, cold", "cache, warm", "no cache"])
                     if v in variants]
            for v in order:
                root = work / f"nightly-{i}-{v.replace(', ', '-').replace(' ', '-')}"
                jf = jobs_file(v, None if v == "no cache" else cache)
                if v == "cache, cold":
                    shutil.rmtree(cache, ignore_errors=True)
                load = os.getloadavg()[0]
                vm = vmstat()
                s = launcher.run([pkgtool, "nightly", "run", "--jobs", str(jf), "--root", str(root),
                                  "--date", DATE, "-j", str(args.queues), "--no-publish"], env=env)
                vm_run = vmstat_delta(vm, vmstat())
                night = root / DATE
                if not s.ok:
                    logs = "".join(p.read_text()[-1500:] for p in (night / "logs/failed").glob("*.log"))
                    raise SystemExit(f"error: nightly ({v}) failed: {s.describe_failure()}\n{logs}")
                hits = misses = 0
                for summ in sorted((night / "summaries").glob("*.json")):
                    doc = json.loads(summ.read_text())
                    c = doc.get("cache") or {}
                    hits += c.get("hits", 0)
                    misses += c.get("misses", 0)
                    for art in doc.get("artifacts", []):
                        key = f"{summ.stem}/{Path(art['path']).name}"
                        d = sha256_file(Path(art["path"]))
                        if reference.setdefault(key, d) != d:
                            raise SystemExit(f"error: {key} differs in variant {v}, run {i}")
                # When each job ran, from the runner's states: which jobs
                # overlapped.
                states = [json.loads(p.read_text()) for p in (night / "state").glob("*.json")]
                t0 = min(st["start"] for st in states)
                secs = lambda ts: (datetime.datetime.fromisoformat(ts.rstrip("Z"))  # noqa: E731
                                   - datetime.datetime.fromisoformat(t0.rstrip("Z"))).total_seconds()
                log(f"run {i} {v}: " + ", ".join(
                    f"{st['job']} {secs(st['start']):.0f}-{secs(st['end']):.0f} s"
                    for st in sorted(states, key=lambda st: st["start"])))
                samples[v].append(s)
                cache_counts[v].append((hits, misses))
                log(f"run {i} {v}: {s.wall_s:.1f} s wall, {s.user_s + s.sys_s:.1f} s CPU ({s.sys_s:.1f} s system), "
                    f"{hits} hits / {misses} misses, load {load:.1f} -> {os.getloadavg()[0]:.1f}; "
                    f"{vm_run}")
                shutil.rmtree(root)
            shutil.rmtree(cache, ignore_errors=True)
        if len(reference) != 2 * len(pythons):
            raise SystemExit(f"error: expected {2 * len(pythons)} wheels, saw {len(reference)}")
        print(f"{shared_machine_line()}; {len(pythons)} Pythons x 2 CUDA "
              f"configurations; {len(grafts)} libraries, {size / 1e9:.2f} GB grafted per job; "
              f"nightly run -j {args.queues}, manywheel -j {args.driver_jobs}; runs {args.runs} (medians)")
        med = lambda xs: statistics.median(xs)  # noqa: E731
        base = "no cache" if "no cache" in variants else None
        base_w = med([s.wall_s for s in samples[base]]) if base else None
        base_c = med([s.user_s + s.sys_s for s in samples[base]]) if base else None
        body = []
        for v in variants:
            w = med([s.wall_s for s in samples[v]])
            c = med([s.user_s + s.sys_s for s in samples[v]])
            h, m = cache_counts[v][0]
            body.append([v, f"{w:.1f}", f"{c:.1f}", f"{h} / {m}" if v != "no cache" else "—",
                         f"{base_w / w:.2f}×" if base else "—", f"{base_c / c:.2f}×" if base else "—",
                         " ".join(f"{s.wall_s:.0f}/{s.user_s + s.sys_s:.0f}" for s in samples[v])])
        print(table([f"nightly ({2 * len(pythons)} jobs)", "wall s", "user+sys s", "chunk hits / misses", "wall × no cache",
                     "CPU × no cache", "per run wall/CPU s"], body, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
