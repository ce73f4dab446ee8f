# SPDX-License-Identifier: BSD-3-Clause
"""Reference ELF readers for the cross-checks: readelf, pyelftools, LIEF.

Each reader returns a dict with (a subset of) the keys of
`pkgtool inspect --json`, normalised so that the values compare with ==:

  class, endian, machine, type, interpreter, soname, needed, rpath, runpath,
  flags, flags_1 (sorted name lists), defined, undefined (dynsym counts),
  version_needs (sorted list of [file, sorted versions]),
  version_defs (list), max_versions ({prefix: tag})

A key is absent when that reader cannot tell (e.g. pyelftools on a file
without section headers has no version tables); the comparison then skips it
for that reader. Helpers shared by crosscheck_reader.py and
property_edits.py live here too.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing, readelf_dynamic_entries  # noqa: E402

# --------------------------------------------------------------- utilities

READELF = shutil.which("readelf") or "/usr/bin/readelf"



def run(cmd, check=True, timeout=300, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, **kw)
    out = p.stdout.decode("utf-8", "surrogateescape")
    err = p.stderr.decode("utf-8", "surrogateescape")
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} -> exit {p.returncode}\n{err}{out}")
    return p.returncode, out, err


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def strip_section_headers(src, dst):
    """Copy src to dst with e_shoff, e_shnum and e_shstrndx zeroed."""
    data = bytearray(open(src, "rb").read())
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        struct.pack_into(end + "Q", data, 0x28, 0)   # e_shoff
        struct.pack_into(end + "H", data, 0x3C, 0)   # e_shnum
        struct.pack_into(end + "H", data, 0x3E, 0)   # e_shstrndx
    else:
        struct.pack_into(end + "I", data, 0x20, 0)
        struct.pack_into(end + "H", data, 0x30, 0)
        struct.pack_into(end + "H", data, 0x32, 0)
    with open(dst, "wb") as f:
        f.write(data)
    shutil.copymode(src, dst)


VERSION_RE = re.compile(r"^(.+)_(\d+(?:\.\d+)*)$")


def parse_version_tag(name):
    """'GLIBC_2.2.5' -> ('GLIBC', (2, 2, 5)); None for GLIBC_PRIVATE etc."""
    m = VERSION_RE.match(name)
    if not m:
        return None
    return m.group(1), tuple(int(x) for x in m.group(2).split("."))


def max_versions(version_needs):
    """{prefix: (tag, {files needing that tag})} from [(file, [versions])]."""
    best = {}
    for file, versions in version_needs:
        for v in versions:
            t = parse_version_tag(v)
            if not t:
                continue
            prefix, num = t
            cur = best.get(prefix)
            if cur is None or num > cur[0]:
                best[prefix] = (num, v, {file})
            elif num == cur[0]:
                cur[2].add(file)
    return {p: (tag, files) for p, (_, tag, files) in best.items()}


def norm_needs(pairs):
    return sorted([f, sorted(v)] for f, v in pairs)


# ------------------------------------------------------------------- ours

def ours_normalise(j):
    """pkgtool inspect --json object -> the normalised dict."""
    needs = [(n["file"], n["versions"]) for n in j["version_needs"]]
    return {
        "class": j["class"], "endian": j["endian"], "machine": j["machine"],
        "type": j["type"], "interpreter": j["interpreter"], "soname": j["soname"],
        "needed": list(j["needed"]), "rpath": j["rpath"], "runpath": j["runpath"],
        "flags": sorted(j["flags"]), "flags_1": sorted(j["flags_1"]),
        "defined": j["symbols"]["defined"], "undefined": j["symbols"]["undefined"],
        "version_needs": norm_needs(needs),
        "version_defs": list(j["version_defs"]),
        "max_versions": {p: v["tag"] for p, v in j["max_versions"].items()},
        "max_versions_from": {p: v["from"] for p, v in j["max_versions"].items()},
    }


def pkgtool_inspect(pkgtool, files, timeout=600):
    """{path: normalised dict or {'error': msg}}; batches, falls back per file."""
    out = {}
    if not files:
        return out
    rc, so, se = run([pkgtool, "inspect", "--json", *files], check=False, timeout=timeout)
    if rc == 0:
        for f, j in zip(files, json.loads(so)):
            out[f] = ours_normalise(j)
        return out
    if len(files) == 1:
        return {files[0]: {"error": (se.strip() or so.strip() or f"exit {rc}")}}
    for f in files:
        out.update(pkgtool_inspect(pkgtool, [f], timeout))
    return out


# ---------------------------------------------------------------- readelf

READELF_MACHINES = {
    "Advanced Micro Devices X86-64": "x86_64", "AArch64": "aarch64",
    "Intel 80386": "i386", "IBM S/390": "s390", "ARM": "arm",
    "PowerPC64": "ppc64", "PowerPC": "ppc", "RISC-V": "riscv",
    "MIPS R3000": "mips", "LoongArch": "loongarch", "Sparc": "sparc",
    "Sparc v9": "sparcv9", "Intel IA-64": "ia64", "Motorola m68k": "m68k",
}

SYM_RE = re.compile(
    r"^\s*(\d+):\s+[0-9a-fA-F]+\s+(?:0x[0-9a-fA-F]+|\d+)\s+\S+\s+\S+\s+\S+"
    r"(?:\s+\[[^\]]*\])?\s+(\S+)(?:\s(.*))?$")


def readelf_info(path, use_dynamic=False):
    """Parse readelf -h -l -d -V --dyn-syms -W (separate runs).

    use_dynamic: add -D (for files without section headers, readelf then
    finds the dynamic symbols through the hash tables)."""
    info = {}
    d = ["-D"] if use_dynamic else []

    _, out, _ = run([READELF, "-h", "-W", path])
    for line in out.splitlines():
        key, _, val = line.strip().partition(":")
        val = val.strip()
        if key == "Class":
            info["class"] = val
        elif key == "Data":
            info["endian"] = "little" if "little" in val else "big"
        elif key == "Machine":
            if val in READELF_MACHINES:
                info["machine"] = READELF_MACHINES[val]
        elif key == "Type":
            info["type"] = val.split()[0]

    _, out, _ = run([READELF, "-l", "-W", path])
    info["interpreter"] = None
    m = re.search(r"\[Requesting program interpreter: (.*)\]\s*$", out, re.M)
    if m:
        info["interpreter"] = m.group(1)

    needed, soname, rpath, runpath = [], None, None, None
    flags, flags_1 = [], []
    for tag, rest in readelf_dynamic_entries(path, *d):
        val = rest
        if tag == "NEEDED":
            needed.append(val)
        elif tag == "SONAME" and soname is None:
            soname = val
        elif tag == "RPATH" and rpath is None:
            rpath = val
        elif tag == "RUNPATH" and runpath is None:
            runpath = val
        elif tag == "FLAGS" and not flags:
            flags = rest.split()
        elif tag == "FLAGS_1" and not flags_1:
            flags_1 = rest.replace("Flags:", "").split()
    info.update(needed=needed, soname=soname, rpath=rpath, runpath=runpath,
                flags=sorted(readelf_flag_names(flags, READELF_FLAGS_BITS, DT_FLAGS_NAMES)),
                flags_1=sorted(readelf_flag_names(flags_1, READELF_FLAGS_1_BITS,
                                                  DT_FLAGS_1_NAMES)))

    _, out, _ = run([READELF, "-V", "-W", *d, path])
    needs, defs, section, cur = [], [], None, None
    for line in out.splitlines():
        if line.startswith("Version needs section"):
            section = "need"
            continue
        if line.startswith("Version definition section"):
            section = "def"
            continue
        if line.startswith("Version symbols section") or not line.strip():
            if line.strip():
                section = None
            continue
        if section == "need":
            m = re.search(r"File:\s+(\S+)\s+Cnt:", line)
            if m:
                cur = (m.group(1), [])
                needs.append(cur)
                continue
            m = re.search(r"Name:\s+(\S+)\s+Flags:", line)
            if m and cur is not None:
                cur[1].append(m.group(1))
        elif section == "def":
            m = re.search(r"Flags:\s+(.*?)\s+Index:.*Name:\s+(\S+)\s*$", line)
            if m and "BASE" not in m.group(1).split():
                defs.append(m.group(2))
    have_versions = "No version information found" not in out
    if have_versions or not use_dynamic:
        info["version_needs"] = norm_needs(needs)
        info["version_defs"] = defs
        mv = max_versions(needs)
        info["max_versions"] = {p: t for p, (t, _) in mv.items()}
        info["max_versions_files"] = {p: fs for p, (_, fs) in mv.items()}

    _, out, _ = run([READELF, "--dyn-syms", "-W", *d, path])
    defined = undefined = 0
    nsyms = 0
    for line in out.splitlines():
        m = SYM_RE.match(line)
        if not m:
            continue
        num, ndx, name = int(m.group(1)), m.group(2), (m.group(3) or "").strip()
        if num == 0:
            continue
        nsyms += 1
        if ndx != "UND":
            defined += 1
        elif name:
            undefined += 1
    if nsyms or "Symbol table" in out:
        info["defined"] = defined
        info["undefined"] = undefined
    return info


# ------------------------------------------------------------- pyelftools

PYELF_MACHINES = {
    "EM_X86_64": "x86_64", "EM_AARCH64": "aarch64", "EM_386": "i386",
    "EM_S390": "s390", "EM_ARM": "arm", "EM_PPC64": "ppc64", "EM_PPC": "ppc",
    "EM_RISCV": "riscv", "EM_MIPS": "mips", "EM_LOONGARCH": "loongarch",
    "EM_SPARC": "sparc", "EM_SPARCV9": "sparcv9", "EM_IA_64": "ia64",
    "EM_68K": "m68k",
}


def lief_dump_from_env():
    """The LIEF reader (tests/tools/lief_dump) ctest passes in LIEF_DUMP.
    Missing is a failure (liblief-dev is in scripts/setup.sh) unless the
    build was configured with -DLIBPKG_TEST_LIEF=OFF, which sets
    LIBPKG_TEST_LIEF=OFF: then the LIEF column is left out, said once."""
    lief_dump = os.environ.get("LIEF_DUMP") or None
    if os.environ.get("LIBPKG_TEST_LIEF") == "OFF":
        print("note: configured with LIBPKG_TEST_LIEF=OFF: no LIEF column")
        return None
    if not lief_dump or not os.access(lief_dump, os.X_OK):
        missing(f"LIEF_DUMP ({lief_dump or 'unset'}) is not an executable: install liblief-dev "
                "and reconfigure, or configure with -DLIBPKG_TEST_LIEF=OFF")
    return lief_dump


def have_pyelftools():
    try:
        import elftools  # noqa: F401
        return True
    except ImportError:
        return False


def pyelftools_info(path):
    from elftools.elf.elffile import ELFFile
    from elftools.elf.dynamic import DynamicSection, DynamicSegment
    from elftools.elf.gnuversions import GNUVerNeedSection, GNUVerDefSection
    from elftools.elf.sections import SymbolTableSection

    info = {}
    with open(path, "rb") as f:
        elf = ELFFile(f)
        info["class"] = f"ELF{elf.elfclass}"
        info["endian"] = "little" if elf.little_endian else "big"
        m = elf["e_machine"]
        if m in PYELF_MACHINES:
            info["machine"] = PYELF_MACHINES[m]
        info["type"] = str(elf["e_type"]).replace("ET_", "")
        info["interpreter"] = None
        dyn = None
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_INTERP":
                info["interpreter"] = seg.get_interp_name()
            elif seg["p_type"] == "PT_DYNAMIC":
                dyn = seg
        has_sections = elf.num_sections() > 0
        if has_sections:
            for sec in elf.iter_sections():
                if isinstance(sec, DynamicSection):
                    dyn = sec
                    break
        needed, soname, rpath, runpath = [], None, None, None
        if dyn is not None:
            for t in dyn.iter_tags():
                if t.entry.d_tag == "DT_NEEDED":
                    needed.append(t.needed)
                elif t.entry.d_tag == "DT_SONAME" and soname is None:
                    soname = t.soname
                elif t.entry.d_tag == "DT_RPATH" and rpath is None:
                    rpath = t.rpath
                elif t.entry.d_tag == "DT_RUNPATH" and runpath is None:
                    runpath = t.runpath
        info.update(needed=needed, soname=soname, rpath=rpath, runpath=runpath)

        if has_sections:
            needs, defs = [], []
            for sec in elf.iter_sections():
                if isinstance(sec, GNUVerNeedSection):
                    for verneed, auxs in sec.iter_versions():
                        needs.append((verneed.name, [a.name for a in auxs]))
                elif isinstance(sec, GNUVerDefSection):
                    for verdef, auxs in sec.iter_versions():
                        if verdef["vd_flags"] & 1:   # VER_FLG_BASE
                            continue
                        names = [a.name for a in auxs]
                        if names:
                            defs.append(names[0])
            info["version_needs"] = norm_needs(needs)
            info["version_defs"] = defs
            syms = None
            for sec in elf.iter_sections():
                if sec["sh_type"] == "SHT_DYNSYM" and isinstance(sec, SymbolTableSection):
                    syms = sec.iter_symbols()
                    break
        elif isinstance(dyn, DynamicSegment):
            try:
                syms = dyn.iter_symbols()
            except Exception:
                syms = None
        else:
            syms = None
        if syms is not None or (has_sections and dyn is None):
            defined = undefined = 0
            for i, s in enumerate(syms or []):
                if i == 0:
                    continue
                if s["st_shndx"] != "SHN_UNDEF":
                    defined += 1
                elif s.name:
                    undefined += 1
            info["defined"] = defined
            info["undefined"] = undefined
    return info


# -------------------------------------------------------------------- LIEF

def lief_info(lief_dump, path, timeout=300):
    """Normalised dict from tests/tools/lief_dump, or {'error': ...}."""
    try:
        rc, out, err = run([lief_dump, path], check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"lief_dump timed out after {timeout}s"}
    if rc not in (0, 1) or not out.strip():
        return {"error": f"lief_dump exit {rc}: {err.strip()[:300]}"}
    j = json.loads(out)[0]
    if "error" in j:
        return {"error": j["error"]}
    info = {k: j[k] for k in ("class", "endian", "type", "interpreter", "soname",
                              "needed", "rpath", "runpath")}
    if j["machine"] != "unknown":
        info["machine"] = j["machine"]
    info["defined"] = j["symbols"]["defined"]
    info["undefined"] = j["symbols"]["undefined"]
    needs = [(n["file"], n["versions"]) for n in j["version_needs"]]
    info["version_needs"] = norm_needs(needs)
    info["flags"] = sorted(flag_names(j["flags_raw"] or 0, DT_FLAGS_NAMES))
    info["flags_1"] = sorted(flag_names(j["flags_1_raw"] or 0, DT_FLAGS_1_NAMES))
    return info


# The DT_FLAGS / DT_FLAGS_1 bit names pkgtool prints (remaining bits as hex).
DT_FLAGS_NAMES = [(0x1, "ORIGIN"), (0x2, "SYMBOLIC"), (0x4, "TEXTREL"),
                  (0x8, "BIND_NOW"), (0x10, "STATIC_TLS")]
DT_FLAGS_1_NAMES = [
    (0x1, "NOW"), (0x2, "GLOBAL"), (0x4, "GROUP"), (0x8, "NODELETE"),
    (0x10, "LOADFLTR"), (0x20, "INITFIRST"), (0x40, "NOOPEN"), (0x80, "ORIGIN"),
    (0x100, "DIRECT"), (0x400, "INTERPOSE"), (0x800, "NODEFLIB"), (0x1000, "NODUMP"),
    (0x2000, "CONFALT"), (0x4000, "ENDFILTEE"), (0x8000, "DISPRELDNE"),
    (0x10000, "DISPRELPND"), (0x20000, "NODIRECT"), (0x100000, "NOHDR"),
    (0x200000, "EDITED"), (0x400000, "NORELOC"), (0x800000, "SYMINTPOSE"),
    (0x1000000, "GLOBAUDIT"), (0x2000000, "SINGLETON"), (0x8000000, "PIE")]

# Every name readelf (binutils 2.40) prints, with its bit (elf.h / binutils).
READELF_FLAGS_1_BITS = dict((n, b) for b, n in DT_FLAGS_1_NAMES)
READELF_FLAGS_1_BITS.update(TRANS=0x200, IGNMUNDEF=0x40000, NOKSYMS=0x80000,
                            STUB=0x4000000, KMOD=0x10000000, WEAKFILTER=0x20000000,
                            NOCOMMON=0x40000000)
READELF_FLAGS_BITS = dict((n, b) for b, n in DT_FLAGS_NAMES)


def readelf_flag_names(names, bits, table):
    """readelf's flag words -> pkgtool's spelling (unknown bits as hex)."""
    value, unknown = 0, []
    for n in names:
        if n in bits:
            value |= bits[n]
        else:
            unknown.append(n)
    return flag_names(value, table) + unknown


def flag_names(value, table):
    out = []
    for bit, name in table:
        if value & bit:
            out.append(name)
            value &= ~bit
    if value:
        out.append(f"0x{value:x}")
    return out


# -------------------------------------------------------------- comparing

def compare(name, ours, refs, fields, label="ours"):
    """Mismatch lines 'file: field: ours=... REF=...' for every reference
    (name -> dict) that has the field and disagrees with ours (printed
    under `label`)."""
    lines = []
    for field in fields:
        if field not in ours:
            continue
        for ref_name, ref in refs.items():
            if ref is None or "error" in ref or field not in ref:
                continue
            if ours[field] != ref[field]:
                lines.append(f"{name}: {field}: {label}={ours[field]!r} {ref_name}={ref[field]!r}")
    return lines
