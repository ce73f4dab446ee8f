#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_binary integration cases: good packages pass; each broken one fails
exactly the check that owns its defect, naming the file, version or library.

Usage: cases.py CASE   (or CHECK_CASE=CASE; ctest runs one case per test,
check_<case>). Needs CHECK_BINARY and PKGTOOL in the environment. Fixtures
come from lib/fixtures.py (built once, cached, each confirmed with readelf
and the policy JSON); expectations here are checked independently where
cheap (readelf, ldd, zipfile, compiling the client by hand, pip + import).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
import fixtures as fx  # noqa: E402
from checkrun import Case, IDS, STATIC_IDS  # noqa: E402

PY = "/usr/bin/python3"


def sh(argv, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, env=env)


def member(artifact: Path, pattern: str) -> str:
    with zipfile.ZipFile(artifact) as z:
        names = [n for n in z.namelist() if re.search(pattern, n)]
    if len(names) != 1:
        raise fx.FixtureError(f"{artifact.name}: {len(names)} members match {pattern}: {names}")
    return names[0]


def extract(artifact: Path, name: str, dest: Path) -> Path:
    with zipfile.ZipFile(artifact) as z:
        return Path(z.extract(name, dest))


def venv_import(c: Case, wheel: Path, module: str, expr: str, want: str) -> None:
    """Independent of check_binary: pip-install into a fresh venv, import."""
    venv = c.scratch / f"venv-{module}"
    p = sh([PY, "-m", "venv", "--without-pip", venv])
    if not c.expect(p.returncode == 0, f"python3 -m venv (python3-venv): {p.stderr.strip()[:300]}"):
        return
    p = sh([PY, "-m", "pip", "--python", venv / "bin/python", "install", "--no-index", "--no-deps",
            "--disable-pip-version-check", "-q", wheel])
    if not c.expect(p.returncode == 0, f"pip install {wheel.name}: {p.stderr[:500]}"):
        return
    p = sh([venv / "bin/python", "-c", f"import {module}; print({expr})"], cwd=c.scratch)
    c.expect(p.stdout.strip() == want, f"{module} imports in a venv and {expr} == {want}: "
                                       f"{p.stdout.strip()} {p.stderr[-500:]}")


# ------------------------------------------------------------ cases


def case_good_wheel(c: Case, f: fx.Fixtures) -> None:
    w = f.get("good_wheel")
    c.begin("independent: the fixture imports in a venv")
    venv_import(c, w, "goodpkg", "goodpkg.ext_value()", "42")

    c.begin("good wheel, all checks")
    r = c.run(w)
    c.expect(r.rc == 0, f"exit 0, got {r.rc}")
    # (accelerator: nothing expected, nothing carried; pass or skip)
    c.expect_findings(r, {}, kind="wheel",
                      must_pass=STATIC_IDS - {"cxx-abi", "accelerator"} | {"import"})
    for cid in ("link", "link-wrong-abi", "gpu"):
        c.expect(r.status(cid) == "skip", f"{cid} skips on a wheel without libtorch/CUDA: {r.status(cid)}")

    c.begin("--cuda cpu --no-runtime")
    r = c.run(w, "--cuda", "cpu", "--no-runtime")
    c.expect_findings(r, {}, must_pass={"accelerator", "integrity"})
    for cid in ("import", "link", "link-wrong-abi", "gpu"):
        c.expect(r.status(cid) == "skip", f"--no-runtime skips {cid}: {r.status(cid)}")

    c.begin("--require turns a skip into a failure")
    r = c.run(w, "--cuda", "cpu", "--no-runtime", "--require", "import,link", "--require", "integrity")
    c.expect(r.rc == 1, f"exit 1: {r.rc} {r.stderr[:300]}")
    c.expect_findings(r, {"import": ["required (--require import) but skipped"],
                          "link": ["required (--require link) but skipped"]},
                      must_pass={"integrity"})
    for cid in ("link-wrong-abi", "gpu"):
        c.expect(r.status(cid) == "skip", f"{cid} not required, still a skip: {r.status(cid)}")
    r = c.run(w, "--require", "bogus")
    c.expect(r.rc == 2, f"--require bogus is bad input: {r.rc}")

    c.begin("--only rpath / --skip integrity")
    r = c.run(w, "--only", "rpath")
    c.expect_findings(r, {}, must_pass={"rpath"})
    c.expect({ch["id"] for ch in r.report["checks"] if ch["status"] != "skip"} == {"rpath"} if r.report else False,
             "--only rpath runs rpath alone")
    r = c.run(w, "--skip", "integrity", "--no-runtime")
    c.expect_findings(r, {})
    c.expect(r.status("integrity") == "skip", f"--skip integrity: {r.status('integrity')}")

    c.begin("text report")
    r = c.run(w, "--no-runtime", json_out=False)
    c.expect(r.rc == 0, f"text mode exit 0: {r.rc} {r.stderr[:300]}")
    for cid in IDS:
        c.expect(re.search(rf"\b{re.escape(cid)}\b", r.stdout) is not None, f"text report mentions {cid}:\n{r.stdout}")

    c.begin("installed tree (site-packages)")
    site = c.scratch / "site"
    # (unpack writes site/NAME-VERSION/: a site-packages-shaped tree)
    p = sh([f.pkgtool, "wheel", "unpack", w, "-d", c.scratch / "unpacked"])
    (c.scratch / "unpacked/goodpkg-1.0").rename(site)
    if c.expect(p.returncode == 0, f"pkgtool wheel unpack: {p.stderr}"):
        r = c.run(site, "--no-runtime")
        c.expect_findings(r, {}, kind="site_packages", must_pass={"integrity", "dependencies", "rpath"})
        r = c.run(site / "goodpkg", "--no-runtime")
        c.expect_findings(r, {}, kind="python_package", must_pass={"dependencies", "rpath"})


def case_abi(c: Case, f: fx.Fixtures) -> None:
    pre = f.get("torch_pre_cfg1")
    good = f.get("torch_cxx11")
    c.begin("independent: TorchConfig.cmake says 1 in both wheels")
    for w in (pre, good):
        with zipfile.ZipFile(w) as z:
            cfg = z.read("torch/share/cmake/Torch/TorchConfig.cmake").decode()
        c.expect("-D_GLIBCXX_USE_CXX11_ABI=1" in cfg, f"{w.name}: {cfg}")
    # (the fixture builder confirmed the census of each libtorch_cpu.so with nm -D -C)

    c.begin("pre-cxx11 library, TorchConfig.cmake says 1")
    r = c.run(pre)
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]}, must_pass={"symbol-versions", "dependencies"})
    c.expect("TorchConfig" in r.problem_text("cxx-abi") or "_GLIBCXX_USE_CXX11_ABI" in r.problem_text("cxx-abi"),
             f"cxx-abi names the config disagreement: {r.problem_text('cxx-abi')}")
    c.begin("pre-cxx11 library, --abi cxx11")
    r = c.run(pre, "--abi", "cxx11", "--no-runtime")
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]})

    c.begin("consistent cxx11 wheel, --abi cxx11")
    r = c.run(good, "--abi", "cxx11")
    c.expect_findings(r, {}, must_pass={"cxx-abi", "symbol-versions", "dependencies", "import"})
    c.expect(r.rc == 0, f"exit 0: {r.rc}")
    c.begin("cxx11 wheel, --abi pre-cxx11")
    r = c.run(good, "--abi", "pre-cxx11", "--no-runtime")
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]})
    c.begin("cxx11 wheel, --min-symbols above the census")
    r = c.run(good, "--abi", "cxx11", "--min-symbols", str(fx.TORCH_FUNCTIONS * 10), "--no-runtime")
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]})

    c.begin("DESIRED_DEVTOOLSET")
    r = c.run(good, "--no-runtime", env={"DESIRED_DEVTOOLSET": "devtoolset-11-cxx11-abi"})
    c.expect_findings(r, {}, must_pass={"cxx-abi"})
    r = c.run(good, "--no-runtime", env={"DESIRED_DEVTOOLSET": "devtoolset-11"})
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]})


def case_glibcxx(c: Case, f: fx.Fixtures) -> None:
    w = f.get("glibcxx")
    so_name = member(w, r"^cxxpkg/_cxx.*\.so$")
    so = extract(w, so_name, c.scratch / "x")
    c.begin("independent: readelf -V")
    needs = fx.version_needs(so)
    c.expect("GLIBCXX_3.4.30" in needs, f"{so_name} needs GLIBCXX_3.4.30: {sorted(needs)}")
    c.expect("manylinux2014" in w.name, w.name)

    c.begin("manylinux2014 wheel needing GLIBCXX_3.4.30")
    r = c.run(w)
    c.expect_findings(r, {"symbol-versions": ["GLIBCXX_3.4.30", "_cxx"]},
                      must_pass={"dependencies", "rpath", "integrity", "import"})
    c.begin("--platform at or above what the file needs")
    fit = next((p for p in ("manylinux_2_35", "manylinux_2_36", "manylinux_2_39")
                if not fx.policy_excess(so, p)), None)
    if c.expect(fit is not None, "some policy up to manylinux_2_39 fits the extension"):
        r = c.run(w, "--platform", f"{fit}_{fx.ARCH}", "--no-runtime")
        c.expect_findings(r, {}, must_pass={"symbol-versions"})
    r = c.run(w, "--platform", f"manylinux_2_28_{fx.ARCH}", "--no-runtime")
    c.expect_findings(r, {"symbol-versions": ["GLIBCXX_3.4.30"]})


def case_usrlib(c: Case, f: fx.Fixtures) -> None:
    w = f.get("usrlib")
    so_name = member(w, r"^bzpkg/_bz.*\.so$")
    so = extract(w, so_name, c.scratch / "x")
    c.begin("independent: readelf -d, ldd")
    soname = next(n for n in fx.readelf_dynamic(so)["NEEDED"] if n.startswith("libbz2"))
    ldd = sh(["ldd", so]).stdout
    m = re.search(rf"{re.escape(soname)} => (\S+)", ldd)
    c.expect(m is not None and "/lib" in m.group(1), f"ldd resolves {soname} from the system: {ldd}")
    real = os.path.realpath(m.group(1)) if m else ""

    c.begin("manylinux_2_17 wheel needing libbz2 from the system")
    r = c.run(w)
    lib_path = re.compile(r"(/usr)?/lib[^ :,'\"]*/libbz2\.so[.\d]*")
    c.expect_findings(r, {"dependencies": [soname, lib_path, "_bz"]},
                      must_pass={"symbol-versions", "rpath", "integrity", "import"})
    c.log(f"  (ldd: {m.group(1) if m else '?'} -> {real})")
    c.begin("--allow-external accepts it")
    r = c.run(w, "--allow-external", "libbz2.so*", "--no-runtime")
    c.expect_findings(r, {}, must_pass={"dependencies"})


def case_rpath(c: Case, f: fx.Fixtures) -> None:
    w = f.get("rpath")
    build_dir = str(f.fixture_dir("rpath") / "build" / "lib")
    so_name = member(w, r"^rpathpkg/_ext.*\.so$")
    so = extract(w, so_name, c.scratch / "x")
    c.begin("independent: readelf -d")
    dyn = fx.readelf_dynamic(so)
    c.expect(build_dir in (dyn["RPATH"] or dyn["RUNPATH"] or ""), f"RPATH/RUNPATH {dyn}")

    c.begin("extension with an RPATH into the build directory")
    r = c.run(w)
    c.expect_findings(r, {"rpath": [build_dir, "_ext"]},
                      must_pass={"dependencies", "symbol-versions", "integrity", "import"})


def case_openmp(c: Case, f: fx.Fixtures) -> None:
    w = f.get("openmp")
    with zipfile.ZipFile(w) as z:
        names = z.namelist()
    copies = [n for n in names if re.search(r"/libgomp[^/]*\.so", n)]
    c.begin("independent: two libgomp copies, each needed")
    c.expect(len(copies) == 2, f"two copies in the wheel: {copies}")
    needed = set()
    for n in names:
        if re.search(r"^omppkg/_[ab].*\.so$", n):
            needed |= set(fx.readelf_dynamic(extract(w, n, c.scratch / "x"))["NEEDED"])
    c.expect({Path(p).name for p in copies} <= needed, f"both copies needed: {needed}")

    c.begin("two OpenMP runtimes")
    r = c.run(w)
    c.expect_findings(r, {"runtimes": ["libgomp"] + [Path(p).name for p in copies]},
                      must_pass={"dependencies", "rpath", "symbol-versions", "integrity", "import"})


def case_record(c: Case, f: fx.Fixtures) -> None:
    w = f.get("record")
    c.begin("independent: RECORD hash of goodpkg/__init__.py is wrong")
    with zipfile.ZipFile(w) as z:
        rec = z.read(member(w, r"\.dist-info/RECORD$")).decode()
        data = z.read("goodpkg/__init__.py")
    line = next(ln for ln in rec.splitlines() if ln.startswith("goodpkg/__init__.py,"))
    actual = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    c.expect(f"sha256={actual}" not in line, f"RECORD line differs from the content: {line}")
    p = sh([f.pkgtool, "wheel", "verify", w])
    c.expect(p.returncode != 0, f"pkgtool wheel verify rejects it: {p.returncode} {p.stdout[:300]}")

    c.begin("tampered RECORD")
    r = c.run(w)
    c.expect_findings(r, {"integrity": ["goodpkg/__init__.py"]},
                      must_pass={"dependencies", "rpath", "symbol-versions"})
    # Importing would run the unverified __init__.py (and any .pth file).
    c.expect(r.status("import") == "skip" and "integrity" in r.check("import").get("summary", ""),
             f"import not run after a failed integrity check: {r.status('import')} "
             f"({r.check('import').get('summary', '')})")
    c.begin("text report of a failure")
    r = c.run(w, "--no-runtime", json_out=False)
    c.expect(r.rc == 1, f"exit 1: {r.rc} {r.stderr[:300]}")
    c.expect(re.search(r"FAIL.*integrity", r.stdout, re.I) is not None, f"integrity shown failing:\n{r.stdout}")
    c.expect("goodpkg/__init__.py" in r.stdout, f"the problem names the file:\n{r.stdout}")

    c.begin("installed RECORD rows that are not regular files")
    # Before: a FIFO in place of a listed file was skipped (passed). A
    # dangling symlink is a finding too. Symlinks are followed wherever they
    # lead: inside the package, and out of it as symlink-farm installs (Nix
    # and Spack views, soft-linked conda environments) do for every file.
    p = sh([f.pkgtool, "wheel", "unpack", f.get("good_wheel"), "-d", c.scratch / "odd"])
    site = c.scratch / "odd/goodpkg-1.0"
    if c.expect(p.returncode == 0, f"pkgtool wheel unpack: {p.stderr}"):
        init = site / "goodpkg/__init__.py"
        init.unlink()
        os.mkfifo(init)
        info = site / "goodpkg-1.0.dist-info"
        meta = info / "METADATA"
        outside = c.scratch / "odd/METADATA.outside"
        meta.rename(outside)
        meta.symlink_to(outside)
        wheel_file = info / "WHEEL"
        wheel_file.rename(wheel_file.with_name("WHEEL.real"))
        wheel_file.symlink_to("WHEEL.real")
        r = c.run(site, "--no-runtime", timeout=120)
        c.expect_findings(r, {"integrity": ["goodpkg/__init__.py", "a FIFO"]}, kind="site_packages")
        text = r.problem_text("integrity")
        c.expect("WHEEL" not in text and "METADATA" not in text,
                 f"symlinks inside and out of the package are followed, not findings:\n{text}")
        # A dangling symlink in place of a listed file is a finding.
        meta.unlink()
        meta.symlink_to(c.scratch / "odd/no-such-file")
        r = c.run(site, "--no-runtime", timeout=120)
        c.expect_findings(r, {"integrity": ["goodpkg/__init__.py", "a FIFO", "goodpkg-1.0.dist-info/METADATA",
                                            "dangling symlink"]}, kind="site_packages")


def case_cpu_cudart(c: Case, f: fx.Fixtures) -> None:
    w = f.get("cpu_cudart")
    c.begin("independent: libcudart.so.12 carried and needed")
    so = extract(w, member(w, r"^cudapkg/_ext.*\.so$"), c.scratch / "x")
    c.expect("libcudart.so.12" in fx.readelf_dynamic(so)["NEEDED"], "NEEDED libcudart.so.12")
    c.expect(bool(member(w, r"/libcudart\.so\.12$")), "carried")

    c.begin("no accelerator expected: consistent")
    r = c.run(w, "--no-env")
    c.expect_findings(r, {}, must_pass={"dependencies", "runtimes", "import"})
    c.begin("--cuda cpu")
    r = c.run(w, "--cuda", "cpu")
    c.expect_findings(r, {"accelerator": ["libcudart.so.12"]},
                      must_pass={"dependencies", "runtimes", "integrity", "import"})
    c.expect(r.status("gpu") in ("pass", "skip"), f"gpu passes or skips: {r.status('gpu')}")


def case_accelerator(c: Case, f: fx.Fixtures) -> None:
    """CUDA expectations on the libcudart.so.12 wheel and the CPU wheel."""
    w = f.get("cpu_cudart")
    good = f.get("good_wheel")
    c.begin("--cuda cu124 / 12.4: libcudart.so.12 fits")
    for cuda in ("cu124", "12.4"):
        r = c.run(w, "--cuda", cuda, "--no-runtime")
        c.expect_findings(r, {}, must_pass={"accelerator"})
    c.begin("--cuda cu118: libcudart.so.12 is the wrong major version")
    r = c.run(w, "--cuda", "cu118", "--no-runtime")
    c.expect_findings(r, {"accelerator": ["libcudart.so.12", "11.8"]})
    c.begin("--expect-lib")
    r = c.run(w, "--cuda", "cu124", "--expect-lib", "libcudnn*", "--no-runtime")
    c.expect_findings(r, {"accelerator": ["libcudnn"]})
    r = c.run(w, "--cuda", "cu124", "--expect-lib", "libcudart*", "--no-runtime")
    c.expect_findings(r, {}, must_pass={"accelerator"})
    c.begin("--cuda cu124 on a wheel without any CUDA library")
    r = c.run(good, "--cuda", "cu124", "--no-runtime")
    c.expect_findings(r, {"accelerator": ["libcudart"]})
    c.begin("--expect-table: the CUDA 12.4 table's libraries (data/cuda) are required")
    table = json.load(open(Path(os.environ["LIBPKG_SOURCE_DIR"]) / "data/cuda/cuda.json"))
    want = next(v for v in table["versions"] if v["cuda"] == "12.4")["libraries"]
    missing = [lib for lib in want if lib != "libcudart.so.12"]
    c.expect("libcudart.so.12" in want and missing, f"the 12.4 table lists libcudart.so.12 and more: {want}")
    r = c.run(w, "--cuda", "cu124", "--expect-table", "--no-runtime")
    c.expect_findings(r, {"accelerator": missing[:3]})
    c.begin("--expect-table for a version the tables do not know is bad input")
    c.expect_usage_error(c.run(w, "--cuda", "13.1", "--expect-table", "--no-runtime"), "unknown CUDA version 13.1")


def libtorch_client(f: fx.Fixtures) -> Path:
    return f.fixture_dir("libtorch") / "client.cpp"


def case_libtorch(c: Case, f: fx.Fixtures) -> None:
    z = f.get("libtorch")
    client = libtorch_client(f)
    c.begin("independent: the client links with ABI 1, not with ABI 0")
    tree = c.scratch / "unz"
    with zipfile.ZipFile(z) as zz:
        zz.extractall(tree)
    lt = tree / "libtorch"
    for n in ("libc10.so", "libtorch_cpu.so", "libtorch.so"):
        os.chmod(lt / "lib" / n, 0o755)
    base = ["g++", "-std=c++17", f"-I{lt}/include", client, f"-L{lt}/lib", "-ltorch", "-ltorch_cpu", "-lc10",
            f"-Wl,-rpath,{lt}/lib"]
    p = sh(base + ["-D_GLIBCXX_USE_CXX11_ABI=1", "-o", c.scratch / "client1"])
    if c.expect(p.returncode == 0, f"ABI 1 client links: {p.stderr[:500]}"):
        p = sh([c.scratch / "client1"])
        c.expect(p.stdout.strip() == "hello client", f"client runs: {p.stdout} {p.stderr}")
    p = sh(base + ["-D_GLIBCXX_USE_CXX11_ABI=0", "-o", c.scratch / "client0"])
    c.expect(p.returncode != 0 and "undefined reference" in p.stderr, f"ABI 0 client fails to link: {p.returncode}")

    c.begin("good libtorch zip with --client")
    r = c.run(z, "--client", client)
    c.expect(r.rc == 0, f"exit 0: {r.rc}")
    c.expect_findings(r, {}, kind="libtorch_zip",
                      must_pass={"integrity", "cxx-abi", "link", "link-wrong-abi", "dependencies", "rpath"})
    c.begin("unpacked libtorch tree")
    r = c.run(lt, "--client", client)
    c.expect_findings(r, {}, kind="libtorch_tree", must_pass={"cxx-abi", "link", "link-wrong-abi"})
    c.begin("--abi pre-cxx11 against the cxx11 zip")
    r = c.run(z, "--abi", "pre-cxx11", "--no-runtime")
    c.expect_findings(r, {"cxx-abi": ["libtorch_cpu.so"]})


def case_libtorch_no_hash(c: Case, f: fx.Fixtures) -> None:
    z = f.get("libtorch_no_hash")
    c.begin("libtorch zip without build-hash")
    r = c.run(z, "--client", libtorch_client(f))
    c.expect_findings(r, {"integrity": ["build-hash"]}, kind="libtorch_zip",
                      must_pass={"cxx-abi", "link", "link-wrong-abi"})


def case_conda(c: Case, f: fx.Fixtures) -> None:
    pkg = f.get("conda")
    bz2 = next(pkg.parent.glob("*.tar.bz2"))
    for p in (pkg, bz2):
        c.begin(f"good conda package {p.name}")
        r = c.run(p)
        c.expect(r.rc == 0, f"exit 0: {r.rc}")
        c.expect_findings(r, {}, kind="conda",
                          must_pass={"integrity", "dependencies", "rpath", "runtimes", "import"})
    c.begin("--package-type conda agrees")
    r = c.run(pkg, "--package-type", "conda", "--no-runtime")
    c.expect_findings(r, {}, must_pass={"integrity"})
    c.begin("extracted package (conda_tree)")
    d = c.scratch / "extracted"
    p = sh([f.pkgtool, "conda", "extract", pkg, "-d", d])
    if c.expect(p.returncode == 0, f"pkgtool conda extract: {p.stderr}"):
        r = c.run(d, "--no-runtime")
        c.expect_findings(r, {}, kind="conda_tree", must_pass={"integrity", "dependencies", "rpath"})
    c.begin("--package-type manywheel contradicts a conda package")
    r = c.run(pkg, "--package-type", "manywheel", "--no-runtime")
    c.expect_usage_error(r, "manywheel")


def case_repair(c: Case, f: fx.Fixtures) -> None:
    w = f.get("repair_input")
    c.begin("linux_x86_64 wheel needing libbz2")
    r = c.run(w, "--no-runtime")
    c.expect_findings(r, {"dependencies": ["libbz2"]})
    c.begin("after pkgtool repair")
    rw = f.get("repaired")
    c.log(f"  repaired: {rw.name}")
    with zipfile.ZipFile(rw) as z:
        libs = [n for n in z.namelist() if re.search(r"\.libs/libbz2-[0-9a-f]{8}\.so", n)]
    c.expect(len(libs) == 1, f"independent: libbz2 grafted into the repaired wheel: {libs}")
    r = c.run(rw)
    c.expect(r.rc == 0, f"exit 0: {r.rc}")
    c.expect_findings(r, {}, must_pass=STATIC_IDS - {"cxx-abi", "accelerator"} | {"import"})


def case_bad_input(c: Case, f: fx.Fixtures) -> None:
    d = f.get("bad_inputs")
    good = f.get("good_wheel")
    missing = c.scratch / "no-such-1.0-py3-none-any.whl"
    c.begin("missing file")
    c.expect_usage_error(c.run(missing), str(missing))
    c.begin("garbage .whl")
    c.expect_usage_error(c.run(d / "garbage-1.0-py3-none-any.whl"), "garbage-1.0-py3-none-any.whl")
    c.begin("zip that is neither a wheel nor a libtorch")
    c.expect_usage_error(c.run(d / "other.zip"), "other.zip")
    c.begin("unknown --cuda value")
    c.expect_usage_error(c.run(good, "--cuda", "cu1"), "cu1")
    c.expect_usage_error(c.run(good, "--cuda", "foo"), "foo")
    c.begin("unknown check id")
    c.expect_usage_error(c.run(good, "--only", "no-such-check"), "no-such-check")
    c.begin("unknown --abi value")
    c.expect_usage_error(c.run(good, "--abi", "cxx99"), "cxx99")


def case_env(c: Case, f: fx.Fixtures) -> None:
    w = f.get("cpu_cudart")
    c.begin("--cuda cpu (reference)")
    ref = c.run(w, "--cuda", "cpu", "--no-runtime")
    c.expect_findings(ref, {"accelerator": ["libcudart.so.12"]})
    c.begin("DESIRED_CUDA=cpu")
    r = c.run(w, "--no-runtime", env={"DESIRED_CUDA": "cpu"})
    c.expect_findings(r, {"accelerator": ["libcudart.so.12"]})
    c.expect(r.check("accelerator").get("problems") == ref.check("accelerator").get("problems"),
             "same problems as --cuda cpu")
    c.begin("MATRIX_DESIRED_CUDA=cpu (fallback)")
    r = c.run(w, "--no-runtime", env={"MATRIX_DESIRED_CUDA": "cpu"})
    c.expect_findings(r, {"accelerator": ["libcudart.so.12"]})
    c.begin("DESIRED_CUDA=cpu with --no-env")
    r = c.run(w, "--no-runtime", "--no-env", env={"DESIRED_CUDA": "cpu"})
    c.expect(r.rc == 0, f"exit 0: {r.rc}")
    c.expect_findings(r, {})
    c.begin("PACKAGE_TYPE")
    r = c.run(w, "--no-runtime", "--no-env", env={"PACKAGE_TYPE": "conda"})
    c.expect(r.rc == 0, f"--no-env ignores PACKAGE_TYPE=conda: exit {r.rc} {r.stderr[:300]}")
    r = c.run(w, "--no-runtime", env={"PACKAGE_TYPE": "manywheel"})
    c.expect_findings(r, {})
    c.expect_usage_error(c.run(w, "--no-runtime", env={"PACKAGE_TYPE": "conda"}), w.name, "conda")
    c.begin("DESIRED_CUDA=cu1 (bad value)")
    c.expect_usage_error(c.run(w, "--no-runtime", env={"DESIRED_CUDA": "cu1"}), "DESIRED_CUDA")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHECK_CASE", "")
    if name not in CASES:
        sys.exit(f"usage: cases.py CASE (one of {', '.join(CASES)})")
    c = Case(name)
    try:
        fixtures = fx.Fixtures()
        CASES[name](c, fixtures)
    except fx.Missing as e:
        c.missing(str(e))
    except fx.FixtureError as e:
        c.fail(f"fixture: {e}")
    c.finish()


if __name__ == "__main__":
    main()
