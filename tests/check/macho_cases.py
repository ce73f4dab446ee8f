#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_binary on Mach-O packages (macOS wheels, libtorch macOS zips).

Usage: macho_cases.py CASE (or CHECK_CASE=CASE; ctest: check_macho_<case>).
A good universal2 wheel passes, the ELF-only and runtime checks say "not
applicable"; each broken wheel (lib/macho_fixtures.py: one defect each)
fails exactly the check that owns the defect, exit 1, naming the member, the
slice and the name; a malformed Mach-O member is bad input (exit 2, named).
The defects are confirmed independently first: llvm-objdump-14's load
commands through a small dyld resolver written here, and
tests/tools/macho_cs_verify.py for signatures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
import macho_fixtures as mf  # noqa: E402
from checkrun import Case, MACHO_IDS  # noqa: E402

CS_VERIFY = HERE.parent / "tools" / "macho_cs_verify.py"
NOT_APPLICABLE = ("cxx-abi", "symbol-versions", "import", "link", "link-wrong-abi", "gpu")
UNIVERSAL2 = "macosx_11_0_universal2"


# ------------------------------------------------------------ independent oracle


def objdump_slices(path: Path) -> dict[str, dict]:
    """Per arch: dependent dylibs, rpaths and minos from llvm-objdump-14."""
    out = mf.run(["llvm-objdump-14", "--macho", "--arch=all", "--private-headers", path])
    slices: dict[str, dict] = {}
    cur = None
    cmd = None
    for line in out.splitlines():
        m = re.search(r"\(architecture (\S+)\):$", line)
        if m or cur is None:
            cur = slices.setdefault(m.group(1) if m else "thin", {"dylibs": [], "rpaths": [], "minos": None})
            if m:
                continue
        m = re.match(r"\s+cmd (\S+)", line)
        if m:
            cmd = m.group(1)
            continue
        m = re.match(r"\s+(name|path) (.*) \(offset \d+\)$", line)
        if m and cmd in ("LC_LOAD_DYLIB", "LC_LOAD_WEAK_DYLIB", "LC_REEXPORT_DYLIB"):
            cur["dylibs"].append(m.group(2))
        elif m and cmd == "LC_RPATH":
            cur["rpaths"].append(m.group(2))
        m = re.match(r"\s+minos (\S+)", line)
        if m and cmd in ("LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX"):
            cur["minos"] = m.group(1)
    if "thin" in slices and len(slices) == 1:
        arch = re.search(r"cputype (\S+)", mf.run(["llvm-objdump-14", "--macho", "--private-header", path]))
        name = {"ARM64": "arm64", "X86_64": "x86_64"}.get(arch.group(1) if arch else "", "thin")
        slices = {name: slices["thin"]}
    return slices


def oracle_unresolved(tree: Path, members: list[str]) -> set[tuple[str, str, str]]:
    """(member, arch, install name) that no own-rpath/@loader_path candidate
    with that arch resolves (the fixtures need no inherited run paths)."""
    facts = {m: objdump_slices(tree / m) for m in members}
    bad = set()
    for m, slices in facts.items():
        here = (tree / m).parent
        for arch, s in slices.items():
            for name in s["dylibs"]:
                if name.startswith(("/usr/lib/", "/System/")):
                    continue
                cands = []
                if name.startswith("@rpath/"):
                    for r in s["rpaths"]:
                        if r.startswith("@loader_path"):
                            cands.append(Path(os.path.normpath(here / r[len("@loader_path"):].lstrip("/")
                                                               / name[len("@rpath/"):])))
                elif name.startswith("@loader_path/"):
                    cands.append(Path(os.path.normpath(here / name[len("@loader_path/"):])))
                ok = any(c.is_file() and arch in objdump_slices(c) for c in cands)
                if not ok:
                    bad.add((m, arch, name))
    return bad


def unzip(c: Case, artifact: Path) -> tuple[Path, list[str]]:
    dest = c.scratch / ("x-" + artifact.stem)
    with zipfile.ZipFile(artifact) as z:
        z.extractall(dest)
        names = z.namelist()
    macho = [n for n in names if (dest / n).is_file() and (dest / n).read_bytes()[:4] in
             (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")]
    return dest, macho


def cs_verify(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CS_VERIFY), *map(str, files)], capture_output=True, text=True)


# ------------------------------------------------------------ helpers


def need_tools(c: Case) -> None:
    missing = mf.missing_tools()
    if missing:  # setup.sh installs them: a failure, not a skip
        c.fail(f"not installed (scripts/setup.sh installs them): {', '.join(missing)}")
        c.finish()


def wheel(c: Case, defect: str = "", tag: str = UNIVERSAL2, archs=("arm64", "x86_64")) -> Path:
    work = c.scratch / f"build-{defect or 'good'}-{tag}"
    files = mf.build_files(work, defect, archs=archs)
    return mf.pack_wheel(work, tag, files)


def objdump_member(c: Case, defect: str, member: str) -> tuple[Path, dict]:
    """The wheel with `defect` and llvm-objdump-14's view of one member."""
    w = wheel(c, defect)
    tree, _ = unzip(c, w)
    c.begin(f"independent: llvm-objdump-14 on {member}")
    return w, objdump_slices(tree / member)


def expect_not_applicable(c: Case, r) -> None:
    for cid in NOT_APPLICABLE:
        c.expect(r.status(cid) == "skip" and "not applicable" in r.check(cid).get("summary", ""),
                 f"{cid} is 'not applicable' on Mach-O: {r.status(cid)} {r.check(cid).get('summary')}")


def expect_defect(c: Case, defect: str, failing: dict[str, list], w: Path | None = None) -> None:
    """The wheel with `defect` (built here unless given) fails exactly
    `failing`, exit 1."""
    w = w or wheel(c, defect)
    c.begin(f"{defect}: check_binary")
    r = c.run(w)
    c.expect(r.rc == 1, f"exit 1, got {r.rc}: {r.stderr[:300]}")
    c.expect_findings(r, failing)
    expect_not_applicable(c, r)


# ------------------------------------------------------------ cases


def case_good(c: Case) -> None:
    w = wheel(c)
    tree, machos = unzip(c, w)
    c.begin("independent: llvm-objdump-14 + our own resolver, macho_cs_verify.py")
    c.expect(len(machos) == 3, f"three Mach-O members: {machos}")
    c.expect(oracle_unresolved(tree, machos) == set(), "every install name resolves (oracle)")
    for m in machos:
        s = objdump_slices(tree / m)
        c.expect(sorted(s) == ["arm64", "x86_64"], f"{m}: universal2 slices {sorted(s)}")
        c.expect(s.get("arm64", {}).get("minos") == "11.0" and s.get("x86_64", {}).get("minos") == "10.15",
                 f"{m}: minos {s}")
    p = cs_verify(*(tree / m for m in machos))
    c.expect("arm64): valid" in p.stdout and "x86_64" in p.stderr,
             f"arm64 slices verify, x86_64 unsigned: {p.stdout} {p.stderr}")

    c.begin("good universal2 wheel")
    r = c.run(w)
    c.expect(r.rc == 0, f"exit 0, got {r.rc}: {r.describe()}")
    c.expect_findings(r, {}, kind="wheel",
                      must_pass={"integrity", "dependencies", "rpath", "runtimes"} | MACHO_IDS)
    expect_not_applicable(c, r)
    c.expect("one OpenMP runtime: macpkg/lib/libomp.dylib" in r.check("runtimes").get("summary", ""),
             f"runtimes names the one libomp: {r.check('runtimes').get('summary')}")
    c.expect("arm64 11.0" in r.check("deployment-target").get("summary", ""),
             f"deployment-target lists minos: {r.check('deployment-target').get('summary')}")

    c.begin("a runtime check that is required cannot pass on Mach-O")
    r = c.run(w, "--require", "import")
    c.expect_findings(r, {"import": ["required (--require import) but skipped: not applicable"]})

    c.begin("pkgtool check is the same command")
    pk = os.environ.get("PKGTOOL", "")
    if c.expect(Path(pk).is_file(), f"PKGTOOL set: {pk!r}"):
        p = subprocess.run([pk, "check", str(w), "--json"], capture_output=True, text=True)
        c.expect(p.returncode == 0 and '"deployment-target"' in p.stdout, f"pkgtool check: {p.returncode} "
                                                                          f"{p.stderr[:300]}")

    c.begin("text report")
    r = c.run(w, json_out=False)
    c.expect(r.rc == 0 and re.search(r"PASS\s+code-signature", r.stdout) is not None
             and re.search(r"SKIP\s+symbol-versions\s+not applicable", r.stdout) is not None, r.stdout)

    c.begin("thin wheels: arm64 under macosx_11_0_arm64, x86_64 under macosx_10_15_x86_64")
    arm = wheel(c, tag="macosx_11_0_arm64", archs=("arm64",))
    r = c.run(arm, "--no-runtime")
    c.expect_findings(r, {}, must_pass=MACHO_IDS)
    x86 = wheel(c, tag="macosx_10_15_x86_64", archs=("x86_64",))
    r = c.run(x86, "--no-runtime")
    c.expect_findings(r, {}, must_pass=MACHO_IDS)
    c.begin("arm64 files under an x86_64 tag; tag below the x86_64 minos")
    r = c.run(mf.pack_wheel(c.scratch, "macosx_10_15_x86_64", mf.build_files(c.scratch / "a2", archs=("arm64",))),
              "--no-runtime")
    c.expect_findings(r, {"deployment-target": ["has arm64, but macosx_10_15_x86_64 claims x86_64"]})
    r = c.run(wheel(c, tag="macosx_10_9_x86_64", archs=("x86_64",)), "--no-runtime")
    c.expect_findings(r, {"deployment-target": [re.compile(r"\(x86_64\) minos 10\.15 is above macosx_10_9_x86_64")]})
    c.begin("arm64 under macosx_10_9_universal2: arm64 means 11.0")
    r = c.run(wheel(c, tag="macosx_10_15_universal2"), "--no-runtime")
    c.expect_findings(r, {}, must_pass=MACHO_IDS)
    c.begin("--platform overrides the tag")
    r = c.run(w, "--no-runtime", "--platform", "macosx_10_13_universal2")
    c.expect_findings(r, {"deployment-target": ["(x86_64) minos 10.15 is above macosx_10_13_universal2"]})
    c.begin("run-path stack: libcore's @rpath/libomp through the extension's LC_RPATH; "
            "an executable's @executable_path")
    work = c.scratch / "inherited"
    files = mf.build_files(work, "inherited")
    tool = objdump_slices(files["macpkg/bin/tool"])
    c.expect("@executable_path/../lib/libcore.dylib" in tool["arm64"]["dylibs"], f"tool: {tool}")
    c.expect(objdump_slices(files["macpkg/lib/libcore.dylib"])["arm64"]["rpaths"] == [], "libcore has no rpath")
    r = c.run(mf.pack_wheel(work, UNIVERSAL2, files))
    c.expect_findings(r, {}, must_pass={"dependencies", "rpath"} | MACHO_IDS)
    alone = {k: v for k, v in files.items() if k.startswith("macpkg/lib/")}
    r = c.run(mf.pack_wheel(c.scratch, UNIVERSAL2, alone))
    c.expect_findings(r, {"dependencies": ["macpkg/lib/libcore.dylib: (arm64) needs @rpath/libomp.dylib",
                                           "the file has no LC_RPATH"]})

    c.begin("ELF and Mach-O in one wheel: both halves of dependencies/rpath/runtimes")
    mixed = c.scratch / "mixed"
    files = mf.build_files(mixed)
    (mixed / "elf.c").write_text("int elf_value(void) { return 7; }\n")
    mf.run(["gcc", "-shared", "-fPIC", "-o", mixed / "libelf.so", mixed / "elf.c", "-Wl,-rpath,/build/elf"])
    files["macpkg/lib/libelf.so"] = mixed / "libelf.so"
    r = c.run(mf.pack_wheel(mixed, UNIVERSAL2, files))
    c.expect_findings(r, {"rpath": ["macpkg/lib/libelf.so: RUNPATH entry /build/elf is absolute"]})
    dep = r.check("dependencies").get("summary", "")
    c.expect("1 ELF file" in dep and "3 Mach-O files" in dep, f"both halves in the summary: {dep}")
    c.expect("not applicable" not in r.check("symbol-versions").get("summary", "not applicable"),
             f"symbol-versions is not 'not applicable' with an ELF file: {r.check('symbol-versions')}")

    c.begin("Mach-O files in a py3-none-any wheel")
    r = c.run(mf.pack_wheel(c.scratch, "any", mf.build_files(c.scratch / "any")), "--no-runtime")
    c.expect_findings(r, {"deployment-target": ["platform any is not a macOS tag"]})


def case_unresolved(c: Case) -> None:
    w = wheel(c, "unresolved")
    tree, machos = unzip(c, w)
    c.begin("independent: the oracle finds exactly the missing dylib")
    want = {("macpkg/lib/libcore.dylib", a, "@rpath/libmissing.dylib") for a in ("arm64", "x86_64")}
    c.expect(oracle_unresolved(tree, machos) == want, f"{oracle_unresolved(tree, machos)}")
    expect_defect(c, "unresolved", {"dependencies": [
        "macpkg/lib/libcore.dylib: (arm64) needs @rpath/libmissing.dylib",
        "macpkg/lib/libcore.dylib: (x86_64) needs @rpath/libmissing.dylib",
        "its LC_RPATHs: @loader_path"]}, w=w)


def case_absolute_rpath(c: Case) -> None:
    expect_defect(c, "absolute_rpath", {"rpath": [
        "macpkg/_ext.cpython-311-darwin.so: (arm64) LC_RPATH /Users/runner/work/pytorch/build/lib is absolute",
        "(x86_64) LC_RPATH /Users/runner/work/pytorch/build/lib is absolute"]})


def case_duplicate_rpath(c: Case) -> None:
    w, s = objdump_member(c, "duplicate_rpath", "macpkg/_ext.cpython-311-darwin.so")
    c.expect(s["arm64"]["rpaths"].count("@loader_path/lib") == 2, f"{s}")
    expect_defect(c, "duplicate_rpath", {"rpath": [
        "macpkg/_ext.cpython-311-darwin.so: (arm64) duplicate LC_RPATH @loader_path/lib",
        "macOS 15.4"]}, w=w)


def case_two_openmp(c: Case) -> None:
    expect_defect(c, "two_openmp", {"runtimes": [
        "2 OpenMP runtimes would be loaded", "macpkg/.dylibs/libomp.dylib", "macpkg/lib/libomp.dylib"]})


def case_openblas(c: Case) -> None:
    expect_defect(c, "openblas", {"runtimes": [
        "macpkg/lib/libcore.dylib: OpenBLAS: @rpath/libopenblas.0.dylib",
        "macpkg/lib/libopenblas.0.dylib: OpenBLAS"]})


def case_minos(c: Case) -> None:
    w, s = objdump_member(c, "minos", "macpkg/lib/libcore.dylib")
    c.expect(s["arm64"]["minos"] == "13.0", f"{s}")
    expect_defect(c, "minos", {"deployment-target": [
        "macpkg/lib/libcore.dylib: (arm64) minos 13.0 is above macosx_11_0_universal2 (11.0 for arm64)"]}, w=w)


def case_arch_missing(c: Case) -> None:
    w = wheel(c, "arch_missing")
    tree, machos = unzip(c, w)
    c.begin("independent: the x86_64 extension cannot load the arm64-only libcore")
    c.expect(("macpkg/_ext.cpython-311-darwin.so", "x86_64", "@rpath/libcore.dylib")
             in oracle_unresolved(tree, machos), "oracle: x86_64 slice unresolved")
    expect_defect(c, "arch_missing", {
        "deployment-target": ["macpkg/lib/libcore.dylib: has arm64, but macosx_11_0_universal2 claims arm64+x86_64: "
                              "no x86_64 slice, so it cannot load there"],
        "dependencies": ["(x86_64) needs @rpath/libcore.dylib",
                         "found only for other architectures than x86_64: macpkg/lib/libcore.dylib: arm64 only"]}, w=w)


def case_python(c: Case) -> None:
    """An extension linking the interpreter (Python.framework, libpython)
    fails `dependencies` with its own finding, not as an unresolved
    library; one that leaves Python's symbols to -undefined dynamic_lookup
    passes."""
    w = wheel(c)
    tree, _ = unzip(c, w)
    ext = tree / "macpkg/_ext.cpython-311-darwin.so"
    c.begin("independent: llvm-nm-14 -m: the good extension looks Python up dynamically")
    nm = mf.run(["llvm-nm-14", "-m", "-u", "--arch=all", ext])
    c.expect(nm.count("(undefined) external _Py_IsInitialized (dynamically looked up)") == 2, nm)
    c.expect("Python" not in objdump_slices(ext)["arm64"]["dylibs"], "no interpreter linked")
    c.begin("-undefined dynamic_lookup extension: dependencies pass")
    r = c.run(w, "--no-runtime")
    c.expect(r.status("dependencies") == "pass", f"{r.check('dependencies')}")
    for defect, name in (("python_framework", mf.PYTHON_FRAMEWORK),
                         ("python_dylib", "@rpath/libpython3.11.dylib")):
        w, s = objdump_member(c, defect, "macpkg/_ext.cpython-311-darwin.so")
        c.expect(name in s["arm64"]["dylibs"] and name in s["x86_64"]["dylibs"], f"{s}")
        c.begin(f"{defect}: check_binary")
        r = c.run(w, "--no-runtime")
        c.expect(r.rc == 1, f"exit 1, got {r.rc}: {r.stderr[:300]}")
        c.expect_findings(r, {"dependencies": [
            f"macpkg/_ext.cpython-311-darwin.so: (arm64) links the Python interpreter's library {name}",
            f"macpkg/_ext.cpython-311-darwin.so: (x86_64) links the Python interpreter's library {name}",
            "an extension module must not", "relink with -undefined dynamic_lookup"]})
        text = r.check("dependencies")
        c.expect("resolves neither inside" not in str(text), f"not reported as unresolved: {text}")


def case_tampered(c: Case) -> None:
    w = wheel(c, "tampered")
    tree, _ = unzip(c, w)
    c.begin("independent: macho_cs_verify.py rejects the arm64 slice")
    p = cs_verify(tree / "macpkg/lib/libcore.dylib")
    c.expect(p.returncode == 1 and "(arm64)" in p.stderr and "page 0" in p.stderr, f"{p.stdout} {p.stderr}")
    expect_defect(c, "tampered", {"code-signature": [
        "macpkg/lib/libcore.dylib: (arm64) code signature does not verify",
        "page 0 (0x0-0x1000): hash mismatch"]}, w=w)


def case_unsigned_arm64(c: Case) -> None:
    w = wheel(c, "unsigned_arm64")
    tree, _ = unzip(c, w)
    c.begin("independent: macho_cs_verify.py finds no signature")
    p = cs_verify(tree / "macpkg/lib/libomp.dylib")
    c.expect(p.returncode == 1 and "(arm64)" in p.stderr, f"{p.stdout} {p.stderr}")
    expect_defect(c, "unsigned_arm64", {"code-signature": [
        "macpkg/lib/libomp.dylib: (arm64) is not signed: macOS kills unsigned arm64 code"]}, w=w)


def case_malformed(c: Case) -> None:
    work = c.scratch / "bad"
    files = mf.build_files(work)
    bad = work / "libbad.dylib"
    bad.write_bytes((work / "arm64" / "libcore.dylib").read_bytes()[:64])  # truncated load commands
    files["macpkg/lib/libbad.dylib"] = bad
    w = mf.pack_wheel(work, UNIVERSAL2, files)
    c.begin("truncated Mach-O member")
    c.expect_usage_error(c.run(w, "--no-runtime"), "macpkg/lib/libbad.dylib (arm64)", "sizeofcmds")
    c.begin("fat header with no architectures")
    bad.write_bytes(b"\xca\xfe\xba\xbe" + b"\0" * 60)
    w = mf.pack_wheel(c.scratch, UNIVERSAL2, files)
    c.expect_usage_error(c.run(w, "--no-runtime"), "macpkg/lib/libbad.dylib", "fat header")
    c.begin("a Java class file (same magic) is not Mach-O")
    bad.write_bytes(b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\0" * 56)
    w = mf.pack_wheel(c.scratch, UNIVERSAL2, files)
    r = c.run(w, "--no-runtime")
    c.expect(r.rc == 0, f"exit 0: {r.describe()}")


def case_libtorch(c: Case) -> None:
    work = c.scratch / "lt"
    files = mf.build_files(work, archs=("arm64",))
    lib = {k: v for k, v in files.items() if k.startswith("macpkg/lib/")}
    z = mf.pack_libtorch(work, lib)
    c.begin("libtorch macOS zip")
    r = c.run(z)
    c.expect(r.rc == 0, f"exit 0: {r.describe()}")
    c.expect_findings(r, {}, kind="libtorch_zip",
                      must_pass={"integrity", "dependencies", "rpath", "runtimes", "code-signature"})
    expect_not_applicable(c, r)
    c.expect(r.status("deployment-target") == "skip" and "--platform" in r.check("deployment-target")["summary"],
             f"no tag: deployment-target says how to give one: {r.check('deployment-target')}")
    r = c.run(z, "--platform", "macosx_11_0_arm64")
    c.expect_findings(r, {}, must_pass={"deployment-target"})
    r = c.run(z, "--platform", "macosx_11_0_x86_64")
    c.expect_findings(r, {"deployment-target": ["libtorch/lib/libcore.dylib: has arm64, but macosx_11_0_x86_64"]})
    c.begin("libtorch zip with libiomp5 next to libomp")
    iomp = work / "libiomp5.dylib"
    iomp.write_bytes(files["macpkg/lib/libomp.dylib"].read_bytes())
    r = c.run(mf.pack_libtorch(c.scratch / "iomp", {**lib, "macpkg/lib/libiomp5.dylib": iomp}))
    c.expect_findings(r, {"runtimes": ["2 OpenMP runtimes would be loaded", "libtorch/lib/libiomp5.dylib (in",
                                       "libtorch/lib/libomp.dylib (in"]})
    c.begin("libtorch zip whose libcore was linked against Homebrew's libomp")
    brew = mf.build_files(c.scratch / "brew", "homebrew_omp", archs=("arm64",))
    r = c.run(mf.pack_libtorch(c.scratch / "brew", {k: v for k, v in brew.items() if k.startswith("macpkg/lib/")}))
    c.expect_findings(r, {
        "dependencies": ["libtorch/lib/libcore.dylib: (arm64) needs /opt/homebrew/opt/libomp/lib/libomp.dylib",
                         "an absolute path outside /usr/lib and /System"],
        "runtimes": ["2 OpenMP runtimes would be loaded", "libtorch/lib/libomp.dylib (in the package)",
                     "/opt/homebrew/opt/libomp/lib/libomp.dylib (outside the package, needed by "
                     "libtorch/lib/libcore.dylib)"]})


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHECK_CASE", "")
    if name not in CASES:
        sys.exit(f"usage: macho_cases.py CASE (one of {', '.join(CASES)})")
    c = Case(f"macho-{name}")
    need_tools(c)
    try:
        CASES[name](c)
    except mf.FixtureError as e:
        c.fail(f"fixture: {e}")
    c.finish()


if __name__ == "__main__":
    main()
