# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.driver: the manywheel, libtorch and conda jobs from Python. The
fixtures are compiled here; outputs are cross-checked with zipfile,
tarfile and readelf, never with libpkg itself."""

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

import libpkg
from conftest import CXX, readelf_dynamic, sh

PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def manywheel_config():
    return libpkg.config.parse(f"manywheel {PY} cpu")


def digest(path: Path) -> dict:
    """Every file under `path` (or `path` itself) → sha256, to show inputs
    are left alone."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


# ------------------------------------------------------------- manywheel

def test_manywheel_bundles_and_retags(ext_wheel, ext_build, tmp_path):
    before = digest(ext_wheel)
    out = tmp_path / "out"
    lines = []
    s = libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=out,
                                lib_paths=[str(ext_build["libdir"])], runtime=False,
                                progress=lines.append)
    assert s.passed and s, s.to_text(verbose=True)
    assert s.driver == "manywheel" and not s.dry_run
    assert s.config == manywheel_config()
    (art,) = s.artifacts
    assert art.role == "wheel" and art.checked
    assert isinstance(art.path, Path) and sorted(out.iterdir()) == [art.path]
    assert art.size == art.path.stat().st_size
    assert art.path.name.startswith("demoext-1.0+cu124-") and "-manylinux" in art.path.name
    assert digest(ext_wheel) == before

    with zipfile.ZipFile(art.path) as z:
        assert z.testzip() is None
        wheel_meta = z.read("demoext-1.0+cu124.dist-info/WHEEL").decode()
        grafted = [n for n in z.namelist() if n.startswith("demoext/lib/libhelper")]
        z.extractall(tmp_path / "x")
    assert "Tag: cp" in wheel_meta and "manylinux" in wheel_meta
    assert "linux_x86_64" not in wheel_meta.replace("manylinux", "")
    assert len(grafted) == 1
    dyn = readelf_dynamic(tmp_path / "x" / "demoext" / ext_build["ext"].name)
    assert Path(grafted[0]).name in dyn["NEEDED"] and "libhelper.so.1" not in dyn["NEEDED"]
    assert "$ORIGIN" in (dyn["RUNPATH"] or dyn["RPATH"] or "")

    (report,) = s.checks
    assert isinstance(report, libpkg.check.Report)
    assert report.artifact == art.path and report.passed
    assert report.find("dependencies").status == "pass"
    assert report.find("import").status == "skip"
    assert any("libhelper" in line for line in s.plan)
    assert lines and any(art.path.name in line for line in lines)
    d = s.to_dict()
    assert d == json.loads(s.to_json())
    assert d["schema"] == "libpkg-driver/1" and d["driver"] == "manywheel"
    assert d["config"]["python"] == PY
    assert "manywheel" in s.to_text() and art.path.name in str(s)
    assert s.seconds >= 0


def test_manywheel_import_check_runs(ext_wheel, ext_build, tmp_path):
    """check_binary's import check installs the output wheel into a venv
    and imports it (the extension then loads the grafted library). The
    driver runs in a thread: with the GIL released this thread keeps
    ticking while the venv is built."""
    libdir = [str(ext_build["libdir"])]
    results = {}

    def work():
        start = time.monotonic()
        results["summary"] = libpkg.driver.manywheel(
            ext_wheel, manywheel_config(), out_dir=tmp_path / "ok", lib_paths=libdir,
            only=["import"], import_modules=["demoext"])
        results["seconds"] = time.monotonic() - start

    ticks = 0
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    s = results["summary"]
    assert s.passed, s.to_text(verbose=True)
    assert ticks > min(20, results["seconds"] / 0.01), (ticks, results["seconds"])
    assert s.checks[0].find("import").status == "pass"
    s = libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "bad",
                                lib_paths=libdir, only=["import"],
                                import_modules=["demoext_no_such_module"])
    assert not s.passed and not s
    assert s.checks[0].find("import").status == "fail"


def test_manywheel_dry_run_writes_nothing(ext_wheel, ext_build, tmp_path):
    out = tmp_path / "out"
    s = libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=out, dry_run=True,
                                lib_paths=[str(ext_build["libdir"])])
    assert s.dry_run and s.artifacts == [] and s.checks == []
    assert any("libhelper" in line for line in s.plan)
    assert not out.exists()


def test_manywheel_cuda_roots_are_searched(ext_wheel, tmp_path):
    # As --cuda-root: the table's libraries are looked for under each given
    # root first; the one error names every missing file and where it looked.
    standin = tmp_path / "standin-cuda"
    (standin / "lib64").mkdir(parents=True)
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.manywheel(ext_wheel, libpkg.config.parse(f"manywheel {PY} cu130"),
                                out_dir=tmp_path / "o", cuda_roots=[str(standin)],
                                runtime=False)
    assert "CUDA 13.0 table" in str(info.value)
    assert str(standin / "lib64") in str(info.value)
    with pytest.raises(TypeError):
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                cuda_roots=str(standin))


def test_manywheel_env_switches_only_when_given(ext_wheel, ext_build, tmp_path, monkeypatch):
    # The old scripts' switches come from env= (FORCE_RPATH → DT_RPATH on the
    # extension); the process environment is never read behind the caller's
    # back.
    monkeypatch.setenv("FORCE_RPATH", "1")

    def extension_dynamic(env, out):
        s = libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=out,
                                    lib_paths=[str(ext_build["libdir"])], runtime=False,
                                    env=env)
        assert s.passed, s.to_text(verbose=True)
        with zipfile.ZipFile(s.artifacts[0].path) as z:
            (member,) = [n for n in z.namelist() if n.startswith("demoext/_demoext")]
            z.extract(member, out / "x")
        return readelf_dynamic(out / "x" / member)

    default = extension_dynamic(None, tmp_path / "a")
    assert default["RUNPATH"] and not default["RPATH"]
    forced = extension_dynamic({"FORCE_RPATH": "1"}, tmp_path / "b")
    assert forced["RPATH"] and not forced["RUNPATH"]
    assert forced["RPATH"] == default["RUNPATH"]
    with pytest.raises(TypeError):
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "c",
                                env={"FORCE_RPATH": 1})


def test_manywheel_bad_input(ext_wheel, tmp_path):
    # A missing input is FileNotFoundError (an io error with ENOENT), as
    # every missing input file is; it was a not_found LookupError.
    with pytest.raises(FileNotFoundError) as info:
        libpkg.driver.manywheel(tmp_path / "missing.whl", manywheel_config(),
                                out_dir=tmp_path / "o", runtime=False)
    assert info.value.code == "io" and "missing.whl" in info.value.file
    # libhelper.so.1 is nowhere to be found without lib_paths.
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                runtime=False)
    assert info.value.code == "not_found" and "libhelper.so.1" in str(info.value)
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.manywheel(ext_wheel, libpkg.config.parse("conda 3.11 cpu"),
                                out_dir=tmp_path / "o")
    assert info.value.code == "usage" and "conda" in info.value.message
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                cuda_table=tmp_path / "no-table.json")
    assert "no-table.json" in info.value.file
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                zip_level=12)
    assert info.value.code == "usage"
    with pytest.raises(TypeError):
        libpkg.driver.manywheel(ext_wheel, f"manywheel {PY} cpu", out_dir=tmp_path / "o")
    with pytest.raises(TypeError):
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                lib_paths="/usr/lib")
    with pytest.raises(TypeError):
        libpkg.driver.manywheel(ext_wheel, manywheel_config())  # out_dir is required
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_progress_exception_propagates(ext_wheel, ext_build, tmp_path):
    def boom(line):
        raise KeyError("stop: " + line)

    with pytest.raises(KeyError):
        libpkg.driver.manywheel(ext_wheel, manywheel_config(), out_dir=tmp_path / "o",
                                lib_paths=[str(ext_build["libdir"])], runtime=False,
                                progress=boom)


def test_wheel_python(ext_wheel):
    py = libpkg.driver.wheel_python(ext_wheel)
    assert py is not None and py.dotted == PY
    assert libpkg.driver.wheel_python("pure-1.0-py3-none-any.whl") is None


# -------------------------------------------------------------- libtorch

# 120 functions with std::string in torch:: (the census needs 100+ cxx11
# symbols to decide the ABI), exported from libtorch_cpu.so.
TORCH_CPP = "#include <string>\nnamespace torch {\n" + "".join(
    f"std::string op{i}(const std::string& s) {{ return s + \"{i}\"; }}\n" for i in range(120)
) + "}\n"


@pytest.fixture(scope="module")
def libtorch_tree(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("libtorch")
    tree = d / "tree"
    (tree / "lib").mkdir(parents=True)
    (tree / "include" / "torch").mkdir(parents=True)
    (tree / "include" / "torch" / "ops.h").write_text("#include <string>\nnamespace torch { std::string op0(const std::string&); }\n")
    (d / "torch.cpp").write_text(TORCH_CPP)
    sh(CXX, "-shared", "-fPIC", "-O1", "-g", "-D_GLIBCXX_USE_CXX11_ABI=1", "-o",
       tree / "lib" / "libtorch_cpu.so", d / "torch.cpp", "-Wl,-soname,libtorch_cpu.so")
    return tree


def libtorch_config(abi="cxx11"):
    return libpkg.config.parse("libtorch cpu").with_overrides(abi=abi, base_version="2.5.0")


def test_libtorch_tree_to_zip(libtorch_tree, tmp_path):
    before = digest(libtorch_tree)
    out = tmp_path / "out"
    s = libpkg.driver.libtorch(libtorch_tree, config=libtorch_config(), out_dir=out,
                               build_hash="0123abcd" * 5, runtime=False)
    assert s.passed, s.to_text(verbose=True)
    assert s.driver == "libtorch"
    roles = {a.role: a for a in s.artifacts}
    assert set(roles) == {"libtorch", "libtorch-latest"}
    main, latest = roles["libtorch"], roles["libtorch-latest"]
    assert main.checked and not latest.checked
    assert main.path.name == "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip"
    assert sorted(out.iterdir()) == sorted([main.path, latest.path])
    assert main.path.read_bytes() == latest.path.read_bytes()
    (report,) = s.checks
    assert report.artifact == main.path and report.find("cxx-abi").status == "pass"
    with zipfile.ZipFile(main.path) as z:
        assert z.testzip() is None
        assert z.read("libtorch/build-version").decode().strip() == s.config.version
        assert z.read("libtorch/build-hash").decode().strip() == "0123abcd" * 5
        assert "libtorch/include/torch/ops.h" in z.namelist()
        z.extract("libtorch/lib/libtorch_cpu.so", tmp_path / "x")
    dyn = readelf_dynamic(tmp_path / "x" / "libtorch/lib/libtorch_cpu.so")
    assert "$ORIGIN" in (dyn["RUNPATH"] or dyn["RPATH"] or "")
    assert digest(libtorch_tree) == before


def test_libtorch_wrong_abi_fails_the_check(libtorch_tree, tmp_path):
    s = libpkg.driver.libtorch(libtorch_tree, config=libtorch_config("pre-cxx11"),
                               out_dir=tmp_path / "out", build_hash="ab" * 20,
                               runtime=False, write_latest=False)
    assert not s.passed
    assert [a.role for a in s.artifacts] == ["libtorch"]
    assert s.checks[0].find("cxx-abi").status == "fail"


def test_libtorch_debug_split_and_hash_from_git(libtorch_tree, tmp_path):
    """debug_split writes debug-libtorch-...-<crc32>.zip with the .dbg file
    the stripped library's .gnu_debuglink names; the build hash comes from
    `git rev-parse HEAD` in `source`."""
    import re
    import zlib

    src = tmp_path / "src"
    src.mkdir()
    (src / "README").write_text("fixture\n")
    git = ["git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@example.org"]
    sh(*git, "init", "-q")
    sh(*git, "add", "README")
    sh(*git, "commit", "-q", "-m", "fixture")
    head = sh("git", "-C", src, "rev-parse", "HEAD").strip()

    out = tmp_path / "out"
    s = libpkg.driver.libtorch(libtorch_tree, config=libtorch_config(), out_dir=out, source=src,
                               debug_split=True, write_latest=False, runtime=False)
    assert s.passed, s.to_text(verbose=True)
    roles = {a.role: a for a in s.artifacts}
    assert set(roles) == {"libtorch", "debug-libtorch"}
    assert roles["libtorch"].checked and not roles["debug-libtorch"].checked
    m = re.fullmatch(r"debug-libtorch-cxx11-abi-shared-with-deps-2\.5\.0-([0-9a-f]{8})\.zip",
                     roles["debug-libtorch"].path.name)
    assert m, roles["debug-libtorch"].path.name
    with zipfile.ZipFile(roles["debug-libtorch"].path) as z:
        dbg = z.read("debug/libtorch_cpu.so.dbg")
    assert int(m.group(1), 16) == zlib.crc32(dbg)
    with zipfile.ZipFile(roles["libtorch"].path) as z:
        assert z.read("libtorch/build-hash").decode().strip() == head
        z.extract("libtorch/lib/libtorch_cpu.so", tmp_path / "x")
    lib = tmp_path / "x" / "libtorch/lib/libtorch_cpu.so"
    # Bytes: the dump shows the CRC after the name as raw bytes.
    dump = subprocess.run(["readelf", "--string-dump=.gnu_debuglink", str(lib)],
                          capture_output=True, check=True).stdout
    assert b"libtorch_cpu.so.dbg" in dump
    assert ".debug_info" not in sh("readelf", "-SW", lib)
    assert ".debug_info" in sh("readelf", "-SW", libtorch_tree / "lib" / "libtorch_cpu.so")


def test_libtorch_from_wheel(libtorch_tree, tmp_path):
    """A built torch wheel as the input: its torch/lib and torch/include
    become the zip's lib/ and include/."""
    from conftest import write_tree

    files = {"torch/__init__.py": b"",
             "torch/lib/libtorch_cpu.so": (libtorch_tree / "lib" / "libtorch_cpu.so").read_bytes(),
             "torch/include/torch/ops.h": (libtorch_tree / "include" / "torch" / "ops.h").read_bytes()}
    tree = write_tree(tmp_path / "wt", "torch", "2.5.0", "cp311-cp311-linux_x86_64", files)
    wheel = libpkg.wheel.pack(tree, tmp_path / "dist").path
    before = digest(wheel)
    out = tmp_path / "out"
    s = libpkg.driver.libtorch(wheel=wheel, config=libtorch_config(), out_dir=out,
                               build_hash="cd" * 20, write_latest=False, runtime=False)
    assert s.passed, s.to_text(verbose=True)
    assert any(line.startswith("input: wheel") for line in s.plan), s.plan
    (art,) = s.artifacts
    with zipfile.ZipFile(art.path) as z:
        names = set(z.namelist())
    assert {"libtorch/lib/libtorch_cpu.so", "libtorch/include/torch/ops.h"} <= names
    assert not any(n.startswith("libtorch/torch") or n.endswith("__init__.py") for n in names)
    assert digest(wheel) == before


CLIENT = ('#include <string>\nnamespace torch { std::string op0(const std::string&); }\n'
          'int main() { return torch::op0("x") == "%s" ? 0 : 1; }\n')


def test_libtorch_client_and_census_options(libtorch_tree, tmp_path):
    """client/link_libraries reach the link check (a client that fails at
    run time fails it); min_symbols and abi_libraries reach the census."""
    good, bad = tmp_path / "good.cpp", tmp_path / "bad.cpp"
    good.write_text(CLIENT % "x0")
    bad.write_text(CLIENT % "nope")
    s = libpkg.driver.libtorch(libtorch_tree, config=libtorch_config(), out_dir=tmp_path / "out",
                               build_hash="ab" * 20, write_latest=False, client=good,
                               link_libraries=["torch_cpu"], only=["cxx-abi", "link"])
    assert s.passed, s.to_text(verbose=True)
    assert s.checks[0].find("link").status == "pass"
    zip_path = s.artifacts[0].path

    r = libpkg.check.run(zip_path, package_type="libtorch", client=bad,
                         link_libraries=["torch_cpu"], only=["link"])
    assert r.find("link").status == "fail", r.to_text(verbose=True)
    # 120 cxx11 symbols: enough by default (100), not when 1000 are asked for.
    r = libpkg.check.run(zip_path, package_type="libtorch", cxx_abi="cxx11", runtime=False,
                         only=["cxx-abi"], min_symbols=1000)
    assert r.find("cxx-abi").status != "pass", r.to_text(verbose=True)
    r = libpkg.check.run(zip_path, package_type="libtorch", cxx_abi="cxx11", runtime=False,
                         only=["cxx-abi"], abi_libraries=["libnothing.so*"])
    assert r.find("cxx-abi").status != "pass", r.to_text(verbose=True)
    with pytest.raises(TypeError):
        libpkg.check.run(zip_path, link_libraries="torch_cpu")


def test_libtorch_bad_input(libtorch_tree, tmp_path):
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.libtorch(config=libtorch_config(), out_dir=tmp_path, build_hash="ab")
    assert info.value.code == "usage"
    # Missing inputs: FileNotFoundError naming them (they were usage errors,
    # a ValueError), for the tree, the wheel and the source checkout.
    with pytest.raises(FileNotFoundError) as info:
        libpkg.driver.libtorch(tmp_path / "no-tree", config=libtorch_config(),
                               out_dir=tmp_path / "o", build_hash="ab")
    assert info.value.code == "io" and info.value.file == str(tmp_path / "no-tree")
    assert "no such install tree" in info.value.message
    with pytest.raises(FileNotFoundError) as info:
        libpkg.driver.libtorch(wheel=tmp_path / "no.whl", config=libtorch_config(),
                               out_dir=tmp_path / "o", build_hash="ab")
    assert info.value.file == str(tmp_path / "no.whl")
    with pytest.raises(FileNotFoundError) as info:
        libpkg.driver.libtorch(libtorch_tree, config=libtorch_config(),
                               out_dir=tmp_path / "o", source=tmp_path / "no-src")
    assert info.value.file == str(tmp_path / "no-src")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OSError) as info:
        libpkg.driver.libtorch(tmp_path / "afile", config=libtorch_config(),
                               out_dir=tmp_path / "o", build_hash="ab")
    assert not isinstance(info.value, FileNotFoundError)
    assert "install tree is not a directory (a regular file)" in info.value.message
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.libtorch(libtorch_tree, config=manywheel_config(),
                               out_dir=tmp_path / "o", build_hash="ab")
    assert info.value.code == "usage"
    with pytest.raises(TypeError):
        libpkg.driver.libtorch(libtorch_tree, config=libtorch_config(), out_dir=tmp_path / "o",
                               include="libfoo.so")


# ----------------------------------------------------------------- conda

@pytest.fixture
def conda_prefix(libtorch_tree, tmp_path) -> Path:
    p = tmp_path / "prefix"
    (p / "lib").mkdir(parents=True)
    (p / "lib" / "libtorch_cpu.so").write_bytes((libtorch_tree / "lib" / "libtorch_cpu.so").read_bytes())
    (p / "bin").mkdir()
    (p / "bin" / "tool").write_text("#!/bin/sh\necho hi\n")
    (p / "bin" / "tool").chmod(0o755)
    return p


def conda_config():
    return libpkg.config.parse("conda 3.11 cpu").with_overrides(abi="cxx11", override_version="1.2.3")


def test_conda_prefix_to_packages(conda_prefix, tmp_path):
    before = digest(conda_prefix)
    out = tmp_path / "out"
    s = libpkg.driver.conda(conda_prefix, conda_config(), out_dir=out, runtime=False,
                            metadata={"license": "BSD-3-Clause", "depends": ["libgcc-ng >=12"]})
    assert s.passed, s.to_text(verbose=True)
    assert s.driver == "conda"
    roles = {a.role: a.path for a in s.artifacts}
    assert roles["conda-v2"].name == "pytorch-1.2.3-py3.11_cpu_0.conda"
    assert roles["conda"].name == "pytorch-1.2.3-py3.11_cpu_0.tar.bz2"
    assert sorted(out.iterdir()) == sorted(roles.values())
    assert [r.artifact for r in s.checks] == [a.path for a in s.artifacts]
    with tarfile.open(roles["conda"]) as t:
        index = json.load(t.extractfile("info/index.json"))
        assert "lib/libtorch_cpu.so" in t.getnames()
    assert (index["name"], index["version"], index["build"]) == ("pytorch", "1.2.3", "py3.11_cpu_0")
    assert index["license"] == "BSD-3-Clause"
    assert "libgcc-ng >=12" in index["depends"]
    assert any(d.startswith("python >=3.11") for d in index["depends"])  # injected pin
    with zipfile.ZipFile(roles["conda-v2"]) as z:
        names = z.namelist()
    assert "metadata.json" in names
    assert any(n.startswith("info-") and n.endswith(".tar.zst") for n in names)
    assert any(n.startswith("pkg-") and n.endswith(".tar.zst") for n in names)
    assert digest(conda_prefix) == before


def test_conda_metadata_file_and_one_format(conda_prefix, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"name": "demo-torch", "depends": ["zlib"]}))
    s = libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "out",
                            metadata=meta, formats=["tar.bz2"], inject_depends=False,
                            run_checks=False)
    (art,) = s.artifacts
    assert s.checks == [] and art.path.name == "demo-torch-1.2.3-py3.11_cpu_0.tar.bz2"
    with tarfile.open(art.path) as t:
        index = json.load(t.extractfile("info/index.json"))
    assert index["depends"] == ["zlib"]


def test_conda_dry_run_and_bad_input(conda_prefix, tmp_path):
    s = libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "dry", dry_run=True)
    assert s.dry_run and s.artifacts == [] and not (tmp_path / "dry").exists()
    assert any("pytorch-1.2.3-py3.11_cpu_0.conda" in line for line in s.plan)
    with pytest.raises(FileNotFoundError) as info:
        libpkg.driver.conda(tmp_path / "no-prefix", conda_config(), out_dir=tmp_path / "o")
    assert info.value.file == str(tmp_path / "no-prefix")
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "o",
                            formats=["zip"])
    assert info.value.code == "usage"
    with pytest.raises(libpkg.Error) as info:
        libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "o",
                            metadata={"nmae": "typo"})
    assert info.value.code == "format"
    with pytest.raises(TypeError):
        libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "o", metadata=3)
    with pytest.raises(TypeError):
        libpkg.driver.conda(conda_prefix, conda_config(), out_dir=tmp_path / "o",
                            formats="conda")
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


# ----------------------------------------------------------- wheel_macos

@pytest.fixture(scope="module")
def torchlike_macos(tmp_path_factory):
    """The torch-like arm64 wheel of tests/bundle/macos_fixtures.sh, linked
    here with clang-14 + ld64.lld: libtorchlike loads libomp by its Homebrew
    install name (found through a library path) and the wheel ships
    torch/lib/libomp.dylib."""
    d = tmp_path_factory.mktemp("macos")
    src = os.environ["LIBPKG_SOURCE_DIR"]
    sh("bash", "-c", 'source "$1/tests/bundle/macos_fixtures.sh" && '
       'build_torchlike "$2" arm64-apple-macos11 arm64-apple-macos11', "-", src, d / "t")
    return d / "t"


def test_wheel_macos_one_libomp_and_name(torchlike_macos, tmp_path):
    wheel = torchlike_macos / "dist" / "torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl"
    config = libpkg.config.parse("wheel 3.11 cpu macos arm64")
    dry = libpkg.driver.wheel_macos(wheel, config, out_dir=tmp_path / "dry", dry_run=True,
                                    lib_paths=[str(torchlike_macos / "brew")])
    assert dry.dry_run and not dry.artifacts and not (tmp_path / "dry").exists()
    s = libpkg.driver.wheel_macos(wheel, config, out_dir=tmp_path / "out",
                                  lib_paths=[str(torchlike_macos / "brew")])
    assert s.passed and s.driver == "wheel_macos", s.to_text(verbose=True)
    (art,) = s.artifacts
    assert art.path.name == "torch-2.5.0-cp311-none-macosx_11_0_arm64.whl"
    with zipfile.ZipFile(art.path) as z:
        assert [n for n in z.namelist() if "libomp" in n] == ["torch/lib/libomp.dylib"]
        assert "Tag: cp311-none-macosx_11_0_arm64" in z.read("torch-2.5.0.dist-info/WHEEL").decode()
    (report,) = s.checks
    assert report.find("runtimes").status == "pass"
    assert s.to_dict()["schema"] == "libpkg-driver/1"
    with pytest.raises(libpkg.Error):
        libpkg.driver.wheel_macos(wheel, libpkg.config.parse(f"manywheel {PY} cpu"), out_dir=tmp_path / "x")
