# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the benchmark scripts: timing launcher, formatting."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_text(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# The pkgtool of this checkout's default build directory.
BUILT_PKGTOOL = str(HERE.parent / "build/tools/pkgtool/pkgtool")


def side_by_side_args(doc: str, size_mb: int, runs: int) -> argparse.ArgumentParser:
    """The options every pkgtool-against-another-tool bench takes: --pkgtool,
    --size-mb of the generated input, --runs (the table shows medians),
    --tmpdir and --markdown."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pkgtool", default=BUILT_PKGTOOL)
    ap.add_argument("--size-mb", type=int, default=size_mb)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--markdown", action="store_true")
    return ap


def missing_tool(*tools: str) -> str | None:
    """The first of `tools` not on PATH (nor an executable path), if any."""
    return next((t for t in tools if not shutil.which(t)), None)


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds (perf_counter around the child: /usr/bin/time's %e has
    10 ms resolution, too coarse here) and peak RSS KiB (/usr/bin/time %M)
    of one run of `argv`; a failed run ends the bench with its stderr."""
    start = time.perf_counter()
    p = run_text(["/usr/bin/time", "-f", "%M", *argv])
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed:\n{p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])


def medians(results: dict[str, list[tuple[float, int]]]) -> dict[str, tuple[float, float]]:
    """Per row name, the median wall seconds and median peak RSS KiB of its
    timed() samples."""
    return {k: (statistics.median(w for w, _ in v), statistics.median(r for _, r in v))
            for k, v in results.items()}


def machine_line() -> str:
    """"date: ... UTC; N CPUs; load average a b c": the machine's state,
    printed with every result (the machine is shared)."""
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; "
            f"load average {load}")


def shared_machine_line() -> str:
    """machine_line() with the kernel release, for the benches that record
    it: "date: ... UTC; N CPUs; RELEASE; load average a b c (shared
    machine)"."""
    la = os.getloadavg()
    return (f"date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs; "
            f"{platform.release()}; load average {la[0]:.1f} {la[1]:.1f} {la[2]:.1f} (shared machine)")


def require_tools(*tools: str) -> None:
    """Ends the bench (exit 2, "error: TOOL: not found") unless every tool
    is on PATH or an executable path."""
    tool = missing_tool(*tools)
    if tool:
        print(f"error: {tool}: not found", file=sys.stderr)
        raise SystemExit(2)


def human_mb(kib: float) -> str:
    mb = kib / 1024.0
    return f"{mb:.1f}" if mb < 100 else f"{mb:.0f}"


def human_ms(seconds: float) -> str:
    ms = seconds * 1000.0
    if ms < 10:
        return f"{ms:.2f}"
    if ms < 100:
        return f"{ms:.1f}"
    return f"{ms:.0f}"


def human_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    if r >= 100:
        return f"{r:.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


@dataclass
class Sample:
    wall_s: float
    rss_kib: int
    user_s: float
    sys_s: float
    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return os.WIFEXITED(self.status) and os.WEXITSTATUS(self.status) == 0

    def describe_failure(self) -> str:
        if os.WIFSIGNALED(self.status):
            what = f"killed by signal {os.WTERMSIG(self.status)}"
        else:
            what = f"exit {os.WEXITSTATUS(self.status)}"
        msg = self.stderr.strip().splitlines()
        return what + (f": {msg[0]}" if msg else "")


class Launcher:
    """Runs a command under rusage_exec and returns a Sample."""

    def __init__(self, workdir: Path):
        self.exe = workdir / "rusage_exec"
        self.result = workdir / "rusage_exec.out"
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise SystemExit("error: a C compiler (cc) is needed to build bench/rusage_exec.c")
        p = run_text([cc, "-O2", "-o", str(self.exe), str(HERE / "rusage_exec.c")])
        if p.returncode != 0:
            raise SystemExit(f"error: cannot build rusage_exec:\n{p.stderr}")

    def run(self, argv: list[str], env: dict | None = None) -> Sample:
        self.result.unlink(missing_ok=True)
        p = subprocess.run(
            [str(self.exe), str(self.result), *argv], capture_output=True, text=True, env=env
        )
        if p.returncode != 0 or not self.result.exists():
            raise RuntimeError(f"rusage_exec failed ({p.returncode}): {p.stderr.strip()}")
        wall_ns, rss, ut, st, status = self.result.read_text().split()
        return Sample(
            wall_s=int(wall_ns) / 1e9,
            rss_kib=int(rss),
            user_s=int(ut) / 1e6,
            sys_s=int(st) / 1e6,
            status=int(status),
            stdout=p.stdout,
            stderr=p.stderr,
        )


def cold_run(launcher: Launcher, argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of argv run in cwd with the chunk cache off
    (LIBPKG_NO_CACHE=1: every run cold); exits with its error on failure."""
    env = dict(os.environ, LIBPKG_NO_CACHE="1")
    old = os.getcwd()
    os.chdir(cwd)
    try:
        s = launcher.run(argv, env=env)
    finally:
        os.chdir(old)
    if not s.ok:
        raise SystemExit(f"error: {' '.join(argv[:3])} failed: {s.describe_failure()}\n{s.stdout}\n{s.stderr}")
    return s.wall_s, s.user_s + s.sys_s


def rezip_with_zipfile(wheel: Path) -> None:
    """The wheel rewritten in place by Python's zipfile at deflate level 6,
    one stream per member (as setuptools' bdist_wheel writes wheels)."""
    import zipfile

    tmp = wheel.with_suffix(".zipfile")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as dst:
        for info in src.infolist():
            out = zipfile.ZipInfo(info.filename, info.date_time)
            out.external_attr = info.external_attr
            out.compress_type = zipfile.ZIP_DEFLATED
            with src.open(info) as f, dst.open(out, "w", force_zip64=info.file_size > 2**31) as g:
                shutil.copyfileobj(f, g, 1 << 20)
    tmp.replace(wheel)


def write_dist_info(tree: Path, name: str, version: str, generator: str,
                    pytag: str | None = None) -> str:
    """NAME-VERSION.dist-info (METADATA, WHEEL) for `pytag` ("cp312"; this
    Python by default) on linux_x86_64; returns the tag."""
    info = tree / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    pytag = pytag or f"cp{sys.version_info[0]}{sys.version_info[1]}"
    tag = f"{pytag}-{pytag}-linux_x86_64"
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: false\n"
                                f"Tag: {tag}\n")
    return tag


# --- pkgtool repair against the pipeline it replaces (splice_repair_bench,
# macho_repair_bench) ---

def repair_bench_args(doc: str) -> argparse.ArgumentParser:
    """side_by_side_args (a 400 MiB input, 3 runs) plus --baseline-pkgtool
    (an older build timed alongside) and --input pack|zipfile (who writes the
    input wheel: `pkgtool wheel pack`, or Python's zipfile afterwards)."""
    ap = side_by_side_args(doc, 400, 3)
    ap.add_argument("--baseline-pkgtool", default=None, help="an older pkgtool to time alongside")
    ap.add_argument("--input", choices=("pack", "zipfile"), default="pack",
                    help="who writes the input wheel (see above)")
    return ap


def rewrite_input(wheel: Path, how: str) -> str:
    """Applies --input to the built wheel (re-zipped by Python's zipfile at
    level 6 for "zipfile") and returns who wrote it, for the header line."""
    if how == "zipfile":
        log("re-zipping it with Python's zipfile (level 6) ...")
        rezip_with_zipfile(wheel)
        return "Python zipfile, level 6"
    return "pkgtool wheel pack"


def median_at(samples: list[tuple[float, float]], i: int) -> float:
    """The median of field i (0 wall s, 1 CPU s) of cold_run() samples."""
    return statistics.median(x[i] for x in samples)


# The header of wall_cpu_row()'s table.
WALL_CPU_HEADER = ["", "wall s (median)", "runs", "CPU s (median)", "runs", "output MB",
                   "speed-up (wall)", "speed-up (CPU)"]


def wall_cpu_row(name: str, samples: list[tuple[float, float]], size: int,
                 ref: list[tuple[float, float]]) -> list[str]:
    """One row of WALL_CPU_HEADER: cold_run() samples (median and each run,
    wall and CPU), the output's size in bytes, and the speed-up of the
    median against `ref`'s (the pipeline's samples)."""
    return [name, f"{median_at(samples, 0):.2f}", " ".join(f"{x[0]:.2f}" for x in samples),
            f"{median_at(samples, 1):.2f}", " ".join(f"{x[1]:.2f}" for x in samples), f"{size / 1e6:.1f}",
            human_ratio(median_at(ref, 0) / median_at(samples, 0)),
            human_ratio(median_at(ref, 1) / median_at(samples, 1))]


# --- the torch-like CUDA wheel and the CUDA 13.0 roots (cuda_bench,
# nightly_cache_bench) ---

CUDA = Path("/usr/local/cuda")
# What torch/_C links from the toolkit.
LINKED = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9", "libnvrtc.so.13",
          "libcupti.so.13", "libnccl.so.2"]


def cuda_wheel(work: Path, pkgtool: str, py: str, generator: str, epoch: str) -> Path:
    """A torch-like wheel for CPython `py` ("3.12") built under work:
    torch/_C.cpython-3XY-x86_64-linux-gnu.so links LINKED from CUDA (the
    version compiled in, so each Python's extension differs),
    torch/lib/libtorch_global_deps.so, torch/__init__.py; packed by
    `pkgtool wheel pack` at SOURCE_DATE_EPOCH=epoch, the chunk cache off."""
    tag = "cp" + py.replace(".", "")
    tree = work / f"tree-{tag}"
    (tree / "torch/lib").mkdir(parents=True)
    src = work / f"c-{tag}.c"
    src.write_text("int cudaRuntimeGetVersion(int*);\n"
                   f'const char* built_for = "CPython {py}";\n'
                   "int probe(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n")
    ext = f"_C.cpython-{tag[2:]}-x86_64-linux-gnu.so"
    p = run_text(["gcc", "-O1", "-fPIC", "-shared", "-o", str(tree / "torch" / ext), str(src),
                  "-Wl,--no-as-needed", f"-L{CUDA / 'lib64'}"] + [f"-l:{n}" for n in LINKED])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build {ext}:\n{p.stderr}")
    (tree / "torch/__init__.py").write_text("")
    p = run_text(["gcc", "-shared", "-fPIC", "-Wl,-soname,libtorch_global_deps.so", "-o",
                  str(tree / "torch/lib/libtorch_global_deps.so"), "-x", "c", "/dev/null"])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build libtorch_global_deps.so:\n{p.stderr}")
    write_dist_info(tree, "torch", "2.9.0", generator, pytag=tag)
    out = work / f"input-{tag}"
    out.mkdir()
    p = run_text([pkgtool, "wheel", "pack", str(tree), "-d", str(out), "--no-cache"],
                 env=dict(os.environ, SOURCE_DATE_EPOCH=epoch))
    if p.returncode != 0:
        raise SystemExit(f"error: pkgtool wheel pack: {p.stderr}")
    return next(out.glob("*.whl"))


def cuda13_standin(work: Path, pkgtool: str) -> Path:
    """work/standin: tiny stand-ins for the CUDA 13.0 table's libraries the
    toolkit at CUDA lacks (tests/driver/common/cuda_standin.py), the second
    --cuda-root of the manywheel runs."""
    sys.path.insert(0, str(HERE.parent / "tests/driver/common"))
    import cuda_standin

    libs = cuda_standin.table_libraries(pkgtool, "13.0")
    lacking = [lib for lib in libs
               if not (Path(lib["path"]).exists() or (CUDA / "lib64" / Path(lib["path"]).name).exists())]
    standin = work / "standin"
    cuda_standin.make_root(standin, lacking, "13.0")
    return standin


def driver_env(epoch: str) -> dict:
    """The drivers' environment: this one without LD_LIBRARY_PATH (the
    tables' roots say where CUDA is), SOURCE_DATE_EPOCH=epoch."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["SOURCE_DATE_EPOCH"] = epoch
    return env


def planned_grafts(argv: list[str], env: dict) -> list[dict]:
    """The libraries a manywheel command line would graft: the grafts
    (source, ...) of its plan with --dry-run --json added."""
    dry = run_text(argv + ["--dry-run", "--json"], env=env)
    if dry.returncode != 0:
        raise SystemExit(f"error: manywheel --dry-run: {dry.stderr}")
    return json.loads(dry.stdout)["plan_detail"]["grafts"]


def table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in [header] + rows]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])
