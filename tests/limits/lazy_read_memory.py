# SPDX-License-Identifier: BSD-3-Clause
"""Reading the dynamic section of a big library touches only the pages it needs.

Builds a shared library with ~256 MiB of read-only data (or uses the CUDA
toolkit's libcublasLt when present), evicts it from the page cache where
possible, and checks that `patchelf --print-rpath` through pkgtool has a peak
RSS far below the file size, where a tool that reads the whole file (Debian's
patchelf 0.14 does) needs at least the file size. Not a timing test.
"""
import os
import resource
import subprocess
import sys
import tempfile

PKGTOOL = os.environ["PATCHELF_OURS"]
MIB = 1024 * 1024


def peak_rss_kib(cmd):
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAIL: {cmd} exited with {status}")
    return usage.ru_maxrss


def make_big_library(tmp):
    blob = os.path.join(tmp, "blob.bin")
    with open(blob, "wb") as f:
        chunk = os.urandom(MIB)
        for _ in range(256):
            f.write(chunk)
    obj = os.path.join(tmp, "blob.o")
    subprocess.run(["objcopy", "-I", "binary", "-O", "elf64-x86-64",
                    "--rename-section", ".data=.rodata,alloc,load,readonly,data,contents",
                    "blob.bin", "blob.o"], cwd=tmp, check=True)
    src = os.path.join(tmp, "lib.c")
    with open(src, "w") as f:
        f.write("extern const char _binary_blob_bin_start[];\n"
                "const char* blob(void) { return _binary_blob_bin_start; }\n")
    lib = os.path.join(tmp, "libbig.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src, obj,
                    "-Wl,-rpath,$ORIGIN/../lib", "-lm"], check=True)
    os.unlink(blob)
    os.unlink(obj)
    return lib


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cuda = "/usr/local/cuda/lib64/libcublasLt.so.13"
        lib = cuda if os.path.exists(cuda) else make_big_library(tmp)
        size_kib = os.path.getsize(lib) // 1024
        ours = peak_rss_kib([PKGTOOL, "--print-rpath", "--print-needed", lib])
        # Far below the file size: the mapping is only touched where read.
        limit = min(size_kib // 10, 32 * 1024)
        # Counted above the process's own start-up: a sanitized build has
        # ~80 MiB of runtime before it reads a byte.
        base = peak_rss_kib([PKGTOOL, "--version"])
        print(f"{lib}: {size_kib} KiB file, pkgtool peak RSS {ours} KiB, "
              f"{base} KiB for --version (limit: {limit} KiB above that)")
        if ours - base > limit:
            sys.exit(f"FAIL: peak RSS {ours} KiB exceeds {base} + {limit} KiB")
        print("PASS")


main()
