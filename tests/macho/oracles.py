#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent readers the Mach-O tests compare pkgtool against.

  oracles.py macholib FILE          our `inspect --json` == macholib's view
                                    (per arch: id, dylibs with kind, rpaths,
                                    minos/sdk, code signature)
  oracles.py otool-same A B         `llvm-otool-14 -l` of A and B equal except
                                    offsets/sizes that point into __LINKEDIT
  oracles.py header-room FILE       each slice: sizeofcmds + header <= first
                                    section offset (macholib's numbers)
"""
import json
import os
import re
import subprocess
import sys

from macholib import MachO, mach_o

PKGTOOL = os.environ["PKGTOOL"]
KINDS = {
    mach_o.LC_LOAD_DYLIB: "load",
    mach_o.LC_LOAD_WEAK_DYLIB: "weak",
    mach_o.LC_REEXPORT_DYLIB: "reexport",
    mach_o.LC_LOAD_UPWARD_DYLIB: "upward",
    mach_o.LC_LAZY_LOAD_DYLIB: "lazy",
}
ARCHS = {0x0100000C: "arm64", 0x01000007: "x86_64", 7: "i386"}


def version(v):
    major, minor, patch = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def cstr(data):
    return data.split(b"\0", 1)[0].decode(errors="replace")


def macholib_view(path):
    out = {}
    for h in MachO.MachO(path).headers:
        arch = ARCHS.get(h.header.cputype, hex(h.header.cputype))
        v = {"id": None, "dylibs": [], "rpaths": [], "minos": None,
             "sdk": None, "signature": None}
        first = None
        for lc, cmd, data in h.commands:
            c = lc.cmd
            if c == mach_o.LC_ID_DYLIB:
                v["id"] = cstr(data)
            elif c in KINDS:
                v["dylibs"].append([cstr(data), KINDS[c]])
            elif c == mach_o.LC_RPATH:
                v["rpaths"].append(cstr(data))
            elif c == mach_o.LC_BUILD_VERSION:
                v["minos"], v["sdk"] = version(cmd.minos), version(cmd.sdk)
            elif c == mach_o.LC_VERSION_MIN_MACOSX:
                v["minos"], v["sdk"] = version(cmd.version), version(cmd.sdk)
            elif c == mach_o.LC_CODE_SIGNATURE:
                v["signature"] = [cmd.dataoff, cmd.datasize]
            elif c == mach_o.LC_SEGMENT_64:
                for s in data:
                    if s.size and s.offset and (s.flags & 0xFF) not in (1, 0xC, 0x12):
                        first = s.offset if first is None else min(first, s.offset)
        v["padding"] = first - (32 + h.header.sizeofcmds)
        out[arch] = v
    return out


def ours(path):
    j = json.loads(subprocess.check_output([PKGTOOL, "inspect", "--json", path]))[0]
    out = {}
    for s in j["slices"]:
        if not s["parsed"]:
            continue
        sig = s["code_signature"]
        out[s["arch"]] = {
            "id": s["id"],
            "dylibs": [[d["name"], d["kind"]] for d in s["dylibs"]],
            "rpaths": s["rpaths"],
            "minos": s["minos"],
            "sdk": s["sdk"],
            "signature": [sig["dataoff"], sig["datasize"]] if sig["present"] else None,
            "padding": s["free_padding"],
        }
    return out


# Fields that locate data inside __LINKEDIT: llvm-install-name-tool rewrites
# __LINKEDIT (and so moves these), we never move it.
LINKEDIT_CMDS = {"LC_SYMTAB", "LC_DYSYMTAB", "LC_DYLD_INFO", "LC_DYLD_INFO_ONLY",
                 "LC_FUNCTION_STARTS", "LC_DATA_IN_CODE", "LC_CODE_SIGNATURE",
                 "LC_DYLD_CHAINED_FIXUPS", "LC_DYLD_EXPORTS_TRIE"}


def otool_normalized(path):
    text = subprocess.check_output(["llvm-otool-14", "-l", path], text=True)
    blocks, cur = [], []
    for line in text.splitlines()[1:]:
        if line.startswith("Load command") and cur:
            blocks.append(cur)
            cur = []
        cur.append(line.strip())
    blocks.append(cur)
    out = []
    for b in blocks:
        cmd = next((l.split()[1] for l in b if l.startswith("cmd ")), "")
        linkedit_seg = "segname __LINKEDIT" in b and cmd == "LC_SEGMENT_64"
        for l in b:
            key = l.split()[0] if l else ""
            if cmd in LINKEDIT_CMDS and re.search(r"(off|size)$", key) and key != "cmdsize":
                continue
            if linkedit_seg and key in ("vmsize", "filesize"):
                continue
            out.append(l)
    return out


def main():
    mode = sys.argv[1]
    if mode == "macholib":
        a, b = ours(sys.argv[2]), macholib_view(sys.argv[2])
        if a != b:
            print(f"pkgtool:  {json.dumps(a, sort_keys=True)}\nmacholib: {json.dumps(b, sort_keys=True)}")
            return 1
        return 0
    if mode == "otool-same":
        a, b = otool_normalized(sys.argv[2]), otool_normalized(sys.argv[3])
        if a != b:
            import difflib
            print("\n".join(difflib.unified_diff(a, b, sys.argv[2], sys.argv[3], lineterm="")))
            return 1
        return 0
    if mode == "header-room":
        for arch, v in macholib_view(sys.argv[2]).items():
            if v["padding"] < 0:
                print(f"{arch}: load commands overlap the first section by {-v['padding']}")
                return 1
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
