#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeds for the macho_view fuzzer, built with struct (no SDK, no binaries
in the repository): a thin arm64 dylib with id, dependencies, rpaths,
LC_BUILD_VERSION and LC_UUID, an x86_64 one with LC_VERSION_MIN_MACOSX
(both with a two-symbol LC_SYMTAB and an LC_DYLD_INFO_ONLY exports trie), and
fat (FAT_MAGIC and FAT_MAGIC_64) files holding both."""
import os
import struct
import sys


def lc_str(cmd, fixed, s, extra=b""):
    body = s.encode() + b"\0"
    size = (fixed + len(body) + 7) // 8 * 8
    return (struct.pack("<III", cmd, size, fixed) + extra).ljust(fixed, b"\0") + body.ljust(size - fixed, b"\0")


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def export_trie():
    """_seed_fn (0x400 from the header) and _seed_abs (absolute 0x42), as
    ld64 lays a trie out: root, the shared "_seed_" node, two leaves."""
    leaf_fn = b"\0" + uleb(0x400)          # flags 0, address
    leaf_abs = b"\2" + uleb(0x42)          # EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE
    root = lambda at: b"\0\1_seed_\0" + uleb(at)
    mid = lambda a, b: b"\0\2fn\0" + uleb(a) + b"abs\0" + uleb(b)
    r = len(root(0x7F))
    m = len(mid(0x7F, 0x7F))
    fn_at, abs_at = r + m, r + m + 1 + len(leaf_fn) + 1
    trie = root(r) + mid(fn_at, abs_at)
    trie += bytes([len(leaf_fn)]) + leaf_fn + b"\0" + bytes([len(leaf_abs)]) + leaf_abs + b"\0"
    return trie


def symbols_blob():
    """LC_SYMTAB's table and strings at 0x800/0x840, the trie at 0x880."""
    strings = b"\0_seed_fn\0_seed_abs\0".ljust(0x20, b"\0")
    nlist = (struct.pack("<IBBHQ", 1, 0x0F, 1, 0, 0x400) +     # N_SECT|N_EXT, __text
             struct.pack("<IBBHQ", 10, 0x03, 0, 0, 0x42))      # N_ABS|N_EXT
    trie = export_trie()
    cmds = [struct.pack("<IIIIII", 0x2, 24, 0x800, 2, 0x840, len(strings)),
            struct.pack("<12I", 0x80000022, 48, 0, 0, 0, 0, 0, 0, 0, 0, 0x880, len(trie))]
    return cmds, {0x800: nlist, 0x840: strings, 0x880: trie}


def thin(cputype, version_cmd):
    text_off = 0x400
    seg = struct.pack("<II16sQQQQIIII", 0x19, 72 + 80, b"__TEXT", 0, 0x1000, 0, 0x1000, 5, 5, 1, 0)
    sec = struct.pack("<16s16sQQIIIIIIII", b"__text", b"__TEXT", text_off, 16, text_off, 2, 0, 0, 0x80000400, 0, 0, 0)
    cmds = [seg + sec,
            lc_str(0xD, 24, "@rpath/libseed.dylib"),
            lc_str(0xC, 24, "/usr/lib/libSystem.B.dylib"),
            lc_str(0x80000018, 24, "@rpath/libweak.dylib"),
            lc_str(0x8000001C, 12, "@loader_path"),
            lc_str(0x8000001C, 12, "/build/lib"),
            struct.pack("<II16s", 0x1B, 24, bytes(range(16)))]
    if version_cmd == "build":
        cmds.append(struct.pack("<IIIIII", 0x32, 24, 1, 0xB0000, 0xB0000, 0))
    else:
        cmds.append(struct.pack("<IIII", 0x24, 16, 0xA0F00, 0xA0F00))
    sym_cmds, data = symbols_blob()
    cmds += sym_cmds
    blob = b"".join(cmds)
    hdr = struct.pack("<IIIIIIII", 0xFEEDFACF, cputype, 0, 6, len(cmds), len(blob), 0x100085, 0)
    img = bytearray((hdr + blob).ljust(0x1000, b"\0"))
    img[text_off:text_off + 16] = b"\xcc" * 16
    for off, bytes_ in data.items():
        img[off:off + len(bytes_)] = bytes_
    return bytes(img)


def fat(slices, wide):
    out = bytearray(0x1000 * (len(slices) + 1))
    struct.pack_into(">II", out, 0, 0xCAFEBABF if wide else 0xCAFEBABE, len(slices))
    for i, (cpu, img) in enumerate(slices):
        off = 0x1000 * (i + 1)
        if wide:
            struct.pack_into(">IIQQII", out, 8 + 32 * i, cpu, 0, off, len(img), 12, 0)
        else:
            struct.pack_into(">IIIII", out, 8 + 20 * i, cpu, 0, off, len(img), 12)
        out[off:off + len(img)] = img
    return bytes(out)


def main():
    d = sys.argv[1]
    arm = thin(0x0100000C, "build")
    x86 = thin(0x01000007, "min")
    seeds = {"arm64.dylib": arm, "x86_64.dylib": x86,
             "fat.dylib": fat([(0x01000007, x86), (0x0100000C, arm)], False),
             "fat64.dylib": fat([(0x01000007, x86), (0x0100000C, arm)], True)}
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
