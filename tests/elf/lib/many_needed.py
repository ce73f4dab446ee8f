#!/usr/bin/env python3
"""Writes a minimal x86-64 ELF shared object with N DT_NEEDED entries.

Usage: many_needed.py OUT N [--same]

Layout: ELF header, program headers (PT_LOAD covering the file, PT_DYNAMIC),
the dynamic table (N x DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_NULL), then
.dynstr. Names are distinct ("libdep<i>.so") unless --same, where every entry
names one string. No section headers: the loader and our reader need only
the program headers. Used by the DT_NEEDED-count scaling test (issue 21).
"""
import struct
import sys

out, n = sys.argv[1], int(sys.argv[2])
same = "--same" in sys.argv[3:]
base = 0x400000
ehsize, phsize = 64, 56
dyn_off = ehsize + 2 * phsize
ndyn = n + 3
strtab_off = dyn_off + 16 * ndyn
strings = bytearray(b"\0")
offsets = []
if same:
    offsets = [len(strings)] * n
    strings += b"libdep.so\0"
else:
    for i in range(n):
        offsets.append(len(strings))
        strings += b"libdep%d.so\0" % i
size = strtab_off + len(strings)
DT_NEEDED, DT_STRTAB, DT_STRSZ = 1, 5, 10
dyn = bytearray()
for o in offsets:
    dyn += struct.pack("<qQ", DT_NEEDED, o)
dyn += struct.pack("<qQ", DT_STRTAB, base + strtab_off)
dyn += struct.pack("<qQ", DT_STRSZ, len(strings))
dyn += struct.pack("<qQ", 0, 0)
ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, ehsize, 0, 0,
                           ehsize, phsize, 2, 64, 0, 0)
PT_LOAD, PT_DYNAMIC = 1, 2
ph = struct.pack("<IIQQQQQQ", PT_LOAD, 6, 0, base, base, size, size, 0x1000)
ph += struct.pack("<IIQQQQQQ", PT_DYNAMIC, 6, dyn_off, base + dyn_off,
                  base + dyn_off, len(dyn), len(dyn), 8)
with open(out, "wb") as f:
    f.write(ehdr + ph + dyn + strings)
