# SPDX-License-Identifier: BSD-3-Clause
"""Bad input from Python: clear exceptions, never a crash."""

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import libpkg


def test_error_is_an_exception_with_structured_fields(tmp_path):
    missing = tmp_path / "nope.so"
    with pytest.raises(libpkg.Error) as info:
        libpkg.elf.open(missing)
    e = info.value
    assert isinstance(e, Exception)
    assert e.code == "io"
    assert e.file == str(missing)
    assert e.offset is None
    assert str(missing) in str(e) and e.message in str(e)


def test_format_error_carries_offset(tmp_path):
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"\x7fELF" + b"\x02\x01\x01" + b"\0" * 9 + b"\xff" * 20)
    with pytest.raises(libpkg.Error) as info:
        libpkg.elf.open(bad).needed
    assert info.value.code in ("format", "unsupported")
    assert info.value.file == str(bad)


def test_not_an_elf_file(tmp_path):
    text = tmp_path / "text.so"
    text.write_text("just text, long enough to hold an ELF header if it were one\n" * 2)
    with pytest.raises(libpkg.Error) as info:
        libpkg.elf.open(text)
    assert info.value.code == "format"
    assert isinstance(info.value.offset, int)


@pytest.mark.parametrize("call", [
    lambda: libpkg.elf.open(42),
    lambda: libpkg.elf.open(None),
    lambda: libpkg.wheel.open(b"\0"),
    lambda: libpkg.wheel.pack("a"),
    lambda: libpkg.config.parse(3.11),
    lambda: libpkg.cuda.list(root=[]),
    lambda: libpkg.check.run("x", only="integrity"),
    lambda: libpkg.repair.analyze("x.whl", lib_paths=[1, 2]),
    lambda: libpkg.conda.pack(".", 12),
    lambda: libpkg.config.nightly_version("2.5.0", day="today"),
])
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_corrupt_wheel(tmp_path, pure_wheel):
    data = pure_wheel.read_bytes()
    broken = tmp_path / pure_wheel.name
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(libpkg.Error) as info:
        libpkg.wheel.open(broken)
    assert info.value.code == "format"
    assert info.value.file.endswith(pure_wheel.name)


def test_bad_wheel_name(tmp_path):
    p = tmp_path / "not-a-wheel.whl"
    p.write_bytes(b"")
    with pytest.raises(libpkg.Error) as info:
        libpkg.wheel.open(p)
    assert info.value.code == "format"


def test_corrupt_conda(tmp_path):
    p = tmp_path / "pkg-1.0-0.conda"
    p.write_bytes(b"PK\x03\x04 this is not a zip")
    with pytest.raises(libpkg.Error):
        libpkg.conda.verify(p)
    missing = tmp_path / "missing-1.0-0.tar.bz2"
    with pytest.raises(libpkg.Error) as info:
        libpkg.conda.extract(missing, tmp_path / "out")
    assert info.value.file == str(missing)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_usage_errors():
    with pytest.raises(libpkg.Error) as info:
        libpkg.config.parse("manywheel 3.11 cu999x")
    assert info.value.code == "usage"
    with pytest.raises(libpkg.Error):
        libpkg.config.parse_accelerator("gpu")


@pytest.fixture
def junk(tmp_path):
    """Random bytes under names that ask for every kind of parser."""
    data = bytes(range(256)) * 3
    files = {}
    for name in ("junk-1.0-py3-none-any.whl", "junk-1.0-0.conda", "junk-1.0-0.tar.bz2", "empty.so"):
        p = tmp_path / name
        p.write_bytes(b"" if name == "empty.so" else data)
        files[name] = p
    return files


@pytest.mark.parametrize("name,call", [
    ("empty.so", lambda p, d: libpkg.elf.open(p)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.wheel.open(p)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.wheel.verify(p)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.wheel.unpack(p, d)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.show(p)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.repair.analyze(p)),
    ("junk-1.0-py3-none-any.whl", lambda p, d: libpkg.check.run(p, runtime=False)),
    ("junk-1.0-0.conda", lambda p, d: libpkg.conda.verify(p)),
    ("junk-1.0-0.conda", lambda p, d: libpkg.conda.extract(p, d)),
    ("junk-1.0-0.tar.bz2", lambda p, d: libpkg.conda.extract(p, d)),
    ("junk-1.0-0.tar.bz2", lambda p, d: libpkg.conda.verify(p)),
])
def test_garbage_input_raises_error_naming_the_file(junk, tmp_path, name, call):
    with pytest.raises(libpkg.Error) as info:
        call(junk[name], tmp_path / "out")
    assert name in str(info.value)
    assert info.value.code in ("format", "io", "usage")


# --- one subclass per code, each also the matching built-in ----------------

def test_missing_file_is_file_not_found_and_oserror(tmp_path):
    missing = tmp_path / "nope.so"
    with pytest.raises(FileNotFoundError) as info:
        libpkg.elf.open(missing)
    e = info.value
    assert isinstance(e, libpkg.MissingFileError)
    assert isinstance(e, libpkg.IoError) and isinstance(e, libpkg.Error)
    assert isinstance(e, OSError)
    assert e.code == "io"
    assert e.errno == errno.ENOENT
    assert e.filename == str(missing)
    assert str(missing) in str(e)


def test_directory_is_an_oserror_but_not_file_not_found(tmp_path):
    with pytest.raises(OSError) as info:
        libpkg.elf.open(tmp_path).needed
    assert isinstance(info.value, libpkg.Error)
    assert not isinstance(info.value, FileNotFoundError)


def test_corrupt_input_is_a_value_error(tmp_path):
    text = tmp_path / "text.so"
    text.write_text("just text, long enough to hold an ELF header if it were one\n" * 2)
    with pytest.raises(ValueError) as info:
        libpkg.elf.open(text)
    assert type(info.value) is libpkg.FormatError
    assert info.value.code == "format"
    assert not isinstance(info.value, OSError)


def test_usage_error_is_a_value_error():
    with pytest.raises(libpkg.UsageError) as info:
        libpkg.config.parse("manywheel 3.11 cu999x")
    assert isinstance(info.value, ValueError)
    assert info.value.code == "usage"


def test_every_code_has_its_class():
    expected = {
        libpkg.IoError: (OSError,),
        libpkg.MissingFileError: (libpkg.IoError, FileNotFoundError),
        libpkg.AccessError: (libpkg.IoError, PermissionError),
        libpkg.FormatError: (ValueError,),
        libpkg.UnsupportedError: (ValueError,),
        libpkg.UsageError: (ValueError,),
        libpkg.NotFoundError: (LookupError,),
    }
    for cls, bases in expected.items():
        assert issubclass(cls, libpkg.Error), cls
        for b in bases:
            assert issubclass(cls, b), (cls, b)
        assert cls.__module__ == "libpkg"


def test_permission_denied_is_permission_error():
    """Run as an unprivileged user (root reads anything), a file without read
    permission raises AccessError / PermissionError. The module is copied to a
    world-readable directory first: the suite's venv lives in a 0700 temp dir."""
    drop = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root"
        drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    site = Path(libpkg.__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="libpkg-perm-") as tmp:
        tmp = Path(tmp)
        os.chmod(tmp, 0o755)
        for entry in site.iterdir():
            if entry.name.startswith("libpkg") and entry.is_dir():
                shutil.copytree(entry, tmp / entry.name)
        secret = tmp / "secret.so"
        secret.write_bytes(b"\x7fELF" + b"\0" * 60)
        secret.chmod(0o000)
        code = (
            "import sys, libpkg\n"
            "try:\n"
            "    libpkg.elf.open(sys.argv[1])\n"
            "except PermissionError as e:\n"
            "    assert isinstance(e, libpkg.AccessError) and e.code == 'io', e\n"
            "    print('permission-error', e.errno)\n"
        )
        env = dict(os.environ, PYTHONPATH=str(tmp))
        python = os.path.realpath(sys.executable)
        p = subprocess.run(drop + [python, "-c", code, str(secret)], capture_output=True,
                           text=True, env=env, cwd=tmp)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["permission-error", str(errno.EACCES)]
