# SPDX-License-Identifier: BSD-3-Clause
"""Fixture maker and independent checker for the `pkgtool zip` scripts.

Archives are made with Python's zipfile (the reference reader/writer for
wheels); listings are compared against zipfile's own view of the archive and
extracted trees are described in a canonical form so two extractions (ours
and unzip's) can be diffed.

  zipcli_tool.py make DIR            cross-check archives into DIR
  zipcli_tool.py hostile DIR         hostile archives into DIR (one per case)
  zipcli_tool.py stream              a data-descriptor zip on stdout (a pipe)
  zipcli_tool.py compare ARCHIVE JSON  pkgtool's list --json vs zipfile
  zipcli_tool.py tree DIR            canonical description of a tree
  zipcli_tool.py big ARCHIVE SIZE    a ZIP64 archive with SIZE zero bytes
"""

import calendar
import hashlib
import json
import os
import stat
import sys
import zipfile

DATE = (2024, 5, 17, 10, 20, 30)


def info(name, mode, method=zipfile.ZIP_DEFLATED):
    zi = zipfile.ZipInfo(name, DATE)
    zi.create_system = 3
    zi.external_attr = mode << 16
    zi.compress_type = method
    return zi


def content(i, n):
    return ("".join(f"line {j} of member {i}\n" for j in range(n))).encode()


def make(out):
    os.makedirs(out, exist_ok=True)
    # Mixed methods, modes (setuid must be dropped), directories, symlinks,
    # non-ASCII names, an empty file and a comment.
    with zipfile.ZipFile(os.path.join(out, "mixed.zip"), "w") as z:
        z.comment = b"mixed archive"
        z.writestr(info("pkg/", 0o40755), b"")
        z.writestr(info("pkg/__init__.py", 0o100644), content(0, 200))
        z.writestr(info("pkg/tool", 0o100755, zipfile.ZIP_STORED), b"#!/bin/sh\n")
        z.writestr(info("pkg/private", 0o100600), content(1, 10))
        z.writestr(info("pkg/suid", 0o104755), b"suid")
        z.writestr(info("pkg/empty", 0o100644), b"")
        z.writestr(info("pkg/caf\u00e9/\u00fcnicode.txt", 0o100644), content(2, 3))
        z.writestr(info("pkg/random.bin", 0o100644), os.urandom(300000))
        z.writestr(info("pkg/link", 0o120777, zipfile.ZIP_STORED), b"__init__.py")
        z.writestr(info("pkg/caf\u00e9/up", 0o120777, zipfile.ZIP_STORED), b"../tool")
        z.writestr(info("pkg/ro/", 0o40555), b"")
        z.writestr(info("pkg/ro/file", 0o100444), b"read only")
    # ZIP64 extra fields on every member, ZIP64 end record (70 000 entries).
    with zipfile.ZipFile(os.path.join(out, "zip64.zip"), "w") as z:
        for i in range(3):
            with z.open(info(f"forced{i}.txt", 0o100644), "w",
                        force_zip64=True) as f:
                f.write(content(i, 1000))
    with zipfile.ZipFile(os.path.join(out, "many.zip"), "w") as z:
        for i in range(70000):
            z.writestr(info(f"d{i // 1000}/f{i}", 0o100644, zipfile.ZIP_STORED),
                       str(i).encode())


class Unseekable:
    """A write-only stream: zipfile must fall back to data descriptors."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, b):
        return self.raw.write(b)

    def flush(self):
        self.raw.flush()


def stream():
    with zipfile.ZipFile(Unseekable(sys.stdout.buffer), "w") as z:
        z.writestr(info("streamed/a.txt", 0o100644), content(7, 500))
        with z.open(info("streamed/b.bin", 0o100755), "w") as f:
            f.write(os.urandom(100000))
        z.writestr(info("streamed/stored", 0o100644, zipfile.ZIP_STORED), b"s")


def member_mode(zi):
    return (zi.external_attr >> 16) if zi.create_system == 3 else 0


def compare(archive, listing):
    ours = json.load(open(listing))
    with zipfile.ZipFile(archive) as z:
        ref = z.infolist()
    bad = []
    if len(ours) != len(ref):
        bad.append(f"{len(ours)} entries listed, zipfile sees {len(ref)}")
    methods = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
    for o, r in zip(ours, ref):
        want = {
            "name": r.orig_filename,
            "size": r.file_size,
            "compressed": r.compress_size,
            "method": methods.get(r.compress_type, f"method-{r.compress_type}"),
            "crc": r.CRC,
            "mode": member_mode(r),
            "mtime": calendar.timegm(r.date_time + (0, 0, 0)),
        }
        for k, v in want.items():
            if o.get(k) != v:
                bad.append(f"{r.orig_filename}: {k} is {o.get(k)!r}, zipfile says {v!r}")
    for line in bad[:20]:
        print(line, file=sys.stderr)
    return 1 if bad else 0


def tree(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                print(f"L {rel} -> {os.readlink(p)}")
            elif stat.S_ISDIR(st.st_mode):
                print(f"D {rel} {stat.S_IMODE(st.st_mode):o}")
            else:
                h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]
                print(f"F {rel} {stat.S_IMODE(st.st_mode):o} {st.st_size} {h}")
    return 0


def patch(path, old, new):
    data = open(path, "rb").read()
    assert len(old) == len(new) and data.count(old) == 2, path
    open(path, "wb").write(data.replace(old, new))


def hostile(out):
    os.makedirs(out, exist_ok=True)

    def one(case, members):
        path = os.path.join(out, case + ".zip")
        with zipfile.ZipFile(path, "w") as z:
            for name, mode, data in members:
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # duplicate names
                    z.writestr(info(name, mode), data)
        return path

    f = 0o100644
    lnk = 0o120777
    one("dotdot", [("ok.txt", f, b"1"), ("../evil.txt", f, b"2")])
    one("deep-dotdot", [("a/b/../../../evil.txt", f, b"2")])
    one("absolute", [("/tmp/zipcli-absolute-evil.txt", f, b"2")])
    one("backslash", [("..\\evil.txt", f, b"2")])
    one("case-dup", [("README", f, b"1"), ("readme", f, b"2")])
    one("nfc-nfd", [("caf\u00e9", f, b"1"), ("cafe\u0301", f, b"2")])
    one("duplicate", [("same", f, b"1"), ("same", f, b"2")])
    one("under-symlink", [("escape", lnk, b".."), ("escape/evil.txt", f, b"2")])
    one("symlink-escape", [("a/link", lnk, b"../../outside"), ("b", f, b"1")])
    one("symlink-absolute", [("link", lnk, b"/etc"), ("b", f, b"1")])
    one("dot-segment-dup", [("a/b", f, b"1"), ("a/./b", f, b"2")])
    # zipfile truncates names at NUL, so write a placeholder and patch it.
    p = one("nul", [("evilXtxt", f, b"2")])
    patch(p, b"evilXtxt", b"evil\0txt")
    # A CRC that does not match (the data itself is intact deflate).
    p = one("bad-crc", [("good.txt", f, b"fine"), ("bad.txt", f, b"x" * 5000)])
    data = bytearray(open(p, "rb").read())
    with zipfile.ZipFile(p) as z:
        zi = z.getinfo("bad.txt")
    crc = zi.CRC.to_bytes(4, "little")
    fixed = bytes(data).replace(crc, (zi.CRC ^ 1).to_bytes(4, "little"))
    open(p, "wb").write(fixed)
    # 50 MiB of zeros: deflate cannot beat ~1030:1, so this passes the
    # default ratio limit (1100) but not a lower --max-ratio.
    with zipfile.ZipFile(os.path.join(out, "zeros.zip"), "w",
                         zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(info("zeros", f), bytes(50 << 20))
    # A bomb header: the same data declaring 3.75 GB (ratio ~75 000:1).
    p = os.path.join(out, "bomb.zip")
    open(p, "wb").write(open(os.path.join(out, "zeros.zip"), "rb").read())
    patch(p, (50 << 20).to_bytes(4, "little"), (0xF0000000).to_bytes(4, "little"))
    with zipfile.ZipFile(os.path.join(out, "symlink-ok.zip"), "w") as z:
        z.writestr(info("t.txt", f), b"t")
        z.writestr(info("l", lnk, zipfile.ZIP_STORED), b"t.txt")
    with zipfile.ZipFile(os.path.join(out, "payload.zip"), "w") as z:
        z.writestr(info("lib/payload.so", f), b"payload")
    return 0


def big(archive, size):
    chunk = bytes(16 << 20)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED,
                         compresslevel=1) as z:
        with z.open(info("zeros.bin", 0o100644), "w", force_zip64=True) as f:
            left = size
            while left:
                n = min(left, len(chunk))
                f.write(chunk if n == len(chunk) else chunk[:n])
                left -= n
        z.writestr(info("after.txt", 0o100644), b"after the big member\n")
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "make":
        return make(argv[2]) or 0
    if cmd == "stream":
        return stream() or 0
    if cmd == "compare":
        return compare(argv[2], argv[3])
    if cmd == "tree":
        return tree(argv[2])
    if cmd == "hostile":
        return hostile(argv[2])
    if cmd == "big":
        return big(argv[2], int(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
