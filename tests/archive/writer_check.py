# SPDX-License-Identifier: BSD-3-Clause
"""Independent checks of archives written by writer_pack_tool (Python's
zipfile only; nothing from libpkg).

  writer_check.py tree ZIP DIR       members == DIR's tree: bytes, modes,
                                     symlink targets, directories
  writer_check.py record ZIP RECORD  --record output (sha256, size, crc)
                                     matches the archive's content
  writer_check.py count ZIP N        ZIP has N members, each readable
  writer_check.py bigzero ZIP SIZE   the only member is SIZE zero bytes
                                     (streamed, CRC recomputed)
  writer_check.py after4g ZIP NAME TEXT  member NAME has a local header
                                     offset >= 4 GiB (ZIP64 central extra)
                                     and holds TEXT
  writer_check.py raw SRC DST MAP    DST's members renamed per MAP
                                     ("old=new,...") have SRC's compressed
                                     bytes, CRC and method
  writer_check.py time ZIP Y M D h m s   every member's date_time
"""
import hashlib
import os
import stat
import struct
import sys
import zipfile
import zlib
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import abort  # noqa: E402


def tree(zip_path, root):
    expected = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            rel = os.path.relpath(p, root)
            expected[rel + ("" if os.path.islink(p) else "/")] = p
        for f in filenames:
            p = os.path.join(dirpath, f)
            expected[os.path.relpath(p, root)] = p
    with zipfile.ZipFile(zip_path) as z:
        bad = z.testzip()
        if bad is not None:
            abort(f"{zip_path}: bad CRC in {bad}")
        names = z.namelist()
        if names != sorted(names):
            abort("members are not in sorted (add) order")
        if set(names) != set(expected):
            abort(f"member set differs: extra {set(names) - set(expected)}, "
                 f"missing {set(expected) - set(names)}")
        for info in z.infolist():
            path = expected[info.filename]
            st = os.lstat(path)
            mode = info.external_attr >> 16
            if info.create_system != 3:
                abort(f"{info.filename}: create_system {info.create_system}")
            if stat.S_ISLNK(st.st_mode):
                if not stat.S_ISLNK(mode) or z.read(info) != os.readlink(path).encode():
                    abort(f"{info.filename}: symlink not preserved")
                continue
            if stat.S_IMODE(mode) != stat.S_IMODE(st.st_mode):
                abort(f"{info.filename}: mode {oct(mode)} != {oct(st.st_mode)}")
            if stat.S_ISDIR(st.st_mode):
                if not stat.S_ISDIR(mode) or not info.external_attr & 0x10:
                    abort(f"{info.filename}: not marked as a directory")
                continue
            if not stat.S_ISREG(mode):
                abort(f"{info.filename}: not a regular file ({oct(mode)})")
            with open(path, "rb") as f:
                if z.read(info) != f.read():
                    abort(f"{info.filename}: content differs from {path}")
            if info.flag_bits & 0x8:
                abort(f"{info.filename}: uses a data descriptor")
    print(f"ok: {len(names)} members match {root}")


def record(zip_path, record_path):
    with zipfile.ZipFile(zip_path) as z, open(record_path) as rec:
        rows = [line.split() for line in rec if line.strip()]
        if len(rows) != len(z.infolist()):
            abort("record rows != members")
        for (name, sha, size, crc, method), info in zip(rows, z.infolist()):
            data = z.read(info)
            if name != info.filename or int(size) != len(data):
                abort(f"{name}: name/size mismatch")
            if sha != hashlib.sha256(data).hexdigest():
                abort(f"{name}: sha256 mismatch")
            if int(crc, 16) != zlib.crc32(data) or int(method) != info.compress_type:
                abort(f"{name}: crc/method mismatch")
    print(f"ok: {len(rows)} result rows match")


def count(zip_path, n):
    with zipfile.ZipFile(zip_path) as z:
        if len(z.infolist()) != int(n):
            abort(f"{len(z.infolist())} members, expected {n}")
        if z.testzip() is not None:
            abort("bad member")
    print(f"ok: {n} members")


def bigzero(zip_path, size):
    size = int(size)
    with zipfile.ZipFile(zip_path) as z:
        [info] = z.infolist()
        if info.file_size != size:
            abort(f"file_size {info.file_size} != {size}")
        crc = 0
        total = 0
        with z.open(info) as f:  # zipfile also checks the CRC at the end
            while True:
                block = f.read(1 << 24)
                if not block:
                    break
                if block.count(0) != len(block):
                    abort(f"non-zero byte near offset {total}")
                crc = zlib.crc32(block, crc)
                total += len(block)
        if total != size or crc != info.CRC:
            abort(f"read {total} bytes crc {crc:08x}, header says {info.CRC:08x}")
    print(f"ok: {size} zero bytes, crc {crc:08x}")


def after4g(zip_path, name, text):
    with zipfile.ZipFile(zip_path) as z:
        info = z.getinfo(name)
        if info.header_offset < 1 << 32:
            abort(f"{name}: header offset {info.header_offset} < 4 GiB")
        if z.read(info) != text.encode():
            abort(f"{name}: content differs")
    print(f"ok: {name} at offset {info.header_offset}")


def raw_bytes(f, info):
    f.seek(info.header_offset)
    header = f.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    f.seek(info.header_offset + 30 + name_len + extra_len)
    return f.read(info.compress_size)


def raw(src, dst, mapping):
    pairs = [item.split("=", 1) for item in mapping.split(",")]
    with zipfile.ZipFile(src) as zs, zipfile.ZipFile(dst) as zd, \
            open(src, "rb") as fs, open(dst, "rb") as fd:
        for old, new in pairs:
            a, b = zs.getinfo(old), zd.getinfo(new)
            if (a.CRC, a.compress_type, a.compress_size, a.file_size) != \
                    (b.CRC, b.compress_type, b.compress_size, b.file_size):
                abort(f"{old} -> {new}: header fields differ")
            if raw_bytes(fs, a) != raw_bytes(fd, b):
                abort(f"{old} -> {new}: compressed bytes differ")
            if zs.read(a) != zd.read(b):
                abort(f"{old} -> {new}: content differs")
    print(f"ok: {len(pairs)} raw copies identical")


def time(zip_path, *fields):
    want = tuple(int(x) for x in fields)
    with zipfile.ZipFile(zip_path) as z:
        for info in z.infolist():
            if info.date_time != want:
                abort(f"{info.filename}: {info.date_time} != {want}")
    print("ok: timestamps", want)


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
