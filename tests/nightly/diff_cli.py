#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool diff OLD NEW` on packages built here: two versions of a shared
library compiled with gcc (the new one links libz and needs a newer glibc
symbol version), packed into wheels with zipfile and into conda packages
with tarfile/zstandard. Members added/removed/changed and their sizes and
hashes are checked against hashlib; NEEDED and version requirements against
readelf (-d, -V); text and JSON agree; exit codes 0/1/2."""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import zstandard

# readelf's facts, parsed once for every test (the independent reader).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bundle", "lib"))
import repaircheck  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nightlib import check, pkgtool  # noqa: E402


def readelf_needed(path):
    return sorted(repaircheck.elf_facts(path)["needed"])


def readelf_versions(path):
    """'libc.so.6 GLIBC_2.14' for each .gnu.version_r entry."""
    return sorted(f"{f} {v}" for f, v in repaircheck.elf_facts(path)["version_needs"])


with tempfile.TemporaryDirectory() as tmp:
    def compile_lib(name, source, libs):
        c = os.path.join(tmp, name + ".c")
        open(c, "w").write(source)
        out = os.path.join(tmp, name + ".so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", out, c, *libs],
                       check=True)
        return out

    old_so = compile_lib("old", "#include <stdio.h>\n"
                         "int hello(void) { return puts(\"old\"); }\n", [])
    new_so = compile_lib(
        "new", "#include <stdio.h>\n#include <string.h>\n#include <zlib.h>\n"
        "int hello(char *d, const char *s, unsigned long n) {\n"
        "  memcpy(d, s, n);\n  return puts(zlibVersion());\n}\n", ["-lz"])
    check(readelf_needed(new_so) != readelf_needed(old_so), "fixture NEEDED")
    check(readelf_versions(new_so) != readelf_versions(old_so),
          "fixture versions")
    lib_old, lib_new = open(old_so, "rb").read(), open(new_so, "rb").read()

    common = {"pkg/__init__.py": b"from .core import *\n",
              "pkg/core.py": b"x = 1\n"}
    old_members = dict(common, **{"pkg/lib/libhello.so": lib_old,
                                  "pkg/data/old.txt": b"gone tomorrow\n",
                                  "pkg/VERSION": b"1.0\n"})
    new_members = dict(common, **{"pkg/lib/libhello.so": lib_new,
                                  "pkg/data/new.txt": b"new " * 100,
                                  "pkg/VERSION": b"1.1\n"})

    def wheel(name, members):
        path = os.path.join(tmp, name)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("pkg/", b"")  # a directory entry is not a member
            for n, data in members.items():
                z.writestr(n, data)
        return path

    def tar_bytes(members):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as t:
            for n, data in members.items():
                info = tarfile.TarInfo(n)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    def tar_bz2(name, members):
        path = os.path.join(tmp, name)
        with tarfile.open(path, "w:bz2") as t:
            for n, data in members.items():
                info = tarfile.TarInfo(n)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return path

    def conda(name, members):
        path = os.path.join(tmp, name)
        stem = name[:-len(".conda")]
        info = {n: d for n, d in members.items() if n.startswith("info/")}
        pkg = {n: d for n, d in members.items() if not n.startswith("info/")}
        cctx = zstandard.ZstdCompressor()
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
            z.writestr(f"pkg-{stem}.tar.zst", cctx.compress(tar_bytes(pkg)))
            z.writestr(f"info-{stem}.tar.zst", cctx.compress(tar_bytes(info)))
        return path

    def expected(old, new):
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        changed = sorted(n for n in set(old) & set(new) if old[n] != new[n])
        return added, removed, changed

    def check_json(result, old, new, where):
        d = json.loads(result.stdout)
        added, removed, changed = expected(old, new)
        check(d["schema"] == "libpkg-diff/1", where)
        check([m["name"] for m in d["added"]] == added, f"{where}: added {d['added']}")
        check([m["name"] for m in d["removed"]] == removed, f"{where}: removed")
        check([c["name"] for c in d["changed"]] == changed, f"{where}: changed")
        check(d["unchanged"] == len(set(old) & set(new)) - len(changed),
              f"{where}: unchanged")
        for m in d["added"]:
            check(m["size"] == len(new[m["name"]]) and m["sha256"] ==
                  hashlib.sha256(new[m["name"]]).hexdigest(), f"{where}: {m}")
        for c in d["changed"]:
            o, n = old[c["name"]], new[c["name"]]
            check((c["old_size"], c["new_size"], c["size_delta"]) ==
                  (len(o), len(n), len(n) - len(o)), f"{where}: {c}")
            check(c["new_sha256"] == hashlib.sha256(n).hexdigest(), where)
        check(d["unpacked_delta"] == sum(map(len, new.values())) -
              sum(map(len, old.values())), f"{where}: unpacked_delta")
        lib = next(c for c in d["changed"] if c["name"].endswith("libhello.so"))
        want_needed = sorted(set(readelf_needed(new_so)) - set(readelf_needed(old_so)))
        gone_needed = sorted(set(readelf_needed(old_so)) - set(readelf_needed(new_so)))
        check(lib["needed_added"] == want_needed and
              lib["needed_removed"] == gone_needed, f"{where}: NEEDED {lib}")
        ov, nv = readelf_versions(old_so), readelf_versions(new_so)
        check(lib["versions_added"] == sorted(set(nv) - set(ov)) and
              lib["versions_removed"] == sorted(set(ov) - set(nv)),
              f"{where}: versions {lib} vs readelf {ov} {nv}")
        check("libz.so.1" in lib["needed_added"], f"{where}: libz not added")
        # Only libhello.so is ELF: text members have no ELF changes.
        for c in d["changed"]:
            if c is not lib:
                check(not c["needed_added"] and not c["versions_added"], where)
        return d

    # Wheels.
    w_old = wheel("pkg-1.0-py3-none-any.whl", old_members)
    w_new = wheel("pkg-1.1-py3-none-any.whl", new_members)
    d = check_json(pkgtool("diff", w_old, w_new, "--json", check=1),
                   old_members, new_members, "wheel")
    check(d["size_delta"] == os.path.getsize(w_new) - os.path.getsize(w_old),
          "wheel size_delta")
    text = pkgtool("diff", w_old, w_new, check=1).stdout
    print(text)
    check("+ pkg/data/new.txt (400)" in text, text)
    check("- pkg/data/old.txt (14)" in text, text)
    check("    NEEDED +libz.so.1" in text, text)
    check(re.search(r"    version \+libc\.so\.6 GLIBC_2\.\d+", text), text)
    same = pkgtool("diff", w_old, w_old, check=0).stdout
    check("same members" in same, same)

    # conda: .tar.bz2 and .conda, and one of each against the other.
    meta = {"info/index.json": b'{"name": "pkg"}'}
    c_old = dict(old_members, **meta)
    c_new = dict(new_members, **meta)
    b_old = tar_bz2("pkg-1.0-0.tar.bz2", c_old)
    b_new = tar_bz2("pkg-1.1-0.tar.bz2", c_new)
    check_json(pkgtool("diff", b_old, b_new, "--json", check=1), c_old, c_new,
               "tar.bz2")
    k_old = conda("pkg-1.0-0.conda", c_old)
    k_new = conda("pkg-1.1-0.conda", c_new)
    check_json(pkgtool("diff", k_old, k_new, "--json", check=1), c_old, c_new,
               ".conda")
    check_json(pkgtool("diff", b_old, k_new, "--json", check=1), c_old, c_new,
               "tar.bz2 vs .conda")
    pkgtool("diff", b_old, conda("pkg-1.0-1.conda", c_old), check=0)

    # Bad input: exit 2, the file named.
    other = os.path.join(tmp, "notes.txt")
    open(other, "w").write("hi")
    r = pkgtool("diff", other, w_new, check=2)
    check(r.stderr.startswith(f"error: {other}: not a wheel"), r.stderr)
    broken = os.path.join(tmp, "broken.whl")
    open(broken, "wb").write(open(w_old, "rb").read()[:-30])
    r = pkgtool("diff", broken, w_new, check=2)
    check(r.stderr.startswith(f"error: {broken}:"), r.stderr)
    r = pkgtool("diff", w_old, check=2)
    # One line naming what is missing and where the usage is.
    check(r.stderr.count("\n") == 1 and r.stderr.startswith("error: pkgtool diff: ")
          and "is required" in r.stderr and "--help" in r.stderr, r.stderr)
print("ok")
