#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small independent ELF helper for the tests/elf integration scripts.

It parses only what it needs (ELF header, program headers, section headers)
with `struct`, so it does not share a single line with the code under test.

  elfcheck.py segments FILE [--min-align N]   check segment invariants (exit 1 + FAIL lines)
  elfcheck.py strip-shdrs IN OUT              copy IN to OUT without section headers
  elfcheck.py poke FILE FIELD=VALUE...        overwrite header fields (e_machine, e_phoff,
                                              e_phentsize, e_phnum, e_shoff, ei_data=swap|N,
                                              ei_class=N)
  elfcheck.py state FILE                      readelf-derived state as key=value lines
  elfcheck.py inspect-state JSON [INDEX]      the same keys from `pkgtool inspect --json`
  elfcheck.py header FILE                     a few header fields as key=value lines
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
from testlib import readelf_dynamic_entries  # noqa: E402

PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_PHDR = 1, 2, 3, 6
SHT_NOBITS = 8
SHF_ALLOC = 0x2


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
        self.bits = {1: 32, 2: 64}[d[4]]
        self.end = {1: "<", 2: ">"}[d[5]]
        e = self.end
        if self.bits == 64:
            (self.type, self.machine, _, _, self.phoff, self.shoff, _, _, self.phentsize,
             self.phnum, self.shentsize, self.shnum, self.shstrndx) = struct.unpack_from(
                 e + "HHIQQQIHHHHHH", d, 16)
        else:
            (self.type, self.machine, _, _, self.phoff, self.shoff, _, _, self.phentsize,
             self.phnum, self.shentsize, self.shnum, self.shstrndx) = struct.unpack_from(
                 e + "HHIIIIIHHHHHH", d, 16)
        self.phdrs = []
        for i in range(self.phnum):
            off = self.phoff + i * self.phentsize
            if self.bits == 64:
                t, fl, o, va, pa, fs, ms, al = struct.unpack_from(e + "IIQQQQQQ", d, off)
            else:
                t, o, va, pa, fs, ms, fl, al = struct.unpack_from(e + "IIIIIIII", d, off)
            self.phdrs.append(dict(type=t, flags=fl, offset=o, vaddr=va, filesz=fs, memsz=ms,
                                   align=al, index=i))
        self.shdrs = []
        if self.shoff and self.shnum:
            for i in range(self.shnum):
                off = self.shoff + i * self.shentsize
                if self.bits == 64:
                    nm, t, fl, ad, o, sz, ln, inf, al, es = struct.unpack_from(
                        e + "IIQQQQIIQQ", d, off)
                else:
                    nm, t, fl, ad, o, sz, ln, inf, al, es = struct.unpack_from(
                        e + "IIIIIIIIII", d, off)
                self.shdrs.append(dict(name_off=nm, type=t, flags=fl, addr=ad, offset=o,
                                       size=sz, index=i))
            if self.shstrndx < len(self.shdrs):
                strtab = self.shdrs[self.shstrndx]
                for s in self.shdrs:
                    start = strtab["offset"] + s["name_off"]
                    s["name"] = d[start:d.index(b"\0", start)].decode(errors="replace")


def covering_load(elf, offset, vaddr, size):
    """The PT_LOAD that maps file [offset, offset+size) at vaddr, or None."""
    for p in elf.phdrs:
        if p["type"] != PT_LOAD:
            continue
        if (p["offset"] <= offset and offset + size <= p["offset"] + p["filesz"]
                and vaddr - p["vaddr"] == offset - p["offset"]):
            return p
    return None


def cmd_segments(args):
    path = args[0]
    min_align = 0
    if "--min-align" in args:
        min_align = int(args[args.index("--min-align") + 1], 0)
    elf = Elf(path)
    errors = []
    loads = [p for p in elf.phdrs if p["type"] == PT_LOAD]
    if not loads:
        errors.append("no PT_LOAD segment")
    for p in loads:
        i, al = p["index"], p["align"]
        # glibc >= 2.35 rejects a LOAD whose offset and address disagree modulo
        # p_align ("ELF load command address/offset not properly aligned").
        if al > 1 and p["offset"] % al != p["vaddr"] % al:
            errors.append(f"PT_LOAD[{i}]: p_offset {p['offset']:#x} % p_align {al:#x} != "
                          f"p_vaddr {p['vaddr']:#x} % p_align")
        if al & (al - 1):
            errors.append(f"PT_LOAD[{i}]: p_align {al:#x} is not a power of two")
        # 64 KiB-page kernels (aarch64, ppc64) cannot map a LOAD aligned below their page.
        if al < min_align:
            errors.append(f"PT_LOAD[{i}]: p_align {al:#x} below the architecture minimum "
                          f"{min_align:#x}")
        if p["filesz"] > p["memsz"]:
            errors.append(f"PT_LOAD[{i}]: p_filesz {p['filesz']:#x} > p_memsz {p['memsz']:#x}")
        if p["offset"] + p["filesz"] > len(elf.data):
            errors.append(f"PT_LOAD[{i}]: file range ends at {p['offset'] + p['filesz']:#x}, "
                          f"past the end of the file ({len(elf.data):#x})")
    # ld.so and the kernel assume ascending p_vaddr (the ELF spec requires it).
    vaddrs = [p["vaddr"] for p in loads]
    if vaddrs != sorted(vaddrs):
        errors.append("PT_LOAD segments not sorted by p_vaddr: " +
                      " ".join(f"{v:#x}" for v in vaddrs))
    for a, b in zip(sorted(loads, key=lambda p: p["vaddr"]),
                    sorted(loads, key=lambda p: p["vaddr"])[1:]):
        if a["vaddr"] + a["memsz"] > b["vaddr"]:
            errors.append(f"PT_LOAD[{a['index']}] [{a['vaddr']:#x}, +{a['memsz']:#x}) overlaps "
                          f"PT_LOAD[{b['index']}] at {b['vaddr']:#x}")
    for p in elf.phdrs:
        # "PHDR segment not covered by LOAD segment" is a fatal ld.so error.
        name = {PT_PHDR: "PT_PHDR", PT_INTERP: "PT_INTERP", PT_DYNAMIC: "PT_DYNAMIC"}.get(
            p["type"])
        if name and covering_load(elf, p["offset"], p["vaddr"], p["filesz"]) is None:
            errors.append(f"{name} (offset {p['offset']:#x}, vaddr {p['vaddr']:#x}, size "
                          f"{p['filesz']:#x}) not covered by a PT_LOAD")
        if p["type"] == PT_PHDR and p["offset"] != elf.phoff:
            errors.append(f"PT_PHDR offset {p['offset']:#x} != e_phoff {elf.phoff:#x}")
    # Allocated sections outside their segment are what makes `strip` corrupt a
    # patched file (patchelf #10, #145, #196, #371).
    for s in elf.shdrs:
        if not (s["flags"] & SHF_ALLOC) or s["type"] == SHT_NOBITS or s["size"] == 0:
            continue
        if covering_load(elf, s["offset"], s["addr"], s["size"]) is None:
            errors.append(f"allocated section [{s['index']}] {s.get('name', '?')} (offset "
                          f"{s['offset']:#x}, addr {s['addr']:#x}, size {s['size']:#x}) not "
                          f"inside a PT_LOAD with a matching offset/address")
    for e in errors:
        print(f"FAIL: {path}: {e}")
    return 1 if errors else 0


def cmd_strip_shdrs(args):
    src, dst = args
    shutil.copyfile(src, dst)
    shutil.copymode(src, dst)
    elf = Elf(src)
    with open(dst, "r+b") as f:
        if elf.bits == 64:
            f.seek(0x28)
            f.write(struct.pack(elf.end + "Q", 0))
            f.seek(0x3C)
        else:
            f.seek(0x20)
            f.write(struct.pack(elf.end + "I", 0))
            f.seek(0x30)
        f.write(struct.pack(elf.end + "HH", 0, 0))  # e_shnum, e_shstrndx
    return 0


def cmd_poke(args):
    path, edits = args[0], args[1:]
    elf = Elf(path)
    e = elf.end
    with open(path, "r+b") as f:
        for edit in edits:
            field, value = edit.split("=", 1)
            if field == "ei_data":
                f.seek(5)
                f.write(bytes([3 - elf.data[5]]) if value == "swap" else bytes([int(value, 0)]))
                continue
            if field == "ei_class":
                f.seek(4)
                f.write(bytes([int(value, 0)]))
                continue
            if elf.bits == 64:
                where = {"e_machine": (0x12, "H"), "e_phoff": (0x20, "Q"),
                         "e_shoff": (0x28, "Q"), "e_phentsize": (0x36, "H"),
                         "e_phnum": (0x38, "H")}[field]
            else:
                where = {"e_machine": (0x12, "H"), "e_phoff": (0x1C, "I"),
                         "e_shoff": (0x20, "I"), "e_phentsize": (0x2A, "H"),
                         "e_phnum": (0x2C, "H")}[field]
            f.seek(where[0])
            f.write(struct.pack(e + where[1], int(value, 0)))
    return 0


def cmd_header(args):
    elf = Elf(args[0])
    print(f"bits={elf.bits}")
    print(f"endian={'little' if elf.end == '<' else 'big'}")
    print(f"type={elf.type}")
    print(f"machine={elf.machine}")
    print(f"phnum={elf.phnum}")
    print(f"shnum={elf.shnum}")
    print(f"loads={sum(1 for p in elf.phdrs if p['type'] == PT_LOAD)}")
    return 0


def readelf(*args):
    r = subprocess.run(["readelf", "-W", *args], capture_output=True, text=True)
    return r.stdout


def cmd_state(args):
    """interp/soname/rpath/runpath/needed/verneed from readelf; absent = <none>."""
    path = args[0]
    state = {"interp": "<none>", "soname": "<none>", "rpath": "<none>",
             "runpath": "<none>", "needed": ""}
    needed = []
    counts = {"RPATH": 0, "RUNPATH": 0, "SONAME": 0}
    for tag, val in readelf_dynamic_entries(path):
        if tag == "NEEDED":
            needed.append(val)
        elif tag in counts:
            counts[tag] += 1
            state[tag.lower()] = val
    state["needed"] = " ".join(needed)
    m = re.search(r"\[Requesting program interpreter: (.*)\]", readelf("-l", path))
    if m:
        state["interp"] = m.group(1)
    # .gnu.version_r needs section headers; "File: X  Cnt: N" lines name each vn_file.
    files = re.findall(r"File: (\S+)\s+Cnt:", readelf("-V", path))
    state["verneed"] = " ".join(files)
    for tag, n in counts.items():
        if n > 1:
            state[f"dup_{tag.lower()}"] = str(n)  # two DT_SONAMEs etc. is a bug
    for k in sorted(state):
        print(f"{k}={state[k]}")
    return 0


def cmd_inspect_state(args):
    with open(args[0]) as f:
        data = json.load(f)
    obj = data[int(args[1]) if len(args) > 1 else 0]

    def val(v):
        return "<none>" if v is None else v
    state = {"interp": val(obj.get("interpreter")), "soname": val(obj.get("soname")),
             "rpath": val(obj.get("rpath")), "runpath": val(obj.get("runpath")),
             "needed": " ".join(obj.get("needed", [])),
             "verneed": " ".join(v["file"] for v in obj.get("version_needs", []))}
    for k in sorted(state):
        print(f"{k}={state[k]}")
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    cmd = {"segments": cmd_segments, "strip-shdrs": cmd_strip_shdrs, "poke": cmd_poke,
           "state": cmd_state, "inspect-state": cmd_inspect_state,
           "header": cmd_header}.get(sys.argv[1])
    if cmd is None:
        print(f"unknown command {sys.argv[1]}", file=sys.stderr)
        return 2
    try:
        return cmd(sys.argv[2:])
    except (ValueError, struct.error, KeyError, IndexError) as e:
        print(f"FAIL: {' '.join(sys.argv[2:3])}: cannot parse: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
