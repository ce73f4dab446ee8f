#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures and independent expectations for tests/bundle/fidelity.sh: the
classes of issue 15 where `pkgtool show`/`repair` must answer as auditwheel
does (libc from file names and tags, ARM float ABI, Python ABI symbols,
libpython, foreign architectures, Android, unrepairable wheels, SBOM).

  fidelity.py build OUT        builds every fixture wheel (cross compilers,
                               musl-gcc) and prints a JSON map name -> path
  fidelity.py expect-tag WHEEL ARCH [POLICY.json]
                               the best tag as it is, from readelf and the
                               policy JSON only (every NEEDED must be
                               whitelisted; versions as auditwheel checks)
  fidelity.py check-sbom WHEEL the CycloneDX document of a repaired wheel
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import repaircheck as rc  # noqa: E402

SRC = HERE.parent / "src" / "fidelity"


def run(*argv: str | Path) -> None:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(map(str, argv))}: {p.stderr.strip()}")


class Fixtures(rc.Builder):
    def __init__(self, out: Path, pkgtool: str):
        super().__init__(out, pkgtool)
        self.work = out / "objs"
        self.work.mkdir(parents=True, exist_ok=True)
        self.wheels: dict[str, str] = {}

    def wheel(self, key: str, dist: str, files: dict[str, Path], tag: str, pytag: str = "cp312") -> None:
        t = self.tree(dist, "1.0", tag="py3-none-any" if tag == "any" else f"{pytag}-{pytag}-{tag}")
        for member, src in files.items():
            dest = t / member
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(Path(src).read_bytes())
            dest.chmod(0o755)
        self.wheels[key] = str(self.pack(t))

    def so(self, name: str, cc: str, src: str, *flags: str) -> Path:
        out = self.work / name
        # --no-as-needed: every library named stays a NEEDED entry (some
        # toolchains drop unused ones by default).
        run(cc, "-O1", "-fPIC", "-shared", "-Wl,--no-as-needed", "-o", out, SRC / src, *flags)
        return out

    def build_all(self) -> dict:
        self.libc_classes()
        self.arm()
        self.python_abi()
        self.libpython()
        self.unrepairable()
        self.foreign()
        self.android()
        self.unknown_arch()
        self.sbom()
        self.isa_level()
        return self.wheels

    # 9. x86-64 ISA level: the extension itself needs x86-64-v3, and a
    # baseline extension whose external library (grafted by repair) does.
    def isa_level(self) -> None:
        v3 = ("-march=x86-64-v3", "-Wl,-z,x86-64-v3")
        ext = self.so("isa_v3.so", "gcc", "plain.c", *v3)
        self.wheel("isa_v3", "isavthree", {"iv/_m.cpython-312-x86_64-linux-gnu.so": ext},
                   "linux_x86_64")
        libs = self.out / "isalibs"
        libs.mkdir(exist_ok=True)
        run("gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libisafoo.so.1", *v3, "-o",
            libs / "libisafoo.so.1", SRC / "foo.c")
        base = self.so("isa_base.so", "gcc", "plain.c", libs / "libisafoo.so.1")
        self.wheel("isa_graft", "isagraft", {"ig/_m.cpython-312-x86_64-linux-gnu.so": base},
                   "linux_x86_64")
        self.wheels["isa_libs"] = str(libs)
        # An x86-64-v3 extension needing GLIBC_2.25 that claims manylinux2014:
        # `check` must say that the versions alone would fit a newer policy
        # and that the ISA level blocks it.
        rnd = self.so("isa_v3_rnd.so", "gcc", "getrandom.c", *v3)
        self.wheel("isa_v3_rnd", "isavthreernd", {"iv/_r.cpython-312-x86_64-linux-gnu.so": rnd},
                   "manylinux2014_x86_64")

    # 8. SBOM: a Debian-packaged library (libzstd.so.1) and one of ours.
    def sbom(self) -> None:
        libs = self.out / "sbomlibs"
        libs.mkdir(exist_ok=True)
        run("gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libbar.so.1", "-o", libs / "libbar.so.1",
            SRC / "foo.c")
        ext = self.so("sbom_ext.so", "gcc", "plain.c", "-lzstd", libs / "libbar.so.1")
        self.wheel("sbom", "sbompkg", {"sb/_m.cpython-312-x86_64-linux-gnu.so": ext}, "linux_x86_64")
        self.wheels["sbom_libs"] = str(libs)

    # 1. libc when the binaries don't say.
    def libc_classes(self) -> None:
        silent = self.so("silent.so", "musl-gcc", "silent.c", "-nostdlib")
        plain_musl = self.so("plain_musl.so", "musl-gcc", "plain.c")
        self.wheel("musl_needed", "muslneeded", {"mp/_m.so": plain_musl}, "linux_x86_64")
        self.wheel("suffix_musl", "suffixmusl", {"sp/_s.cpython-312-x86_64-linux-musl.so": silent},
                   "linux_x86_64")
        self.wheel("suffix_gnu311", "suffixgnu", {"sp/_s.cpython-311-x86_64-linux-gnu.so": silent},
                   "linux_x86_64", pytag="cp311")
        self.wheel("suffix_gnu310", "suffixold", {"sp/_s.cpython-310-x86_64-linux-gnu.so": silent},
                   "linux_x86_64", pytag="cp310")
        self.wheel("tag_musl", "tagmusl", {"sp/_s.so": silent}, "musllinux_1_2_x86_64")
        self.wheel("tag_many", "tagmany", {"sp/_s.so": silent}, "manylinux_2_17_x86_64")
        # A musl binary with a glibc file name: the binary wins.
        self.wheel("musl_gnu_name", "muslgnuname",
                   {"mp/_m.cpython-312-x86_64-linux-gnu.so": plain_musl}, "linux_x86_64")

    # 2. ARM float ABI.
    def arm(self) -> None:
        hf = self.so("armhf.so", "arm-linux-gnueabihf-gcc", "plain.c")
        soft = self.so("armel.so", "arm-linux-gnueabi-gcc", "plain.c")
        v6 = self.so("armv6.so", "arm-linux-gnueabihf-gcc", "silent.c", "-nostdlib", "-marm",
                     "-march=armv6", "-mfpu=vfp", "-mfloat-abi=hard")
        self.wheel("armhf", "armhf", {"ap/_m.cpython-312-arm-linux-gnueabihf.so": hf}, "linux_armv7l")
        self.wheel("armel", "armel", {"ap/_m.so": soft}, "linux_armv7l")
        self.wheel("armv6", "armvsix", {"ap/_s.cpython-312-arm-linux-gnueabihf.so": v6}, "linux_armv7l")

    # 3. Python ABI symbols.
    def python_abi(self) -> None:
        self.wheel("pyfpe", "pyfpe", {"fp/_fpe.so": self.so("pyfpe.so", "gcc", "pyfpe.c")},
                   "linux_x86_64")
        self.wheel("ucs2", "ucstwo", {"up/_ucs2.so": self.so("ucs2.so", "gcc", "ucs2.c")},
                   "linux_x86_64")

    # 4. libpython NEEDED.
    def libpython(self) -> None:
        import sysconfig
        libdir = sysconfig.get_config_var("LIBDIR")
        ldlib = sysconfig.get_config_var("LDLIBRARY")
        if not (Path(libdir) / ldlib).exists():
            raise SystemExit(f"error: {libdir}/{ldlib} missing (python3-dev)")
        ext = self.so("pylink.so", "gcc", "plain.c", f"-L{libdir}", f"-l:{ldlib}")
        self.wheel("libpython", "pylink", {"pl/_m.so": ext}, "linux_x86_64")

    # 7. Unrepairable (ceiling, blacklist) with policies derived from the
    # fixture's own version needs.
    def unrepairable(self) -> None:
        ext = self.so("rnd.so", "gcc", "getrandom.c")
        self.wheel("getrandom", "rnd", {"rp/_rnd.so": ext}, "linux_x86_64")
        needs = sorted({v.partition("_")[2] for lib, v in rc.elf_facts(ext)["version_needs"]
                        if v.startswith("GLIBC_2")})
        base = {"name": "manylinux_2_5", "aliases": [], "priority": 100, "lib_whitelist": ["libc.so.6"]}
        ceiling = dict(base, symbol_versions={"x86_64": {"GLIBC": [v for v in needs if v != "2.25"]}})
        black = dict(base, symbol_versions={"x86_64": {"GLIBC": needs}},
                     blacklist={"libc.so.6": ["getrandom", "getentropy"]})
        # Two policies, both blocked: the refusal names the most permissive.
        newer = dict(ceiling, name="manylinux_2_17", priority=80)
        for name, pol in (("ceiling", ceiling), ("blacklist", black), ("ceiling2", [ceiling, newer])):
            path = self.out / f"{name}-policy.json"
            path.write_text(json.dumps(pol if isinstance(pol, list) else [pol]))
            self.wheels[f"policy_{name}"] = str(path)

    # 5. Foreign architectures, analysed without their sysroots.
    def foreign(self) -> None:
        for arch, cc in (("aarch64", "aarch64-linux-gnu-gcc"), ("s390x", "s390x-linux-gnu-gcc"),
                         ("ppc64le", "powerpc64le-linux-gnu-gcc")):
            ext = self.so(f"cross_{arch}.so", cc, "cross.c", "-lm")
            self.wheel(f"cross_{arch}", f"cross{arch.replace('64', 'sixfour')}",
                       {f"xp/_x.cpython-312-{arch}-linux-gnu.so": ext}, f"linux_{arch}")
        sysroot = self.out / "sysroot"
        (sysroot / "usr/lib").mkdir(parents=True, exist_ok=True)
        foo = sysroot / "usr/lib/libfoo.so.1"
        run("aarch64-linux-gnu-gcc", "-O1", "-fPIC", "-shared", "-Wl,-soname,libfoo.so.1", "-o", foo,
            SRC / "foo.c")
        ext = self.so("cross_foo.so", "aarch64-linux-gnu-gcc", "cross.c", "-DWITH_FOO",
                      f"{foo}", "-lm")
        self.wheel("cross_foo", "crossfoo", {"xp/_x.so": ext}, "linux_aarch64")
        self.wheels["sysroot"] = str(sysroot)

    # 6. Android: bionic's libc.so (versioned LIBC), linker64.
    def android(self) -> None:
        cc = "aarch64-linux-gnu-gcc"
        stubs = self.work / "android"
        stubs.mkdir(exist_ok=True)
        run(cc, "-shared", "-nostdlib", "-fPIC", "-Wl,-soname,libc.so",
            f"-Wl,--version-script={SRC / 'bionic_libc.map'}", "-o", stubs / "libc.so", SRC / "bionic_libc.c")
        for soname in ("liblog.so", "libcamera2ndk.so"):
            run(cc, "-shared", "-nostdlib", "-fPIC", f"-Wl,-soname,{soname}", "-o", stubs / soname,
                SRC / "foo.c")
        common = ["-nostdlib", f"-L{stubs}", "-lc", "-llog"]
        ext = self.so("bionic_ext.so", cc, "bionic_ext.c", *common)
        cam = self.so("bionic_cam.so", cc, "bionic_ext.c", *common, "-lcamera2ndk")
        exe = self.work / "bionic_tool"
        run(cc, "-O1", "-fPIE", "-pie", "-nostdlib", "-Wl,--dynamic-linker=/system/bin/linker64",
            "-o", exe, SRC / "bionic_exe.c", f"-L{stubs}", "-lc")
        self.wheel("android", "droid", {"dp/_a.so": ext, "dp/bin/tool": exe}, "linux_aarch64", "cp313")
        self.wheel("android_cam", "droidcam", {"dp/_a.so": cam}, "android_21_arm64_v8a", "cp313")

    # 9. A machine no policy covers: an x86_64 extension whose e_machine is
    # rewritten to SPARC V9 (43).
    def unknown_arch(self) -> None:
        src = self.so("plain_x86.so", "gcc", "plain.c")
        data = bytearray(src.read_bytes())
        data[18:20] = (43).to_bytes(2, "little")
        odd = self.work / "sparc.so"
        odd.write_bytes(bytes(data))
        self.wheel("unknown_arch", "oddarch", {"op/_m.so": odd}, "linux_x86_64")
        self.wheel("pure", "purefid", {}, "any")


def expect_tag(wheel: str, arch: str, policy_path: str | None) -> str:
    """Best as-is tag from readelf and the policy JSON only."""
    policies = json.loads(Path(policy_path or rc.policy_file()).read_text())
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        files = {}
        for name in z.namelist():
            if z.read(name)[:4] == b"\x7fELF":
                z.extract(name, tmp)
                files[name] = rc.elf_facts(Path(tmp) / name)
        for p in sorted(policies, key=lambda p: -p["priority"]):
            if p["name"] == "linux" or arch not in p["symbol_versions"]:
                continue
            loader = ("ld-linux", "ld64.so")
            libs_ok = all(n in p["lib_whitelist"] or n.startswith(loader)
                          for f in files.values() for n in f["needed"])
            if libs_ok and not rc.version_blockers(p, arch, files):
                return f"{p['name']}_{arch}"
    return f"linux_{arch}"


def b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def check_sbom(wheel: str) -> int:
    c = rc.Checks()
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        sboms = [n for n in names if "/sboms/" in n and n.endswith(".cdx.json")]
        c.eq("one SBOM under <dist-info>/sboms/", len(sboms), 1)
        if not sboms:
            return c.status()
        sbom = sboms[0]
        c.check(sbom.split("/")[0].endswith(".dist-info"), f"{sbom} is not in the .dist-info")
        record = z.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        rows = {r.split(",")[0]: r.split(",")[1:] for r in record.splitlines() if r}
        data = z.read(sbom)
        c.eq("SBOM row in RECORD", rows.get(sbom), [f"sha256={b64(hashlib.sha256(data).digest())}",
                                                    str(len(data))])
        doc = json.loads(data)
        # CycloneDX 1.4+ required fields.
        c.eq("bomFormat", doc.get("bomFormat"), "CycloneDX")
        c.check(doc.get("specVersion") in ("1.4", "1.5", "1.6"), f"specVersion {doc.get('specVersion')}")
        c.check(isinstance(doc.get("version"), int) and doc["version"] >= 1, f"version {doc.get('version')}")
        c.check(str(doc.get("serialNumber", "")).startswith("urn:uuid:"), "serialNumber urn:uuid:")
        comps = doc.get("components", [])
        grafted = [n for n in names if ".libs/" in n and not n.endswith("/")]
        c.eq("one component per grafted library", len([x for x in comps if x.get("type") == "library"]),
             len(grafted))
        refs = {doc.get("metadata", {}).get("component", {}).get("bom-ref")}
        c.check(doc.get("metadata", {}).get("component", {}).get("type") == "library",
                 "metadata.component describes the wheel")
        for comp in comps:
            c.check(comp.get("type") in ("library", "application"), f"component type {comp.get('type')}")
            c.check(bool(comp.get("name")) and bool(comp.get("bom-ref")),
                     f"component without name or bom-ref: {comp}")
            refs.add(comp.get("bom-ref"))
            if comp.get("type") != "library":
                continue
            member = next((n for n in grafted if n.rsplit("/", 1)[-1] == comp.get("name")), None)
            c.check(member is not None, f"component {comp.get('name')} is not a grafted member")
            hashes = {h.get("alg"): h.get("content") for h in comp.get("hashes", [])}
            props = {p.get("name"): p.get("value") for p in comp.get("properties", [])}
            src = props.get("libpkg:source_path")
            c.check(bool(src) and Path(src).is_file(), f"{comp.get('name')}: source path {src}")
            if src and Path(src).is_file():
                c.eq(f"{comp.get('name')} SHA-256 of the original", hashes.get("SHA-256"),
                     hashlib.sha256(Path(src).read_bytes()).hexdigest())
                owner = subprocess.run(["dpkg", "-S", os.path.realpath(src)], capture_output=True, text=True)
                if owner.returncode == 0:
                    pkg = owner.stdout.split(":")[0]
                    c.check(str(comp.get("purl", "")).startswith(f"pkg:deb/debian/{pkg}@"),
                             f"{comp.get('name')}: purl {comp.get('purl')} (dpkg -S says {pkg})")
        for dep in doc.get("dependencies", []):
            c.check(dep.get("ref") in refs, f"dependency ref {dep.get('ref')} unknown")
    return c.status()


def main() -> int:
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "build":
        out = Path(sys.argv[2])
        print(json.dumps(Fixtures(out, os.environ["PKGTOOL"]).build_all(), indent=1))
        return 0
    if cmd == "expect-tag":
        print(expect_tag(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
        return 0
    if cmd == "check-sbom":
        return check_sbom(sys.argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
