# SPDX-License-Identifier: BSD-3-Clause
"""Extraction writes at most 200 times the archive's size (or 256 MiB).

Deflate cannot beat about 1032:1, so the reader's per-member ratio cap
(1100:1) never triggers: before this bound a 280 KiB zip of zeros unpacked
to 280 MiB, and a 1 MiB wheel to a GiB. Crafted with Python's zipfile: a zip
and a wheel (valid RECORD) holding 280 MiB of zeros. `zip extract` and
`wheel unpack` must refuse them with exit 2, `error: FILE: ...` naming the
bound and writing nothing; `--max-expansion` (0: no bound) lets them through,
and an ordinary archive is unaffected.
"""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import Checks  # noqa: E402

PKGTOOL = os.environ["PKGTOOL"]
SIZE = 280 << 20
checks = Checks()


def zeros_member(z, name):
    info = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    h = hashlib.sha256()
    chunk = bytes(8 << 20)
    with z.open(info, "w") as f:
        for _ in range(SIZE // len(chunk)):
            f.write(chunk)
            h.update(chunk)
    return "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


def expect(what, cmd, status, out_dir, needle=None):
    p = subprocess.run(cmd, capture_output=True, text=True)
    first = (p.stderr.splitlines() or [""])[0]
    if p.returncode != status:
        checks.fail(f"{what}: exit {p.returncode}, expected {status}: {p.stderr}")
    elif needle and not (first.startswith("error: ") and needle in first
                         and "more than 200 times" in first):
        checks.fail(f"{what}: error should name {needle} and the bound: {first}")
    elif status != 0 and os.path.exists(out_dir):
        checks.fail(f"{what}: refused but wrote {out_dir}")
    else:
        checks.check(True, what)
        print(f"ok: {what}: {first or 'exit 0'}")


with tempfile.TemporaryDirectory() as tmp:
    bomb = os.path.join(tmp, "bomb.zip")
    with zipfile.ZipFile(bomb, "w") as z:
        zeros_member(z, "zeros.bin")
    wheel = os.path.join(tmp, "bomb-1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w") as z:
        rows = [f"bomb/zeros.bin,{zeros_member(z, 'bomb/zeros.bin')},{SIZE}"]
        for name, text in [
                ("bomb-1.0.dist-info/METADATA",
                 "Metadata-Version: 2.1\nName: bomb\nVersion: 1.0\n"),
                ("bomb-1.0.dist-info/WHEEL",
                 "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
                 "Tag: py3-none-any\n")]:
            z.writestr(name, text)
            digest = base64.urlsafe_b64encode(
                hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
            rows.append(f"{name},sha256={digest},{len(text)}")
        rows.append("bomb-1.0.dist-info/RECORD,,")
        z.writestr("bomb-1.0.dist-info/RECORD", "\n".join(rows) + "\n")
    small = os.path.join(tmp, "small.zip")
    with zipfile.ZipFile(small, "w") as z:
        z.writestr("a.txt", "hello\n" * 1000)
    print(f"bomb.zip {os.path.getsize(bomb)} bytes, wheel {os.path.getsize(wheel)}")

    out = os.path.join(tmp, "x")
    expect("zip extract refuses", [PKGTOOL, "zip", "extract", bomb, "-d", out],
           2, out, "bomb.zip")
    expect("wheel unpack refuses", [PKGTOOL, "wheel", "unpack", wheel, "-d", out],
           2, os.path.join(out, "bomb-1.0"), "bomb-1.0-py3-none-any.whl")
    expect("zip extract of an ordinary zip", [PKGTOOL, "zip", "extract", small,
                                               "-d", os.path.join(tmp, "s")], 0, None)
    expect("zip extract --max-expansion 0", [PKGTOOL, "zip", "extract", bomb, "-d",
                                             out, "--max-expansion", "0"], 0, None)
    checks.eq("--max-expansion 0: size of zeros.bin", os.path.getsize(os.path.join(out, "zeros.bin")), SIZE)
    expect("wheel unpack --max-expansion 2000",
           [PKGTOOL, "wheel", "unpack", wheel, "-d", os.path.join(tmp, "w"),
            "--max-expansion", "2000"], 0, None)

checks.finish()
