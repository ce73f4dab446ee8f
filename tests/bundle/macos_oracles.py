#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent views of a repaired macOS wheel for tests/bundle/macos_repair.sh.

  macos_oracles.py objdump FILE     {"arch": {"id", "dylibs", "rpaths"}} from
                                    llvm-objdump-14 --macho --arch=all
                                    --dylibs-used --dylib-id --rpaths
  macos_oracles.py otool FILE       the same from `llvm-otool-14 -l` (thin
                                    files: llvm-otool-14 shows one slice)
  macos_oracles.py minos FILE       {"arch": "X.Y"} as macholib (delocate's
                                    reader) reads LC_BUILD_VERSION /
                                    LC_VERSION_MIN_MACOSX
  macos_oracles.py record WHEEL     zipfile: every member's sha256/size equals
                                    its RECORD row, every member listed once;
                                    prints {"members": [...], "tags": [...],
                                    "compress": {member: [type, size, crc]}}
"""
import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile

ARCHS = {0x0100000C: "arm64", 0x01000007: "x86_64"}


def objdump_lines(path, option):
    """{arch: [lines]} of one llvm-objdump-14 --macho --arch=all option."""
    out = subprocess.run(
        ["llvm-objdump-14", "--macho", "--arch=all", option, path],
        check=True, capture_output=True, text=True).stdout
    view, arch = {}, None
    for line in out.splitlines():
        m = re.match(r"^(.*?)(?: \(architecture (\w+)\))?:$", line)
        if m and m.group(1) == path:
            arch = m.group(2) or "thin"
            view.setdefault(arch, [])
        elif arch is not None and line.strip():
            view[arch].append(line.strip())
    return view


def objdump(path):
    """{arch: {"id", "dylibs", "rpaths"}}; a thin file's arch is "thin"."""
    ids = objdump_lines(path, "--dylib-id")
    used = objdump_lines(path, "--dylibs-used")
    rpaths = objdump_lines(path, "--rpaths")
    view = {}
    for arch in used:
        dylibs = [l.split(" (compatibility version")[0] for l in used[arch]]
        ident = ids.get(arch, [None])[0] if ids.get(arch) else None
        # --dylibs-used lists a dylib's own id first.
        if ident is not None and dylibs and dylibs[0] == ident:
            dylibs = dylibs[1:]
        view[arch] = {"id": ident, "dylibs": dylibs,
                      "rpaths": rpaths.get(arch, [])}
    return view


def otool(path):
    out = subprocess.run(["llvm-otool-14", "-l", path], check=True,
                         capture_output=True, text=True).stdout
    cmds, cur = [], None
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("cmd "):
            cur = {"cmd": s.split()[1]}
            cmds.append(cur)
        elif cur is not None and (s.startswith("name ") or s.startswith("path ")):
            cur["str"] = s.split()[1]
    return {
        "id": [c["str"] for c in cmds if c["cmd"] == "LC_ID_DYLIB"],
        "dylibs": [c["str"] for c in cmds if c["cmd"] in
                   ("LC_LOAD_DYLIB", "LC_LOAD_WEAK_DYLIB", "LC_REEXPORT_DYLIB")],
        "rpaths": [c["str"] for c in cmds if c["cmd"] == "LC_RPATH"],
    }


def minos(path):
    from macholib import MachO, mach_o
    out = {}
    for h in MachO.MachO(path).headers:
        arch = ARCHS.get(h.header.cputype, hex(h.header.cputype))
        for lc, cmd, _ in h.commands:
            if lc.cmd == mach_o.LC_BUILD_VERSION:
                v = cmd.minos
            elif lc.cmd == mach_o.LC_VERSION_MIN_MACOSX:
                v = cmd.version
            else:
                continue
            out[arch] = f"{v >> 16}.{(v >> 8) & 0xFF}"
    return out


def record(wheel):
    z = zipfile.ZipFile(wheel)
    names = z.namelist()
    [rec] = [n for n in names if n.endswith(".dist-info/RECORD")]
    rows = {}
    for line in z.read(rec).decode().splitlines():
        if not line:
            continue
        path, digest, size = line.rsplit(",", 2)
        assert path not in rows, f"RECORD lists {path} twice"
        rows[path] = (digest, size)
    assert set(rows) == set(names), (set(rows) ^ set(names))
    for n in names:
        if n == rec:
            assert rows[n] == ("", ""), rows[n]
            continue
        data = z.read(n)
        d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        assert rows[n] == ("sha256=" + d.decode(), str(len(data))), n
    [wheel_file] = [n for n in names if n.endswith(".dist-info/WHEEL")]
    tags = [l.split(": ", 1)[1] for l in z.read(wheel_file).decode().splitlines()
            if l.startswith("Tag: ")]
    compress = {i.filename: [i.compress_type, i.compress_size, i.CRC]
                for i in z.infolist()}
    return {"members": names, "tags": tags, "compress": compress}


def main():
    what, arg = sys.argv[1], sys.argv[2]
    fn = {"objdump": objdump, "otool": otool, "minos": minos,
          "record": record}[what]
    print(json.dumps(fn(arg), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
