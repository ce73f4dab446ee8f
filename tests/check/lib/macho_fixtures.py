# SPDX-License-Identifier: BSD-3-Clause
"""Mach-O packages for the check_binary tests, built at test time.

Dylibs and Python-extension bundles are linked without an SDK
(`clang-14 -target arm64-apple-macos11|x86_64-apple-macos10.15 -fuse-ld=lld
-nostdlib -Wl,-undefined,dynamic_lookup`; lld signs arm64 ad hoc), made
universal2 with `llvm-lipo-14 -create`, and packed as wheels or libtorch
zips with Python's zipfile (RECORD with sha256 written here). A torch-like
layout: an extension -> @rpath/libcore.dylib -> @rpath/libomp.dylib, plus a
dependency on /usr/lib/libSystem.B.dylib (a stub with that install name).

Each variant carries exactly one defect; `objdump_facts` reads the result
back with llvm-objdump-14 so a test can confirm the defect is there.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

TARGETS = {"arm64": "arm64-apple-macos11", "x86_64": "x86_64-apple-macos10.15"}
TOOLS = ("clang-14", "llvm-lipo-14", "llvm-objdump-14", "llvm-otool-14", "llvm-nm-14")
PYTHON_FRAMEWORK = "/Library/Frameworks/Python.framework/Versions/3.11/Python"


class FixtureError(Exception):
    pass


def run(argv, cwd=None) -> str:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        raise FixtureError(f"{' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p.stdout


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


class Builder:
    """Links one package's Mach-O files in `work`, per arch, then fuses."""

    def __init__(self, work: Path):
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        (work / "core.c").write_text("extern int omp_get_max_threads(void);\n"
                                     "int core_value(void) { return omp_get_max_threads() + 41; }\n")
        (work / "omp.c").write_text("int omp_get_max_threads(void) { return 1; }\n")
        # Py_IsInitialized is left to -undefined dynamic_lookup, as
        # setuptools links extensions: the interpreter provides it.
        (work / "ext.c").write_text("extern int core_value(void);\n"
                                    "extern int Py_IsInitialized(void);\n"
                                    "int PyInit__ext(void) { return core_value() + Py_IsInitialized(); }\n")
        (work / "sys.c").write_text("int libsystem_stub(void) { return 0; }\n")
        (work / "main.c").write_text("extern int core_value(void);\n"
                                     "int main(void) { return core_value() != 42; }\n")

    def link(self, name: str, arch: str, source: str, *args, target: str | None = None,
             kind: str = "-dynamiclib") -> Path:
        out = self.work / arch / name
        out.parent.mkdir(exist_ok=True)
        run(["clang-14", "-target", target or TARGETS[arch], "-fuse-ld=lld", "-nostdlib",
             "-Wl,-undefined,dynamic_lookup", kind, "-o", out, self.work / source, *args])
        return out

    def stub(self, arch: str, install_name: str, file_name: str) -> Path:
        """A dylib to link against, with `install_name` (never shipped)."""
        return self.link(file_name, arch, "sys.c", "-install_name", install_name)

    def fuse(self, name: str, thin: list[Path]) -> Path:
        out = self.work / "fat" / name
        out.parent.mkdir(exist_ok=True)
        run(["llvm-lipo-14", "-create", *thin, "-output", out])
        return out


def build_files(work: Path, defect: str = "", archs=("arm64", "x86_64")) -> dict[str, Path]:
    """The torch-like package's Mach-O files by member path (under macpkg/)."""
    b = Builder(work)
    per_arch: dict[str, dict[str, Path]] = {}
    for arch in archs:
        libsystem = b.stub(arch, "/usr/lib/libSystem.B.dylib", "libSystem.B.dylib")
        files: dict[str, Path] = {}
        omp_extra = ["-Wl,-no_adhoc_codesign"] if defect == "unsigned_arm64" and arch == "arm64" else []
        files["macpkg/lib/libomp.dylib"] = b.link("libomp.dylib", arch, "omp.c",
                                                  "-install_name", "@rpath/libomp.dylib", *omp_extra)
        # "inherited": libcore has no LC_RPATH of its own; its @rpath/libomp
        # resolves through the run paths of the extension that loads it.
        own_rpath = [] if defect == "inherited" else ["-Wl,-rpath,@loader_path"]
        omp = files["macpkg/lib/libomp.dylib"]
        if defect == "homebrew_omp":  # built against Homebrew's libomp, shipped one unused
            omp = b.stub(arch, "/opt/homebrew/opt/libomp/lib/libomp.dylib", "brew-libomp.dylib")
        core_args = ["-install_name", "@rpath/libcore.dylib", *own_rpath, omp, libsystem]
        if defect == "unresolved":
            core_args.append(b.stub(arch, "@rpath/libmissing.dylib", "libmissing.dylib"))
        if defect == "openblas":
            files["macpkg/lib/libopenblas.0.dylib"] = b.link(
                "libopenblas.0.dylib", arch, "sys.c", "-install_name", "@rpath/libopenblas.0.dylib")
            core_args.append(files["macpkg/lib/libopenblas.0.dylib"])
        target = "arm64-apple-macos13" if defect == "minos" and arch == "arm64" else None
        files["macpkg/lib/libcore.dylib"] = b.link("libcore.dylib", arch, "core.c", *core_args, target=target)
        ext_args = ["-Wl,-rpath,@loader_path/lib", files["macpkg/lib/libcore.dylib"], libsystem]
        if defect == "absolute_rpath":
            ext_args.append("-Wl,-rpath,/Users/runner/work/pytorch/build/lib")
        if defect == "duplicate_rpath":
            ext_args.append("-Wl,-rpath,@loader_path/lib")
        if defect == "python_framework":  # linked with -framework Python
            ext_args.append(b.stub(arch, PYTHON_FRAMEWORK, "Python"))
        if defect == "python_dylib":  # linked with -lpython3.11
            ext_args.append(b.stub(arch, "@rpath/libpython3.11.dylib", "libpython3.11.dylib"))
        if defect == "two_openmp":
            # delocate's copy next to the one in lib/ (pytorch#122705).
            files["macpkg/.dylibs/libomp.dylib"] = b.link(
                "dylibs-libomp.dylib", arch, "omp.c", "-install_name", "@loader_path/.dylibs/libomp.dylib")
            ext_args.append(files["macpkg/.dylibs/libomp.dylib"])
        files["macpkg/_ext.cpython-311-darwin.so"] = b.link(
            "_ext.so", arch, "ext.c", *ext_args, kind="-bundle")
        if defect == "inherited":
            # An executable that loads libcore through @executable_path (and
            # gives it no run path either: only the extension's chain does).
            core_by_exe = b.stub(arch, "@executable_path/../lib/libcore.dylib", "libcore-exe.dylib")
            files["macpkg/bin/tool"] = b.link("tool", arch, "main.c", core_by_exe, libsystem,
                                              kind="-Wl,-e,_main")
        per_arch[arch] = files
    out: dict[str, Path] = {}
    for member in per_arch[archs[0]]:
        thin = [per_arch[a][member] for a in archs]
        if defect == "arch_missing" and member == "macpkg/lib/libcore.dylib":
            thin = [per_arch["arm64"][member]]  # arm64 only in a universal2 wheel
        out[member] = thin[0] if len(thin) == 1 else b.fuse(member.replace("/", "_"), thin)
    if defect == "tampered":
        out["macpkg/lib/libcore.dylib"] = tamper_arm64_text(out["macpkg/lib/libcore.dylib"], work)
    return out


def text_offset(path: Path, arch: str) -> int:
    """File offset of __text in the `arch` slice (llvm-otool-14 -l)."""
    lines = run(["llvm-otool-14", "-arch", arch, "-l", path]).splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "sectname __text":
            for follow in lines[i:i + 12]:
                m = re.match(r"\s*offset (\d+)", follow)
                if m:
                    return int(m.group(1))
    raise FixtureError(f"{path}: no __text in llvm-otool-14 -l")


def fat_slice_offset(path: Path, arch: str) -> int:
    out = run(["llvm-objdump-14", "--macho", "--universal-headers", path])
    m = re.search(rf"cputype CPU_TYPE_{'ARM64' if arch == 'arm64' else 'X86_64'}.*?offset (\d+)", out, re.S)
    if not m:
        raise FixtureError(f"{path}: no {arch} slice in the fat header:\n{out}")
    return int(m.group(1))


def tamper_arm64_text(path: Path, work: Path) -> Path:
    """One byte of the arm64 slice's code changed after signing."""
    out = work / "tampered.dylib"
    data = bytearray(path.read_bytes())
    at = fat_slice_offset(path, "arm64") + text_offset(path, "arm64")
    data[at] ^= 0xFF
    out.write_bytes(bytes(data))
    return out


def objdump_facts(path: Path) -> str:
    """llvm-objdump-14's view: per slice, dylibs used, id, rpaths."""
    return run(["llvm-objdump-14", "--macho", "--arch=all", "--dylibs-used", "--dylib-id", "--rpaths", path])


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pack_wheel(dest: Path, tag: str, files: dict[str, Path], extra: dict[str, bytes] | None = None) -> Path:
    """macpkg-1.0-cp311-cp311-<tag>.whl with RECORD, WHEEL and METADATA."""
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"macpkg-1.0-cp311-cp311-{tag}.whl"
    members: dict[str, bytes] = {"macpkg/__init__.py": b"from ._ext import *\n"}
    for name, path in files.items():
        members[name] = path.read_bytes()
    members.update(extra or {})
    di = "macpkg-1.0.dist-info"
    members[f"{di}/METADATA"] = b"Metadata-Version: 2.1\nName: macpkg\nVersion: 1.0\n"
    members[f"{di}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: macho_fixtures\nRoot-Is-Purelib: false\n"
                              f"Tag: cp311-cp311-{tag}\n").encode()
    record = [record_line(n, d) for n, d in members.items()] + [f"{di}/RECORD,,"]
    members[f"{di}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return wheel


def pack_libtorch(dest: Path, files: dict[str, Path], version: str = "2.5.0") -> Path:
    """libtorch-macos-arm64-<version>.zip: lib/*.dylib, include/, share/, bin/."""
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"libtorch-macos-arm64-{version}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in files.items():
            z.writestr(f"libtorch/lib/{Path(name).name}", path.read_bytes())
        z.writestr("libtorch/include/torch/core.h", "int core_value(void);\n")
        z.writestr("libtorch/share/cmake/Torch/TorchConfig.cmake", "# no ABI flag on macOS\n")
        z.writestr("libtorch/bin/.keep", "")
        z.writestr("libtorch/build-version", f"{version}\n")
        z.writestr("libtorch/build-hash", "0123456789abcdef0123456789abcdef01234567\n")
    return out
