#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side benchmark of `pkgtool patchelf` and Debian's patchelf on big libraries.

For each library, operation and tool, every run edits a fresh copy of the
library in a temporary directory on the same filesystem (copying is not timed),
runs the tool as a child process and records its wall time and peak RSS
(ru_maxrss from wait4, taken by the small C launcher bench/rusage_exec.c, see
there for why). The table shows medians over --runs. Every result is checked
(readelf -d shows the new RUNPATH/NEEDED and nothing else changed, readelf
prints no warnings, the first run's output loads with dlopen, both tools print
the same facts) so a fast but wrong result cannot pass.

Nothing is dropped from the page cache: all figures are warm-cache, and
neither tool fsyncs, so written data is measured up to the page cache.

See bench/README.md for the rows, the targets and how to run it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import mmap
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import Launcher, Sample, human_mb, human_ms, human_ratio, log, run_text, table

HERE = Path(__file__).resolve().parent
DEFAULT_PKGTOOL = "/work/main/build/tools/pkgtool/pkgtool"
DEFAULT_PATCHELF = "/usr/bin/patchelf"
CUDA_LIBS = ["/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libnccl.so.2"]
# Sizes (MB) of the generated stand-ins when the CUDA libraries are absent.
GENERATED_FALLBACK = ["gen:541", "gen:218"]

# Targets from the issue.
FIT_TIME_RATIO = 100.0  # in-place edits: >= 100x faster than patchelf
FIT_RSS_RATIO = 10.0  # ... with peak RSS <= 1/10 of patchelf's
GROW_TIME_RATIO = 1.0  # growth edits: no slower than patchelf
READ_LIMIT_MS = 10.0  # reading the dynamic section: under 10 ms

LONG_RPATH_LEN = 300
READ_RUNS = 9  # print rows are cheap for us: at least this many runs


# ---------------------------------------------------------------- helpers


@dataclass
class DynInfo:
    """What readelf -d says about a file's dynamic section."""

    needed: list[str] = field(default_factory=list)
    runpath: str | None = None
    rpath: str | None = None
    soname: str | None = None
    warnings: str = ""

    @property
    def search_path(self) -> str | None:
        return self.runpath if self.runpath is not None else self.rpath


_DYN_RE = re.compile(r"\((NEEDED|RUNPATH|RPATH|SONAME)\)\s+[^\[]*\[(.*)\]\s*$")


def read_dynamic(path: Path | str) -> DynInfo:
    """Independent reference reader: binutils readelf."""
    p = run_text(["readelf", "-dW", str(path)])
    info = DynInfo(warnings=p.stderr.strip())
    if p.returncode != 0:
        info.warnings = info.warnings or f"readelf exited {p.returncode}"
    for line in p.stdout.splitlines():
        m = _DYN_RE.search(line)
        if not m:
            continue
        tag, value = m.groups()
        if tag == "NEEDED":
            info.needed.append(value)
        elif tag == "RUNPATH":
            info.runpath = value
        elif tag == "RPATH":
            info.rpath = value
        elif tag == "SONAME":
            info.soname = value
    # Program and section headers must still parse cleanly too.
    q = run_text(["readelf", "-lSW", str(path)])
    if q.stderr.strip():
        info.warnings = (info.warnings + "\n" + q.stderr.strip()).strip()
    return info


def ldconfig_paths() -> dict[str, str]:
    """Library name -> path of the x86-64 (or native) entry in the ld.so cache."""
    out: dict[str, str] = {}
    p = run_text(["/sbin/ldconfig", "-p"])
    machine = platform.machine()
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if not m:
            continue
        name, flags, path = m.groups()
        native = machine.replace("_", "-") in flags or "64" in flags
        if name not in out and native:
            out[name] = path
    return out


def vmstat(key: str) -> int:
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            name, value = line.split()
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def compare_files(original: Path, result: Path) -> dict:
    """Bytes of `result` that differ from `original` (over their common prefix)."""
    chunk = 16 << 20
    page = 4096
    a_size, b_size = original.stat().st_size, result.stat().st_size
    common = min(a_size, b_size)
    changed_bytes = 0
    changed_pages = 0
    exact = True
    with open(original, "rb") as fa, open(result, "rb") as fb:
        if common == 0:
            return {"size_delta": b_size - a_size, "changed_bytes": 0, "changed_pages": 0}
        ma = mmap.mmap(fa.fileno(), a_size, access=mmap.ACCESS_READ)
        mb = mmap.mmap(fb.fileno(), b_size, access=mmap.ACCESS_READ)
        try:
            for off in range(0, common, chunk):
                end = min(off + chunk, common)
                if ma[off:end] == mb[off:end]:
                    continue
                for poff in range(off, end, page):
                    pend = min(poff + page, end)
                    pa, pb = ma[poff:pend], mb[poff:pend]
                    if pa == pb:
                        continue
                    changed_pages += 1
                    if changed_pages <= 4096:
                        changed_bytes += sum(1 for x, y in zip(pa, pb) if x != y)
                    else:
                        exact = False
        finally:
            ma.close()
            mb.close()
    return {
        "size_delta": b_size - a_size,
        "changed_bytes": changed_bytes if exact else None,
        "changed_pages": changed_pages,
    }


# ----------------------------------------------------------------- launcher


# ------------------------------------------------------------ the libraries


def generate_library(size_mb: int, workdir: Path) -> Path:
    """A shared library of about `size_mb` MB with NEEDED libdl.so.2 and RUNPATH $ORIGIN."""
    gen = workdir / f"gen-{size_mb}"
    gen.mkdir(parents=True, exist_ok=True)
    blob = gen / "blob.bin"
    log(f"generating a {size_mb} MB shared library in {gen} ...")
    subprocess.run(
        ["dd", "if=/dev/urandom", f"of={blob}", "bs=1M", f"count={size_mb}", "status=none"],
        check=True,
    )
    obj = gen / "blob.o"
    subprocess.run(
        ["objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64",
         "--rename-section", ".data=.rodata,alloc,load,readonly,data,contents",
         blob.name, obj.name],
        check=True, cwd=gen,  # relative names: the symbols are _binary_blob_bin_*
    )
    blob.unlink()
    stub = gen / "stub.c"
    stub.write_text(
        "#include <dlfcn.h>\n"
        "#include <math.h>\n"
        "extern const char _binary_blob_bin_start[];\n"
        "const char* bench_blob(void) { return _binary_blob_bin_start; }\n"
        "void* bench_open(const char* n) { return dlopen(n, RTLD_LAZY); }\n"
        "double bench_sqrt(double x) { return sqrt(x); }\n"
    )
    lib = gen / f"libbench{size_mb}.so.1"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(stub), str(obj),
         "-Wl,-z,noexecstack", "-Wl,--no-as-needed", "-l:libdl.so.2", "-lm",
         "-Wl,--enable-new-dtags",
         "-Wl,-rpath,$ORIGIN", f"-Wl,-soname,{lib.name}"],
        check=True,
    )
    obj.unlink()
    stub.unlink()
    return lib


# --------------------------------------------------------------- operations


@dataclass
class Operation:
    name: str  # row label
    kind: str  # "read", "fit" or "grow"
    args: list[str]  # patchelf-syntax options
    expect_needed: list[str] | None = None
    expect_runpath: str | None = None
    renamed: dict[str, str] = field(default_factory=dict)  # new NEEDED -> old, for dlopen


def fit_value(old: str) -> str:
    """A different value of exactly the same length (every byte changes)."""
    base = "/opt/bench/lib"
    new = (base * (len(old) // len(base) + 1))[: len(old)]
    if new == old:
        new = new[:-1] + ("x" if new[-1] != "x" else "y")
    return new


def long_value(n: int) -> str:
    s = "$ORIGIN"
    i = 0
    while len(s) < n:
        s += f":/opt/libpkg-bench/prefix-{i:03d}/lib"
        i += 1
    return s[:n]


def pick_needed(needed: list[str]) -> str | None:
    if "libdl.so.2" in needed:
        return "libdl.so.2"
    for n in needed:
        if ".so" in n and len(n.split(".so")[0]) >= 2:
            return n
    return None


def operations(info: DynInfo) -> tuple[list[Operation], list[str]]:
    ops: list[Operation] = []
    notes: list[str] = []
    ops.append(Operation("print-needed+rpath", "read", ["--print-needed", "--print-rpath"]))
    current = info.search_path
    if current:
        new = fit_value(current)
        ops.append(Operation(f"set-rpath fits ({len(new)} ch)", "fit", ["--set-rpath", new],
                             expect_needed=list(info.needed), expect_runpath=new))
    else:
        notes.append("no RUNPATH/RPATH: no set-rpath that fits in place (the grow row adds one)")
    grow = long_value(LONG_RPATH_LEN)
    ops.append(Operation(f"set-rpath grows ({len(grow)} ch)", "grow", ["--set-rpath", grow],
                         expect_needed=list(info.needed), expect_runpath=grow))
    old = pick_needed(info.needed)
    if old:
        stem, dot, rest = old.partition(".so")
        same = stem[:-1] + ("z" if stem[-1] != "z" else "y") + dot + rest
        ops.append(Operation(f"replace-needed fits ({old} → {same})", "fit",
                             ["--replace-needed", old, same],
                             expect_needed=[same if n == old else n for n in info.needed],
                             expect_runpath=current, renamed={same: old}))
        if old.startswith("lib") and len(old) > 4:
            suffix = old[3:]  # "dl.so.2": already in .dynstr as the tail of "libdl.so.2"
            ops.append(Operation(f"replace-needed fits, suffix ({old} → {suffix})", "fit",
                                 ["--replace-needed", old, suffix],
                                 expect_needed=[suffix if n == old else n for n in info.needed],
                                 expect_runpath=current, renamed={suffix: old}))
        longer = f"{stem}-3a7f9c1e{dot}{rest}"
        ops.append(Operation(f"replace-needed grows ({old} → {longer})", "grow",
                             ["--replace-needed", old, longer],
                             expect_needed=[longer if n == old else n for n in info.needed],
                             expect_runpath=current, renamed={longer: old}))
    else:
        notes.append("no NEEDED entry to replace")
    return ops, notes


# ------------------------------------------------------------------ tools


@dataclass
class Tool:
    key: str  # "patchelf", "ours", "ours-output", "ours-atomic", "inspect", "readelf"
    label: str

    def argv(self, a: "Bench", op: Operation, target: Path, out: Path) -> list[str]:
        if self.key == "patchelf":
            return [a.patchelf, *op.args, str(target)]
        if self.key == "ours":
            return [a.pkgtool, "patchelf", *op.args, str(target)]
        if self.key == "ours-output":
            return [a.pkgtool, "patchelf", *op.args, "--output", str(out), str(target)]
        if self.key == "ours-atomic":
            return [a.pkgtool, "patchelf", "--in-place-atomic", *op.args, str(target)]
        if self.key == "inspect":
            return [a.pkgtool, "inspect", str(target)]
        if self.key == "readelf":
            return ["/usr/bin/readelf", "-d", str(target)]
        raise AssertionError(self.key)


PATCHELF = Tool("patchelf", "patchelf")
OURS = Tool("ours", "pkgtool patchelf")
OURS_OUTPUT = Tool("ours-output", "pkgtool patchelf --output")
OURS_ATOMIC = Tool("ours-atomic", "pkgtool patchelf --in-place-atomic")
INSPECT = Tool("inspect", "pkgtool inspect")
READELF = Tool("readelf", "readelf -d (reference)")


@dataclass
class Cell:
    """All runs of one (library, operation, tool)."""

    lib: str
    op: Operation
    tool: Tool
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None
    checks: list[str] = field(default_factory=list)  # verification notes
    diff: dict | None = None  # first run's result vs the original
    inode_kept: bool | None = None

    @property
    def wall(self) -> float | None:
        return statistics.median(s.wall_s for s in self.samples) if self.samples else None

    @property
    def rss(self) -> float | None:
        return statistics.median(s.rss_kib for s in self.samples) if self.samples else None

    @property
    def verified(self) -> bool:
        return bool(self.samples) and self.error is None


# ------------------------------------------------------------------- bench


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.pkgtool = str(Path(args.pkgtool).resolve())
        self.patchelf = args.patchelf
        self.workdir = Path(tempfile.mkdtemp(prefix="elf-bench-", dir=args.tmpdir))
        self.launcher = Launcher(self.workdir)
        self.ld_cache = ldconfig_paths()
        self.cells: list[Cell] = []
        self.notes: dict[str, list[str]] = {}
        self.libs: list[Path] = []
        self.in_process: dict[str, dict] = {}
        self.in_process_note = ""
        self.load_ok: dict[str, bool] = {}  # the original loads: check the edited copies too

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    # The libraries: given paths, or generated stand-ins for "gen:SIZE_MB".
    def resolve_libs(self) -> None:
        specs = self.args.libs
        if not specs:
            present = [p for p in CUDA_LIBS if Path(p).is_file()]
            specs = present if len(present) == len(CUDA_LIBS) else GENERATED_FALLBACK
            if specs is GENERATED_FALLBACK:
                log("/usr/local/cuda libraries not found: generating stand-ins")
        for spec in specs:
            if spec.startswith("gen:"):
                self.libs.append(generate_library(int(spec[4:]), self.workdir))
            else:
                p = Path(spec)
                if not p.is_file():
                    raise SystemExit(f"error: {spec}: no such file")
                self.libs.append(p)
        lib_dev = {p.stat().st_dev for p in self.libs}
        if self.workdir.stat().st_dev not in lib_dev:
            log(f"note: temp dir {self.workdir} is not on the same filesystem as the libraries")

    def tools_for(self, op: Operation) -> list[Tool]:
        if op.kind == "read":
            return [PATCHELF, OURS, INSPECT, READELF]
        tools = [PATCHELF, OURS]
        if not self.args.quick:
            tools.append(OURS_OUTPUT)
        if self.args.atomic:
            tools.append(OURS_ATOMIC)
        return tools

    # Verification -------------------------------------------------------

    def expected_print(self, info: DynInfo) -> str:
        return (info.search_path or "") + "\n" + "".join(n + "\n" for n in info.needed)

    def verify_read(self, cell: Cell, s: Sample, info: DynInfo) -> str | None:
        if cell.tool.key in ("patchelf", "ours"):
            want = self.expected_print(info)
            if s.stdout != want:
                return f"printed {s.stdout!r}, readelf says {want!r}"
        elif cell.tool.key == "inspect":
            missing = [n for n in info.needed if n not in s.stdout]
            if info.search_path and info.search_path not in s.stdout:
                missing.append(info.search_path)
            if missing:
                return f"inspect output lacks {missing}"
        return None

    def verify_edit(self, cell: Cell, result: Path, first: bool) -> str | None:
        op = cell.op
        got = read_dynamic(result)
        if got.warnings:
            return f"readelf warnings: {got.warnings.splitlines()[0]}"
        if got.needed != op.expect_needed:
            return f"NEEDED {got.needed}, expected {op.expect_needed}"
        if got.search_path != op.expect_runpath:
            return f"RUNPATH/RPATH {got.search_path!r}, expected {op.expect_runpath!r}"
        if op.args[0] == "--set-rpath" and got.runpath is None:
            return "the search path is DT_RPATH, expected DT_RUNPATH (patchelf's default)"
        if first and self.load_ok.get(cell.lib):
            err = self.load_check(result, op)
            if err:
                return err
            cell.checks.append("dlopen ok")
        return None

    def load_check(self, result: Path, op: Operation) -> str | None:
        """dlopen the result; renamed NEEDED entries resolve through symlinks."""
        links = self.workdir / "links"
        shutil.rmtree(links, ignore_errors=True)
        links.mkdir()
        for new, old in op.renamed.items():
            target = self.ld_cache.get(old)
            if not target:
                return None  # cannot resolve the old name: skip the check
            (links / new).symlink_to(target)
        env = dict(os.environ, LD_LIBRARY_PATH=str(links))
        p = run_text([sys.executable, "-c", "import ctypes,sys; ctypes.CDLL(sys.argv[1])",
                      str(result)], env=env, timeout=120)
        shutil.rmtree(links, ignore_errors=True)
        if p.returncode != 0:
            lines = p.stderr.strip().splitlines()
            return f"dlopen failed: {lines[-1] if lines else p.returncode}"
        return None

    # Runs ---------------------------------------------------------------

    def run_read(self, lib: Path, op: Operation, info: DynInfo, runs: int) -> None:
        cells = [Cell(str(lib), op, t) for t in self.tools_for(op)]
        self.cells.extend(cells)
        for i in range(runs):
            order = cells[i % len(cells):] + cells[: i % len(cells)]
            for cell in order:
                if cell.error:
                    continue
                s = self.launcher.run(cell.tool.argv(self, op, lib, lib))
                if not s.ok:
                    cell.error = s.describe_failure()
                    continue
                err = self.verify_read(cell, s, info)
                if err:
                    cell.error = err
                    continue
                cell.samples.append(s)
        pe = next(c for c in cells if c.tool.key == "patchelf")
        ours = next(c for c in cells if c.tool.key == "ours")
        if pe.samples and ours.samples and pe.samples[0].stdout == ours.samples[0].stdout:
            ours.checks.append("same output as patchelf")

    def run_edit(self, lib: Path, op: Operation, runs: int) -> None:
        cells = [Cell(str(lib), op, t) for t in self.tools_for(op)]
        self.cells.extend(cells)
        runs_dir = self.workdir / "runs"
        for i in range(runs):
            order = cells[i % len(cells):] + cells[: i % len(cells)]
            for cell in order:
                if cell.error:
                    continue
                shutil.rmtree(runs_dir, ignore_errors=True)
                runs_dir.mkdir()
                target = runs_dir / lib.name
                out = runs_dir / ("out-" + lib.name)
                shutil.copy(lib, target)  # not timed
                before = target.stat()
                s = self.launcher.run(cell.tool.argv(self, op, target, out))
                try:
                    if not s.ok:
                        cell.error = s.describe_failure().replace(str(runs_dir), "$TMP")
                        continue
                    result = out if cell.tool.key == "ours-output" else target
                    if cell.tool.key == "ours-output":
                        after_in = target.stat()
                        if (after_in.st_size, after_in.st_mtime_ns) != (before.st_size,
                                                                       before.st_mtime_ns):
                            cell.error = "--output modified its input"
                            continue
                    first = not cell.samples
                    err = self.verify_edit(cell, result, first)
                    if err:
                        cell.error = err
                        continue
                    if first:
                        cell.diff = compare_files(lib, result)
                        if result == target:
                            cell.inode_kept = target.stat().st_ino == before.st_ino
                    cell.samples.append(s)
                finally:
                    shutil.rmtree(runs_dir, ignore_errors=True)

    def measure_in_process(self) -> None:
        """Time ElfFile::open + needed() + runpath() inside one process."""
        # Built with the project (bench/CMakeLists.txt), beside pkgtool.
        exe = Path(self.pkgtool).parents[2] / "bench" / "elf_read_bench"
        if not exe.exists():
            self.in_process_note = f"skipped: {exe} not found (configure with LIBPKG_BENCH=ON)"
            return
        p = run_text([str(exe), "200", *map(str, self.libs)])
        for line in p.stdout.splitlines():
            d = json.loads(line)
            self.in_process[d["file"]] = d

    def run(self) -> None:
        self.resolve_libs()
        runs = self.args.runs
        # Warm-up (untimed): the tools' own binaries into the page cache.
        for argv in ([self.patchelf, "--version"], [self.pkgtool, "--version"]):
            run_text(argv)
        t_start = time.monotonic()
        self.load_before = os.getloadavg()
        self.written_before = vmstat("nr_written")
        for lib in self.libs:
            info = read_dynamic(lib)
            if info.warnings:
                log(f"note: readelf warns about the original {lib}: {info.warnings}")
            ops, notes = operations(info)
            if not self.args.no_load_check:
                err = self.load_check(lib, Operation("original", "read", []))
                self.load_ok[str(lib)] = err is None
                if err:
                    notes.append(f"the original does not dlopen here ({err}): no dlopen checks")
            self.notes[str(lib)] = notes
            log(f"{lib} ({lib.stat().st_size / 1e6:.0f} MB): NEEDED {info.needed}, "
                f"RUNPATH {info.runpath!r}, RPATH {info.rpath!r}")
            for op in ops:
                t0 = time.monotonic()
                if op.kind == "read":
                    self.run_read(lib, op, info, max(runs, READ_RUNS))
                else:
                    self.run_edit(lib, op, runs)
                log(f"  {op.name}: {time.monotonic() - t0:.1f} s")
        self.measure_in_process()
        self.elapsed = time.monotonic() - t_start
        self.load_after = os.getloadavg()
        self.written_after = vmstat("nr_written")

    # Reporting ----------------------------------------------------------

    def find(self, lib: str, op: Operation, key: str) -> Cell | None:
        for c in self.cells:
            if c.lib == lib and c.op is op and c.tool.key == key:
                return c
        return None

    def result_text(self, c: Cell) -> str:
        if c.op.kind == "read":
            return "; ".join(c.checks) or "output matches readelf"
        parts = []
        if c.diff:
            d = c.diff
            if d["size_delta"]:
                parts.append(f"+{d['size_delta']} B appended" if d["size_delta"] > 0
                             else f"{d['size_delta']} B")
            else:
                parts.append("same size")
            if d["changed_bytes"] is not None:
                parts.append(f"{d['changed_bytes']} B changed in {d['changed_pages']} page(s)")
            else:
                parts.append(f"{d['changed_pages']} pages changed")
        if c.inode_kept is not None:
            parts.append("same inode" if c.inode_kept else "new inode")
        if c.tool.key == "ours-output":
            parts.append("new file")
        parts += c.checks
        return ", ".join(parts)

    def summary_rows(self) -> list[list[str]]:
        rows = []
        seen = []
        for c in self.cells:
            if (c.lib, c.op) in seen:
                continue
            seen.append((c.lib, c.op))
            pe = self.find(c.lib, c.op, "patchelf")
            ours = self.find(c.lib, c.op, "ours")
            extra = [self.find(c.lib, c.op, k) for k in ("ours-output", "ours-atomic")]
            for o, mode in [(ours, "default")] + [(e, e.tool.label) for e in extra if e]:
                rows.append(self.summary_row(c.lib, c.op, pe, o, mode == "default"))
        return rows

    def summary_row(self, lib: str, op: Operation, pe: Cell, ours: Cell, judged: bool):
        t_ratio = rss_ratio = None
        if pe.verified and ours.verified:
            t_ratio = pe.wall / ours.wall
            rss_ratio = pe.rss / ours.rss
        name = op.name if judged else f"{op.name} [{ours.tool.label.split()[-1]}]"
        if op.kind == "read":
            target = f"ours < {READ_LIMIT_MS:.0f} ms"
        elif op.kind == "fit":
            target = f"≥{FIT_TIME_RATIO:.0f}× time, ≥{FIT_RSS_RATIO:.0f}× RSS"
        else:
            target = "no slower"
        if not judged:
            target = "(extra row)"
        if not judged:
            verdict = "—" if ours.verified else f"— (fails: {ours.error or 'no result'})"
        elif not ours.verified:
            verdict = f"MISS ({ours.error or 'no result'})"
        elif not pe.verified:
            verdict = f"— (patchelf fails: {pe.error})"
        elif op.kind == "read":
            verdict = "PASS" if ours.wall * 1000 < READ_LIMIT_MS else "MISS"
        elif op.kind == "fit":
            verdict = "PASS" if t_ratio >= FIT_TIME_RATIO and rss_ratio >= FIT_RSS_RATIO else "MISS"
        else:
            verdict = "PASS" if t_ratio >= GROW_TIME_RATIO else "MISS"
        return [
            Path(lib).name, name,
            human_ms(pe.wall) if pe.verified else "fail",
            human_ms(ours.wall) if ours.verified else "fail",
            human_ratio(t_ratio),
            human_mb(pe.rss) if pe.verified else "fail",
            human_mb(ours.rss) if ours.verified else "fail",
            human_ratio(rss_ratio),
            target, verdict,
        ]

    def detail_rows(self) -> list[list[str]]:
        rows = []
        for c in self.cells:
            if c.verified:
                walls = [s.wall_s for s in c.samples]
                rows.append([Path(c.lib).name, c.op.name, c.tool.label, str(len(c.samples)),
                             human_ms(c.wall), f"{human_ms(min(walls))}–{human_ms(max(walls))}",
                             human_mb(c.rss), self.result_text(c)])
            else:
                rows.append([Path(c.lib).name, c.op.name, c.tool.label, str(len(c.samples)),
                             "fail", "", "", f"FAILED: {c.error}"])
        return rows

    def read_rows(self) -> list[list[str]]:
        rows = []
        for lib in self.libs:
            op = next((c.op for c in self.cells if c.lib == str(lib) and c.op.kind == "read"), None)
            keys = ("ours", "inspect", "readelf", "patchelf")
            proc = {k: self.find(str(lib), op, k) for k in keys}
            ip = self.in_process.get(str(lib))
            ip_txt = (f"{ip['median_us'] / 1000:.3f} ms (first {ip['first_us'] / 1000:.3f} ms)"
                      if ip and "median_us" in ip else (ip or {}).get("error", self.in_process_note
                                                                           or "—"))
            cells = []
            for k in ("ours", "inspect", "readelf", "patchelf"):
                c = proc[k]
                cells.append(human_ms(c.wall) + " ms" if c and c.verified else "fail")
            best = None
            if ip and "median_us" in ip:
                best = ip["median_us"] / 1000
            ok = proc["ours"] and proc["ours"].verified and proc["ours"].wall * 1000 < READ_LIMIT_MS
            verdict = "PASS" if ok else ("PASS (in-process)" if best is not None
                                         and best < READ_LIMIT_MS else "MISS")
            rows.append([lib.name, f"{lib.stat().st_size / 1e6:.0f} MB", ip_txt, *cells, verdict])
        return rows

    def machine_facts(self) -> list[tuple[str, str]]:
        fs = run_text(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", str(self.workdir)]).stdout
        fs = " ".join((fs.splitlines() or [""])[0].split())
        if not fs:
            fs = run_text(["stat", "-f", "-c", "%T", str(self.workdir)]).stdout.strip()
        cpu = ""
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        mem = ""
        try:
            kb = int(Path("/proc/meminfo").read_text().split()[1])
            mem = f"{kb / 1048576:.0f} GiB"
        except (OSError, ValueError, IndexError):
            pass
        written = (self.written_after - self.written_before) * os.sysconf("SC_PAGE_SIZE")
        pe_ver = run_text([self.patchelf, "--version"]).stdout.strip()
        ours_ver = run_text([self.pkgtool, "--version"]).stdout.strip()
        cmd = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
        return [
            ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
            ("command", cmd),
            ("machine", f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
                        f"{cpu}, {mem} RAM"),
            ("kernel", platform.release()),
            ("filesystem", f"{fs} (temp copies in {Path(self.workdir).parent})"),
            ("patchelf", f"{self.patchelf}: {pe_ver}"),
            ("pkgtool", f"{self.pkgtool}: {ours_ver}"),
            ("runs", f"median of {self.args.runs} runs per edit row"
                     f" (reads: {max(self.args.runs, READ_RUNS)}), fresh copy per run,"
                     " warm page cache, no fsync by either tool"),
            ("elapsed", f"{self.elapsed:.0f} s"),
            ("load average", "1/5/15 min: {:.2f} {:.2f} {:.2f} at start, {:.2f} {:.2f} {:.2f}"
                             " at end (other work on the machine adds noise)".format(
                                 *self.load_before, *self.load_after)),
            ("writeback", f"{written / 1e6:.0f} MB written to disk during the run"
                          " (whole system, /proc/vmstat nr_written)"),
        ]

    def report(self) -> str:
        md = self.args.markdown
        out = []
        facts = self.machine_facts()
        if md:
            out.append("| | |\n|---|---|")
            out += [f"| {k} | {'`' + v + '`' if k == 'command' else v} |" for k, v in facts]
        else:
            out += [f"{k:>10}: {v}" for k, v in facts]
        out.append("")
        out.append("Summary (medians; × = patchelf / ours, higher is better for ours):")
        out.append("")
        out.append(table(["library", "operation", "patchelf ms", "ours ms", "time ×",
                          "patchelf RSS MiB", "ours RSS MiB", "RSS ×", "target", "verdict"],
                         self.summary_rows(), md))
        out.append("")
        out.append(f"Reading the dynamic section (target: under {READ_LIMIT_MS:.0f} ms)."
                   " In-process = ElfFile::open + needed() + soname() + runpath(), median of 200,"
                   " fresh mmap each; the process columns are whole-process wall times"
                   " (an upper bound):")
        out.append("")
        out.append(table(["library", "size", "in-process",
                          "pkgtool patchelf --print-needed --print-rpath", "pkgtool inspect",
                          "readelf -d", "patchelf --print-needed --print-rpath", "verdict"],
                         self.read_rows(), md))
        out.append("")
        out.append("All rows (median wall ms, min–max, median peak RSS MiB; result of the first"
                   " run compared byte by byte with the original):")
        out.append("")
        out.append(table(["library", "operation", "tool", "runs", "median ms", "min–max ms",
                          "RSS MiB", "result"], self.detail_rows(), md))
        notes = [f"{Path(lib).name}: {n}" for lib, ns in self.notes.items() for n in ns]
        if notes:
            out.append("")
            out += [f"- {n}" if md else f"note: {n}" for n in notes]
        return "\n".join(out)

    def dump_json(self, path: str) -> None:
        data = {
            "facts": dict(self.machine_facts()),
            "in_process": self.in_process,
            "cells": [
                {"lib": c.lib, "op": c.op.name, "kind": c.op.kind, "args": c.op.args,
                 "tool": c.tool.key, "error": c.error, "diff": c.diff, "inode_kept": c.inode_kept,
                 "checks": c.checks,
                 "samples": [{"wall_s": s.wall_s, "rss_kib": s.rss_kib, "user_s": s.user_s,
                              "sys_s": s.sys_s} for s in c.samples]}
                for c in self.cells
            ],
        }
        Path(path).write_text(json.dumps(data, indent=1) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgtool", default=DEFAULT_PKGTOOL,
                    help="pkgtool binary (default: %(default)s)")
    ap.add_argument("--patchelf", default=DEFAULT_PATCHELF, help="patchelf (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=None,
                    help="runs per row, median reported (default 5; 1 with --quick);"
                         " print rows run at least 9 times")
    ap.add_argument("--libs", nargs="+", metavar="LIB",
                    help="libraries to edit; 'gen:SIZE_MB' generates one (default: the CUDA"
                         " libraries, or gen:541 gen:218 when /usr/local/cuda is absent)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--quick", action="store_true",
                    help="one run per edit row and no --output rows (a smoke test)")
    ap.add_argument("--atomic", action="store_true", help="add --in-place-atomic rows")
    ap.add_argument("--no-load-check", action="store_true",
                    help="skip the dlopen check of each edited library")
    ap.add_argument("--tmpdir", default=None,
                    help="where the per-run copies go (default: $TMPDIR or /tmp; keep it on the"
                         " libraries' filesystem)")
    ap.add_argument("--json", metavar="PATH", help="also write every sample as JSON")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 1 if args.quick else 5
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    for tool in (args.pkgtool, args.patchelf):
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            ap.error(f"{tool}: not an executable")
    bench = Bench(args)
    try:
        bench.run()
        if args.json:
            bench.dump_json(args.json)
        print(bench.report(), flush=True)
    finally:
        bench.close()
    misses = sum(1 for r in bench.summary_rows() if r[-1].startswith("MISS"))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
