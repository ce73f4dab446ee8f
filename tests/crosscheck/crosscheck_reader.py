#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Differential test of libpkg's ELF reader (`pkgtool inspect --json`).

Compares, file by file, what pkgtool reports with three independent readers:
readelf (binutils), pyelftools and LIEF (tests/tools/lief_dump). Fields:
class, endian, machine, type, interpreter, soname, needed (in order), rpath,
runpath, DT_FLAGS/DT_FLAGS_1, defined/undefined .dynsym counts, version needs
(file -> sorted versions), version definitions, and the highest version
needed per prefix (GLIBC_, GLIBCXX_, CXXABI_, GCC_, ...) computed here from
readelf -V.

Files:
  * a deterministic sample of /usr/lib/x86_64-linux-gnu/*.so* (sorted by
    real path, every Nth, ~40 files), of /usr/bin (10) and of the cross
    toolchains' target libraries /usr/<triple>/lib (4 each); all of them
    with LIBPKG_LONG=1;
  * fixtures compiled now: a C library with SONAME, DT_RPATH and symbol
    versions, a C++ library (GLIBCXX/CXXABI/GCC versions), a PIE linking
    both with DT_RUNPATH and -z now; the same for each cross compiler found
    (aarch64, i686, s390x big-endian, armhf);
  * copies of fixtures with the section headers removed (e_shoff, e_shnum,
    e_shstrndx zeroed): pkgtool must still report everything that lives in
    PT_DYNAMIC/PT_INTERP and the header; readelf -D is the reference there.

Every mismatch is printed as `file: field: ours=... REF=...`; the test fails
if there is any. Environment: PKGTOOL (required), LIEF_DUMP (optional; the
LIEF column is skipped with a note when missing), LIBPKG_LONG=1,
LIBPKG_XCHECK_FILES (colon-separated explicit file list instead of the
sample), LIBPKG_LIEF_MAX_MB (largest file given to LIEF, default 24).
"""

import concurrent.futures
import glob
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfref  # noqa: E402

# (glob, files in the default sample); LIBPKG_LONG=1 takes every match.
SYSTEM_GROUPS = [
    ("/usr/lib/x86_64-linux-gnu/*.so*", 40),
    ("/usr/bin/*", 10),
    # Target libraries of the cross toolchains: real ELF32, big-endian,
    # 64 KiB-page files built by someone else's linker.
    ("/usr/aarch64-linux-gnu/lib/*.so*", 4),
    ("/usr/i686-linux-gnu/lib/*.so*", 4),
    ("/usr/s390x-linux-gnu/lib/*.so*", 4),
    ("/usr/arm-linux-gnueabihf/lib/*.so*", 4),
]

FIELDS = ["class", "endian", "machine", "type", "interpreter", "soname", "needed",
          "rpath", "runpath", "flags", "flags_1", "defined", "undefined",
          "version_needs", "version_defs", "max_versions"]
# What must survive the loss of the section headers.
SHSTRIP_REQUIRED = ["class", "endian", "machine", "type", "interpreter", "soname",
                    "needed", "rpath", "runpath", "flags", "flags_1"]


def system_files(long_run):
    """Deterministic: per group, unique real paths of ELF files sorted by
    name, every Nth so that about `count` are taken."""
    chosen = []
    seen = set()
    for pattern, count in SYSTEM_GROUPS:
        files = set()
        for p in glob.glob(pattern):
            r = os.path.realpath(p)
            if r not in seen and os.path.isfile(r) and elfref.is_elf(r):
                files.add(r)
        files = sorted(files)
        if not long_run and len(files) > count:
            stride = len(files) / count
            files = [files[int(i * stride)] for i in range(count)]
        seen.update(files)
        chosen += files
    return chosen


FIX_C = r"""
#include <stdio.h>
#include <string.h>
#include <math.h>
int fix_old(void) { return 1; }
int fix_new(void) { return 2; }
int fix_data = 42;
double fix_cos(double x) { return cos(x); }
int fix_print(const char *s) { return printf("%s %zu\n", s, strlen(s)); }
__asm__(".symver fix_old,fix@FIX_1.0");
__asm__(".symver fix_new,fix@@FIX_2.0");
"""
FIX_MAP = "FIX_1.0 { global: fix_data; fix_cos; fix_print; local: *; };\n" \
          "FIX_2.0 { global: fix; } FIX_1.0;\n"
FIX_CXX = r"""
#include <string>
#include <stdexcept>
#include <sstream>
extern "C" int fixcxx(int n) {
  try {
    std::ostringstream os; os << "n=" << n;
    if (n < 0) throw std::runtime_error(os.str());
    return (int)os.str().size();
  } catch (const std::exception& e) { return -1; }
}
"""
FIX_MAIN = r"""
extern int fix_print(const char *);
extern double fix_cos(double);
int main(void) { fix_print("hello"); return fix_cos(0.0) == 1.0 ? 0 : 1; }
"""
FIX_MAIN_CXX = r"""
extern int fix_print(const char *);
extern int fixcxx(int);
int main(void) { fix_print("hello"); return fixcxx(3) > 0 ? 0 : 1; }
"""


# Freestanding variant for cross compilers without a target libc (e.g. no
# crti.o): libbase defines versions, libfix needs them, the PIE needs libfix.
FREE_BASE = r"""
int base_old(void) { return 1; }
int base_new(void) { return 2; }
int base_x(void) { return 3; }
__asm__(".symver base_old,base@BASE_1.0");
__asm__(".symver base_new,base@@BASE_2.0");
"""
FREE_BASE_MAP = "BASE_1.0 { global: base_x; local: *; };\nBASE_2.0 { global: base; } BASE_1.0;\n"
FREE_FIX = r"""
extern int base(void);
extern int base_x(void);
int fix_old(void) { return base_x(); }
int fix_new(void) { return base(); }
int fix_data = 42;
double fix_cos(double x) { return x; }
int fix_print(const char *s) { return s[0]; }
__asm__(".symver fix_old,fix@FIX_1.0");
__asm__(".symver fix_new,fix@@FIX_2.0");
"""
FREE_MAIN = r"""
extern int fix_print(const char *);
extern int fix(void);
void _start(void) { fix_print("x"); fix(); for (;;) {} }
"""
INTERPRETERS = {"aarch64-linux-gnu": "/lib/ld-linux-aarch64.so.1",
                "i686-linux-gnu": "/lib/ld-linux.so.2",
                "s390x-linux-gnu": "/lib/ld64.so.1",
                "arm-linux-gnueabihf": "/lib/ld-linux-armhf.so.3"}


def first_error(e):
    lines = [x for x in str(e).splitlines() if x.strip()]
    for x in lines:
        if "error" in x.lower() or "cannot find" in x:
            return x.strip()
    return lines[-1].strip() if lines else repr(e)


def write_sources(tmp):
    for name, text in (("fix.c", FIX_C), ("fix.map", FIX_MAP), ("fixcxx.cpp", FIX_CXX),
                       ("main.c", FIX_MAIN), ("maincxx.c", FIX_MAIN_CXX),
                       ("base.c", FREE_BASE), ("base.map", FREE_BASE_MAP),
                       ("fixfree.c", FREE_FIX), ("mainfree.c", FREE_MAIN)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)


def build_hosted(tmp, d, prefix, cxx):
    cc, cxxc = f"{prefix}gcc", f"{prefix}g++"
    files = []
    lib = os.path.join(d, "libfix.so.1")
    elfref.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(tmp, "fix.c"),
                "-Wl,-soname,libfix.so.1", f"-Wl,--version-script={tmp}/fix.map",
                "-Wl,--disable-new-dtags", "-Wl,-rpath,/opt/fix/lib:$ORIGIN/../lib64", "-lm"])
    os.symlink("libfix.so.1", os.path.join(d, "libfix.so"))
    files.append(lib)
    main_src, libs = "main.c", ["-lfix"]
    if cxx:
        libcxx = os.path.join(d, "libfixcxx.so")
        elfref.run([cxxc, "-shared", "-fPIC", "-O1", "-o", libcxx, os.path.join(tmp, "fixcxx.cpp"),
                    "-Wl,-soname,libfixcxx.so", "-Wl,-z,now"])
        files.append(libcxx)
        main_src, libs = "maincxx.c", ["-lfix", "-lfixcxx"]
    exe = os.path.join(d, "fixmain")
    elfref.run([cc, "-O1", "-fPIE", "-pie", "-o", exe, os.path.join(tmp, main_src), f"-L{d}",
                *libs, "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN:$ORIGIN/../lib", "-Wl,-z,now"])
    files.append(exe)
    return files


def build_freestanding(tmp, d, prefix, triple):
    cc = f"{prefix}gcc"
    base = os.path.join(d, "libbase.so")
    elfref.run([cc, "-shared", "-fPIC", "-nostdlib", "-O1", "-o", base, os.path.join(tmp, "base.c"),
                "-Wl,-soname,libbase.so", f"-Wl,--version-script={tmp}/base.map"])
    lib = os.path.join(d, "libfix.so.1")
    elfref.run([cc, "-shared", "-fPIC", "-nostdlib", "-O1", "-o", lib,
                os.path.join(tmp, "fixfree.c"), f"-L{d}", "-lbase", "-Wl,-soname,libfix.so.1",
                f"-Wl,--version-script={tmp}/fix.map", "-Wl,--disable-new-dtags",
                "-Wl,-rpath,/opt/fix/lib:$ORIGIN/../lib64"])
    os.symlink("libfix.so.1", os.path.join(d, "libfix.so"))
    exe = os.path.join(d, "fixmain")
    elfref.run([cc, "-O1", "-fPIE", "-pie", "-nostdlib", "-o", exe, os.path.join(tmp, "mainfree.c"),
                f"-L{d}", "-lfix", f"-Wl,-rpath-link,{d}",
                f"-Wl,--dynamic-linker,{INTERPRETERS.get(triple, '/lib/ld.so.1')}",
                "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN:$ORIGIN/../lib", "-Wl,-z,now"])
    return [base, lib, exe]


def build_fixtures(tmp):
    """Compile the fixtures; returns (files, notes)."""
    notes = []
    targets = [("x86_64", "", True)]
    for triple in ("aarch64-linux-gnu", "i686-linux-gnu", "s390x-linux-gnu",
                   "arm-linux-gnueabihf"):
        if not shutil.which(f"{triple}-gcc"):
            elfref.missing(f"{triple}-gcc not installed: no {triple} fixtures")
        targets.append((triple, f"{triple}-", shutil.which(f"{triple}-g++") is not None))
    write_sources(tmp)
    files = []
    for name, prefix, cxx in targets:
        d = os.path.join(tmp, name)
        os.makedirs(d)
        try:
            files += build_hosted(tmp, d, prefix, cxx)
            continue
        except (RuntimeError, OSError) as e:
            hosted_error = first_error(e)
        shutil.rmtree(d)
        os.makedirs(d)
        try:
            files += build_freestanding(tmp, d, prefix, name)
            notes.append(f"note: {name}: no usable target libc ({hosted_error}); "
                         "using freestanding fixtures")
        except (RuntimeError, OSError) as e:
            raise RuntimeError(f"could not build {name} fixtures: {hosted_error}; "
                               f"freestanding: {first_error(e)}") from e
    return files, notes


def gather(pkgtool, lief_dump, files, lief_max):
    """Run all readers; returns {file: {'ours':..., 'readelf':..., ...}}."""
    ours = elfref.pkgtool_inspect(pkgtool, files)
    use_pyelf = elfref.have_pyelftools()

    def refs(f):
        r = {}
        shstripped = os.path.basename(f).startswith("shstrip-")
        try:
            r["readelf"] = elfref.readelf_info(f, use_dynamic=shstripped)
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            r["readelf"] = {"error": f"readelf parse: {e}"}
        if use_pyelf:
            try:
                r["pyelftools"] = elfref.pyelftools_info(f)
            except Exception as e:  # noqa: BLE001
                r["pyelftools"] = {"error": f"pyelftools: {type(e).__name__}: {e}"}
        if lief_dump and os.path.getsize(f) <= lief_max:
            r["lief"] = elfref.lief_info(lief_dump, f)
        return f, r

    out = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for f, r in ex.map(refs, files):
            r["ours"] = ours.get(f, {"error": "no output"})
            out[f] = r
    return out


def main():
    pkgtool = os.environ.get("PKGTOOL")
    if not pkgtool or not os.access(pkgtool, os.X_OK):
        elfref.missing("PKGTOOL not set or not executable")
    if not shutil.which(elfref.READELF):
        elfref.missing("readelf not found")
    long_run = os.environ.get("LIBPKG_LONG") == "1"
    lief_dump = os.environ.get("LIEF_DUMP") or None
    lief_max = int(os.environ.get("LIBPKG_LIEF_MAX_MB", "24")) * 1024 * 1024
    lief_dump = elfref.lief_dump_from_env()
    if not elfref.have_pyelftools():
        elfref.missing("pyelftools not importable (python3-pyelftools)")

    t0 = time.time()
    explicit = os.environ.get("LIBPKG_XCHECK_FILES")
    if explicit:
        sysfiles = [f for f in explicit.split(":") if f]
    else:
        sysfiles = system_files(long_run)
    print(f"{len(sysfiles)} system files ({'all' if long_run else 'sample'}), "
          f"LIEF up to {lief_max >> 20} MiB", flush=True)

    tmp = tempfile.mkdtemp(prefix="xcheck-reader-")
    try:
        fixtures, notes = build_fixtures(tmp)
        for n in notes:
            print(n)
        # Section-header-stripped copies: every x86_64 fixture, and the
        # executables of the cross targets (covers ELF32 and big-endian).
        stripped = {}
        for f in fixtures:
            if "/x86_64/" in f or os.path.basename(f) == "fixmain" or "libfix.so" in f:
                dst = os.path.join(os.path.dirname(f), "shstrip-" + os.path.basename(f))
                elfref.strip_section_headers(f, dst)
                stripped[dst] = f
        print(f"{len(fixtures)} fixtures, {len(stripped)} copies without section headers",
              flush=True)

        files = sysfiles + fixtures + list(stripped)
        results = gather(pkgtool, lief_dump, files, lief_max)

        mismatches, warnings = [], []
        cols = {"readelf": 0, "pyelftools": 0, "lief": 0}
        for f in files:
            r = results[f]
            ours = r["ours"]
            if "error" in ours:
                mismatches.append(f"{f}: pkgtool inspect failed: {ours['error']}")
                continue
            for ref in ("readelf", "pyelftools", "lief"):
                if ref in r:
                    if "error" in r[ref]:
                        warnings.append(f"{f}: {ref} could not read it: {r[ref]['error']}")
                    else:
                        cols[ref] += 1
            refs = {k: r[k] for k in ("readelf", "pyelftools", "lief") if k in r}
            if f in stripped:
                # References read the stripped copy where they can (readelf
                # -D, pyelftools via PT_DYNAMIC, LIEF); on top, pkgtool's
                # answer for the original is the reference for every field.
                orig = results[stripped[f]]["ours"]
                mismatches += elfref.compare(f, ours, refs, SHSTRIP_REQUIRED)
                mismatches += elfref.compare(f, ours, {"original": orig}, SHSTRIP_REQUIRED)
                soft = elfref.compare(f, ours, {"original": orig},
                                      [x for x in FIELDS if x not in SHSTRIP_REQUIRED])
                warnings += [f"{s} (no section headers; not required)" for s in soft]
                continue
            mismatches += elfref.compare(f, ours, refs, FIELDS)
            # "from": any file needing the highest tag is acceptable.
            rd = r.get("readelf", {})
            for prefix, src in ours.get("max_versions_from", {}).items():
                files_ok = rd.get("max_versions_files", {}).get(prefix)
                if files_ok is not None and src not in files_ok:
                    mismatches.append(f"{f}: max_versions[{prefix}].from: ours={src!r} "
                                      f"readelf={sorted(files_ok)!r}")

        # Sanity: the fixtures must actually exercise what they are for.
        for f in fixtures:
            o = results[f]["ours"]
            if "error" in o:
                continue
            base = os.path.basename(f)
            if base == "libfix.so.1" and (o["soname"] != "libfix.so.1" or not o["rpath"]
                                          or "FIX_2.0" not in o["version_defs"]):
                mismatches.append(f"{f}: fixture sanity: expected SONAME, DT_RPATH and FIX_2.0")
            if base == "fixmain" and (not o["runpath"] or not o["interpreter"]):
                mismatches.append(f"{f}: fixture sanity: expected DT_RUNPATH and PT_INTERP")
            if base == "libfixcxx.so" and not {"GLIBCXX", "CXXABI"} <= set(o["max_versions"]):
                warnings.append(f"{f}: C++ fixture has no GLIBCXX/CXXABI needs "
                                f"({sorted(o['max_versions'])})")

        for w in warnings:
            print(f"warning: {w}")
        print(f"compared {len(files)} files in {time.time() - t0:.1f}s: readelf on "
              f"{cols['readelf']}, pyelftools on {cols['pyelftools']}, LIEF on {cols['lief']}")
        if mismatches:
            print(f"\n{len(mismatches)} mismatch(es):")
            for m in mismatches:
                print(m)
            return 1
        print("no mismatches")
        return 0
    finally:
        if os.environ.get("LIBPKG_KEEP_TMP") == "1":
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
