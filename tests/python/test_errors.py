"""Bad input from Python: clear exceptions, never a crash."""

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
