# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for zip_roundtrip_fuzzer (input format: see
zip_roundtrip.cpp): files, directories and symlinks, stored and deflated,
with small chunk sizes so members span several chunks, ZIP64 forced, and a
non-ASCII name."""
import struct
import sys


def member(kind, name, data=b""):
    name = name.encode()
    return bytes([kind, len(name)]) + name + struct.pack("<H", len(data)) + data


def options(level, zip64=False, store_if_not_smaller=False, chunk=0):
    return bytes([level | (0x10 if zip64 else 0)
                  | (0x20 if store_if_not_smaller else 0) | (chunk << 6)])


text = b"".join(b"line %d\n" % i for i in range(200))
seeds = {
    "plain": options(6) + member(0, "a.txt", text) + member(0, "empty"),
    "tree": options(1, chunk=1) + member(1, "pkg/") + member(0, "pkg/x", text)
    + member(2, "pkg/link", b"x") + member(0, "caf\u00e9", b"u"),
    "chunks": options(9, store_if_not_smaller=True, chunk=0)
    + member(0, "big", text * 3) + member(0, "rand", bytes(range(256)) * 4),
    "zip64": options(0, zip64=True, chunk=2) + member(0, "s", b"stored")
    + member(1, "d/"),
}
for name, data in seeds.items():
    with open(f"{sys.argv[1]}/seed-{name}", "wb") as fh:
        fh.write(data)
