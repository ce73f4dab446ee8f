#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of the `manywheel` driver (one ctest per case,
MANYWHEEL_CASE selects it).

Fixtures are compiled at test time in a private temp directory: extension
modules for /usr/bin/python3, a private library found through a leaked
build-tree RUNPATH, libgomp via -fopenmp, and fake "CUDA" libraries (a
stub libcudart and friends) listed in a test-time --cuda-table file, so no
CUDA installation is needed. Wheels are packed with `pkgtool wheel pack`.

Results are checked independently of libpkg: readelf (NEEDED, SONAME,
RPATH/RUNPATH, symbol versions), hashlib/zipfile (grafted names, RECORD,
WHEEL tags), pip install into a fresh venv and an import with the original
libraries deleted, and the driver's JSON parsed here.

Exit status: 0 pass, 1 a check failed or a tool is missing, 77 only for the
real-toolkit case on a machine without a CUDA 13 toolkit.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
from testlib import Checks, data_rows, missing, newest_per_major, readelf_dynamic, skip_no_gpu  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "common"))
import cuda_standin  # noqa: E402
PYTHON = "/usr/bin/python3"
CUDA_VERSION = "11.9"  # never released: no real library can interfere
PYPI_PACKAGES = ["cublas", "cuda_cupti", "cuda_nvrtc", "cuda_runtime", "cudnn", "cufft",
                 "curand", "cusolver", "cusparse", "nccl", "nvtx"]
TABLE_RPATH = [f"$ORIGIN/../../nvidia/{p}/lib" for p in PYPI_PACKAGES]

CHECKS = Checks()
check = CHECKS.check


def run(argv, cwd=None, env=None, ok=True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, env=env)
    if ok and p.returncode != 0:
        raise SystemExit(f"error: {' '.join(map(str, argv))} failed ({p.returncode}):\n"
                         f"{p.stderr}{p.stdout}")
    return p


# ------------------------------------------------------------ readelf facts




def glibc_needs(path: Path) -> list[tuple[int, ...]]:
    out = []
    for m in re.finditer(r"Name: GLIBC_(\d+(?:\.\d+)*)\b", run(["readelf", "-V", "-W", path]).stdout):
        out.append(tuple(int(x) for x in m.group(1).split(".")))
    return out


def sha8(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:8]


def hashed(soname: str, source: Path) -> str:
    stem, dot, rest = soname.partition(".")
    return f"{stem}-{sha8(source)}{dot}{rest}"


def ldd_path(binary: Path, soname: str) -> Path:
    for line in run(["ldd", binary], ok=False).stdout.splitlines():
        m = re.match(rf"\s*{re.escape(soname)} => (\S+) \(0x", line)
        if m:
            return Path(m.group(1)).resolve()
    raise SystemExit(f"error: ldd {binary} does not resolve {soname}")


# ------------------------------------------------------------ fixtures

EXT_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
{decls}
static PyObject* value(PyObject* self, PyObject* args) {{
  (void)self; (void)args;
  return PyLong_FromLong((long)({expr}));
}}
static PyMethodDef methods[] = {{{{"value", value, METH_NOARGS, "value"}}, {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};
PyMODINIT_FUNC PyInit_{name}(void) {{ return PyModule_Create(&module); }}
"""

CUDART_C = """\
/* Stand-in for the CUDA runtime: the entry points check_binary's gpu probe
   calls, each answering 100 (cudaErrorNoDevice). */
#include <stddef.h>
int cudaGetDeviceCount(int* count) { *count = 0; return 100; }
const char* cudaGetErrorString(int e) { return e == 100 ? "no CUDA-capable device is detected" : "?"; }
int cudaRuntimeGetVersion(int* v) { *v = 11090; return 0; }
int cudaMalloc(void** p, size_t n) { (void)n; *p = NULL; return 100; }
int cudaMemset(void* p, int v, size_t n) { (void)p; (void)v; (void)n; return 100; }
int cudaMemcpy(void* d, const void* s, size_t n, int k) { (void)d; (void)s; (void)n; (void)k; return 100; }
int cudaFree(void* p) { (void)p; return 100; }
int cudaDeviceSynchronize(void) { return 100; }
"""


class Fixtures:
    def __init__(self, root: Path):
        self.root = root
        self.pkgtool = os.environ.get("PKGTOOL", "")
        if not Path(self.pkgtool).is_file():
            raise SystemExit("error: PKGTOOL must point at pkgtool (run through ctest)")
        for tool in ("gcc", "readelf", "ldd"):
            if shutil.which(tool) is None:
                missing(f"{tool} not installed")
        info = json.loads(run([PYTHON, "-c", "import sys, sysconfig, json; print(json.dumps({"
                               "'inc': sysconfig.get_paths()['include'], "
                               "'ext': sysconfig.get_config_var('EXT_SUFFIX'), "
                               "'tag': 'cp%d%d' % sys.version_info[:2], "
                               "'ver': '%d.%d' % sys.version_info[:2]}))"]).stdout)
        if not (Path(info["inc"]) / "Python.h").is_file():
            missing(f"Python.h not in {info['inc']} (python3-dev)")
        self.py = info
        self.env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
        self.env["SOURCE_DATE_EPOCH"] = "1700000000"

    def cc(self, *argv) -> None:
        run(["gcc", "-O1", "-fPIC", "-Wall", *argv])

    def lib(self, out: Path, soname: str, source: str, *flags) -> Path:
        out.parent.mkdir(parents=True, exist_ok=True)
        src = out.with_name(out.name.replace(".so", "") + ".c")
        src.write_text(source)
        self.cc("-shared", f"-Wl,-soname,{soname}", "-o", out, src, *flags)
        src.unlink()
        return out

    def extension(self, out: Path, name: str, decls: str, expr: str, *flags) -> Path:
        out.parent.mkdir(parents=True, exist_ok=True)
        src = out.parent / f"{name}.c"
        src.write_text(EXT_C.format(decls=decls, expr=expr, name=name))
        self.cc("-shared", f"-I{self.py['inc']}", "-o", out, src, *flags)
        src.unlink()
        return out

    def tree(self, dist: str, version: str, arch: str = "x86_64") -> Path:
        t = self.root / "trees" / dist
        di = t / f"{dist}-{version}.dist-info"
        di.mkdir(parents=True)
        (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        tag = self.py["tag"]
        (di / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: manywheel-test\n"
                                  f"Root-Is-Purelib: false\nTag: {tag}-{tag}-linux_{arch}\n")
        return t

    def pack(self, tree: Path) -> Path:
        out = self.root / "wheels" / tree.name
        out.mkdir(parents=True)
        run([self.pkgtool, "wheel", "pack", tree, "-d", out], env=self.env)
        (wheel,) = out.glob("*.whl")
        return wheel

    def cpu_wheel(self) -> tuple[Path, dict]:
        """mwpkg: _ext (→ libmwcore in mwpkg/lib, libprivate from the build
        tree, libgomp), mwpkg/lib/libmwcore.so.1 (→ libgomp) and
        mwpkg/lib/libmwutil.so.1 (no dependency), each with a leaked
        build-tree RUNPATH."""
        build = self.root / "build"
        private = self.lib(build / "libprivate.so.1", "libprivate.so.1",
                           "int private_value(void) { return 40; }\n")
        t = self.tree("mwpkg", "1.0")
        core = self.lib(t / "mwpkg/lib/libmwcore.so.1", "libmwcore.so.1",
                        "#include <omp.h>\nint core_value(void) { return omp_get_max_threads() > 0; }\n",
                        "-fopenmp", f"-Wl,--enable-new-dtags,-rpath,$ORIGIN:{build}")
        # Needs nothing to bundle, but its build-tree entry must go too.
        self.lib(t / "mwpkg/lib/libmwutil.so.1", "libmwutil.so.1", "int util_value(void) { return 1; }\n",
                 f"-Wl,--enable-new-dtags,-rpath,$ORIGIN:{build}")
        ext = self.extension(t / f"mwpkg/_ext{self.py['ext']}", "_ext",
                             "int private_value(void); int core_value(void);\n#include <omp.h>\n",
                             "private_value() + core_value() + (omp_get_max_threads() > 0)",
                             "-fopenmp", f"-L{build}", "-l:libprivate.so.1", f"-L{core.parent}", "-l:libmwcore.so.1",
                             f"-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib:{build}")
        (t / "mwpkg/__init__.py").write_text("from ._ext import value\n")
        facts = {"private": private, "gomp": ldd_path(ext, "libgomp.so.1"), "build": build}
        return self.pack(t), facts

    def cuda_libs(self) -> dict:
        d = self.root / "cuda"
        libs = {
            "cudart": self.lib(d / f"libcudart.so.{CUDA_VERSION}", f"libcudart.so.{CUDA_VERSION}", CUDART_C),
            "cublas": self.lib(d / "libcublas.so.11", "libcublas.so.11", "int cublasCreate_v2(void** h) { *h = 0; return 0; }\n"),
            "builtins": self.lib(d / f"libnvrtc-builtins.so.{CUDA_VERSION}", f"libnvrtc-builtins.so.{CUDA_VERSION}",
                                 "int builtins_value(void) { return 1; }\n"),
            "cusparselt": self.lib(d / "libcusparseLt.so.0", "libcusparseLt.so.0", "int cusparseLtInit(void* h) { (void)h; return 0; }\n"),
        }
        return libs

    def cuda_table(self, libs: dict, missing: Path | None = None) -> Path:
        paths = [str(libs["cudart"]), str(libs["cublas"]), str(libs["builtins"])]
        if missing:
            paths.append(str(missing))
        doc = {"optional_libraries": [{"path": str(libs["cusparselt"]), "condition": "cusparselt"}],
               "versions": [{"cuda": CUDA_VERSION, "libraries": paths, "source": "test table"}]}
        p = self.root / ("table-missing.json" if missing else "table.json")
        p.write_text(json.dumps(doc, indent=1))
        return p

    def cuda_wheel(self, libs: dict) -> Path:
        """mwcuda: _C (→ libcudart, libcublas, libgomp; RUNPATH $ORIGIN/lib)
        and mwcuda/lib/libmwcuda.so.1 (→ libcudart; RUNPATH $ORIGIN). The
        fake CUDA directory is on no search path: only the table finds it."""
        cuda = libs["cudart"].parent
        t = self.tree("mwcuda", "2.0")
        core = self.lib(t / "mwcuda/lib/libmwcuda.so.1", "libmwcuda.so.1",
                        "int cudaGetDeviceCount(int*);\nint devices(void) { int n = 7; cudaGetDeviceCount(&n); return n; }\n",
                        f"-L{cuda}", f"-l:libcudart.so.{CUDA_VERSION}", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
        self.cuda_ext = self.extension(t / f"mwcuda/_C{self.py['ext']}", "_C",
                       "#include <omp.h>\nint devices(void); int cublasCreate_v2(void**);\n"
                       "int cudaRuntimeGetVersion(int*);\n"
                       "static int rt(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }\n"
                       "static int blas(void) { void* h; return cublasCreate_v2(&h); }\n",
                       "devices() + blas() + rt() + (omp_get_max_threads() > 0)",
                       "-fopenmp", f"-L{cuda}", f"-l:libcudart.so.{CUDA_VERSION}", "-l:libcublas.so.11",
                       f"-L{core.parent}", "-l:libmwcuda.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
        (t / "mwcuda/__init__.py").write_text("from ._C import value\n")
        (t / "mwcuda/version.py").write_text(f'__version__ = "2.0"\ncuda = "{CUDA_VERSION}"\n')
        return self.pack(t)


# ------------------------------------------------------------ the driver


def driver(*args, cwd=None) -> subprocess.CompletedProcess:
    exe = os.environ.get("MANYWHEEL", "")
    if not Path(exe).is_file():
        raise SystemExit("error: MANYWHEEL must point at the driver (run through ctest)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "BUILD_ENVIRONMENT", "PYTORCH_EXTRA_INSTALL_REQUIREMENTS",
                        "USE_CUSPARSELT", "FORCE_RPATH")}
    return subprocess.run([exe, "--no-env", "--check-python", PYTHON, *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def driver_json(*args) -> dict | None:
    p = driver(*args, "--json")
    if not check(p.returncode == 0, f"manywheel {' '.join(map(str, args))}: exit {p.returncode}\n"
                                    f"{p.stderr}{p.stdout[-3000:]}"):
        return None
    doc = json.loads(p.stdout)
    check(doc.get("schema") == "libpkg-driver/1", f"schema {doc.get('schema')}")
    return doc


def one_wheel(d: Path) -> Path | None:
    w = sorted(d.glob("*.whl"))
    check(len(w) == 1, f"one wheel in {d}: {w}")
    return w[0] if len(w) == 1 else None


def unpack(wheel: Path, dest: Path) -> Path:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest)
    return dest


def check_record_and_tags(wheel: Path) -> None:
    """RECORD lists every member with its sha256 and size; WHEEL's tags are
    the file name's; the tag's glibc covers every ELF member's needs."""
    with zipfile.ZipFile(wheel) as z:
        names = [i.filename for i in z.infolist() if not i.is_dir()]
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = list(csv.reader(io.StringIO(z.read(record_name).decode())))
        listed = {r[0]: r for r in rows if r}
        check(sorted(listed) == sorted(names), f"RECORD lists exactly the members: {sorted(set(names) ^ set(listed))}")
        for n in names:
            if n == record_name or n not in listed:
                continue
            data = z.read(n)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            check(listed[n][1:] == [f"sha256={digest}", str(len(data))], f"RECORD entry of {n}: {listed[n]}")
        wheel_file = z.read(record_name.replace("RECORD", "WHEEL")).decode()
    tags = {line.split(":", 1)[1].strip() for line in wheel_file.splitlines() if line.startswith("Tag:")}
    parts = wheel.name[:-4].split("-")
    py, abi, plats = parts[-3], parts[-2], parts[-1].split(".")
    check(tags == {f"{py}-{abi}-{p}" for p in plats}, f"WHEEL tags {tags} vs file name {wheel.name}")
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    glibc = []
    for p in plats:
        m = re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", p)
        if m:
            glibc.append((int(m.group(1)), int(m.group(2))))
        elif p.removesuffix("_x86_64") in legacy:
            glibc.append(legacy[p.removesuffix("_x86_64")])
    if not check(glibc and len(glibc) == len(plats), f"retagged to manylinux: {plats}"):
        return
    ceiling = max(glibc)
    with tempfile.TemporaryDirectory() as d:
        for f in Path(unpack(wheel, Path(d))).rglob("*"):
            if f.is_file() and f.read_bytes()[:4] == b"\x7fELF":
                worst = max(glibc_needs(f), default=())
                check(worst[:2] <= ceiling, f"{f.name} needs GLIBC_{worst} above the tag's {ceiling}")


def check_report(doc: dict, want_pass: dict[str, str]) -> None:
    """The embedded check_binary report: passed, and the given checks with
    the given status."""
    check(doc["passed"] is True and len(doc["checks"]) == 1, f"driver reports checks passed: {doc['checks']}")
    if not doc["checks"]:
        return
    by_id = {c["id"]: c for c in doc["checks"][0]["checks"]}
    for cid, status in want_pass.items():
        c = by_id.get(cid, {})
        check(c.get("status") == status, f"check {cid}: {c.get('status')} (want {status}): {c}")


def venv_import(venv: Path, wheel: Path, module: str, extra=None) -> subprocess.CompletedProcess:
    """Fresh venv, pip install WHEEL, call module.value(); `extra(site)` may
    add files to site-packages before the import."""
    if not venv.exists():
        run([PYTHON, "-m", "venv", "--without-pip", venv])
        run([PYTHON, "-m", "pip", "--python", venv / "bin/python", "install", "--no-index", "--no-deps",
             "--disable-pip-version-check", "-q", wheel])
    site = next((venv / "lib").glob("python3*/site-packages"))
    if extra:
        extra(site)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    return subprocess.run([venv / "bin/python", "-c", f"import {module}; print({module}.value())"],
                          capture_output=True, text=True, env=env, cwd=venv)


# ------------------------------------------------------------ cases


def case_cpu(fx: Fixtures, tmp: Path) -> None:
    """CPU wheel: private library and libgomp bundled hash-renamed into
    mwpkg/lib, NEEDED rewritten, RUNPATH $ORIGIN/lib at the top and $ORIGIN
    in lib/ (build-tree entries dropped), RECORD, tags, import."""
    wheel, f = fx.cpu_wheel()
    out = tmp / "out"
    doc = driver_json("--wheel", wheel, "-o", out)
    if doc is None:
        return
    check(doc["config"]["python"] == fx.py["ver"], f"python from the wheel's tag: {doc['config']}")
    check(doc["config"]["accelerator"] == "cpu", f"accelerator {doc['config']['accelerator']}")
    w = one_wheel(out)
    if w is None:
        return
    check([a["path"] for a in doc["artifacts"]] == [str(w)], f"artifacts {doc['artifacts']}")
    check_report(doc, {"import": "pass", "dependencies": "pass", "rpath": "pass", "accelerator": "pass"})
    # Its members are smaller than one chunk: copied or compressed, never
    # spliced (case_splice has one that is).
    check(doc.get("splice") == {"members": 0, "reused_bytes": 0}, f"splice {doc.get('splice')}")
    x = unpack(w, tmp / "x")
    priv = hashed("libprivate.so.1", f["private"])
    gomp = hashed("libgomp.so.1", f["gomp"])
    for name in (priv, gomp):
        p = x / "mwpkg/lib" / name
        if check(p.is_file(), f"bundled mwpkg/lib/{name}"):
            check(readelf_dynamic(p)["SONAME"] == name, f"SONAME of {name}: {readelf_dynamic(p)['SONAME']}")
    ext = next((x / "mwpkg").glob("_ext*.so"))
    e = readelf_dynamic(ext)
    check(priv in e["NEEDED"] and gomp in e["NEEDED"] and "libgomp.so.1" not in e["NEEDED"]
          and "libprivate.so.1" not in e["NEEDED"], f"_ext NEEDED rewritten: {e['NEEDED']}")
    check(e["RUNPATH"] == "$ORIGIN/lib" and e["RPATH"] is None, f"_ext RUNPATH: {e}")
    core = readelf_dynamic(x / "mwpkg/lib/libmwcore.so.1")
    check(gomp in core["NEEDED"], f"libmwcore NEEDED: {core['NEEDED']}")
    check(core["RUNPATH"] == "$ORIGIN" and core["RPATH"] is None, f"libmwcore RUNPATH: {core}")
    util = readelf_dynamic(x / "mwpkg/lib/libmwutil.so.1")
    check(util["RUNPATH"] == "$ORIGIN" and util["RPATH"] is None, f"libmwutil RUNPATH: {util}")
    check_record_and_tags(w)
    # The build tree is gone: the import works from the bundled copies only.
    shutil.rmtree(f["build"])
    r = venv_import(tmp / "venv", w, "mwpkg")
    check(r.returncode == 0 and r.stdout.strip() == "42", f"import without the build tree: {r.stdout}{r.stderr}")
    r = venv_import(tmp / "venv-in", wheel, "mwpkg")
    check(r.returncode != 0 and "libprivate.so.1" in r.stderr, f"control: the input wheel fails: {r.stdout}{r.stderr}")


def case_splice(fx: Fixtures, tmp: Path) -> None:
    """A 20 MiB in-wheel library with a leaked build-tree RUNPATH: the driver
    edits it by splicing its deflate data (archives.md, "Splice"). The edit
    changes a string in .dynstr, in its first 8 MiB chunk; its .dynamic, at
    the end behind the 20 MiB of .rodata, is rewritten with the same bytes,
    which the overlay leaves out, so every later chunk is copied. The
    summary says how many members were spliced and how many of the input's
    deflate bytes were re-used; the edited library still loads."""
    src = tmp / "blob.bin"
    with src.open("wb") as f:  # compressible: real machine code
        left = 20 << 20
        for lib in sorted(Path("/usr/lib/x86_64-linux-gnu").glob("*.so*")):
            if left == 0:
                break
            if lib.is_file() and not lib.is_symlink():
                data = lib.read_bytes()[:left]
                f.write(data)
                left -= len(data)
        f.write(os.urandom(left))
    build = fx.root / "build-big"
    t = fx.tree("mwbig", "1.0")
    big = fx.lib(t / "mwbig/lib/libmwbig.so.1", "libmwbig.so.1",
                 f'__asm__(".section .rodata.blob,\\"a\\"\\n.incbin \\"{src}\\"\\n.text\\n");\n'
                 "int big_value(void) { return 41; }\n",
                 f"-Wl,--enable-new-dtags,-rpath,$ORIGIN:{build}")
    fx.extension(t / f"mwbig/_ext{fx.py['ext']}", "_ext", "int big_value(void);\n", "big_value() + 1",
                 f"-L{big.parent}", "-l:libmwbig.so.1", f"-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib:{build}")
    (t / "mwbig/__init__.py").write_text("from ._ext import value\n")
    wheel = fx.pack(t)
    with zipfile.ZipFile(wheel) as z:
        info = z.getinfo("mwbig/lib/libmwbig.so.1")
    check(info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > (16 << 20),
          f"fixture: the library is deflated and over two chunks: {info}")
    doc = driver_json("--wheel", wheel, "-o", tmp / "out")
    if doc is None:
        return
    # The input's restart points (archives.md, field 0x5052 "LPRX"): the
    # compressed offset where its second chunk starts.
    extra = info.extra
    at = extra.find(b"LPRX\x01")
    values, pos = [], at + 5
    while 0 <= at and pos < len(extra):
        v = shift = 0
        while True:
            byte = extra[pos]
            pos += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        values.append(v)
    check(len(values) == 4 and values[0] == 8 << 20, f"fixture: two restart points {values}")
    sp = doc.get("splice")
    check(isinstance(sp, dict) and sp["members"] == 1 and len(values) == 4
          and sp["reused_bytes"] == info.compress_size - values[1],
          f"splice {sp}: all but the first chunk's deflate data ({info.compress_size} bytes, points {values})")
    p = driver("--wheel", wheel, "-o", tmp / "out-text")
    check(p.returncode == 0 and isinstance(sp, dict)
          and f"spliced: {sp['members']} edited member" in p.stdout and "deflate data re-used" in p.stdout,
          f"the text summary names the splices: {p.stdout[-600:]}")
    w = one_wheel(tmp / "out")
    if w is None:
        return
    x = unpack(w, tmp / "x")
    lib = readelf_dynamic(x / "mwbig/lib/libmwbig.so.1")
    check(lib["RUNPATH"] is None or str(build) not in lib["RUNPATH"], f"build-tree RUNPATH dropped: {lib}")
    check_record_and_tags(w)
    r = venv_import(tmp / "venv", w, "mwbig")
    check(r.returncode == 0 and r.stdout.strip() == "42", f"import of the spliced wheel: {r.stdout}{r.stderr}")


def case_cuda(fx: Fixtures, tmp: Path) -> None:
    """CUDA table (test-time fake libraries): libcudart bundled hash-renamed,
    libcublas and libnvrtc-builtins (dlopened, needed by nobody) keep their
    names, conditional cusparseLt only with --enable; check passes with the
    table expectation."""
    libs = fx.cuda_libs()
    table = fx.cuda_table(libs)
    wheel = fx.cuda_wheel(libs)
    out = tmp / "out"
    doc = driver_json("--wheel", wheel, "--cuda", CUDA_VERSION, "--cuda-table", table, "-o", out)
    if doc is None:
        return
    w = one_wheel(out)
    if w is None:
        return
    check_report(doc, {"accelerator": "pass", "import": "pass", "dependencies": "pass"})
    x = unpack(w, tmp / "x")
    lib = x / "mwcuda/lib"
    cudart = hashed(f"libcudart.so.{CUDA_VERSION}", libs["cudart"])
    present = sorted(p.name for p in lib.iterdir())
    gomp = hashed("libgomp.so.1", ldd_path(fx.cuda_ext, "libgomp.so.1"))
    check(present == sorted([cudart, "libcublas.so.11", f"libnvrtc-builtins.so.{CUDA_VERSION}",
                             "libmwcuda.so.1", gomp]), f"mwcuda/lib holds {present}")
    check(not any(n.startswith("libcusparseLt") for n in present), "cusparseLt not bundled without --enable")
    c = readelf_dynamic(next((x / "mwcuda").glob("_C*.so")))
    check(cudart in c["NEEDED"] and "libcublas.so.11" in c["NEEDED"], f"_C NEEDED: {c['NEEDED']}")
    m = readelf_dynamic(lib / "libmwcuda.so.1")
    check(cudart in m["NEEDED"] and m["RUNPATH"] == "$ORIGIN", f"libmwcuda NEEDED/RUNPATH: {m}")
    # Every bundled library gets $ORIGIN too (build_common.sh): one that
    # dlopens a sibling by name (cuDNN) needs it, though it NEEDs no graft.
    for name in (cudart, "libcublas.so.11", f"libnvrtc-builtins.so.{CUDA_VERSION}"):
        g = readelf_dynamic(lib / name)
        check(g["RUNPATH"] == "$ORIGIN" and g["RPATH"] is None, f"graft {name} RUNPATH $ORIGIN: {g}")
    reasons = {g["soname"]: g["reason"] for g in doc["plan_detail"]["grafts"]}
    check(reasons.get(f"libcudart.so.{CUDA_VERSION}") == f"CUDA {CUDA_VERSION} table", f"graft reasons {reasons}")
    check_record_and_tags(w)
    # Without the fake CUDA directory the bundled wheel still imports.
    r = venv_import(tmp / "venv", w, "mwcuda")
    check(r.returncode == 0 and r.stdout.strip() == "11091", f"import: {r.stdout}{r.stderr}")

    # --enable cusparselt bundles the conditional library; --keep-name keeps
    # its name (dry run: the plan only).
    p = driver("--wheel", wheel, "--cuda", CUDA_VERSION, "--cuda-table", table, "-o", tmp / "o2",
               "--enable", "cusparselt", "--keep-name", "libcusparse*", "--dry-run", "--json")
    if check(p.returncode == 0, f"--enable cusparselt dry run: {p.stderr}"):
        grafts = {g["soname"]: g for g in json.loads(p.stdout)["plan_detail"]["grafts"]}
        g = grafts.get("libcusparseLt.so.0", {})
        check(g.get("member") == "mwcuda/lib/libcusparseLt.so.0" and g.get("keep_name") is True,
              f"cusparseLt bundled under its name: {g}")
        check(not (tmp / "o2").exists(), "dry run wrote nothing")

    # A table whose library is not on disk: exit 2 naming the path.
    missing = libs["cudart"].parent / "libcufft.so.11"
    p = driver("--wheel", wheel, "--cuda", CUDA_VERSION, "--cuda-table", fx.cuda_table(libs, missing), "-o", tmp / "o3")
    check(p.returncode == 2 and str(missing) in p.stderr and len(p.stderr.splitlines()) == 1,
          f"missing table library: exit {p.returncode}: {p.stderr}")


def case_pypi(fx: Fixtures, tmp: Path) -> None:
    """pypi-CUDA: no table library bundled (libgomp still is), DT_RPATH =
    the table's nvidia directories + $ORIGIN in lib/ (rebased for the
    package top), NEEDED of the table libraries untouched; the wheel imports
    once nvidia/<pkg>/lib holds the libraries, and not before."""
    libs = fx.cuda_libs()
    table = fx.cuda_table(libs)
    wheel = fx.cuda_wheel(libs)
    out = tmp / "out"
    doc = driver_json("--wheel", wheel, "--cuda", CUDA_VERSION, "--cuda-table", table, "-o", out,
                      "--pypi-cuda", "--no-runtime")
    if doc is None:
        return
    w = one_wheel(out)
    if w is None:
        return
    check_report(doc, {"accelerator": "pass", "dependencies": "pass", "rpath": "pass"})
    x = unpack(w, tmp / "x")
    present = sorted(p.name for p in (x / "mwcuda/lib").iterdir())
    check(len(present) == 2 and "libmwcuda.so.1" in present and any(n.startswith("libgomp-") for n in present),
          f"only libgomp bundled: {present}")
    core = readelf_dynamic(x / "mwcuda/lib/libmwcuda.so.1")
    check(core["RPATH"] == ":".join(TABLE_RPATH + ["$ORIGIN"]) and core["RUNPATH"] is None,
          f"lib/ DT_RPATH = table list + $ORIGIN: {core}")
    check(f"libcudart.so.{CUDA_VERSION}" in core["NEEDED"], f"libcudart NEEDED kept: {core['NEEDED']}")
    top = readelf_dynamic(next((x / "mwcuda").glob("_C*.so")))
    rebased = [e.replace("$ORIGIN/../../", "$ORIGIN/../") for e in TABLE_RPATH]
    check(top["RPATH"] == ":".join(rebased + ["$ORIGIN/lib"]) and top["RUNPATH"] is None,
          f"top DT_RPATH = rebased list + $ORIGIN/lib: {top}")
    check_record_and_tags(w)
    venv = tmp / "venv"
    r = venv_import(venv, w, "mwcuda")
    check(r.returncode != 0 and "libcudart" in r.stderr + r.stdout, f"control: no nvidia libs, no import: {r.stdout}{r.stderr}")

    def nvidia(site: Path) -> None:
        for pkg, key in (("cuda_runtime", "cudart"), ("cublas", "cublas")):
            d = site / "nvidia" / pkg / "lib"
            d.mkdir(parents=True, exist_ok=True)
            shutil.copy(libs[key], d / libs[key].name)
    r = venv_import(venv, w, "mwcuda", nvidia)
    check(r.returncode == 0 and r.stdout.strip() == "11091", f"import with nvidia/*/lib: {r.stdout}{r.stderr}")


def case_dry_run(fx: Fixtures, tmp: Path) -> None:
    """--dry-run prints the plan and writes nothing; with --json the plan is
    the libpkg-repair-plan/1 document inside libpkg-driver/1."""
    wheel, f = fx.cpu_wheel()
    out = tmp / "out"
    p = driver("--wheel", wheel, "-o", out, "--dry-run")
    check(p.returncode == 0, f"dry run: exit {p.returncode}: {p.stderr}")
    priv = hashed("libprivate.so.1", f["private"])
    check("dry run" in p.stdout and f"mwpkg/lib/{priv}" in p.stdout, f"plan printed: {p.stdout}")
    check(not out.exists(), f"dry run created {out}")
    doc = driver_json("--wheel", wheel, "-o", out, "--dry-run")
    if doc is None:
        return
    check(doc["dry_run"] is True and doc["artifacts"] == [] and doc["checks"] == [], f"dry-run JSON: {doc}")
    check(doc["splice"] is None and doc["cache"] is None, f"dry run: no splice, no cache: {doc['splice']} {doc['cache']}")
    d = doc["plan_detail"]
    check(d["schema"] == "libpkg-repair-plan/1" and d["graft_dir"] == "mwpkg/lib", f"plan_detail {d.get('schema')}")
    check(any(g["member"] == f"mwpkg/lib/{priv}" for g in d["grafts"]), f"grafts {d['grafts']}")
    check(any(line.startswith("input: ") for line in doc["plan"]), f"plan lines {doc['plan']}")
    check(not out.exists(), f"dry run --json created {out}")
    # A build command is not run on a dry run.
    marker = tmp / "ran"
    p = driver("--build-command", f"touch {marker}", "--source", tmp, "--python", fx.py["ver"], "-o", out, "--dry-run")
    check(p.returncode == 0 and not marker.exists() and "touch" in p.stdout,
          f"dry run does not build: exit {p.returncode} {p.stdout}{p.stderr}")


def case_build_command(fx: Fixtures, tmp: Path) -> None:
    """--build-command runs in --source and the one wheel it writes under
    the dist directory is repaired (an older wheel there is ignored)."""
    wheel, _ = fx.cpu_wheel()
    src = tmp / "src"
    (src / "dist").mkdir(parents=True)
    stale = src / "dist" / "stale-0.1-py3-none-any.whl"
    stale.write_bytes(b"not a wheel")
    out = tmp / "out"
    doc = driver_json("--build-command", f"cp {wheel} dist/ && echo built", "--source", src,
                      "--python", fx.py["ver"], "-o", out, "--no-runtime")
    if doc is None:
        return
    check(any(line.startswith("input: ") and line.endswith("(built)") for line in doc["plan"]), f"plan {doc['plan']}")
    check(one_wheel(out) is not None, "repaired wheel written")
    p = driver("--build-command", "true", "--source", src, "--python", fx.py["ver"], "-o", tmp / "o2")
    check(p.returncode == 2 and "wrote no wheel" in p.stderr, f"no new wheel: {p.returncode} {p.stderr}")
    p = driver("--build-command", "exit 3", "--source", src, "--python", fx.py["ver"], "-o", tmp / "o2")
    check(p.returncode == 2 and "status 3" in p.stderr, f"failing build: {p.returncode} {p.stderr}")
    # The build's output is shown live on stderr; stdout stays the report.
    p = driver("--build-command", "echo build-log-line; exit 4", "--source", src, "--python", fx.py["ver"],
               "-o", tmp / "o2")
    check(p.returncode == 2 and "build-log-line" in p.stderr and "build-log-line" not in p.stdout,
          f"build output on stderr: {p.stdout!r} {p.stderr!r}")
    # --build-timeout stops the build and what it started (a background
    # sleep here, marked by a file it would create afterwards).
    marker = tmp / "survived"
    t0 = time.monotonic()
    p = driver("--build-command", f"(sleep 3; touch {marker}) & sleep 60", "--source", src,
               "--build-timeout", "1", "--python", fx.py["ver"], "-o", tmp / "o3")
    took = time.monotonic() - t0
    check(p.returncode == 2 and "timed out after 1 s" in p.stderr, f"timeout: {p.returncode} {p.stderr}")
    check(took < 30, f"the timed-out build took {took:.1f} s")
    time.sleep(3.5)
    check(not marker.exists(), "a process the timed-out build started kept running")


def case_bad_input(fx: Fixtures, tmp: Path) -> None:
    """Exit 2 with one line naming the value; nothing written."""
    wheel, _ = fx.cpu_wheel()
    out = tmp / "out"
    cases = [
        (["--wheel", tmp / "missing-1.0-cp311-cp311-linux_x86_64.whl"], "missing-1.0-cp311"),
        (["--wheel", wheel, "--python", "3.x"], "3.x"),
        (["--wheel", wheel, "--cuda", "cu1x"], "cu1x"),
        (["--wheel", wheel, "--python", "3.9"], "3.9"),
        (["--wheel", wheel, "--cuda", "13.0"], "13.0"),
        (["--wheel", wheel, "--cuda", "12.4", "--enable", "nosuchcond"], "nosuchcond"),
        (["--python", fx.py["ver"]], "--wheel"),
        (["--wheel", wheel, "--build-command", "true", "--source", tmp], "--wheel"),
    ]
    for args, needle in cases:
        p = driver(*args, "-o", out)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and needle in lines[0] and lines[0].startswith("error: "),
              f"{args}: exit {p.returncode}, stderr {p.stderr!r} (want one line naming {needle})")
    p = driver("--wheel", wheel, "--python", "3.9", "-o", out)
    check(fx.py["tag"] in p.stderr and "3.9" in p.stderr, f"mismatch names both: {p.stderr}")
    p = driver("--wheel", wheel, "--cuda", "13.0", "-o", out)
    check("--cuda-table" in p.stderr, f"no list points at --cuda-table: {p.stderr}")
    check(not out.exists() or not any(out.iterdir()), f"bad input wrote {list(out.iterdir()) if out.exists() else ''}")


def case_real_cuda(fx: Fixtures, tmp: Path) -> None:
    """The machine's libcudart.so.13 bundled from a 13.0 table file."""
    real = Path("/usr/local/cuda/lib64/libcudart.so.13")
    if not real.exists():
        missing(f"{real} not installed")
    t = fx.tree("mwreal", "1.0")
    fx.extension(t / f"mwreal/_C{fx.py['ext']}", "_C", "int cudaRuntimeGetVersion(int*);\n",
                 "cudaRuntimeGetVersion(&(int){0}) * 0 + 13", f"-L{real.parent}", "-l:libcudart.so.13")
    (t / "mwreal/__init__.py").write_text("from ._C import value\n")
    wheel = fx.pack(t)
    out = tmp / "out"
    doc = driver_json("--wheel", wheel, "--cuda", "13.0", "--cuda-table", HERE / "cuda13-cudart.json", "-o", out)
    if doc is None:
        return
    w = one_wheel(out)
    if w is None:
        return
    check_report(doc, {"accelerator": "pass", "import": "pass"})
    name = hashed("libcudart.so.13", real.resolve())
    with zipfile.ZipFile(w) as z:
        check(f"mwreal/lib/{name}" in z.namelist(), f"bundled mwreal/lib/{name}: {z.namelist()}")
    check_record_and_tags(w)


def table_versions() -> list[str]:
    """Every version of the built-in table with a bundle list."""
    src = Path(os.environ.get("LIBPKG_SOURCE_DIR", HERE.parents[2]))
    doc = json.loads((src / "data/cuda/cuda.json").read_text())
    return [v["cuda"] for v in doc["versions"] if "libraries" in v]


def member_sonames(wheel: Path, tmp: Path) -> dict:
    """{member: DT_SONAME} of every ELF member, read with readelf."""
    x = unpack(wheel, tmp)
    out = {}
    for f in sorted(x.rglob("*")):
        if f.is_file() and not f.is_symlink() and f.read_bytes()[:4] == b"\x7fELF":
            out[str(f.relative_to(x))] = readelf_dynamic(f)["SONAME"]
    return out


def pkgtool_check(wheel: Path, version: str, *extra) -> subprocess.CompletedProcess:
    return run([os.environ["PKGTOOL"], "check", wheel, "--cuda", version, "--expect-table",
                "--no-runtime", *extra], ok=False)


def torchlike_wheel(fx: Fixtures, name: str, cudart: Path, version: str) -> Path:
    """name: _C → the stand-in root's libcudart (no search path leads
    there: only the table finds the libraries)."""
    t = fx.tree(name, "1.0")
    fx.extension(t / f"{name}/_C{fx.py['ext']}", "_C", "int cudaRuntimeGetVersion(int*);\n",
                 "cudaRuntimeGetVersion(&(int){0}) * 0 + 7", f"-L{cudart.parent}", f"-l:{cudart.name}")
    (t / f"{name}/__init__.py").write_text("from ._C import value\n")
    (t / f"{name}/version.py").write_text(f'__version__ = "1.0"\ncuda = "{version}"\n')
    return fx.pack(t)


def case_table_versions(fx: Fixtures, tmp: Path) -> None:
    """For every version of the built-in table: a stand-in root with the
    table's libraries under their real SONAMEs (libnvrtc-builtins.so →
    libnvrtc-builtins.so.X.Y; CUPTI moved to lib64 on 13.0 to take the
    fallback), the driver run with --cuda-root and the built-in table, and
    the output passes its own check and `pkgtool check --expect-table`;
    every table entry is in the wheel by the name rule (readelf SONAMEs)."""
    versions = table_versions()
    check(len(versions) >= 15 and {"12.6", "12.8", "12.9", "13.0"} <= set(versions), f"versions {versions}")
    for version in data_rows(versions, newest_per_major):
        libs = cuda_standin.table_libraries(fx.pkgtool, version)
        move = {Path(l["path"]).name: "lib64" for l in libs
                if "/extras/CUPTI/" in l["path"] and version == "13.0"}
        root = tmp / f"root-{version}"
        made = cuda_standin.make_root(root, libs, version, move=move)
        cudart = next(path for name, (path, _) in made.items() if name.startswith("libcudart.so"))
        name = "tv" + version.replace(".", "_")
        wheel = torchlike_wheel(fx, name, cudart, version)
        out = tmp / f"out-{version}"
        doc = driver_json("--wheel", wheel, "--cuda", version, "--cuda-root", root, "-o", out, "--no-runtime")
        if doc is None:
            continue
        check_report(doc, {"accelerator": "pass", "dependencies": "pass"})
        w = one_wheel(out)
        if w is None:
            continue
        sonames = member_sonames(w, tmp / f"x-{version}")
        for lib in libs:
            want = cuda_standin.real_soname(lib["soname"], version)
            hits = [m for m, so in sonames.items() if m.startswith(f"{name}/lib/") and
                    (so == want or so == hashed(want, made[lib["soname"]][0]))]
            check(len(hits) == 1, f"CUDA {version}: {lib['soname']} bundled as {want}: {sorted(sonames)}")
            if hits and lib["keep_name"]:
                check(hits[0] == f"{name}/lib/{want}", f"CUDA {version}: {want} keeps its name: {hits}")
        if version == "13.0":
            check(any("libcupti.so.13" in line and str(root / "lib64") in line for line in doc["plan"]),
                  f"13.0 plan says CUPTI came from the fallback lib64: {doc['plan']}")
        p = pkgtool_check(w, version)
        check(p.returncode == 0, f"CUDA {version}: pkgtool check --expect-table passes: {p.stdout[-2000:]}{p.stderr}")
        if version == "13.0":
            # Control: the same wheel without the builtins fails the check.
            cut = tmp / "cut" / w.name
            cut.parent.mkdir()
            with zipfile.ZipFile(w) as zi, zipfile.ZipFile(cut, "w") as zo:
                for i in zi.infolist():
                    if "libnvrtc-builtins" not in i.filename:
                        zo.writestr(i, zi.read(i))
            p = pkgtool_check(cut, version, "--skip", "integrity")
            check(p.returncode != 0 and "libnvrtc-builtins.so (CUDA 13.0 table) is neither carried nor needed"
                  in p.stdout + p.stderr, f"control: without the builtins the check fails: {p.stdout[-2000:]}")


def case_table_missing(fx: Fixtures, tmp: Path) -> None:
    """A stand-in root lacking some of the 13.0 table's files: the driver
    fails before writing anything, exit 2, ONE error line naming every
    missing file and every path it looked at."""
    libs = cuda_standin.table_libraries(fx.pkgtool, "13.0")
    gone = {"libcufile.so.0", "libnvshmem_host.so.3", "libcupti.so.13", "libmlx5.so.1"}
    root = tmp / "root"
    made = cuda_standin.make_root(root, libs, "13.0", skip=gone)
    cudart = made["libcudart.so.13"][0]
    wheel = torchlike_wheel(fx, "tm", cudart, "13.0")
    out = tmp / "out"
    p = driver("--wheel", wheel, "--cuda", "13.0", "--cuda-root", root, "-o", out)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: CUDA 13.0 table: 4 libraries are not on disk"),
          f"one error: exit {p.returncode}: {p.stderr}")
    msg = lines[0] if lines else ""
    for f in gone:
        check(f"{f} (looked for " in msg, f"{f} named: {msg}")
    for path in (root / "lib64/libcufile.so.0", root / "extras/CUPTI/lib64/libcupti.so.13",
                 root / "lib64/libcupti.so.13"):
        check(str(path) in msg, f"looked at {path}: {msg}")
    check(not out.exists() or not any(out.iterdir()), "nothing written")
    # A file of the wrong SONAME at the right place is passed over, said so.
    bad = root / "lib64/libcufile.so.0"
    run(["gcc", "-shared", "-Wl,-soname,libother.so.1", "-o", bad, "-x", "c", "/dev/null"])
    p = driver("--wheel", wheel, "--cuda", "13.0", "--cuda-root", root, "-o", out)
    check(p.returncode == 2 and f"{bad} (its SONAME libother.so.1 is not libcufile.so.0)" in p.stderr,
          f"wrong SONAME said: {p.stderr}")


AARCH64_GCC = "aarch64-linux-gnu-gcc"
AARCH64_SYSROOT = Path("/usr/aarch64-linux-gnu")


def case_aarch64(fx: Fixtures, tmp: Path) -> None:
    """sbsa: an aarch64 torch-like wheel cross-compiled here (its _C links
    the stand-in root's CUDA libraries and libgfortran), the 13.0 table's
    aarch64 list from a cross-compiled stand-in root (NVPL present, ACL
    absent), the driver on it: manylinux_2_28_aarch64, libgomp/libgfortran/
    NVPL bundled, ACL skipped as optional, 64 KiB segment alignment kept,
    the build command sees the aarch64 TORCH_CUDA_ARCH_LIST; then the
    loader (qemu-aarch64 ld.so --list) resolves every library of _C inside
    the wheel."""
    for tool in (AARCH64_GCC, "qemu-aarch64"):
        if shutil.which(tool) is None:
            raise SystemExit(f"error: {tool} not installed (scripts/setup.sh installs it)")
    loader = AARCH64_SYSROOT / "lib/ld-linux-aarch64.so.1"
    libs = cuda_standin.table_libraries(fx.pkgtool, "13.0", "aarch64")
    acl = {Path(l["path"]).name for l in libs if "libarm_compute" in l["path"]}
    check(len(acl) == 2 and any("libgfortran.so.5" in l["path"] for l in libs), f"aarch64 list: {libs}")
    root = tmp / "sbsa"
    made = cuda_standin.make_root(root, libs, "13.0", cc=AARCH64_GCC, skip=acl)
    check((root / "usr/lib64/libgfortran.so.5").is_file() and (root / "lib64/libgomp.so.1").is_file(),
          "absolute table directories re-rooted under the stand-in root")
    # _C links what a torch build links: the CUDA libraries and libgfortran.
    linked = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9",
              "libnvrtc.so.13", "libcupti.so.13", "libgfortran.so.5", "libnvpl_blas_core.so.0"]
    name = "armtorch"
    pyver = fx.py["tag"][2:]
    t = fx.tree(name, "1.0", arch="aarch64")
    (t / name).mkdir()
    ext = t / name / f"_C.cpython-{pyver}-aarch64-linux-gnu.so"
    src = tmp / "armc.c"
    # No Python.h for aarch64 here: the init symbol is what makes it an
    # extension module for the checks.
    src.write_text("".join(f"int f{i}(void) {{ return {i}; }}\n" for i in range(3)) +
                   "void* PyInit__C(void) { return 0; }\n")
    lflags = []
    for n in linked:
        lflags += [f"-L{made[n][0].parent}", f"-l:{n}"]
    run([AARCH64_GCC, "-shared", "-fPIC", "-O1", "-o", ext, src, "-Wl,--no-as-needed", *lflags])
    (t / name / "__init__.py").write_text("from ._C import *\n")
    wheel = fx.pack(t)
    check(wheel.name.endswith("-linux_aarch64.whl"), f"aarch64 wheel {wheel.name}")

    out = tmp / "out"
    # The cross C library is where the loader of an aarch64 system would
    # find it: --lib-path points the analysis at the cross sysroot.
    doc = driver_json("--wheel", wheel, "--cuda", "13.0", "--arch", "aarch64", "--cuda-root", root,
                      "--lib-path", AARCH64_SYSROOT / "lib", "-o", out, "--no-runtime")
    if doc is None:
        return
    check_report(doc, {"accelerator": "pass"})
    plan = "\n".join(doc["plan"])
    check("target manylinux_2_28_aarch64 on aarch64" in plan, f"policy from the table: {plan}")
    check("TORCH_CUDA_ARCH_LIST=8.0;9.0;10.0;11.0;12.0+PTX" in plan, f"aarch64 arch list in the plan: {plan}")
    check("libarm_compute.so (optional, not present:" in plan, f"ACL skipped as optional: {plan}")
    w = one_wheel(out)
    if w is None:
        return
    check("manylinux_2_28_aarch64" in w.name[:-4].split("-")[-1].split(".") and "linux_aarch64" not in
          w.name[:-4].split("-")[-1].split("."), f"tagged manylinux_2_28_aarch64: {w.name}")
    x = unpack(w, tmp / "x")
    present = sorted(p.name for p in (x / name / "lib").iterdir())
    for lib in libs:
        base = Path(lib["path"]).name
        if base in acl:
            check(not any(p.startswith("libarm_compute") for p in present), f"ACL not bundled: {present}")
            continue
        want = cuda_standin.real_soname(lib["soname"], "13.0")
        stem = want.split(".so")[0]
        check(any(p == want or (p.startswith(stem + "-") and p.endswith(want[len(stem):])) for p in present),
              f"aarch64 13.0: {want} bundled: {present}")
    for f in (x / name / "lib").iterdir():
        hdr = run(["readelf", "-hlW", f]).stdout
        check("AArch64" in hdr, f"{f.name} is AArch64")
        aligns = re.findall(r"^\s+LOAD\s.*\s(0x[0-9a-f]+)$", hdr, re.M)
        check(aligns and all(int(a, 16) >= 0x10000 for a in aligns), f"{f.name}: LOAD aligned to 64 KiB: {aligns}")
    p = pkgtool_check(w, "13.0")
    check(p.returncode == 0, f"pkgtool check --expect-table on the aarch64 wheel: {p.stdout[-2000:]}{p.stderr}")
    # The loader, emulated: every library of _C resolves inside the wheel.
    r = run(["qemu-aarch64", "-L", AARCH64_SYSROOT, loader, "--list", next((x / name).glob("_C*.so"))], ok=False)
    check(r.returncode == 0, f"ld.so --list under qemu: {r.stdout}{r.stderr}")
    lines = r.stdout.splitlines()
    for n in linked:
        stem = n.split(".so")[0]
        hit = [l for l in lines if re.match(rf"\s*{re.escape(stem)}(-[0-9a-f]{{8}})?\.so", l.strip())]
        check(len(hit) == 1 and f"{x}/{name}/lib/" in hit[0], f"{n} resolves in the wheel: {hit} {r.stdout}")
    check("not found" not in r.stdout, f"nothing unresolved: {r.stdout}")

    # A build command gets the table's aarch64 settings in its environment.
    srcdir = tmp / "src"
    (srcdir / "dist").mkdir(parents=True)
    doc = driver_json("--build-command", f"env > {tmp}/build-env.txt; cp {wheel} dist/", "--source", srcdir,
                      "--python", fx.py["ver"], "--cuda", "13.0", "--arch", "aarch64", "--cuda-root", root,
                      "--lib-path", AARCH64_SYSROOT / "lib", "-o", tmp / "out2", "--no-runtime")
    env = dict(l.split("=", 1) for l in (tmp / "build-env.txt").read_text().splitlines() if "=" in l)
    check(env.get("TORCH_CUDA_ARCH_LIST") == "8.0;9.0;10.0;11.0;12.0+PTX", f"build env arch list: {env.get('TORCH_CUDA_ARCH_LIST')}")
    check(env.get("TORCH_NVCC_FLAGS") == "-Xfatbin -compress-all --threads 2 -compress-mode=size"
          and env.get("USE_CUPTI_SO") == "1", f"build env nvcc flags: {env.get('TORCH_NVCC_FLAGS')}")
    # An aarch64 wheel under an x86_64 configuration is refused.
    p = driver("--wheel", wheel, "--cuda", "13.0", "--cuda-root", root, "-o", tmp / "o3")
    check(p.returncode == 2 and "the wheel is for aarch64" in p.stderr, f"arch mismatch: {p.stderr}")


REAL_CUDA = Path("/usr/local/cuda")
REAL_LINKED = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9", "libnvrtc.so.13",
               "libcupti.so.13", "libnccl.so.2"]
REAL_DECLS = """
#include <stddef.h>
#include <stdint.h>
int cudaRuntimeGetVersion(int*);
size_t cudnnGetVersion(void);
int nvrtcVersion(int*, int*);
int cublasGetProperty(int, int*);
size_t cublasLtGetVersion(void);
int cuptiGetVersion(uint32_t*);
int ncclGetVersion(int*);
static int rt(void) { int v = 0; cudaRuntimeGetVersion(&v); return v; }
static int others(void) {
  int a = 0, b = 0, m = 0, n = 0; uint32_t c = 0;
  return cudnnGetVersion() >= 90000 && nvrtcVersion(&a, &b) == 0 && a == 13 &&
         cublasGetProperty(0, &m) == 0 && m == 13 && cublasLtGetVersion() > 0 &&
         cuptiGetVersion(&c) == 0 && c > 0 && ncclGetVersion(&n) == 0 && n > 0;
}
"""


def venv_install(venv: Path, wheel: Path) -> Path:
    """A fresh venv with `wheel` installed; its site-packages."""
    run([PYTHON, "-m", "venv", "--without-pip", venv])
    run([PYTHON, "-m", "pip", "--python", venv / "bin/python", "install", "--no-index", "--no-deps",
         "--disable-pip-version-check", "-q", wheel])
    return next((venv / "lib").glob("python3*/site-packages"))


def hidden_toolkit_python(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    """python -c code with the toolkit and ld.so.cache hidden."""
    return cuda_standin.run_toolkit_hidden([python, "-c", code], cwd)


MAPS_CODE = """
import {m}, json
v = {m}.value()
maps = sorted({{l.split()[-1] for l in open('/proc/self/maps') if '.so' in l.split()[-1]}})
print(json.dumps({{'value': v, 'maps': maps}}))
"""


def case_real_cuda13_full(fx: Fixtures, tmp: Path) -> None:
    """The real toolkit end to end (label `long`: ~1.4 GB of libraries).
    A torch-like wheel whose _C links this machine's libcudart, libcublas,
    libcublasLt, libcudnn, libnvrtc, libcupti and libnccl; the 13.0 table's
    files the toolkit lacks come from a generated stand-in root; manywheel
    with DESIRED_CUDA=cu130 and the built-in table bundles every table
    library (cuDNN's sub-libraries under their names), its check and
    `pkgtool check --expect-table` pass; installed in a venv and imported
    with /usr/local/cuda* and ld.so.cache hidden, /proc/self/maps shows
    every CUDA library from inside the wheel. The same in PyPI-CUDA mode:
    the import fails until nvidia/{cu13,cudnn,nccl}/lib hold the libraries,
    then resolves there."""
    if not (REAL_CUDA / "lib64/libcudart.so.13").exists():
        skip_no_gpu(f"no CUDA 13 toolkit at {REAL_CUDA} (this case needs the real libraries)")
    for tool in ("unshare", "mount"):
        if shutil.which(tool) is None:
            raise SystemExit(f"error: {tool} not installed (util-linux/mount, scripts/setup.sh)")
    lib64 = REAL_CUDA / "lib64"
    libs = cuda_standin.table_libraries(fx.pkgtool, "13.0")
    # The table's files this toolkit lacks (in the table's directory or the
    # fallback): exactly those get stand-ins.
    lacking = set()
    for lib in libs:
        name = Path(lib["path"]).name
        if not (Path(lib["path"]).exists() or (lib64 / name).exists()):
            lacking.add(name)
    check({"libcusparseLt.so.0", "libcufile.so.0", "libnvshmem_host.so.3", "libmlx5.so.1"} <= lacking,
          f"this machine lacks cusparseLt, cufile, nvshmem, RDMA: {sorted(lacking)}")
    standin = tmp / "standin"
    cuda_standin.make_root(standin, [l for l in libs if Path(l["path"]).name in lacking], "13.0")

    name = "realtorch"
    t = fx.tree(name, "1.0")
    lflags = [f"-L{lib64}"] + [f"-l:{n}" for n in REAL_LINKED]
    fx.extension(t / f"{name}/_C{fx.py['ext']}", "_C", REAL_DECLS, "rt() * others()",
                 "-Wl,--no-as-needed", *lflags)
    (t / f"{name}/__init__.py").write_text("from ._C import value\n")
    (t / f"{name}/version.py").write_text('__version__ = "1.0"\ncuda = "13.0"\n')
    wheel = fx.pack(t)

    exe = os.environ["MANYWHEEL"]
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "BUILD_ENVIRONMENT",
                                                          "PYTORCH_EXTRA_INSTALL_REQUIREMENTS")}
    env.update({"PACKAGE_TYPE": "manywheel", "DESIRED_CUDA": "cu130", "DESIRED_PYTHON": fx.py["ver"]})
    out = tmp / "out"
    t0 = time.monotonic()
    p = subprocess.run([exe, "--wheel", wheel, "--cuda-root", REAL_CUDA, "--cuda-root", standin, "-o", out,
                        "--check-python", PYTHON, "--json", "-j", "2"], capture_output=True, text=True, env=env)
    print(f"manywheel cu130: {time.monotonic() - t0:.1f} s")
    if not check(p.returncode == 0, f"manywheel cu130: exit {p.returncode}: {p.stderr}{p.stdout[-4000:]}"):
        return
    doc = json.loads(p.stdout)
    check(doc["config"]["accelerator"] == "cu130", f"DESIRED_CUDA read: {doc['config']}")
    check_report(doc, {"accelerator": "pass", "import": "pass", "dependencies": "pass"})
    w = one_wheel(out)
    if w is None:
        return
    x = tmp / "x"
    sonames = member_sonames(w, x)
    pkg_lib = f"{name}/lib/"
    for lib in libs:
        real = Path(lib["path"]) if Path(lib["path"]).exists() else lib64 / Path(lib["path"]).name
        src = real if real.exists() else standin / cuda_standin.relative_path(lib["path"]).parent / Path(lib["path"]).name
        want = readelf_dynamic(src)["SONAME"] or Path(lib["path"]).name
        hits = [m for m, so in sonames.items() if m.startswith(pkg_lib) and (so == want or so == hashed(want, src.resolve()))]
        check(len(hits) == 1, f"13.0 table: {lib['soname']} ({want}) bundled: {sorted(sonames)}")
        if hits and lib["keep_name"]:
            check(hits[0] == pkg_lib + want, f"{want} keeps its name: {hits}")
    for sub in ("adv", "cnn", "graph", "ops", "engines_runtime_compiled", "engines_precompiled", "heuristic"):
        check(f"{pkg_lib}libcudnn_{sub}.so.9" in sonames, f"cuDNN sub-library libcudnn_{sub}.so.9 (dlopened by name)")
    check(any(m.startswith(pkg_lib + "libnccl-") for m in sonames), f"libnccl bundled as a dependency: {sorted(sonames)}")
    ext = readelf_dynamic(next((x / name).glob("_C*.so")))
    check(ext["RUNPATH"] == "$ORIGIN/lib" and ext["RPATH"] is None, f"_C RUNPATH: {ext}")
    check(all(n not in ext["NEEDED"] for n in ("libcudart.so.13", "libnvrtc.so.13", "libnccl.so.2")),
          f"_C NEEDED rewritten to the bundled names: {ext['NEEDED']}")
    r = pkgtool_check(w, "13.0")
    check(r.returncode == 0, f"pkgtool check --expect-table: {r.stdout[-3000:]}{r.stderr}")

    venv = tmp / "venv"
    site = venv_install(venv, w)
    r = hidden_toolkit_python(venv / "bin/python", MAPS_CODE.format(m=name), tmp)
    if check(r.returncode == 0, f"import with the toolkit hidden: {r.stdout}{r.stderr}"):
        got = json.loads(r.stdout.strip().splitlines()[-1])
        check(got["value"] == 13000, f"runtime 13.0 and every library answered: {got['value']}")
        maps = got["maps"]
        for stem in ("libcudart", "libcublas", "libcublasLt", "libcudnn", "libnvrtc", "libcupti", "libnccl"):
            mine = [m for m in maps if Path(m).name.startswith(stem + "-") or Path(m).name.startswith(stem + ".")]
            check(mine and all(m.startswith(str(site / name / "lib") + "/") for m in mine),
                  f"{stem} mapped from inside the wheel: {mine}")
        check(not any(m.startswith("/usr/local/cuda") for m in maps), f"nothing from the toolkit: {maps}")
    # Control: the input wheel cannot import with the toolkit hidden.
    venv_in = tmp / "venv-in"
    venv_install(venv_in, wheel)
    r = hidden_toolkit_python(venv_in / "bin/python", MAPS_CODE.format(m=name), tmp)
    check(r.returncode != 0 and "libcu" in r.stderr, f"control: the unrepaired wheel fails hidden: {r.stdout}{r.stderr}")
    shutil.rmtree(venv)
    shutil.rmtree(x)
    w.unlink()

    # PyPI-CUDA mode: nothing of the table bundled; nvidia/cu13/lib et al.
    out = tmp / "out-pypi"
    env_pypi = dict(env, PYTORCH_EXTRA_INSTALL_REQUIREMENTS="nvidia-cuda-runtime; nvidia-cudnn-cu13")
    p = subprocess.run([exe, "--wheel", wheel, "--cuda-root", REAL_CUDA, "--cuda-root", standin, "-o", out,
                        "--no-runtime", "--json"], capture_output=True, text=True, env=env_pypi)
    if not check(p.returncode == 0, f"manywheel cu130 pypi: {p.stderr}{p.stdout[-3000:]}"):
        return
    w = one_wheel(out)
    if w is None:
        return
    with zipfile.ZipFile(w) as z:
        members = z.namelist()
    check(not any("libcudart" in m or "libcudnn" in m or "libcublas" in m for m in members),
          f"pypi mode bundles no table library: {members}")
    xp = unpack(w, tmp / "xp")
    ext = readelf_dynamic(next((xp / name).glob("_C*.so")))
    # The table's list rebased for the package top (nothing is bundled, so
    # no lib/ entry follows).
    want = ["$ORIGIN/../nvidia/cudnn/lib", "$ORIGIN/../nvidia/nvshmem/lib", "$ORIGIN/../nvidia/nccl/lib",
            "$ORIGIN/../nvidia/cusparselt/lib", "$ORIGIN/../nvidia/cu13/lib"]
    check(ext["RPATH"] == ":".join(want) and ext["RUNPATH"] is None, f"_C DT_RPATH: {ext}")
    venv = tmp / "venv-pypi"
    site = venv_install(venv, w)
    r = hidden_toolkit_python(venv / "bin/python", MAPS_CODE.format(m=name), tmp)
    check(r.returncode != 0 and "libcu" in r.stderr, f"pypi: no nvidia packages, no import: {r.stdout}{r.stderr}")
    homes = {"libcudnn": "cudnn", "libnccl": "nccl"}
    for n in REAL_LINKED:
        d = site / "nvidia" / homes.get(n.split(".so")[0], "cu13") / "lib"
        d.mkdir(parents=True, exist_ok=True)
        try:
            os.link(lib64 / n, d / n)
        except OSError:
            shutil.copy(lib64 / n, d / n)
    for n in ("libcudnn_graph.so.9", "libnvrtc-builtins.so.13.0"):
        d = site / "nvidia" / ("cudnn" if "cudnn" in n else "cu13") / "lib"
        try:
            os.link(lib64 / n, d / n)
        except OSError:
            shutil.copy(lib64 / n, d / n)
    r = hidden_toolkit_python(venv / "bin/python", MAPS_CODE.format(m=name), tmp)
    if check(r.returncode == 0, f"pypi: import with nvidia/*/lib: {r.stdout}{r.stderr}"):
        got = json.loads(r.stdout.strip().splitlines()[-1])
        check(got["value"] == 13000, f"pypi: every library answered: {got['value']}")
        for n in REAL_LINKED:
            home = site / "nvidia" / homes.get(n.split(".so")[0], "cu13") / "lib" / n
            check(str(home) in got["maps"], f"pypi: {n} mapped from {home}: {got['maps']}")


def case_pypi_provides(fx: Fixtures, tmp: Path) -> None:
    """pypi-CUDA 13.0: NCCL comes from the nvidia-nccl wheel (the table's
    pypi_provides), so a _C linking libnccl.so.2 does not get it bundled;
    the same wheel outside pypi mode does (control)."""
    libs = cuda_standin.table_libraries(fx.pkgtool, "13.0")
    root = tmp / "root"
    made = cuda_standin.make_root(root, libs, "13.0")
    cudart = made["libcudart.so.13"][0]
    nccl = fx.lib(tmp / "nccl/libnccl.so.2", "libnccl.so.2", "int ncclGetVersion(int* v) { *v = 22809; return 0; }\n")
    t = fx.tree("pp", "1.0")
    fx.extension(t / f"pp/_C{fx.py['ext']}", "_C", "int ncclGetVersion(int*); int cudaRuntimeGetVersion(int*);\n",
                 "ncclGetVersion(&(int){0}) + cudaRuntimeGetVersion(&(int){0})",
                 f"-L{cudart.parent}", f"-l:{cudart.name}", f"-L{nccl.parent}", "-l:libnccl.so.2")
    (t / "pp/__init__.py").write_text("from ._C import value\n")
    wheel = fx.pack(t)
    grafts = {}
    for mode in ("pypi", "bundled"):
        extra = ["--pypi-cuda"] if mode == "pypi" else []
        doc = driver_json("--wheel", wheel, "--cuda", "13.0", "--cuda-root", root, "--lib-path", nccl.parent,
                          "-o", tmp / mode, "--dry-run", *extra)
        grafts[mode] = sorted(g["soname"] for g in doc["plan_detail"]["grafts"]) if doc else []
        if doc and mode == "pypi":
            check(any("also from nvidia-* wheels: libnccl.so.*" in line for line in doc["plan"]), f"plan: {doc['plan']}")
    check("libnccl.so.2" not in grafts["pypi"] and "libcudart.so.13" not in grafts["pypi"],
          f"pypi mode bundles neither NCCL nor the runtime: {grafts['pypi']}")
    check("libnccl.so.2" in grafts["bundled"], f"control: bundled mode bundles NCCL: {grafts['bundled']}")


def case_promised_checks(fx: Fixtures, tmp: Path) -> None:
    """The driver requires what its configuration promises (check_binary
    --require import): with an interpreter of the wheel's Python that cannot
    make a venv, the import check's skip fails the run; with no such
    interpreter at all the import is not promised and a note says why."""
    wheel, _ = fx.cpu_wheel()
    broken = tmp / "bin-broken" / f"python{fx.py['ver']}"
    broken.parent.mkdir()
    broken.write_text(f'#!/bin/sh\n[ "$1 $2" = "-m venv" ] || [ "$2 $3" = "-m venv" ] && '
                      f'{{ echo "no venv here" >&2; exit 1; }}\nexec {PYTHON} "$@"\n')
    broken.chmod(0o755)
    exe = os.environ["MANYWHEEL"]
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "BUILD_ENVIRONMENT")}
    p = subprocess.run([exe, "--no-env", "--check-python", broken, "--wheel", wheel, "-o", tmp / "out1",
                        "--json"], capture_output=True, text=True, env=env)
    check(p.returncode == 1, f"a promised import that skips fails the run: exit {p.returncode}\n{p.stderr}")
    if p.stdout:
        doc = json.loads(p.stdout)
        check("promised checks (--require): import" in doc["notes"], f"notes: {doc['notes']}")
        by_id = {c["id"]: c for c in doc["checks"][0]["checks"]} if doc["checks"] else {}
        imp = by_id.get("import", {})
        check(imp.get("status") == "fail" and "cannot create a venv" in imp.get("summary", ""),
              f"import: {imp}")
    # No interpreter of that version on PATH and none given: not promised.
    empty = tmp / "bin-empty"
    empty.mkdir()
    env["PATH"] = str(empty)
    p = subprocess.run([exe, "--no-env", "--check-python", "python3", "--wheel", wheel, "-o", tmp / "out2",
                        "--json"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"without an interpreter the run passes: exit {p.returncode}\n{p.stderr}")
    if p.stdout:
        doc = json.loads(p.stdout)
        why = [n for n in doc["notes"] if n.startswith("import not promised")]
        check(len(why) == 1 and f"Python {fx.py['ver']}" in why[0] and "--check-python" in why[0],
              f"a note says why import is not promised: {doc['notes']}")


CASES = {"cpu": case_cpu, "splice": case_splice, "cuda": case_cuda, "pypi": case_pypi, "dry_run": case_dry_run,
         "build_command": case_build_command, "bad_input": case_bad_input, "real_cuda": case_real_cuda,
         "table_versions": case_table_versions, "table_missing": case_table_missing,
         "aarch64": case_aarch64, "real_cuda13_full": case_real_cuda13_full,
         "pypi_provides": case_pypi_provides, "promised_checks": case_promised_checks}


def main() -> int:
    name = os.environ.get("MANYWHEEL_CASE") or (sys.argv[1] if len(sys.argv) > 1 else "")
    if name not in CASES:
        print(f"usage: MANYWHEEL_CASE={{{','.join(CASES)}}} {sys.argv[0]}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix=f"libpkg-manywheel-{name}-"))
    try:
        CASES[name](Fixtures(tmp / "fx"), tmp)
    finally:
        if os.environ.get("TEST_KEEP") == "1":
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return CHECKS.status()


if __name__ == "__main__":
    sys.exit(main())
