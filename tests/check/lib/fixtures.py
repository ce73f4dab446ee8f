# SPDX-License-Identifier: BSD-3-Clause
"""Fixture packages for the check_binary integration tests.

Every fixture is compiled at test time with the system gcc/g++ and packed
with the project's own `pkgtool` (wheel pack, conda pack, libtorch pack,
patchelf): good packages, and broken ones that each carry exactly one
defect. After building, each fixture is confirmed with binutils (`readelf`)
and the policy JSON, so a test cannot pass because its fixture silently
lost the defect it is meant to carry.

Fixtures are cached under $LIBPKG_BINARY_DIR/tests/check/fixtures (one
directory per fixture, built under a file lock so parallel ctest runs build
each one once). A cached fixture is rebuilt when this file or the pkgtool
binary changes.

Run by hand:  fixtures.py NAME...   (prints each artifact path)
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
from testlib import readelf_dynamic  # noqa: E402

HERE = Path(__file__).resolve().parent
PYTHON = "/usr/bin/python3"  # Debian's interpreter: has Python.h and venv
ARCH = platform.machine()


class Missing(Exception):
    """Something the fixture needs (a tool, a header, a library that
    scripts/setup.sh installs) is missing: the test fails."""


class FixtureError(Exception):
    """The fixture could not be built or lacks its defect."""


def run(argv, env=None, cwd=None) -> str:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        raise FixtureError(f"{' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p.stdout


def require(*tools: str) -> None:
    for t in tools:
        if shutil.which(t) is None:
            raise Missing(f"{t} not installed")


# ------------------------------------------------------------ readelf facts




def version_needs(path: Path) -> set[str]:
    """Version names required from other objects (`readelf -V`, needs only)."""
    names: set[str] = set()
    in_needs = False
    for line in run(["readelf", "-V", "--wide", path]).splitlines():
        if line.startswith("Version needs section"):
            in_needs = True
        elif line.startswith("Version definition section") or line.startswith("Version symbols section"):
            in_needs = False
        elif in_needs:
            m = re.search(r"Name: (\S+)", line)
            if m:
                names.add(m.group(1))
    return names


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def policy_excess(path: Path, policy_name: str) -> list[str]:
    """The symbol versions `path` needs beyond the policy's (the policy JSON
    is data, read independently of libpkg)."""
    src = Path(os.environ.get("LIBPKG_SOURCE_DIR", HERE.parents[2]))
    policies = json.loads((src / "data/policy/manylinux-policy.json").read_text())
    policy = next(p for p in policies if p["name"] == policy_name or policy_name in p.get("aliases", []))
    limits = policy["symbol_versions"][ARCH]
    excess = []
    for name in sorted(version_needs(path)):
        prefix, _, ver = name.partition("_")
        if prefix in limits and ver:
            allowed = max((_vkey(v) for v in limits[prefix]), default=())
            if _vkey(ver) > allowed:
                excess.append(name)
    return excess


def confirm(cond: bool, what: str) -> None:
    if not cond:
        raise FixtureError(f"fixture lacks its defining property: {what}")


# ------------------------------------------------------------ sources

EXT_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
{decls}
static PyObject* value(PyObject* self, PyObject* args) {{
  (void)self; (void)args;
  return PyLong_FromLong((long)({expr}));
}}
static PyMethodDef methods[] = {{{{"value", value, METH_NOARGS, "fixture value"}},
                                 {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};
{linkage}PyMODINIT_FUNC PyInit_{name}(void) {{ return PyModule_Create(&module); }}
"""

# g++ 12 puts std::condition_variable::wait(unique_lock&) at GLIBCXX_3.4.30.
GLIBCXX_DECLS = """\
#include <condition_variable>
#include <cstdlib>
#include <mutex>
static long handshake() {
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  // Never true: the call must exist but not block.
  if (std::getenv("CHECK_FIXTURE_NEVER_SET")) cv.wait(lock);
  return 42;
}
"""

CUDART_C = """\
/* A stand-in for the CUDA runtime on a machine without a GPU: the same
   SONAME and entry points, each answering 100 (cudaErrorNoDevice). */
#include <stddef.h>
enum { kNoDevice = 100 };
int cudaGetDeviceCount(int* count) { *count = 0; return kNoDevice; }
const char* cudaGetErrorString(int error) {
  return error == kNoDevice ? "no CUDA-capable device is detected" : "unknown error";
}
int cudaMalloc(void** p, size_t n) { (void)n; *p = NULL; return kNoDevice; }
int cudaMemset(void* p, int v, size_t n) { (void)p; (void)v; (void)n; return kNoDevice; }
int cudaMemcpy(void* d, const void* s, size_t n, int k) { (void)d; (void)s; (void)n; (void)k; return kNoDevice; }
int cudaFree(void* p) { (void)p; return kNoDevice; }
int cudaDeviceSynchronize(void) { return kNoDevice; }
"""

TORCH_HEADER = """\
#pragma once
#include <list>
#include <string>
namespace torch {
std::string greet(const std::string& who);
}
"""

CLIENT_CPP = """\
#include <torch/api.h>
#include <iostream>
int main() {
  std::string s = torch::greet("client");
  std::cout << s << std::endl;
  return s == "hello client" ? 0 : 1;
}
"""

# Enough symbols for the census defaults (1000 pre-cxx11, 100 cxx11).
TORCH_FUNCTIONS = 1200


def torch_source(functions: int) -> str:
    lines = ["#include <list>", "#include <string>", '#include "torch/api.h"',
             "namespace c10 { int c10_version(); }",
             'std::string torch::greet(const std::string& who) { return "hello " + who; }']
    for i in range(functions):
        ns = "torch" if i % 2 == 0 else "c10"
        lines.append(f"namespace {ns} {{ std::string f_{i:04d}(const std::string& a, "
                     f"const std::list<std::string>& l) {{ std::string r = a; "
                     f"for (const auto& s : l) r += s; return r + \"{i}\"; }} }}")
    lines.append("int torch_uses_c10() { return c10::c10_version(); }")
    return "\n".join(lines) + "\n"


def torch_config(abi: int) -> str:
    return (f'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI={abi}")\n'
            'set(TORCH_LIBRARIES torch torch_cpu c10)\n')


# ------------------------------------------------------------ builder


class Fixtures:
    """Builds (once, cached) and returns fixture artifacts by name."""

    def __init__(self, cache: Path | None = None, pkgtool: str | None = None):
        self.pkgtool = pkgtool or os.environ.get("PKGTOOL") or ""
        if not self.pkgtool or not Path(self.pkgtool).is_file():
            raise FixtureError("PKGTOOL must point at the pkgtool binary")
        binary = os.environ.get("LIBPKG_BINARY_DIR")
        self.cache = cache or (Path(binary) / "tests/check/fixtures" if binary
                               else Path("/tmp") / f"libpkg-check-fixtures-{os.getuid()}")
        self.cache.mkdir(parents=True, exist_ok=True)
        st = Path(self.pkgtool).stat()
        self.key = hashlib.sha256(Path(__file__).read_bytes()
                                  + f"{st.st_mtime_ns}:{st.st_size}".encode()).hexdigest()
        self.env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
        for var in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
            self.env.pop(var, None)

    # -- public

    def get(self, name: str) -> Path:
        """The artifact of fixture `name`, building it when needed."""
        builder = getattr(self, f"build_{name.replace('-', '_')}", None)
        if builder is None:
            raise FixtureError(f"unknown fixture '{name}'")
        d = self.cache / name
        stamp = d / "stamp.json"
        with open(self.cache / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if stamp.is_file():
                s = json.loads(stamp.read_text())
                if s.get("key") == self.key and Path(s.get("artifact", "")).exists():
                    return Path(s["artifact"])
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            artifact = builder(d)
            stamp.write_text(json.dumps({"key": self.key, "artifact": str(artifact)}))
            return artifact

    def fixture_dir(self, name: str) -> Path:
        return self.cache / name

    # -- helpers

    def python_info(self) -> dict:
        if not hasattr(self, "_py"):
            out = run([PYTHON, "-c", "import sys, sysconfig, json; print(json.dumps({"
                       "'inc': sysconfig.get_paths()['include'], "
                       "'ext': sysconfig.get_config_var('EXT_SUFFIX'), "
                       "'tag': 'cp%d%d' % sys.version_info[:2], "
                       "'ver': '%d.%d' % sys.version_info[:2]}))"])
            self._py = json.loads(out)
            if not (Path(self._py["inc"]) / "Python.h").is_file():
                raise Missing(f"Python.h not in {self._py['inc']} (python3-dev)")
        return self._py

    def tag(self, plat: str) -> str:
        t = self.python_info()["tag"]
        return f"{t}-{t}-{plat}"

    def wheel_tree(self, d: Path, dist: str, version: str, plat: str) -> Path:
        t = d / "tree"
        di = t / f"{dist}-{version}.dist-info"
        di.mkdir(parents=True)
        (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                                     "Summary: libpkg check_binary test fixture\n")
        (di / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: check-fixtures\n"
                                  f"Root-Is-Purelib: false\nTag: {self.tag(plat)}\n")
        return t

    def pack_wheel(self, d: Path, tree: Path) -> Path:
        out = d / "wheel"
        out.mkdir()
        run([self.pkgtool, "wheel", "pack", tree, "-d", out], env=self.env)
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise FixtureError(f"wheel pack of {tree} produced {wheels}")
        return wheels[0]

    def extension(self, pkg_dir: Path, name: str, *flags, decls: str = "", expr: str = "0",
                  cxx: bool = False) -> Path:
        """Extension module `name` (plain C API) for /usr/bin/python3, in
        pkg_dir."""
        require("g++" if cxx else "gcc")
        py = self.python_info()
        pkg_dir.mkdir(parents=True, exist_ok=True)
        src = pkg_dir / f"{name}.{'cpp' if cxx else 'c'}"
        src.write_text(EXT_C.format(decls=decls, expr=expr, name=name,
                                    linkage='extern "C" ' if cxx else ""))
        so = pkg_dir / f"{name}{py['ext']}"
        run(["g++" if cxx else "gcc", "-O1", "-fPIC", "-shared", f"-I{py['inc']}", "-o", so, src, *flags])
        src.unlink()
        return so

    def package(self, t: Path, pkg: str, ext_names: list[str]) -> None:
        lines = [f"from .{e} import value as {e.lstrip('_')}_value" for e in ext_names]
        (t / pkg).mkdir(parents=True, exist_ok=True)
        (t / pkg / "__init__.py").write_text("\n".join(lines) + "\n")

    # -- (a) the good wheel: one C extension, libc only, manylinux_2_17

    def build_good_wheel(self, d: Path) -> Path:
        t = self.wheel_tree(d, "goodpkg", "1.0", f"manylinux_2_17_{ARCH}")
        so = self.extension(t / "goodpkg", "_ext", expr="41 + 1")
        self.package(t, "goodpkg", ["_ext"])
        confirm(set(readelf_dynamic(so)["NEEDED"]) <= {"libc.so.6"}, f"{so.name} needs at most libc: {readelf_dynamic(so)}")
        confirm(not policy_excess(so, "manylinux_2_17"), f"{so.name} fits manylinux_2_17")
        return self.pack_wheel(d, t)

    # -- tampered RECORD: one hash of the good wheel altered

    def build_record(self, d: Path) -> Path:
        good = self.get("good_wheel")
        out = d / good.name
        with zipfile.ZipFile(good) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                data = zin.read(info)
                if info.filename.endswith(".dist-info/RECORD"):
                    lines = data.decode().splitlines()
                    for i, line in enumerate(lines):
                        if line.startswith("goodpkg/__init__.py,sha256="):
                            path, digest, size = line.split(",")
                            fake = hashlib.sha256(b"not the content").digest()
                            b64 = base64.urlsafe_b64encode(fake).rstrip(b"=").decode()
                            lines[i] = f"{path},sha256={b64},{size}"
                            break
                    else:
                        raise FixtureError("RECORD has no goodpkg/__init__.py line")
                    data = ("\n".join(lines) + "\n").encode()
                zout.writestr(info, data)
        return out

    # -- glibcxx: a C++ extension needing GLIBCXX_3.4.30, named manylinux2014

    def build_glibcxx(self, d: Path) -> Path:
        require("g++")
        t = self.wheel_tree(d, "cxxpkg", "1.0", f"manylinux2014_{ARCH}")
        so = self.extension(t / "cxxpkg", "_cxx", decls=GLIBCXX_DECLS, expr="handshake()", cxx=True)
        self.package(t, "cxxpkg", ["_cxx"])
        if "GLIBCXX_3.4.30" not in version_needs(so):
            raise Missing("g++ did not produce a GLIBCXX_3.4.30 reference (needs g++ 12+)")
        excess = policy_excess(so, "manylinux_2_17")
        confirm(any(v.startswith("GLIBCXX_") for v in excess), "exceeds manylinux2014 in GLIBCXX")
        confirm(all(v.startswith("GLIBCXX_") for v in excess),
                f"only GLIBCXX versions exceed manylinux2014 (got {excess})")
        confirm(set(readelf_dynamic(so)["NEEDED"]) <= {"libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6"},
                f"system dependencies only: {readelf_dynamic(so)['NEEDED']}")
        return self.pack_wheel(d, t)

    # -- usrlib: an extension that needs libbz2 (not in the whitelist)

    def bz2_wheel(self, d: Path, plat: str) -> Path:
        if not any(Path(p).is_file() for p in (f"/usr/lib/{ARCH}-linux-gnu/libbz2.so", "/usr/lib/libbz2.so",
                                              "/usr/lib64/libbz2.so")):
            raise Missing("libbz2.so not found (libbz2-dev)")
        t = self.wheel_tree(d, "bzpkg", "1.0", plat)
        so = self.extension(t / "bzpkg", "_bz", "-lbz2", decls="const char* BZ2_bzlibVersion(void);",
                            expr="BZ2_bzlibVersion()[0]")
        self.package(t, "bzpkg", ["_bz"])
        needed = readelf_dynamic(so)["NEEDED"]
        confirm(any(n.startswith("libbz2.so.1") for n in needed), f"NEEDED libbz2: {needed}")
        confirm(not policy_excess(so, "manylinux_2_17"), f"{so.name} fits manylinux_2_17")
        return self.pack_wheel(d, t)

    def build_usrlib(self, d: Path) -> Path:
        return self.bz2_wheel(d, f"manylinux_2_17_{ARCH}")

    def build_repair_input(self, d: Path) -> Path:
        return self.bz2_wheel(d, f"linux_{ARCH}")

    def build_repaired(self, d: Path) -> Path:
        src = self.get("repair_input")
        out = d / "out"
        run([self.pkgtool, "repair", src, "-w", out], env=self.env)
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise FixtureError(f"pkgtool repair wrote {wheels}")
        return wheels[0]

    # -- rpath: an absolute RPATH into the fixture's build directory

    def build_rpath(self, d: Path) -> Path:
        build_dir = d / "build" / "lib"
        build_dir.mkdir(parents=True)
        t = self.wheel_tree(d, "rpathpkg", "1.0", f"manylinux_2_17_{ARCH}")
        so = self.extension(t / "rpathpkg", "_ext", f"-Wl,-rpath,{build_dir}", expr="7")
        self.package(t, "rpathpkg", ["_ext"])
        dyn = readelf_dynamic(so)
        confirm(str(build_dir) in (dyn["RPATH"] or dyn["RUNPATH"] or ""), f"RPATH/RUNPATH into {build_dir}: {dyn}")
        confirm(set(dyn["NEEDED"]) <= {"libc.so.6"}, f"at most libc: {dyn['NEEDED']}")
        return self.pack_wheel(d, t)

    # -- openmp: two copies of libgomp, each needed by one extension

    def build_openmp(self, d: Path) -> Path:
        gomp = Path(f"/usr/lib/{ARCH}-linux-gnu/libgomp.so.1")
        if not gomp.is_file():
            raise Missing(f"{gomp} not found (libgomp1)")
        t = d / "tree"
        hashed = f"libgomp-{hashlib.sha256(gomp.read_bytes()).hexdigest()[:8]}.so.1"
        libs = t / "omppkg.libs"
        lib = t / "omppkg" / "lib"
        libs.mkdir(parents=True)
        lib.mkdir(parents=True)
        shutil.copy(gomp, libs / hashed)
        shutil.copy(gomp, lib / "libgomp.so.1")
        run([self.pkgtool, "patchelf", "--set-soname", hashed, libs / hashed])
        confirm(readelf_dynamic(libs / hashed)["SONAME"] == hashed, f"SONAME {hashed}")
        decls = "int omp_get_max_threads(void);"
        a = self.extension(t / "omppkg", "_a", f"-L{libs}", f"-l:{hashed}",
                           "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../omppkg.libs",
                           decls=decls, expr="omp_get_max_threads()")
        b = self.extension(t / "omppkg", "_b", f"-L{lib}", "-l:libgomp.so.1",
                           "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib",
                           decls=decls, expr="omp_get_max_threads()")
        self.package(t, "omppkg", ["_a", "_b"])
        confirm(hashed in readelf_dynamic(a)["NEEDED"], f"_a needs {hashed}")
        confirm("libgomp.so.1" in readelf_dynamic(b)["NEEDED"], "_b needs libgomp.so.1")
        # libgomp itself needs a recent glibc: tag for the newest GLIBC any
        # file needs, so that only the duplicate runtime is wrong.
        glibc = max((_vkey(v.split("_", 1)[1]) for f in (gomp, a, b) for v in version_needs(f)
                     if v.startswith("GLIBC_")), default=(2, 17))
        plat = f"manylinux_{glibc[0]}_{max(glibc[1], 17)}_{ARCH}"
        tree = self.wheel_tree(d, "omppkg", "1.0", plat)  # same directory: adds the dist-info
        return self.pack_wheel(d, tree)

    # -- cpu-cudart: a CPU wheel carrying (and needing) a libcudart.so.12

    def build_cpu_cudart(self, d: Path) -> Path:
        require("gcc")
        t = self.wheel_tree(d, "cudapkg", "1.0", f"manylinux_2_17_{ARCH}")
        libs = t / "cudapkg" / "lib"
        libs.mkdir(parents=True)
        src = d / "cudart.c"
        src.write_text(CUDART_C)
        run(["gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libcudart.so.12", "-o", libs / "libcudart.so.12", src])
        so = self.extension(t / "cudapkg", "_ext", f"-L{libs}", "-l:libcudart.so.12",
                            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib",
                            decls="int cudaGetDeviceCount(int*);",
                            expr="({ int n = 0; cudaGetDeviceCount(&n); n; })")
        self.package(t, "cudapkg", ["_ext"])
        confirm("libcudart.so.12" in readelf_dynamic(so)["NEEDED"], "NEEDED libcudart.so.12")
        confirm(readelf_dynamic(libs / "libcudart.so.12")["SONAME"] == "libcudart.so.12", "SONAME libcudart.so.12")
        return self.pack_wheel(d, t)

    # -- torch-shaped libraries, wheels and libtorch trees

    def build_torch_libs(self, d: Path) -> Path:
        """lib{c10,torch_cpu,torch}.so for both ABIs: d/abi0/, d/abi1/."""
        require("g++")
        inc = d / "include" / "torch"
        inc.mkdir(parents=True)
        (inc / "api.h").write_text(TORCH_HEADER)
        (d / "torch_cpu.cpp").write_text(torch_source(TORCH_FUNCTIONS))
        (d / "c10.cpp").write_text("namespace c10 { int c10_version() { return 1; } }\n")
        (d / "torch.cpp").write_text("int torch_uses_c10();\nint torch_entry() { return torch_uses_c10(); }\n")
        for abi in (0, 1):
            out = d / f"abi{abi}"
            out.mkdir()
            flags = ["-O0", "-fPIC", "-shared", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", f"-I{d / 'include'}"]
            run(["g++", *flags, "-Wl,-soname,libc10.so", "-o", out / "libc10.so", d / "c10.cpp"])
            run(["g++", *flags, "-Wl,-soname,libtorch_cpu.so", "-o", out / "libtorch_cpu.so",
                 d / "torch_cpu.cpp", f"-L{out}", "-lc10", "-Wl,--enable-new-dtags,-rpath,$ORIGIN"])
            run(["g++", *flags, "-Wl,-soname,libtorch.so", "-o", out / "libtorch.so", d / "torch.cpp",
                 f"-L{out}", "-ltorch_cpu", "-lc10", "-Wl,--enable-new-dtags,-rpath,$ORIGIN"])
            # Independent census: nm -D -C, the rule of check_binary_symbols.py.
            syms = run(["nm", "-D", "-C", out / "libtorch_cpu.so"]).splitlines()
            new = sum(1 for s in syms if re.search(r" (torch|c10)::.*std::__cxx11::(basic_string|list)", s))
            old = sum(1 for s in syms if re.search(r" (torch|c10)::.*std::(basic_string<|list)", s))
            if abi == 1:
                confirm(new >= TORCH_FUNCTIONS and old == 0, f"abi1 census new={new} old={old}")
            else:
                confirm(old >= TORCH_FUNCTIONS and new == 0, f"abi0 census new={new} old={old}")
        return d

    def torch_wheel(self, d: Path, lib_abi: int, config_abi: int) -> Path:
        libs = self.get("torch_libs")
        t = self.wheel_tree(d, "torch", "2.5.0", f"manylinux_2_28_{ARCH}")
        (t / "torch/lib").mkdir(parents=True)
        for name in ("libc10.so", "libtorch_cpu.so", "libtorch.so"):
            shutil.copy(libs / f"abi{lib_abi}" / name, t / "torch/lib" / name)
            confirm(not policy_excess(t / "torch/lib" / name, "manylinux_2_28"),
                    f"{name} fits manylinux_2_28: {policy_excess(t / 'torch/lib' / name, 'manylinux_2_28')}")
        cm = t / "torch/share/cmake/Torch"
        cm.mkdir(parents=True)
        (cm / "TorchConfig.cmake").write_text(torch_config(config_abi))
        (t / "torch/__init__.py").write_text('__version__ = "2.5.0"\n')
        return self.pack_wheel(d, t)

    def build_torch_pre_cfg1(self, d: Path) -> Path:
        """pre-cxx11 libtorch_cpu.so, TorchConfig.cmake says ABI 1."""
        return self.torch_wheel(d, 0, 1)

    def build_torch_cxx11(self, d: Path) -> Path:
        """Consistent: cxx11 library, TorchConfig.cmake says ABI 1."""
        return self.torch_wheel(d, 1, 1)

    def build_libtorch(self, d: Path) -> Path:
        """A cxx11-ABI libtorch zip (pkgtool libtorch pack) and d/client.cpp."""
        libs = self.get("torch_libs")
        t = d / "tree"
        (t / "lib").mkdir(parents=True)
        for name in ("libc10.so", "libtorch_cpu.so", "libtorch.so"):
            shutil.copy(libs / "abi1" / name, t / "lib" / name)
        shutil.copytree(libs / "include", t / "include")
        cm = t / "share/cmake/Torch"
        cm.mkdir(parents=True)
        (cm / "TorchConfig.cmake").write_text(torch_config(1))
        (d / "client.cpp").write_text(CLIENT_CPP)
        out = d / "zip"
        run([self.pkgtool, "libtorch", "pack", t, "--version", "2.5.0", "--build-hash",
             "0123456789abcdef0123456789abcdef01234567", "-o", out, "--no-latest"], env=self.env)
        zips = sorted(out.glob("*.zip"))
        if len(zips) != 1:
            raise FixtureError(f"libtorch pack wrote {zips}")
        with zipfile.ZipFile(zips[0]) as z:
            names = z.namelist()
        confirm("libtorch/build-hash" in names, f"build-hash in the zip: {names[:10]}")
        return zips[0]

    def build_libtorch_no_hash(self, d: Path) -> Path:
        good = self.get("libtorch")
        out = d / good.name
        with zipfile.ZipFile(good) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                if info.filename != "libtorch/build-hash":
                    zout.writestr(info, zin.read(info))
        with zipfile.ZipFile(out) as z:
            confirm("libtorch/build-hash" not in z.namelist(), "build-hash removed")
            confirm("libtorch/build-version" in z.namelist(), "build-version kept")
        return out

    # -- (d) a conda package: lib/libfoo.so and a Python package using it

    def build_conda(self, d: Path) -> Path:
        require("gcc")
        py = self.python_info()
        prefix = d / "prefix"
        lib = prefix / "lib"
        lib.mkdir(parents=True)
        src = d / "foo.c"
        src.write_text("int foo_value(void) { return 5; }\n")
        run(["gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libfoo.so", "-o", lib / "libfoo.so", src])
        site = lib / f"python{py['ver']}" / "site-packages" / "foopkg"
        so = self.extension(site, "_foo", f"-L{lib}", "-lfoo", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../..",
                            decls="int foo_value(void);", expr="foo_value()")
        self.package(site.parent, "foopkg", ["_foo"])
        confirm("libfoo.so" in readelf_dynamic(so)["NEEDED"], "NEEDED libfoo.so")
        out = d / "pkg"
        run([self.pkgtool, "conda", "pack", prefix, "--name", "foopkg", "--version", "1.0", "--build",
             f"py{py['tag'][2:]}_0", "--subdir", f"linux-{'64' if ARCH == 'x86_64' else ARCH}",
             "--format", "both", "-o", out], env=self.env)
        pkgs = sorted(out.glob("*.conda"))
        if len(pkgs) != 1 or not list(out.glob("*.tar.bz2")):
            raise FixtureError(f"conda pack wrote {list(out.iterdir())}")
        return pkgs[0]

    # -- bad inputs

    def build_bad_inputs(self, d: Path) -> Path:
        (d / "garbage-1.0-py3-none-any.whl").write_bytes(b"this is not a zip file\n" * 10)
        with zipfile.ZipFile(d / "other.zip", "w") as z:
            z.writestr("docs/readme.txt", "neither a wheel nor a libtorch\n")
        return d


def main() -> int:
    fx = Fixtures()
    rc = 0
    for name in sys.argv[1:]:
        try:
            print(fx.get(name))
        except Missing as e:
            print(f"MISSING {name}: {e}", file=sys.stderr)
            rc = 1
        except FixtureError as e:
            print(f"ERROR {name}: {e}", file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
