#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fixture builder and independent checker for the `pkgtool repair` tests.

Nothing here uses libpkg except `pkgtool wheel pack` to pack fixture trees.
Dependencies are resolved with the real dynamic loader (`ldd`), ELF facts
come from binutils' `readelf`, platform policies from the policy JSON
(auditwheel's format), so the expectations are computed independently of
the code under test.

Subcommands (run with --help for their arguments):
  build KIND OUT      build a fixture wheel; prints its path
  plan WHEEL          the repair plan computed here (JSON)
  check-show ...      compare `pkgtool show --json` with the plan
  check-repaired ...  check a repaired wheel against the plan
  check-dry-run ...   compare `repair --dry-run --json` with the plan
  elf FILE            readelf facts of one file (JSON), for debugging
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
from testlib import Checks, missing, readelf_dynamic  # noqa: E402

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
KEEP_NAME_GLOBS = ["libnvrtc-builtins*", "libcudnn*", "libcublas*"]




def run(argv: list[str], env: dict | None = None, cwd: str | Path | None = None) -> str:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p.stdout


# ------------------------------------------------------------ ELF facts


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


_facts_cache: dict[str, dict] = {}


def elf_facts(path: Path) -> dict:
    """NEEDED, SONAME, RPATH, RUNPATH, machine, version needs, undefined
    symbols — all from readelf."""
    key = str(Path(path).resolve())
    if key in _facts_cache:
        return _facts_cache[key]
    dyn = readelf_dynamic(path)
    facts = {"needed": dyn["NEEDED"], "soname": dyn["SONAME"], "rpath": dyn["RPATH"],
             "runpath": dyn["RUNPATH"]}
    header = run(["readelf", "-hW", path])
    facts["machine"] = re.search(r"Machine:\s+(.*)", header).group(1).strip()
    facts["class"] = re.search(r"Class:\s+(\S+)", header).group(1)
    needs: list[tuple[str, str]] = []
    current = None
    in_needs = False
    for line in run(["readelf", "-V", "--wide", path]).splitlines():
        if line.startswith("Version needs section"):
            in_needs = True
            continue
        if line.startswith("Version definition section") or line.startswith("Version symbols section"):
            in_needs = False
            continue
        if not in_needs:
            continue
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            needs.append((current, m.group(1)))
    facts["version_needs"] = needs
    undefined: dict[str, str] = {}  # symbol -> version ("" if none)
    for line in run(["readelf", "--dyn-syms", "-W", path]).splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[6] == "UND" and cols[4] != "WEAK":
            name, _, ver = cols[7].partition("@")
            undefined[name] = ver.lstrip("@")
    facts["undefined"] = undefined
    _facts_cache[key] = facts
    return facts


# ------------------------------------------------------------ policies


def policy_file() -> Path:
    # A test passing --policy-file to pkgtool points this at the same file.
    if os.environ.get("REPAIRCHECK_POLICY"):
        return Path(os.environ["REPAIRCHECK_POLICY"])
    src = Path(os.environ.get("LIBPKG_SOURCE_DIR", HERE.parent.parent.parent))
    for cand in (src / "data/policy/manylinux-policy.json",
                 Path("/work/shared/data/policy/manylinux-policy.json")):
        if cand.is_file():
            return cand
    raise SystemExit("error: manylinux-policy.json not found")


def load_policies() -> list[dict]:
    policies = json.loads(policy_file().read_text())
    return sorted(policies, key=lambda p: -p["priority"])


def policy_tags(policy: dict, arch: str) -> list[str]:
    return [f"{n}_{arch}" for n in [policy["name"], *policy.get("aliases", [])]]


def allows(policy: dict, soname: str) -> bool:
    return soname in policy["lib_whitelist"] or soname.startswith("ld-linux")


def is_libpython(soname: str) -> bool:
    return re.match(r"libpython\d", soname) is not None


def version_blockers(policy: dict, arch: str, files: dict[str, dict]) -> list[tuple[str, str]]:
    """(file, version) pairs the policy doesn't allow (auditwheel's rule:
    prefix = text before the first '_'; only prefixes the policy lists count;
    the dynamic loader's versions are ignored)."""
    allowed = policy["symbol_versions"].get(arch, {})
    out = []
    for name, facts in files.items():
        for lib, ver in facts["version_needs"]:
            if lib.startswith("ld-linux"):
                continue
            prefix, _, rest = ver.partition("_")
            if prefix in allowed and rest not in allowed[prefix]:
                out.append((name, ver))
    return out


def blacklist_blockers(policy: dict, files: dict[str, dict]) -> list[tuple[str, str]]:
    out = []
    for name, facts in files.items():
        for lib in facts["needed"]:
            for sym in policy.get("blacklist", {}).get(lib, []):
                if sym in facts["undefined"]:
                    out.append((name, sym))
    return out


# ------------------------------------------------------------ resolution


def ldd_map(path: Path, env: dict | None = None) -> dict[str, str | None]:
    """soname -> resolved path (None = not found), from the real ld.so."""
    p = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env)
    out: dict[str, str | None] = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\S+) => not found", line)
        if m:
            out[m.group(1)] = None
            continue
        m = re.match(r"\s*(\S+) => (\S+) \(0x", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def sha8(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:8]


def graft_name(soname: str, source: str, keep: bool) -> str:
    if keep:
        return soname
    stem, dot, rest = soname.partition(".")
    return f"{stem}-{sha8(source)}{dot}{rest}"


def matches(patterns: list[str], soname: str, path: str | None) -> bool:
    return any(fnmatch.fnmatch(soname, p) or (path and fnmatch.fnmatch(path, p)) for p in patterns)


class WheelModel:
    """An extracted wheel, its ELF members and their resolved closures."""

    def __init__(self, wheel: Path, work: Path, lib_paths: list[str], excludes: list[str],
                 includes: list[str]):
        self.wheel = wheel
        self.root = work / "x"
        with zipfile.ZipFile(wheel) as z:
            z.extractall(self.root)
            self.members = sorted(i.filename for i in z.infolist() if not i.is_dir())
        # Extraction drops modes; ld.so needs nothing but read access here.
        self.env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
        ldp = lib_paths + [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
        if ldp:
            self.env["LD_LIBRARY_PATH"] = ":".join(ldp)
        self.lib_paths = lib_paths
        self.excludes = excludes
        self.elves = {m: elf_facts(self.root / m) for m in self.members if is_elf(self.root / m)}
        self.maps = {m: ldd_map(self.root / m, self.env) for m in self.elves}
        # --include: a path, or a soname searched in --lib-path dirs then ld.so's.
        self.includes: dict[str, str] = {}
        for inc in includes:
            if "/" in inc:
                p = Path(inc)
                self.includes[elf_facts(p)["soname"] or p.name] = str(p)
            else:
                found = next((str(Path(d) / inc) for d in lib_paths if (Path(d) / inc).exists()), None)
                if found is None:
                    raise SystemExit(f"error: --include {inc} not found in {lib_paths}")
                self.includes[inc] = found
        self.include_maps = {s: ldd_map(Path(p), self.env) for s, p in self.includes.items()}

    def inside(self, path: str) -> bool:
        return Path(path).resolve().is_relative_to(self.root.resolve())

    def closure(self, policy: dict) -> tuple[dict, dict, list]:
        """Libraries outside the wheel reachable through NEEDED, not
        descending into libraries the policy allows or that are excluded.
        Returns ({soname: {path, realpath, needed_by, graft}}, {missing
        soname: needed_by}, excluded sonames)."""
        ext: dict[str, dict] = {}
        missing: dict[str, list] = {}
        excluded: set[str] = set()
        roots = [(m, self.elves[m], self.maps[m]) for m in self.elves]
        for soname, path in self.includes.items():
            facts = elf_facts(Path(path))
            ext[soname] = {"path": path, "realpath": os.path.realpath(path), "needed_by": [],
                           "graft": True, "include": True}
            roots.append((soname, facts, self.include_maps[soname]))
        for root_name, facts, lmap in roots:
            queue = [(root_name, facts)]
            seen = set()
            while queue:
                who, f = queue.pop(0)
                for soname in f["needed"]:
                    if is_libpython(soname):
                        continue
                    path = lmap.get(soname)
                    if path is None and soname not in lmap:
                        # ldd lists every library it loaded; a NEEDED absent
                        # from its output was satisfied by the wheel tree
                        # itself or is the loader.
                        continue
                    if path is not None and self.inside(path):
                        continue
                    if matches(self.excludes, soname, path):
                        excluded.add(soname)
                        continue
                    if path is None:
                        missing.setdefault(soname, [])
                        if who not in missing[soname]:
                            missing[soname].append(who)
                        continue
                    e = ext.setdefault(soname, {"path": path, "realpath": os.path.realpath(path),
                                                "needed_by": [], "graft": not allows(policy, soname),
                                                "include": False})
                    if who not in e["needed_by"]:
                        e["needed_by"].append(who)
                    if e["graft"] and soname not in seen:
                        seen.add(soname)
                        queue.append((soname, elf_facts(Path(path))))
        return ext, missing, sorted(excluded)

    def arch(self) -> str:
        machines = {f["machine"] for f in self.elves.values()}
        if machines != {"Advanced Micro Devices X86-64"}:
            raise SystemExit(f"error: fixture wheel is not x86_64-only: {machines}")
        return "x86_64"

    def verdict(self, policy: dict, as_is: bool) -> tuple[bool, list]:
        ext, missing, _ = self.closure(policy)
        files = dict(self.elves)
        blockers = []
        if as_is:
            blockers += [("library", s, e["needed_by"]) for s, e in ext.items()
                         if not allows(policy, s) and not e["include"]]
        else:
            files.update({s: elf_facts(Path(e["path"])) for s, e in ext.items() if e["graft"]})
        if as_is:
            # An extension linking libpython is not compatible as it is
            # (repair drops the NEEDED).
            blockers += [("libpython", n, m) for m, f in self.elves.items()
                         for n in f["needed"] if is_libpython(n)]
        # Narrow-unicode / fpectl builds: never manylinux (PEP 513).
        blockers += [("python_abi", sym, m) for m, f in files.items() for sym in f["undefined"]
                     if sym.startswith(("PyFPE_", "PyUnicodeUCS2_"))]
        blockers += [("missing_library", s, w) for s, w in missing.items()]
        blockers += [("symbol_version", v, f) for f, v in version_blockers(policy, self.arch(), files)]
        blockers += [("blacklisted_symbol", s, f) for f, s in blacklist_blockers(policy, files)]
        return not blockers, blockers

    def best(self, as_is: bool) -> dict:
        policies = load_policies()
        for p in policies:
            if p["name"] != "linux" and self.verdict(p, as_is)[0]:
                return p
        return next(p for p in policies if p["name"] == "linux")


def find_policy(name: str) -> dict:
    for p in load_policies():
        if name in (p["name"], *p.get("aliases", [])) or name in policy_tags(p, "x86_64"):
            return p
    raise SystemExit(f"error: unknown policy {name}")


def dist_name(wheel: Path) -> tuple[str, str]:
    parts = wheel.name[:-4].split("-")
    return parts[0], parts[1]


def make_plan(args) -> dict:
    with tempfile.TemporaryDirectory(prefix="repaircheck-") as tmp:
        model = WheelModel(Path(args.wheel), Path(tmp), args.lib_path, args.exclude, args.include)
        arch = model.arch()
        as_is = model.best(as_is=True)
        after = model.best(as_is=False)
        target = after if args.plat in (None, "auto") else find_policy(args.plat)
        ext, missing, excluded = model.closure(target)
        dist, version = dist_name(Path(args.wheel))
        graft_dir = args.lib_dir or f"{dist}{args.lib_sdir}"
        grafts = {}
        for soname, e in sorted(ext.items()):
            if not e["graft"]:
                continue
            keep = e["include"] or any(fnmatch.fnmatch(soname, g) for g in KEEP_NAME_GLOBS)
            name = graft_name(soname, e["realpath"], keep)
            grafts[soname] = {"source": e["path"], "realpath": e["realpath"], "keep_name": keep,
                              "member": f"{graft_dir}/{name}", "needed_by": e["needed_by"],
                              "include": e["include"]}
        dlopeners = sorted(m for m, f in model.elves.items() if "dlopen" in f["undefined"])
        return {
            "wheel": str(args.wheel), "dist": dist, "version": version, "arch": arch,
            "as_is": as_is["name"], "after_repair": after["name"], "target": target["name"],
            "tags": policy_tags(target, arch),
            "graft_dir": graft_dir, "grafts": grafts,
            "external": {s: {"path": e["path"], "graft": e["graft"], "needed_by": e["needed_by"]}
                         for s, e in ext.items()},
            "missing": missing, "excluded": excluded,
            "elf_members": sorted(model.elves), "dlopeners": dlopeners,
            "member_needed": {m: f["needed"] for m, f in model.elves.items()},
            "blockers": {p["name"]: [list(map(str, b[:2])) for b in model.verdict(p, False)[1]][:20]
                         for p in load_policies() if p["name"] != "linux"},
        }


# ------------------------------------------------------------ checks


def rel_origin(member: str, graft_dir: str) -> str:
    rel = os.path.relpath(graft_dir, os.path.dirname(member) or ".")
    return "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"


def check_show(args) -> int:
    plan = json.loads(Path(args.plan).read_text())
    show = json.loads(Path(args.show).read_text())
    c = Checks()
    c.eq("schema", show.get("schema"), "libpkg-show/1")
    c.eq("name", show.get("name"), plan["dist"])
    c.eq("version", show.get("version"), plan["version"])
    c.eq("arch", show.get("arch"), plan["arch"])
    tags = show.get("tags", {})
    c.eq("tags.as_is", tags.get("as_is"), f"{plan['as_is']}_{plan['arch']}")
    c.eq("tags.after_repair", tags.get("after_repair"), f"{plan['after_repair']}_{plan['arch']}")
    c.eq("binaries", sorted(b.get("path") for b in show.get("binaries", [])), plan["elf_members"])
    for b in show.get("binaries", []):
        facts_needed = None
        # The needed list must be the file's DT_NEEDED.
        with zipfile.ZipFile(plan["wheel"]) as z, tempfile.TemporaryDirectory() as tmp:
            z.extract(b["path"], tmp)
            facts_needed = elf_facts(Path(tmp) / b["path"])["needed"]
        c.eq(f"binaries[{b['path']}].needed", b.get("needed"), facts_needed)
    ext = {e["soname"]: e for e in show.get("external_libraries", [])}
    want_graft = sorted(plan["grafts"])
    got_graft = sorted(s for s, e in ext.items() if e.get("graft"))
    c.eq("external_libraries with graft=true", got_graft, want_graft)
    for s, e in ext.items():
        if s in plan["external"]:
            c.eq(f"external {s} realpath", e.get("realpath"), os.path.realpath(plan["external"][s]["path"]))
    c.eq("missing", sorted(m["soname"] for m in show.get("missing", [])), sorted(plan["missing"]))
    # Policy verdicts: after_repair satisfied exactly from the best tag on.
    names = [p["name"] for p in show.get("policies", [])]
    c.check(f"{plan['after_repair']}_{plan['arch']}" in [p.get("tag") for p in show.get("policies", [])]
             or plan["after_repair"] == "linux", f"policies list lacks {plan['after_repair']}: {names}")
    for p in show.get("policies", []):
        name = p.get("name")
        if name == "linux" or name not in plan["blockers"]:
            continue
        want_ok = not plan["blockers"][name]
        c.eq(f"policy {name} after_repair.satisfied", p.get("after_repair", {}).get("satisfied"), want_ok)
    for spec in args.expect_blocker or []:
        # POLICY:KIND:FILE:DETAIL[:SYMBOL-SUBSTRING]
        pol, kind, file, detail, *sym = spec.split(":", 4)
        entry = next((p for p in show.get("policies", []) if p.get("name") == pol), None)
        c.check(entry is not None, f"policy {pol} missing from show")
        if entry is None:
            continue
        found = [b for b in entry.get("as_is", {}).get("blockers", [])
                 if b.get("kind") == kind and b.get("file") == file and b.get("detail") == detail]
        c.check(bool(found), f"{pol}: no as_is blocker {kind} {file} {detail}: "
                 f"{json.dumps(entry.get('as_is', {}).get('blockers', [])[:5])}")
        if found and sym:
            c.check(any(sym[0] in s for b in found for s in b.get("symbols", [])),
                     f"{pol}: blocker {detail} lacks a demangled example containing {sym[0]!r}: {found}")
    for key, want in (kv.split("=", 1) for kv in args.expect_max or []):
        # PREFIX=VERSION
        got = show.get("max_versions", {}).get(key, {}).get("version")
        c.eq(f"max_versions.{key}", got, want)
    return c.status()


def check_dry_run(args) -> int:
    plan = json.loads(Path(args.plan).read_text())
    dry = json.loads(Path(args.dry).read_text())
    c = Checks()
    c.eq("schema", dry.get("schema"), "libpkg-repair-plan/1")
    # The spec leaves open whether "plat" carries the arch; both name the
    # same policy.
    c.check(dry.get("plat") in (plan["target"], f"{plan['target']}_{plan['arch']}"),
             f"plat: got {dry.get('plat')!r}, expected {plan['target']}[_{plan['arch']}]")
    c.eq("tags", dry.get("tags"), plan["tags"])
    c.eq("graft_dir", dry.get("graft_dir"), plan["graft_dir"])
    grafts = {g["soname"]: g for g in dry.get("grafts", [])}
    c.eq("graft sonames", sorted(grafts), sorted(plan["grafts"]))
    for s, g in plan["grafts"].items():
        if s in grafts:
            c.eq(f"graft {s} member", grafts[s].get("member"), g["member"])
            c.eq(f"graft {s} keep_name", grafts[s].get("keep_name"), g["keep_name"])
            c.eq(f"graft {s} source realpath", os.path.realpath(grafts[s].get("source", "")), g["realpath"])
    edits = {e["member"]: e for e in dry.get("edits", [])}
    for m, needed in plan["member_needed"].items():
        want = {n: Path(plan["grafts"][n]["member"]).name for n in needed
                if n in plan["grafts"] and Path(plan["grafts"][n]["member"]).name != n}
        e = edits.get(m, {})
        c.eq(f"edit of {m}: replace_needed", e.get("replace_needed") or {}, want)
        c.eq(f"edit of {m}: remove_needed", sorted(e.get("remove_needed") or []),
             sorted(n for n in needed if is_libpython(n)))
    for s, g in plan["grafts"].items():
        name = Path(g["member"]).name
        e = edits.get(g["member"], {})
        if name != s:
            c.eq(f"edit of graft {g['member']}: set_soname", e.get("set_soname"), name)
        needed = elf_facts(Path(g["realpath"]))["needed"]
        want = {n: Path(plan["grafts"][n]["member"]).name for n in needed
                if n in plan["grafts"] and Path(plan["grafts"][n]["member"]).name != n}
        c.eq(f"edit of graft {g['member']}: replace_needed", e.get("replace_needed") or {}, want)
    c.check(str(Path(dry.get("output", "")).name).endswith(".whl"), f"output {dry.get('output')!r}")
    return c.status()


def check_repaired(args) -> int:
    plan = json.loads(Path(args.plan).read_text())
    repaired = Path(args.repaired)
    c = Checks()
    target = find_policy(plan["target"])
    # File name: original name with the platform tag replaced by the
    # target tag and its aliases.
    dist, version = plan["dist"], plan["version"]
    orig = Path(plan["wheel"]).name[:-4].split("-")
    want_name = "-".join(orig[:-1] + [".".join(plan["tags"])]) + ".whl"
    # PEP 425 gives compressed tag sets no order: compare the platform part
    # as a set, and say when the order differs from auditwheel's (policy
    # name first, then its aliases).
    got = repaired.name[:-4].split("-")
    c.eq("output file name (platform tags as a set)",
         (got[:-1], sorted(got[-1].split("."))), (orig[:-1], sorted(plan["tags"])))
    if repaired.name != want_name:
        print(f"note: tag order in {repaired.name} differs from {want_name}")
    with tempfile.TemporaryDirectory(prefix="repaircheck-") as tmp:
        root = Path(tmp) / "x"
        with zipfile.ZipFile(repaired) as z:
            c.eq("zipfile testzip", z.testzip(), None)
            z.extractall(root)
            members = sorted(i.filename for i in z.infolist() if not i.is_dir())
        with zipfile.ZipFile(plan["wheel"]) as z:
            orig_members = sorted(i.filename for i in z.infolist() if not i.is_dir())
        wheel_file = (root / f"{dist}-{version}.dist-info/WHEEL").read_text()
        tags = [l.split(":", 1)[1].strip() for l in wheel_file.splitlines() if l.startswith("Tag:")]
        py_abi = sorted({"-".join(t.split("-")[:2]) for t in tags})
        want_tags = sorted(f"{pa}-{t}" for pa in py_abi for t in plan["tags"])
        c.eq("WHEEL Tag lines", sorted(tags), want_tags)
        graft_members = sorted(g["member"] for g in plan["grafts"].values())
        # A repair that grafts also writes the CycloneDX SBOM of the grafts.
        if graft_members:
            graft_members.append(f"{dist}-{version}.dist-info/sboms/pkgtool.cdx.json")
        c.eq("members = original + grafts (+ SBOM)", members, sorted(set(orig_members) | set(graft_members)))
        by_member = {g["member"]: (s, g) for s, g in plan["grafts"].items()}
        new_name = {s: Path(g["member"]).name for s, g in plan["grafts"].items()}
        for m in members:
            path = root / m
            if not is_elf(path):
                continue
            f = elf_facts(path)
            c.check(not any(is_libpython(n) for n in f["needed"]), f"{m} still needs libpython: {f['needed']}")
            # Every NEEDED is allowed by the policy, grafted, excluded, or
            # inside the wheel.
            for n in f["needed"]:
                ok = (allows(target, n) or n in plan["excluded"] or n in plan["missing"]
                      or any(Path(x).name == n for x in members))
                c.check(ok, f"{m}: NEEDED {n} is neither allowed, grafted nor excluded")
                c.check(n not in new_name or new_name[n] == n,
                         f"{m}: NEEDED {n} not replaced by {new_name.get(n)}")
            uses_graft = any(n in by_member_names(by_member) for n in f["needed"])
            if m in by_member:
                soname, g = by_member[m]
                c.eq(f"{m} SONAME", f["soname"], Path(m).name)
                # The right library was copied: same dynamic symbols
                # (names, values, sizes, versions) as its source.
                c.check(dynsyms(path) == dynsyms(Path(g["realpath"])),
                         f"{m}: dynamic symbols differ from its source {g['realpath']}")
                # auditwheel's rule: $ORIGIN when it needs another graft or
                # its source had a search path of its own.
                src = elf_facts(Path(g["realpath"]))
                want = "$ORIGIN" if uses_graft or src["rpath"] or src["runpath"] else None
                c.eq(f"{m} rpath", f["rpath"] if args.rpath_tag == "rpath" else f["runpath"], want)
                c.eq(f"{m} other tag", f["runpath"] if args.rpath_tag == "rpath" else f["rpath"], None)
            elif uses_graft or (m in plan["dlopeners"] and plan["grafts"]):
                entry = rel_origin(m, plan["graft_dir"])
                tagv = f["rpath"] if args.rpath_tag == "rpath" else f["runpath"]
                other = f["runpath"] if args.rpath_tag == "rpath" else f["rpath"]
                c.check(tagv is not None and entry in tagv.split(":"),
                         f"{m}: {args.rpath_tag.upper()} {tagv!r} lacks {entry}")
                c.eq(f"{m} {'RUNPATH' if args.rpath_tag == 'rpath' else 'RPATH'}", other, None)
                for e in (tagv or "").split(":"):
                    if e and e != entry:
                        c.check(e.startswith("$ORIGIN"), f"{m}: search path keeps outside entry {e!r}")
            # The real loader resolves every NEEDED inside the extracted
            # wheel or to allowed system libraries (no LD_LIBRARY_PATH).
            env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
            for soname, where in ldd_map(path, env).items():
                if where is None:
                    c.check(soname in plan["missing"], f"{m}: ldd cannot find {soname}")
                elif not Path(where).resolve().is_relative_to(root.resolve()):
                    c.check(allows(target, soname) or soname in plan["excluded"] or is_allowed_dep(target, soname, plan),
                             f"{m}: {soname} resolves outside the wheel to {where}")
        # Grafted copies: same bytes as the source except the patched
        # dynamic section (size may grow); at least check they are ELF and
        # the copy count is one per library.
        c.eq("one graft member per library", len(graft_members), len(set(graft_members)))
    return c.status()


def relocation_offsets(path: Path) -> dict[str, list[int]]:
    """Relocation section name -> r_offset of each entry, in order."""
    out: dict[str, list[int]] = {}
    current = None
    for line in run(["readelf", "-rW", path]).splitlines():
        m = re.match(r"Relocation section '([^']+)'", line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        m = re.match(r"([0-9a-f]{8,16})\s+[0-9a-f]+\s+R_", line)
        if m and current is not None:
            current.append(int(m.group(1), 16))
    return out


def writable_loads(path: Path) -> list[tuple[int, int]]:
    loads = []
    for line in run(["readelf", "-lW", path]).splitlines():
        cols = line.split()
        if cols and cols[0] == "LOAD" and "W" in "".join(cols[6:-1]):
            loads.append((int(cols[2], 16), int(cols[2], 16) + int(cols[5], 16)))
    return loads


def elflint_messages(path: Path) -> set[str]:
    p = subprocess.run(["eu-elflint", "--gnu-ld", str(path)], capture_output=True, text=True)
    text = (p.stdout + p.stderr).replace(str(path), "FILE")
    msgs = {line for line in text.splitlines() if line.strip() and line.strip() != "No errors"}
    # elflint decides whether a relocation writes a read-only segment from
    # [r_offset, r_offset + st_size of the symbol], so a relocation in .got
    # against a large function "reaches" a read-only segment placed after
    # the RW one (which is where an editor appends a new PT_LOAD). Keep the
    # message only when r_offset itself is outside every writable segment.
    relocs = writes = None
    kept = set()
    for msg in msgs:
        m = re.search(r"section \[\s*\d+\] '([^']+)': relocation (\d+): read-only section modified", msg)
        if m:
            if relocs is None:
                relocs, writes = relocation_offsets(path), writable_loads(path)
            offs = relocs.get(m.group(1), [])
            i = int(m.group(2))
            if i < len(offs) and any(lo <= offs[i] < hi for lo, hi in writes):
                continue
        kept.add(msg)
    return kept


def check_elflint(args) -> int:
    """Every ELF of the repaired wheel: eu-elflint --gnu-ld reports nothing
    its source file (the original member, or the library it was grafted
    from) did not already report."""
    plan = json.loads(Path(args.plan).read_text())
    c = Checks()
    by_member = {g["member"]: g["realpath"] for g in plan["grafts"].values()}
    with tempfile.TemporaryDirectory(prefix="repaircheck-") as tmp:
        new, old = Path(tmp) / "new", Path(tmp) / "old"
        zipfile.ZipFile(args.repaired).extractall(new)
        zipfile.ZipFile(plan["wheel"]).extractall(old)
        n = 0
        for m in sorted(p.relative_to(new).as_posix() for p in new.rglob("*") if p.is_file()):
            if not is_elf(new / m):
                continue
            source = Path(by_member[m]) if m in by_member else old / m
            extra = elflint_messages(new / m) - elflint_messages(source)
            c.check(not extra, f"eu-elflint --gnu-ld: new messages for {m}: {sorted(extra)[:5]}")
            n += 1
        c.check(n == len(plan["elf_members"]) + len(plan["grafts"]),
                 f"linted {n} ELF files, expected {len(plan['elf_members']) + len(plan['grafts'])}")
    return c.status()


def dynsyms(path: Path) -> list[str]:
    return [" ".join(line.split()[1:]) for line in run(["readelf", "--dyn-syms", "-W", path]).splitlines()
            if re.match(r"\s*\d+:", line)]


def by_member_names(by_member: dict) -> set[str]:
    return {Path(m).name for m in by_member}


def is_allowed_dep(target: dict, soname: str, plan: dict) -> bool:
    # A library only needed by an allowed library (not descended into).
    return soname not in plan["grafts"] and soname not in plan["external"]


# ------------------------------------------------------------ fixtures


class Builder:
    def __init__(self, out: Path, pkgtool: str):
        self.out = out
        self.pkgtool = pkgtool
        self.inc = sysconfig.get_paths()["include"]
        self.ext = sysconfig.get_config_var("EXT_SUFFIX")
        self.pytag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
        if not (Path(self.inc) / "Python.h").is_file():
            missing(f"Python.h not in {self.inc}")
        self.libs = out / "libs"

    def cc(self, *argv) -> None:
        run(["gcc", "-O1", "-fPIC", "-Wall", *argv])

    def our_libs(self) -> None:
        """libchain2.so, libchain1.so (RUNPATH $ORIGIN), libplugin.so.1."""
        if (self.libs / "libchain1.so").exists():
            return
        self.libs.mkdir(parents=True, exist_ok=True)
        L = self.libs
        # A build-tree search path of its own (repair: $ORIGIN in its place).
        self.cc("-shared", "-Wl,-soname,libchain2.so", f"-Wl,-rpath,{L}", "-o", L / "libchain2.so",
                SRC / "chain2.c")
        self.cc("-shared", "-Wl,-soname,libchain1.so", "-o", L / "libchain1.so", SRC / "chain1.c",
                f"-L{L}", "-lchain2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
        self.cc("-shared", "-Wl,-soname,libplugin.so.1", "-o", L / "libplugin.so.1", SRC / "plugin.c",
                f"-L{L}", "-lchain2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")

    def tree(self, dist: str, version: str, purelib: bool = False, tag: str | None = None) -> Path:
        t = self.out / "trees" / f"{dist}-{version}"
        shutil.rmtree(t, ignore_errors=True)
        di = t / f"{dist}-{version}.dist-info"
        di.mkdir(parents=True)
        (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                                     "Summary: libpkg repair test fixture\n")
        tag = tag or f"{self.pytag}-{self.pytag}-linux_x86_64"
        (di / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: repaircheck\nRoot-Is-Purelib: "
                                  f"{'true' if purelib else 'false'}\nTag: {tag}\n")
        return t

    def pack(self, tree: Path) -> Path:
        dest = self.out / "wheels"
        dest.mkdir(exist_ok=True)
        before = set(dest.glob("*.whl"))
        env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
        run([self.pkgtool, "wheel", "pack", tree, "-d", dest], env=env)
        new = sorted(set(dest.glob("*.whl")) - before)
        if len(new) != 1:
            raise SystemExit(f"error: wheel pack of {tree} produced {new}")
        return new[0]

    def extension(self, src: Path, out: Path, *flags: str, cxx: bool = False) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        tool = "g++" if cxx else "gcc"
        run([tool, "-O1", "-fPIC", "-shared", f"-I{self.inc}", "-o", out, src, *flags])

    def build(self, kind: str) -> Path:
        getattr(self, f"build_{kind}")()
        return self.wheel

    def build_chain(self) -> None:
        self.our_libs()
        t = self.tree("chainpkg", "1.0")
        L = str(self.libs)
        common = ["-fopenmp", "-larchive", "-lz", f"-L{L}", "-lchain1"]
        for mod, dtags in (("_ext1_rpath", "--disable-new-dtags"), ("_ext1_runpath", "--enable-new-dtags")):
            self.extension(SRC / "ext_chain.c", t / f"chainpkg/{mod}{self.ext}", f"-DMODNAME={mod}",
                           *common, f"-Wl,{dtags},-rpath,{L}")
        libdir = sysconfig.get_config_var("LIBDIR")
        ldlib = sysconfig.get_config_var("LDLIBRARY")  # libpython3.11.so
        pyflags = [f"-L{libdir}", f"-l:{ldlib}"] if (Path(libdir) / ldlib).exists() else []
        private = t / "chainpkg/_private"
        private.mkdir(parents=True)
        self.cc("-shared", "-Wl,-soname,libinner.so", "-o", private / "libinner.so", SRC / "inner.c")
        self.extension(SRC / "ext_shared.c", t / f"chainpkg/sub/_ext2{self.ext}", "-DWITH_INNER",
                       f"-L{L}", "-lchain1", f"-L{private}", "-linner", "-Wl,--no-as-needed", *pyflags,
                       f"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../_private:{L}")
        (t / "chainpkg/__init__.py").write_text("")
        (t / "chainpkg/sub/__init__.py").write_text("")
        self.wheel = self.pack(t)

    def build_cxx(self) -> None:
        t = self.tree("cxxpkg", "2.0")
        self.extension(SRC / "ext_cxx.cpp", t / f"cxxpkg/_cxx{self.ext}", "-pthread", cxx=True)
        (t / "cxxpkg/__init__.py").write_text("from ._cxx import handshake\n")
        self.wheel = self.pack(t)

    def build_dlopen(self) -> None:
        self.our_libs()
        t = self.tree("dlopkg", "0.3")
        self.extension(SRC / "ext_dlopen.c", t / f"dlopkg/_dl{self.ext}", "-ldl")
        (t / "dlopkg/__init__.py").write_text("from ._dl import call\n")
        self.wheel = self.pack(t)

    def build_missing(self) -> None:
        ghost_dir = self.out / "ghost"
        ghost_dir.mkdir(parents=True, exist_ok=True)
        self.cc("-shared", "-Wl,-soname,libghost.so.3", "-o", ghost_dir / "libghost.so", SRC / "ghost.c")
        t = self.tree("ghostpkg", "1.0")
        self.extension(SRC / "ext_shared.c", t / f"ghostpkg/_ext2{self.ext}", f"-L{ghost_dir}", "-lghost",
                       "-Dchain1_value=ghost_value")
        shutil.rmtree(ghost_dir)
        self.wheel = self.pack(t)

    def build_twoarch(self) -> None:
        t = self.tree("twoarch", "1.0")
        self.extension(SRC / "ext_dlopen.c", t / f"twoarch/_dl{self.ext}", "-ldl")
        foreign = t / "twoarch/foreign.so"
        for argv in (["aarch64-linux-gnu-gcc"], ["gcc", "-m32"], ["i686-linux-gnu-gcc"]):
            if shutil.which(argv[0]) and subprocess.run(
                    [*argv, "-shared", "-nostdlib", "-fPIC", "-o", str(foreign), str(SRC / "foreign.c")],
                    capture_output=True).returncode == 0:
                break
        else:
            missing("no compiler for a second architecture (aarch64-linux-gnu-gcc, gcc -m32)")
        self.wheel = self.pack(t)

    def build_pure(self) -> None:
        t = self.tree("purepkg", "1.0", purelib=True, tag="py3-none-any")
        (t / "purepkg").mkdir()
        (t / "purepkg/__init__.py").write_text("VALUE = 1\n")
        self.wheel = self.pack(t)

    def build_zstandard(self) -> None:
        src = Path("/usr/lib/python3/dist-packages/zstandard")
        info = next(Path("/usr/lib/python3/dist-packages").glob("zstandard-*.egg-info"), None)
        if not src.is_dir() or info is None:
            missing("Debian's python3-zstandard is not installed")
        meta = (info / "PKG-INFO").read_text()
        version = re.search(r"^Version: (\S+)", meta, re.M).group(1)
        t = self.tree("zstandard", version)
        shutil.copytree(src, t / "zstandard", ignore=shutil.ignore_patterns("__pycache__"))
        di = t / f"zstandard-{version}.dist-info"
        (di / "METADATA").write_text(meta)
        (di / "top_level.txt").write_text((info / "top_level.txt").read_text())
        self.wheel = self.pack(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("kind", choices=["chain", "cxx", "dlopen", "missing", "twoarch", "pure", "zstandard"])
    b.add_argument("out")
    p = sub.add_parser("plan")
    p.add_argument("wheel")
    p.add_argument("--plat")
    p.add_argument("--lib-path", action="append", default=[])
    p.add_argument("--exclude", action="append", default=[])
    p.add_argument("--include", action="append", default=[])
    p.add_argument("--lib-sdir", default=".libs")
    p.add_argument("--lib-dir")
    s = sub.add_parser("check-show")
    s.add_argument("plan")
    s.add_argument("show")
    s.add_argument("--expect-blocker", action="append")
    s.add_argument("--expect-max", action="append")
    d = sub.add_parser("check-dry-run")
    d.add_argument("plan")
    d.add_argument("dry")
    r = sub.add_parser("check-repaired")
    r.add_argument("plan")
    r.add_argument("repaired")
    r.add_argument("--rpath-tag", default="rpath", choices=["rpath", "runpath"])
    lint = sub.add_parser("check-elflint")
    lint.add_argument("plan")
    lint.add_argument("repaired")
    e = sub.add_parser("elf")
    e.add_argument("file")
    args = ap.parse_args()

    if args.cmd == "build":
        pkgtool = os.environ.get("PKGTOOL")
        if not pkgtool:
            raise SystemExit("error: PKGTOOL is not set")
        print(Builder(Path(args.out), pkgtool).build(args.kind))
        return 0
    if args.cmd == "plan":
        print(json.dumps(make_plan(args), indent=1))
        return 0
    if args.cmd == "check-show":
        return check_show(args)
    if args.cmd == "check-dry-run":
        return check_dry_run(args)
    if args.cmd == "check-repaired":
        return check_repaired(args)
    if args.cmd == "check-elflint":
        return check_elflint(args)
    if args.cmd == "elf":
        print(json.dumps(elf_facts(Path(args.file)), indent=1))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
