#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent wheel checks for the tests/wheel scripts (Python's zipfile
and `wheel`'s WheelFile), and generators of tampered/hostile wheels.

  wheelcheck.py read WHEEL            testzip() + WheelFile reads every member
                                      (which verifies each against RECORD)
  wheelcheck.py members WHEEL         member names in archive order
  wheelcheck.py modes WHEEL           "name mode" per member (octal perms)
  wheelcheck.py dates WHEEL           "name Y-M-D h:m:s" per member
  wheelcheck.py compare A B           same member names (in order) and the same
                                      decompressed contents
  wheelcheck.py raw-diff A B [MAP]    names of B's members whose raw compressed
                                      bytes differ from A's (MAP: JSON {B name: A name})
  wheelcheck.py record WHEEL          RECORD rows as JSON
  wheelcheck.py tamper KIND IN OUT    write a tampered copy (see tamper())
  wheelcheck.py hostile KIND OUT      write a wheel with a hostile member name
"""
import base64
import csv
import hashlib
import io
import json
import struct
import sys
import zipfile
from pathlib import Path


def dist_info(zf):
    dirs = {n.split("/", 1)[0] for n in zf.namelist()
            if n.split("/", 1)[0].endswith(".dist-info")}
    assert len(dirs) == 1, dirs
    return dirs.pop()


def raw_bytes(path, info):
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        hdr = f.read(30)
        sig, = struct.unpack("<I", hdr[:4])
        assert sig == 0x04034B50, hex(sig)
        n, m = struct.unpack("<HH", hdr[26:30])
        f.seek(info.header_offset + 30 + n + m)
        return f.read(info.compress_size)


def cmd_read(path):
    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
        if bad is not None:
            print(f"testzip: bad member {bad}")
            return 1
    from wheel.wheelfile import WheelFile
    with WheelFile(path) as wf:
        for info in wf.infolist():
            with wf.open(info) as f:  # hash checked at EOF against RECORD
                while f.read(1 << 20):
                    pass
    return 0


def cmd_members(path):
    with zipfile.ZipFile(path) as zf:
        for n in zf.namelist():
            print(n)
    return 0


def cmd_modes(path):
    with zipfile.ZipFile(path) as zf:
        for i in zf.infolist():
            print(i.filename, oct((i.external_attr >> 16) & 0o7777))
    return 0


def cmd_dates(path):
    with zipfile.ZipFile(path) as zf:
        for i in zf.infolist():
            print(i.filename, "%04d-%02d-%02d %02d:%02d:%02d" % i.date_time)
    return 0


def cmd_compare(a, b):
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        na, nb = za.namelist(), zb.namelist()
        if na != nb:
            print("member lists differ:\n  " + "\n  ".join(na) + "\nvs\n  " + "\n  ".join(nb))
            return 1
        rc = 0
        for n in na:
            if za.read(n) != zb.read(n):
                print(f"content differs: {n}")
                rc = 1
        return rc


def cmd_raw_diff(a, b, mapping="{}"):
    mapping = json.loads(mapping)
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        ia = {i.filename: i for i in za.infolist()}
        for i in zb.infolist():
            src = ia.get(mapping.get(i.filename, i.filename))
            if src is None or raw_bytes(a, src) != raw_bytes(b, i) \
                    or src.CRC != i.CRC or src.compress_type != i.compress_type:
                print(i.filename)
    return 0


def cmd_record(path):
    with zipfile.ZipFile(path) as zf:
        text = zf.read(dist_info(zf) + "/RECORD").decode()
    print(json.dumps(list(csv.reader(io.StringIO(text, newline="")))))
    return 0


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rewrite(src, dst, members):
    """members: list of (ZipInfo, bytes)."""
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in members:
            out.writestr(info, data)


def cmd_tamper(kind, src, dst):
    """Each kind changes exactly one thing:
    content  - a member's bytes changed (same size), RECORD stale
    elf-content - the same for the ELF member (its .comment: still loads)
    size     - a RECORD size field wrong (hash right)
    missing  - a member listed in RECORD removed from the archive
    extra    - a member added that RECORD doesn't list
    md5      - a RECORD row uses md5
    norecord - RECORD removed
    record-hash - a RECORD row's sha256 is of other content (the member is intact)
    two-dist-info - a second .dist-info directory (its file listed in RECORD)
    duplicate-row - a second RECORD row for a member, with another hash (the
              first row is right; pip and `wheel` use the last)
    crc      - a member's stored bytes changed after writing (same size;
              RECORD and the zip CRC-32 both stale): a corrupt member
    (tag mismatches are made by renaming the file, see verify_tampering.sh)
    """
    with zipfile.ZipFile(src) as zf:
        di = dist_info(zf)
        members = [(i, zf.read(i)) for i in zf.infolist()]
    target = next(i.filename for i, _ in members if i.filename.endswith("pure.py"))
    rec_name = di + "/RECORD"
    rows = None
    for i, data in members:
        if i.filename == rec_name:
            rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
    out = []
    for i, data in members:
        if kind == "content" and i.filename == target:
            data = data.replace(b"hello", b"HELLO")
        if kind == "elf-content" and data.startswith(b"\x7fELF"):
            assert b"GCC: (" in data, i.filename
            data = data.replace(b"GCC: (", b"gcc: (")
            target = i.filename
        if kind == "missing" and i.filename == target:
            continue
        if kind == "norecord" and i.filename == rec_name:
            continue
        out.append((i, data))
    if kind == "two-dist-info":
        extra = b"Name: other\nVersion: 1.0\n"
        out.insert(len(out) - 1, (zipfile.ZipInfo("other-1.0.dist-info/METADATA"), extra))
        rows.insert(0, ["other-1.0.dist-info/METADATA",
                        "sha256=" + b64(hashlib.sha256(extra).digest()), str(len(extra))])
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        out = [(i, buf.getvalue().encode() if i.filename == rec_name else d)
               for i, d in out]
    if kind == "duplicate-row":
        rows.insert(len(rows) - 1, [target, "sha256=" + b64(hashlib.sha256(b"other").digest()),
                                    next(r[2] for r in rows if r[0] == target)])
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        out = [(i, buf.getvalue().encode() if i.filename == rec_name else d)
               for i, d in out]
    if kind == "extra":
        out.insert(0, (zipfile.ZipInfo("intruder.py"), b"print('boo')\n"))
    if kind in ("size", "md5", "record-hash"):
        for r in rows:
            if r[0] == target:
                if kind == "size":
                    r[2] = str(int(r[2]) + 1)
                elif kind == "record-hash":
                    r[1] = "sha256=" + b64(hashlib.sha256(b"other").digest())
                else:
                    content = dict((i.filename, d) for i, d in members)[target]
                    r[1] = "md5=" + b64(hashlib.md5(content).digest())
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        out = [(i, buf.getvalue().encode() if i.filename == rec_name else d)
               for i, d in out]
    if kind == "crc":
        # Stored, so the member's bytes sit verbatim in the file: flip them
        # there, behind zipfile's back.
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
            for info, data in out:
                if info.filename == target:
                    info.compress_type = zipfile.ZIP_STORED
                zf.writestr(info, data)
        with zipfile.ZipFile(dst) as zf:
            info = zf.getinfo(target)
        raw = bytearray(Path(dst).read_bytes())
        name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
        start = info.header_offset + 30 + name_len + extra_len
        at = raw.index(b"hello", start, start + info.compress_size)
        raw[at:at + 5] = b"HELLO"
        Path(dst).write_bytes(bytes(raw))
    else:
        rewrite(src, dst, out)
    print(target)
    return 0


def cmd_hostile(kind, dst):
    name = {"dotdot": "../evil.txt", "absolute": "/tmp/libpkg-evil.txt",
            "nested": "pkg/../../evil.txt"}[kind]
    with zipfile.ZipFile(dst, "w") as zf:
        zf.writestr("pkg/__init__.py", b"")
        zf.writestr(zipfile.ZipInfo(name), b"pwned\n")
        zf.writestr("pkg-1.0.dist-info/METADATA", b"Name: pkg\nVersion: 1.0\n")
        zf.writestr("pkg-1.0.dist-info/WHEEL",
                    b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", b"")
    return 0


def main(argv):
    cmds = {"read": cmd_read, "members": cmd_members, "modes": cmd_modes,
            "dates": cmd_dates, "compare": cmd_compare, "raw-diff": cmd_raw_diff,
            "record": cmd_record, "tamper": cmd_tamper, "hostile": cmd_hostile}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
