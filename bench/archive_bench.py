#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side benchmark of pkgtool's archive commands and the tools they replace.

Rows (each a median over --runs, both tools in the same run, warm page cache):
  wheel pack      `python3 -m wheel pack` vs `pkgtool wheel pack`, same deflate
                  level (6, zipfile's default), on a >= 1 GB wheel tree made of
                  the largest real shared libraries found (the CUDA toolkit's
                  when present) plus its headers as many small files.
  wheel repack    one member changed in an existing wheel: `wheel unpack` +
                  edit + `wheel pack` vs `pkgtool wheel update` (untouched
                  members copied raw), and vs `pkgtool wheel unpack` + edit +
                  `pkgtool wheel pack --reuse OLD` (raw copy of members whose
                  content is unchanged).
  conda pack      `cph create` (conda-package-handling, through its Python API so
                  the zstd level can be set) vs `pkgtool conda pack --format
                  conda`, same zstd level, same tree (the info/ that pkgtool
                  generated is given to cph too).

Every output is checked before its time counts: wheels are read back with
Python's zipfile (every member's CRC) and `wheel`'s RECORD rules through
`pkgtool wheel verify`; the repacked wheel must contain the edit; conda
packages are extracted with cph and compared file by file with the tree.
Peak RSS comes from wait4 through bench/rusage_exec.c (see there).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import Launcher, Sample, human_mb, human_ms, human_ratio, log, run_text, table

HERE = Path(__file__).resolve().parent
DEFAULT_PKGTOOL = str(HERE.parent / "build/tools/pkgtool/pkgtool")
PYTHON = "/usr/bin/python3"
CUDA_LIB = Path("/usr/local/cuda/lib64")
CUDA_INCLUDE = Path("/usr/local/cuda/include")
EPOCH = "1700000000"

# Targets from the archive issue.
PACK_RATIO = 4.0  # wheel pack >= 4x faster than `wheel pack`
PACK_SIZE_SLACK = 0.01  # ... output within 1 % of its size
REPACK_RATIO = 20.0  # one changed member >= 20x faster than unpack + pack
CONDA_RATIO = 2.0  # .conda >= 2x faster than cph at the same zstd level


@dataclass
class Row:
    name: str
    ref_label: str
    ours_label: str
    target: float | None
    ref: list[Sample] = field(default_factory=list)
    ours: list[Sample] = field(default_factory=list)
    ref_size: int | None = None
    ours_size: int | None = None
    note: str = ""

    def med(self, samples: list[Sample], attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in samples)

    @property
    def ratio(self) -> float:
        return self.med(self.ref, "wall_s") / self.med(self.ours, "wall_s")

    def verdict(self) -> str:
        if self.target is None:
            return "—"
        ok = self.ratio >= self.target
        if self.name == "wheel pack" and self.ref_size and self.ours_size:
            ok = ok and self.ours_size <= self.ref_size * (1 + PACK_SIZE_SLACK)
        return "PASS" if ok else "FAIL"

    def cells(self) -> list[str]:
        size = ""
        if self.ref_size and self.ours_size:
            size = f"{self.ref_size / 1e6:.0f} / {self.ours_size / 1e6:.0f}"
        return [
            self.name,
            self.ref_label,
            self.ours_label,
            f"{self.med(self.ref, 'wall_s'):.2f}",
            f"{self.med(self.ours, 'wall_s'):.2f}",
            human_ratio(self.ratio),
            human_mb(self.med(self.ref, "rss_kib")),
            human_mb(self.med(self.ours, "rss_kib")),
            size,
            f"≥{self.target:g}×" if self.target else "(extra row)",
            self.verdict(),
        ]


# ------------------------------------------------------------ the input tree


def link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def pick_libraries(min_bytes: int) -> tuple[list[Path], str]:
    """The largest real shared libraries until min_bytes is reached."""
    candidates: list[Path] = []
    source = ""
    if CUDA_LIB.is_dir():
        candidates = [p for p in CUDA_LIB.iterdir() if p.is_file() and not p.is_symlink() and ".so" in p.name]
        source = str(CUDA_LIB)
    if sum(p.stat().st_size for p in candidates) < min_bytes:
        lib = Path("/usr/lib/x86_64-linux-gnu")
        candidates += [p for p in lib.rglob("*.so*") if p.is_file() and not p.is_symlink()]
        source = (source + " + " if source else "") + str(lib)
    candidates.sort(key=lambda p: (-p.stat().st_size, p.name))
    chosen, total = [], 0
    for p in candidates:
        if total >= min_bytes:
            break
        chosen.append(p)
        total += p.stat().st_size
    if total < min_bytes:
        raise SystemExit(f"error: only {total / 1e9:.2f} GB of shared libraries found")
    return chosen, source


def make_wheel_tree(root: Path, min_bytes: int) -> tuple[Path, str, int, int]:
    """benchpkg-1.0 wheel tree: libraries, headers, a module, dist-info."""
    tree = root / "benchpkg-1.0"
    libs, source = pick_libraries(min_bytes)
    seen: set[str] = set()
    for lib in libs:
        name = lib.name if lib.name not in seen else f"{lib.parent.name}_{lib.name}"
        seen.add(name)
        link_or_copy(lib, tree / "benchpkg/lib" / name)
    headers = 0
    if CUDA_INCLUDE.is_dir():
        for h in sorted(CUDA_INCLUDE.rglob("*")):
            if h.is_file() and not h.is_symlink():
                link_or_copy(h, tree / "benchpkg/include" / h.relative_to(CUDA_INCLUDE))
                headers += 1
    (tree / "benchpkg/__init__.py").write_text("VERSION = '1.0'\n")
    info = tree / "benchpkg-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: benchpkg\nVersion: 1.0\n")
    (info / "WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: archive_bench\nRoot-Is-Purelib: false\n"
        "Tag: cp311-cp311-linux_x86_64\n")
    total = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
    files = sum(1 for p in tree.rglob("*") if p.is_file())
    return tree, source, total, files


# ------------------------------------------------------------------ checking


def check_wheel(path: Path, tree: Path | None) -> None:
    """Every member's CRC via zipfile; the content equals the tree's file."""
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        if bad:
            raise RuntimeError(f"{path}: member {bad} fails its CRC")
        if tree is not None:
            names = {i.filename for i in z.infolist() if not i.is_dir()}
            files = {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}
            files.add("benchpkg-1.0.dist-info/RECORD")
            if names != files:
                raise RuntimeError(f"{path}: members differ from the tree: "
                                   f"{sorted(names ^ files)[:5]}")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ok_or_raise(s: Sample, what: str) -> Sample:
    if not s.ok:
        raise RuntimeError(f"{what}: {s.describe_failure()}\n{s.stderr[-2000:]}")
    return s


# --------------------------------------------------------------------- rows


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path):
        self.args = args
        self.work = work
        self.launcher = Launcher(work)
        self.pkgtool = args.pkgtool
        self.env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
        self.rows: list[Row] = []

    def fresh(self, name: str) -> Path:
        d = self.work / name
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        return d

    def run(self, argv: list[str], what: str) -> Sample:
        return ok_or_raise(self.launcher.run(argv, env=self.env), what)

    def wheel_pack(self, tree: Path) -> Path:
        row = Row("wheel pack", "python3 -m wheel pack", f"pkgtool wheel pack -z 6 -j {self.args.jobs}",
                  PACK_RATIO)
        ref_wheel = ours_wheel = None
        for i in range(self.args.runs):
            out = self.fresh("pack-ref")
            row.ref.append(self.run([PYTHON, "-m", "wheel", "pack", str(tree), "-d", str(out)], "wheel pack"))
            ref_wheel = next(out.glob("*.whl"))
            out = self.fresh("pack-ours")
            row.ours.append(self.run([self.pkgtool, "wheel", "pack", str(tree), "-d", str(out), "-z", "6",
                                      "-j", str(self.args.jobs)], "pkgtool wheel pack"))
            ours_wheel = next(out.glob("*.whl"))
            if i == 0:
                check_wheel(ours_wheel, tree)
                ok_or_raise(self.launcher.run([self.pkgtool, "wheel", "verify", str(ours_wheel)]),
                            "pkgtool wheel verify")
            log(f"  wheel pack run {i + 1}: ref {row.ref[-1].wall_s:.2f}s ours {row.ours[-1].wall_s:.2f}s")
        row.ref_size = ref_wheel.stat().st_size
        row.ours_size = ours_wheel.stat().st_size
        self.rows.append(row)
        return self.keep_input(ref_wheel)

    def keep_input(self, wheel: Path) -> Path:
        """The wheel the repack rows start from (its name must stay a wheel name)."""
        keep = self.work / "input" / wheel.name
        keep.parent.mkdir(exist_ok=True)
        shutil.move(wheel, keep)
        return keep

    def make_input(self, tree: Path) -> Path:
        out = self.fresh("input-pack")
        self.run([PYTHON, "-m", "wheel", "pack", str(tree), "-d", str(out)], "wheel pack")
        return self.keep_input(next(out.glob("*.whl")))

    def wheel_repack(self, wheel: Path) -> None:
        member = "benchpkg/__init__.py"
        edited = self.work / "edited_init.py"
        edited.write_text("VERSION = '1.0'\nPATCHED = True\n")
        script = (f"set -e; {PYTHON} -m wheel unpack {wheel} -d {{u}}; "
                  f"cp {edited} {{u}}/benchpkg-1.0/{member}; "
                  f"{PYTHON} -m wheel pack {{u}}/benchpkg-1.0 -d {{o}}")
        ours_reuse = (f"set -e; {self.pkgtool} wheel unpack {wheel} -d {{u}}; "
                      f"cp {edited} {{u}}/benchpkg-1.0/{member}; "
                      f"{self.pkgtool} wheel pack {{u}}/benchpkg-1.0 -d {{o}} --reuse {wheel}")
        rows = [
            Row("wheel repack", "wheel unpack + pack", "pkgtool wheel update", REPACK_RATIO),
            Row("wheel repack", "wheel unpack + pack", "pkgtool wheel unpack + pack --reuse", None),
        ]
        for i in range(self.args.runs):
            u, o = self.fresh("repack-ref-u"), self.fresh("repack-ref-o")
            shutil.rmtree(u)
            ref = self.run(["/bin/sh", "-c", script.format(u=u, o=o)], "wheel unpack + pack")
            out = self.fresh("repack-ours")
            ours = self.run([self.pkgtool, "wheel", "update", str(wheel), "--set", f"{member}={edited}",
                             "-d", str(out)], "pkgtool wheel update")
            u2, o2 = self.fresh("repack-ours-u"), self.fresh("repack-ours-o")
            shutil.rmtree(u2)
            ours2 = self.run(["/bin/sh", "-c", ours_reuse.format(u=u2, o=o2)], "pkgtool unpack + pack --reuse")
            rows[0].ref.append(ref)
            rows[0].ours.append(ours)
            rows[1].ref.append(ref)
            rows[1].ours.append(ours2)
            for d in (out, o2):
                result = next(d.glob("*.whl"))
                with zipfile.ZipFile(result) as z:
                    if z.read(member) != edited.read_bytes():
                        raise RuntimeError(f"{result}: {member} does not carry the edit")
                ok_or_raise(self.launcher.run([self.pkgtool, "wheel", "verify", str(result)]),
                            f"pkgtool wheel verify {result}")
            if i == 0:
                check_wheel(next(out.glob("*.whl")), None)
            log(f"  repack run {i + 1}: ref {ref.wall_s:.2f}s update {ours.wall_s:.2f}s "
                f"reuse {ours2.wall_s:.2f}s")
        for r in rows:
            r.ref_size = next(o.glob("*.whl")).stat().st_size
        rows[0].ours_size = next(out.glob("*.whl")).stat().st_size
        rows[1].ours_size = next(o2.glob("*.whl")).stat().st_size
        self.rows += rows

    def conda_pack(self, tree: Path) -> None:
        level = self.args.zstd_level
        prefix = tree / "benchpkg"  # the package content: lib/, include/, __init__.py
        row = Row("conda pack (.conda)", f"cph create (zstd {level}, 1 thread)",
                  f"pkgtool conda pack -l {level} -j {self.args.jobs}", CONDA_RATIO)
        # cph archives a directory that already holds info/: give it the info/
        # pkgtool generated, so both compress the same bytes.
        staged = self.work / "conda-staged"
        cph_script = (
            "import sys\n"
            "from conda_package_handling import api\n"
            "from pathlib import Path\n"
            "src = Path(sys.argv[1])\n"
            "files = sorted(str(p.relative_to(src)) for p in src.rglob('*') if p.is_file() or p.is_symlink())\n"
            "api.create(str(src), files, sys.argv[2], out_folder=sys.argv[3],\n"
            f"           compression_tuple=('.tar.zst', 'zstd', 'zstd:compression-level={level}'))\n")
        cph_py = self.work / "cph_create.py"
        cph_py.write_text(cph_script)
        for i in range(self.args.runs):
            out = self.fresh("conda-ours")
            row.ours.append(self.run([self.pkgtool, "conda", "pack", str(prefix), "--name", "benchpkg",
                                      "--version", "1.0", "--format", "conda", "-o", str(out),
                                      "-l", str(level), "-j", str(self.args.jobs)], "pkgtool conda pack"))
            ours_pkg = next(out.glob("*.conda"))
            if i == 0:
                shutil.rmtree(staged, ignore_errors=True)
                ok_or_raise(self.launcher.run([self.pkgtool, "conda", "extract", str(ours_pkg), "-d",
                                               str(staged)]), "pkgtool conda extract")
            ref_out = self.fresh("conda-ref")
            row.ref.append(self.run([PYTHON, str(cph_py), str(staged), ours_pkg.name, str(ref_out)],
                                    "cph create"))
            ref_pkg = next(ref_out.glob("*.conda"))
            if i == 0:
                self.check_conda(ours_pkg, prefix)
            log(f"  conda run {i + 1}: ref {row.ref[-1].wall_s:.2f}s ours {row.ours[-1].wall_s:.2f}s")
        row.ref_size = ref_pkg.stat().st_size
        row.ours_size = ours_pkg.stat().st_size
        self.rows.append(row)

    def check_conda(self, pkg: Path, prefix: Path) -> None:
        """cph extracts our package to exactly the tree (plus info/)."""
        dest = self.fresh("conda-check")
        p = run_text(["cph", "extract", str(pkg), "--dest", str(dest)])
        if p.returncode != 0:
            raise RuntimeError(f"cph extract {pkg}: {p.stderr}")
        got = next(d for d in dest.iterdir() if d.is_dir()) if not (dest / "info").exists() else dest
        for f in prefix.rglob("*"):
            if f.is_file():
                g = got / f.relative_to(prefix)
                if not g.is_file() or g.stat().st_size != f.stat().st_size or sha256_file(g) != sha256_file(f):
                    raise RuntimeError(f"{pkg}: {f.relative_to(prefix)} differs after cph extract")
        shutil.rmtree(dest)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgtool", default=DEFAULT_PKGTOOL, help="pkgtool binary (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="runs per row; the table shows medians")
    ap.add_argument("--tree-mb", type=int, default=1100, help="size of the libraries in the tree")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pkgtool -j")
    ap.add_argument("--zstd-level", type=int, default=19, help="zstd level for both conda tools")
    ap.add_argument("--rows", default="pack,repack,conda", help="comma-separated subset")
    ap.add_argument("--tmpdir", default=None, help="work directory (same filesystem as the libraries "
                    "lets the tree be hard links)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="also write the samples to this file")
    args = ap.parse_args()
    wanted = set(args.rows.split(","))

    with tempfile.TemporaryDirectory(prefix="archive-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        bench = Bench(args, work)
        tree, source, total, files = make_wheel_tree(work / "tree", args.tree_mb * 1000 * 1000)
        log(f"tree: {files} files, {total / 1e9:.2f} GB (libraries from {source})")
        wheel = None
        if "pack" in wanted:
            wheel = bench.wheel_pack(tree)
        elif "repack" in wanted:
            wheel = bench.make_input(tree)
        if "repack" in wanted and wheel:
            bench.wheel_repack(wheel)
        if "conda" in wanted:
            bench.conda_pack(tree)

        header = ["row", "reference", "ours", "ref s", "ours s", "time ×", "ref RSS MiB",
                  "ours RSS MiB", "size MB ref / ours", "target", "verdict"]
        print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
              f"{os.cpu_count()} CPUs; {platform.release()}; tree {files} files, "
              f"{total / 1e9:.2f} GB from {source}; runs {args.runs} (medians)")
        print(table(header, [r.cells() for r in bench.rows], args.markdown))
        if args.json:
            Path(args.json).write_text(json.dumps([
                {"row": r.name, "ours": r.ours_label, "ref_s": [s.wall_s for s in r.ref],
                 "ours_s": [s.wall_s for s in r.ours], "ref_rss_kib": [s.rss_kib for s in r.ref],
                 "ours_rss_kib": [s.rss_kib for s in r.ours], "ref_size": r.ref_size,
                 "ours_size": r.ours_size} for r in bench.rows], indent=1) + "\n")
        return 0 if all(r.verdict() != "FAIL" for r in bench.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
