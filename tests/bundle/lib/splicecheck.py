# SPDX-License-Identifier: BSD-3-Clause
"""Checks of spliced repair outputs (tests/bundle/*splice*.sh), with
Python's zipfile and zlib only: independent of libpkg's reader.

  splicecheck.py rezip IN.whl OUT.whl stored|LEVEL
      IN rewritten by zipfile: every member stored (the reference path: a
      stored member is never spliced) or deflated at LEVEL, one stream per
      member (as setuptools' bdist_wheel writes wheels).
  splicecheck.py inflate WHL
      every member inflated by zlib from its local header's data (not
      through zipfile's reader) and checked against the central CRC-32 and
      size; zipfile's testzip too.
  splicecheck.py same-content A.whl B.whl
      the same member names in the same order, each with the same bytes.
  splicecheck.py spliced RESULT.json MIN_REUSED_BYTES
      pkgtool repair --json's result spliced at least one member and
      re-used at least MIN_REUSED_BYTES of the input's deflate data.
  splicecheck.py unchanged-outside IN.whl OUT.whl MEMBER MAX_CHANGED
      MEMBER in OUT differs from IN in at most MAX_CHANGED bytes (grown or
      cut bytes count): the edit stayed small, so a splice had most of
      the stream to re-use.
"""

import json
import shutil
import struct
import sys
import zipfile
import zlib


def rezip(src: str, dst: str, how: str) -> None:
    method = zipfile.ZIP_STORED if how == "stored" else zipfile.ZIP_DEFLATED
    level = None if how == "stored" else int(how)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", method, compresslevel=level) as zout:
        for info in zin.infolist():
            out = zipfile.ZipInfo(info.filename, info.date_time)
            out.external_attr = info.external_attr
            out.compress_type = method
            with zin.open(info) as f, zout.open(out, "w", force_zip64=info.file_size > 2**31) as g:
                shutil.copyfileobj(f, g, 1 << 20)


def inflate(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        assert bad is None, f"{path}: zipfile testzip: {bad} is corrupt"
        for info in z.infolist():
            at = info.header_offset
            sig, _, _, method, _, _, _, _, _, n, m = struct.unpack_from("<IHHHHHIIIHH", data, at)
            assert sig == 0x04034B50, f"{info.filename}: no local header at {at}"
            start = at + 30 + n + m
            raw = data[start:start + info.compress_size]
            if method == 0:
                body = raw
            else:
                assert method == 8, f"{info.filename}: method {method}"
                d = zlib.decompressobj(-15)
                body = d.decompress(raw) + d.flush()
                assert d.eof, f"{info.filename}: the deflate stream has no final block"
                assert not d.unused_data, f"{info.filename}: {len(d.unused_data)} bytes after the final block"
            assert len(body) == info.file_size, f"{info.filename}: {len(body)} bytes, central says {info.file_size}"
            crc = zlib.crc32(body)
            assert crc == info.CRC, f"{info.filename}: CRC {crc:08x}, central says {info.CRC:08x}"


def same_content(a: str, b: str) -> None:
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        na, nb = za.namelist(), zb.namelist()
        assert na == nb, f"members differ:\n{na}\n{nb}"
        for name in na:
            assert za.read(name) == zb.read(name), f"{name}: content differs between {a} and {b}"


def spliced(result_json: str, min_reused: int) -> None:
    r = json.load(open(result_json))["result"]
    assert r["spliced"] >= 1, f"nothing spliced: {r}"
    assert r["spliced_reused_bytes"] >= min_reused, f"re-used {r['spliced_reused_bytes']} < {min_reused}: {r}"


def unchanged_outside(a: str, b: str, member: str, max_changed: int) -> None:
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        x, y = za.read(member), zb.read(member)
    n = min(len(x), len(y))
    changed = abs(len(x) - len(y))
    # Compare in blocks: 4 KiB at a time, counting bytes only where blocks differ.
    for i in range(0, n, 4096):
        if x[i:i + 4096] != y[i:i + 4096]:
            changed += sum(1 for p, q in zip(x[i:i + 4096], y[i:i + 4096]) if p != q)
    assert 0 < changed <= max_changed, f"{member}: {changed} bytes changed (bound {max_changed})"


def main() -> int:
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "rezip":
        rezip(*args)
    elif cmd == "inflate":
        inflate(*args)
    elif cmd == "same-content":
        same_content(*args)
    elif cmd == "spliced":
        spliced(args[0], int(args[1]))
    elif cmd == "unchanged-outside":
        unchanged_outside(args[0], args[1], args[2], int(args[3]))
    else:
        print(f"unknown command {cmd}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
