# SPDX-License-Identifier: BSD-3-Clause
"""Writes a small valid pure-Python wheel (a nightly job's artifact in the
tests): make_wheel.py OUTDIR PROJECT VERSION [--bad-metadata]."""
import base64
import hashlib
import os
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    out, project, version = sys.argv[1:4]
    bad = "--bad-metadata" in sys.argv
    dist = f"{project}-{version}.dist-info"
    files = {
        f"{project}/__init__.py": f"__version__ = {version!r}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: nightly-test\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if not bad:
        files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: {project}\n"
                                     f"Version: {version}\nRequires-Python: >=3.8\n\n").encode()
    record = [record_line(n, d) for n, d in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{project}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)


main()
