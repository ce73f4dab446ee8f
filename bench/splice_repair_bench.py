#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool repair` of an ELF wheel whose big library is edited in place
(the splice of issues 17/18) vs the shell pipeline it replaces.

The wheel, built here: bigpkg/_ext<EXT_SUFFIX> (a small extension) needs
bigpkg/lib/libbig.so, a shared library with a --size-mb data blob taken
from the system's shared libraries (real code and data, so it compresses
the way a real library does; random bytes if they run out), which needs
libext.so from a build directory through a build-tree RUNPATH. Repair
grafts libext and edits libbig.so in place: its NEEDED entry and RUNPATH
change, the rest of its bytes do not.

Rows (median wall and user+sys CPU over --runs through bench/rusage_exec.c,
same run, fresh output directory each time; the chunk cache is off):
  - pkgtool repair WHEEL -w OUT --lib-path BUILD
  - the same with --baseline-pkgtool (an older build), when given
  - the pipeline: unzip; cp libext.so into bigpkg.libs under a hashed name;
    `patchelf --replace-needed` and `--set-rpath` on libbig.so and the
    extension (Debian's patchelf); `zip -q -r -6`. No RECORD rewrite (which
    only flatters the pipeline).

--symbols N links N exported functions with long C++-like names into
libbig.so (left unstripped, as gcc leaves it): a .dynstr of 140 bytes per
symbol in front of the code, and .symtab/.strtab as large behind
.dynamic, as in a real libtorch. The repair then reads tables behind its
first pass through the library (docs/archives.md, resume points).

--input zipfile re-zips the wheel with Python's zipfile (deflate level 6,
as setuptools' bdist_wheel writes wheels): libbig.so then has no restart
points and is spliced block by block; the default (`pkgtool wheel pack`)
has them and is spliced by chunks.

Checked on the first run: both outputs pass zipfile's testzip; in both,
libbig.so needs the grafted libext under its new name and has an $ORIGIN
run path (readelf); `pkgtool wheel verify` accepts ours. Sizes in the table.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

from benchlib import (WALL_CPU_HEADER, Launcher, cold_run, log, machine_line, repair_bench_args, require_tools,
                      rewrite_input, run_text, table, wall_cpu_row, write_dist_info)


def blob(path: Path, n: int) -> None:
    """n bytes of the system's shared libraries (then random) at path."""
    libs = sorted(p for p in glob.glob("/usr/lib/x86_64-linux-gnu/*.so*") + glob.glob("/usr/lib/llvm-*/lib/*.so*")
                  if os.path.isfile(p) and not os.path.islink(p))
    with open(path, "wb") as f:
        left = n
        for lib in libs:
            if not left:
                break
            with open(lib, "rb") as src:
                data = src.read(left)
            f.write(data)
            left -= len(data)
        f.write(os.urandom(left))


def run(argv, **kw) -> None:
    p = run_text([str(a) for a in argv], **kw)
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(map(str, argv[:3]))}: {p.stderr}")


def symbols_asm(path: Path, n: int) -> None:
    """n exported one-instruction functions with ~140-byte mangled names."""
    with open(path, "w") as f:
        f.write(".text\n")
        for i in range(n):
            name = f"_ZN2at6native{i % 26 + 100}{chr(97 + i % 26) * 100}{i}ERKNS_6TensorESt8optionalIlE"
            f.write(f".globl {name}\n.type {name},@function\n{name}:\nret\n")


def build_wheel(work: Path, size_mb: int, pkgtool: str, symbols: int = 0) -> tuple[Path, Path]:
    """The wheel and the build directory holding libext.so."""
    src, build, tree = work / "src", work / "build", work / "tree"
    for d in (src, build, tree / "bigpkg/lib"):
        d.mkdir(parents=True)
    (src / "ext.c").write_text("int ext_value(void) { return 42; }\n")
    blob(src / "blob.bin", size_mb << 20)
    (src / "big.c").write_text(
        '__asm__(".section .rodata.blob,\\"a\\"\\n.globl big_blob\\nbig_blob:\\n.incbin \\"%s\\"\\n.text\\n");\n'
        "extern int ext_value(void);\n"
        "int big_value(void) { return ext_value() + 1; }\n" % (src / "blob.bin"))
    inc = sysconfig.get_paths()["include"]
    (src / "mod.c").write_text(
        "#include <Python.h>\nextern int big_value(void);\n"
        "static PyObject* value(PyObject* s, PyObject* a) { return PyLong_FromLong(big_value()); }\n"
        "static PyMethodDef m[] = {{\"value\", value, METH_NOARGS, 0}, {0}};\n"
        "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_ext\", 0, -1, m};\n"
        "PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&d); }\n")
    run(["gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libext.so", "-o", build / "libext.so", src / "ext.c"])
    extra = []
    if symbols:
        symbols_asm(src / "syms.s", symbols)
        extra = [src / "syms.s"]
    run(["gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libbig.so", "-o", tree / "bigpkg/lib/libbig.so",
         src / "big.c", *extra, f"-L{build}", "-lext", f"-Wl,--enable-new-dtags,-rpath,{build}"])
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    run(["gcc", "-O1", "-fPIC", "-shared", f"-I{inc}", "-o", tree / f"bigpkg/_ext{ext}", src / "mod.c",
         f"-L{tree / 'bigpkg/lib'}", "-lbig", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib"])
    (tree / "bigpkg/__init__.py").write_text("from ._ext import value\n")
    write_dist_info(tree, "bigpkg", "1.0", "bench")
    dist = work / "dist"
    run([pkgtool, "wheel", "pack", tree, "-d", dist, "--no-cache"],
        env=dict(os.environ, SOURCE_DATE_EPOCH="1700000000"))
    return next(dist.glob("*.whl")), build


def pipeline_script(wheel: Path, build: Path) -> str:
    digest = hashlib.sha256((build / "libext.so").read_bytes()).hexdigest()[:8]
    new = f"libext-{digest}.so"
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    return "\n".join([
        "set -e",
        f'unzip -q "{wheel}" -d tree',
        "cd tree",
        "mkdir -p bigpkg.libs",
        f'cp "{build}/libext.so" bigpkg.libs/{new}',
        f"patchelf --replace-needed libext.so {new} bigpkg/lib/libbig.so",
        "patchelf --set-rpath '$ORIGIN/../../bigpkg.libs' bigpkg/lib/libbig.so",
        f"patchelf --set-rpath '$ORIGIN/lib:$ORIGIN/../bigpkg.libs' bigpkg/_ext{ext}",
        "zip -q -r -6 ../out.whl .",
    ]) + "\n"


def check_output(whl: Path, work: Path, label: str) -> None:
    with zipfile.ZipFile(whl) as z:
        bad = z.testzip()
        if bad:
            raise SystemExit(f"error: {label}: {bad} fails its CRC")
        d = work / f"check-{label}"
        z.extract("bigpkg/lib/libbig.so", d)
    dyn = run_text(["readelf", "-dW", str(d / "bigpkg/lib/libbig.so")]).stdout
    if "libext-" not in dyn or "$ORIGIN" not in dyn:
        raise SystemExit(f"error: {label}: libbig.so was not edited:\n{dyn}")
    shutil.rmtree(d)


def main() -> int:
    ap = repair_bench_args(__doc__)
    ap.add_argument("--symbols", type=int, default=0, metavar="N",
                    help="exported functions with long names in libbig.so (see above)")
    a = ap.parse_args()
    require_tools("gcc", "patchelf", "zip", "unzip", "readelf", a.pkgtool)
    with tempfile.TemporaryDirectory(prefix="splice-repair-bench.", dir=a.tmpdir) as tmp:
        work = Path(tmp)
        log(f"building the wheel with a {a.size_mb} MiB libbig.so ...")
        wheel, build = build_wheel(work, a.size_mb, a.pkgtool, a.symbols)
        writer = rewrite_input(wheel, a.input)
        (work / "pipeline.sh").write_text(pipeline_script(wheel, build))
        launcher = Launcher(work)
        rows: dict[str, list[tuple[float, float]]] = {"pkgtool repair": [], "pipeline": []}
        if a.baseline_pkgtool:
            rows["baseline pkgtool repair"] = []
        sizes: dict[str, int] = {}
        for r in range(a.runs):
            d = work / f"run{r}"
            (d / "pipe").mkdir(parents=True)
            for name in rows:
                if name == "pipeline":
                    rows[name].append(cold_run(launcher, [shutil.which("bash"), str(work / "pipeline.sh")], d / "pipe"))
                    out = d / "pipe/out.whl"
                else:
                    exe = a.pkgtool if name == "pkgtool repair" else a.baseline_pkgtool
                    o = d / name.replace(" ", "-")
                    rows[name].append(cold_run(launcher, [exe, "repair", str(wheel), "-w", str(o), "--lib-path",
                                                       str(build)], d))
                    out = next(o.glob("*.whl"))
                if r == 0:
                    check_output(out, work, name.replace(" ", "-"))
                    sizes[name] = out.stat().st_size
            if r == 0:
                ours = next((d / "pkgtool-repair").glob("*.whl"))
                p = run_text([a.pkgtool, "wheel", "verify", str(ours)])
                if p.returncode != 0:
                    raise SystemExit(f"error: wheel verify of our output: {p.stdout}{p.stderr}")
            log(f"run {r}: " + ", ".join(f"{n} {v[-1][0]:.2f} s ({v[-1][1]:.2f} s CPU)" for n, v in rows.items()))
            shutil.rmtree(d)
        print(f"{machine_line()}; "
              f"wheel {wheel.stat().st_size / 1e6:.0f} MB, libbig.so {a.size_mb} MiB of blob"
              f"{f' and {a.symbols} exported symbols (unstripped)' if a.symbols else ''} "
              f"(written by {writer}); runs {a.runs} (median); chunk cache off")
        out_rows = [wall_cpu_row(n, v, sizes[n], rows["pipeline"]) for n, v in rows.items()]
        print(table(WALL_CPU_HEADER, out_rows, a.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
