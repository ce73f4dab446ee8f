#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent verifier of Mach-O code signatures (test oracle, stdlib only).

For every slice of a thin or fat file, finds LC_CODE_SIGNATURE, reads the
SuperBlob and recomputes every code-page hash of every CodeDirectory
(primary and alternates), plus the requirements/entitlements special slots.
Written from the format description, sharing no code with libpkg.

usage: macho_cs_verify.py [--json] FILE...
exit: 0 every slice signed and valid, 1 a slice unsigned or invalid,
      2 a file unreadable or malformed.
"""
import hashlib
import json
import struct
import sys

ARCHS = {0x0100000C: "arm64", 0x01000007: "x86_64", 7: "i386", 12: "arm"}
HASHES = {1: ("sha1", 20), 2: ("sha256", 32), 3: ("sha256", 20), 4: ("sha384", 48)}
CD_SLOTS = {0} | set(range(0x1000, 0x1005))
BLOB_SLOTS = (2, 5, 7)  # requirements, entitlements, DER entitlements


class Bad(Exception):
    pass


def u32be(b, at):
    if at + 4 > len(b):
        raise Bad(f"read past end at 0x{at:x}")
    return struct.unpack_from(">I", b, at)[0]


def slices(data):
    magic = struct.unpack_from(">I", data, 0)[0] if len(data) >= 4 else 0
    if magic in (0xCAFEBABE, 0xCAFEBABF):
        wide = magic == 0xCAFEBABF
        n = u32be(data, 4)
        size = 32 if wide else 20
        for i in range(n):
            at = 8 + i * size
            if wide:
                cpu, _, off, sz, _, _ = struct.unpack_from(">iiQQII", data, at)
            else:
                cpu, _, off, sz, _ = struct.unpack_from(">iiIII", data, at)
            if off + sz > len(data):
                raise Bad(f"fat slice {i} past end of file")
            yield cpu & 0xFFFFFFFF, data[off:off + sz]
    else:
        if len(data) < 8:
            raise Bad("too short")
        yield struct.unpack_from("<I", data, 4)[0], data


def find_signature(sl):
    magic = struct.unpack_from("<I", sl, 0)[0]
    if magic not in (0xFEEDFACF, 0xFEEDFACE):
        raise Bad(f"not a little-endian Mach-O slice (magic 0x{magic:08x})")
    ncmds, sizeofcmds = struct.unpack_from("<II", sl, 16)
    at = 32 if magic == 0xFEEDFACF else 28
    end = at + sizeofcmds
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", sl, at)
        if cmdsize < 8 or at + cmdsize > end:
            raise Bad(f"load command at 0x{at:x}: bad cmdsize {cmdsize}")
        if cmd == 0x1D:
            return struct.unpack_from("<II", sl, at + 8)
        at += cmdsize
    return None


def check_slice(sl):
    """Returns (info dict, list of problems)."""
    found = find_signature(sl)
    if found is None:
        return {"signed": False}, ["not signed"]
    dataoff, datasize = found
    sig = sl[dataoff:dataoff + datasize]
    if len(sig) != datasize or u32be(sig, 0) != 0xFADE0CC0:
        raise Bad("bad SuperBlob")
    count = u32be(sig, 8)
    blobs = {}
    for i in range(count):
        btype, boff = u32be(sig, 12 + 8 * i), u32be(sig, 16 + 8 * i)
        blobs[btype] = (boff, u32be(sig, boff + 4))
    problems, cds = [], []
    for n, btype in enumerate(t for t in blobs if t in CD_SLOTS):
        off, length = blobs[btype]
        cd = sig[off:off + length]
        (magic, _, version, flags, hash_off, ident_off, nspecial, ncode, limit,
         hsize, htype, _, pshift) = struct.unpack_from(">9I4B", cd, 0)
        if magic != 0xFADE0C02:
            raise Bad(f"CodeDirectory {n}: bad magic")
        if version >= 0x20300 and len(cd) >= 64:
            limit = struct.unpack_from(">Q", cd, 56)[0] or limit
        algo, expect = HASHES[htype]
        if hsize != expect:
            problems.append(f"CD {n}: hashSize {hsize} for type {htype}")
            continue
        ident = cd[ident_off:cd.index(b"\0", ident_off)].decode()
        info = {"slot": btype, "version": version, "flags": flags,
                "identifier": ident, "hash_type": htype, "code_limit": limit,
                "page_size": 1 << pshift if pshift else 0, "pages": [],
                "n_special_slots": nspecial}
        if version >= 0x20400:
            info["exec_seg"] = list(struct.unpack_from(">QQQ", cd, 64))
        if limit != dataoff:
            problems.append(f"CD {n}: codeLimit 0x{limit:x} != dataoff 0x{dataoff:x}")
        page = (1 << pshift) if pshift else max(limit, 1)
        if ncode != (limit + page - 1) // page:
            problems.append(f"CD {n}: nCodeSlots {ncode} does not cover 0x{limit:x}")
        for p in range(ncode):
            got = hashlib.new(algo, sl[p * page:min((p + 1) * page, limit)]).digest()[:hsize]
            stored = cd[hash_off + p * hsize:hash_off + (p + 1) * hsize]
            info["pages"].append(stored.hex())
            if got != stored:
                problems.append(f"CD {n}: page {p} (0x{p * page:x}): hash mismatch")
        for slot in BLOB_SLOTS:
            if slot > nspecial or slot not in blobs:
                continue
            boff, blen = blobs[slot]
            got = hashlib.new(algo, sig[boff:boff + blen]).digest()[:hsize]
            if got != cd[hash_off - slot * hsize:hash_off - (slot - 1) * hsize]:
                problems.append(f"CD {n}: special slot -{slot}: hash mismatch")
        cds.append(info)
    if not cds:
        problems.append("no CodeDirectory")
    return {"signed": True, "dataoff": dataoff, "datasize": datasize,
            "code_directories": cds}, problems


def main(argv):
    as_json = "--json" in argv
    files = [a for a in argv if a != "--json"]
    status, report = 0, []
    for f in files:
        try:
            data = open(f, "rb").read()
            for cpu, sl in slices(data):
                name = f"{f} ({ARCHS.get(cpu, hex(cpu))})"
                info, problems = check_slice(sl)
                info.update(file=f, arch=ARCHS.get(cpu, hex(cpu)), problems=problems)
                report.append(info)
                for p in problems:
                    print(f"{name}: {p}", file=sys.stderr)
                if problems:
                    status = max(status, 1)
                elif not as_json:
                    print(f"{name}: valid")
        except (Bad, struct.error, KeyError, ValueError, OSError) as e:
            print(f"{f}: malformed: {e!r}", file=sys.stderr)
            status = 2
    if as_json:
        print(json.dumps(report, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
