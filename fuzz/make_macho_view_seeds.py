#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeds for the macho_view fuzzer, built with struct (no SDK, no binaries
in the repository): a thin arm64 dylib with id, dependencies, rpaths,
LC_BUILD_VERSION and LC_UUID, an x86_64 one with LC_VERSION_MIN_MACOSX, and
fat (FAT_MAGIC and FAT_MAGIC_64) files holding both."""
import os
import struct
import sys


def lc_str(cmd, fixed, s, extra=b""):
    body = s.encode() + b"\0"
    size = (fixed + len(body) + 7) // 8 * 8
    return (struct.pack("<III", cmd, size, fixed) + extra).ljust(fixed, b"\0") + body.ljust(size - fixed, b"\0")


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
    blob = b"".join(cmds)
    hdr = struct.pack("<IIIIIIII", 0xFEEDFACF, cputype, 0, 6, len(cmds), len(blob), 0x100085, 0)
    img = (hdr + blob).ljust(0x1000, b"\0")
    return img[:text_off] + b"\xcc" * 16 + img[text_off + 16:]


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
