# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for tar_read_fuzzer, written at test time with Python's
tarfile: plain, gzip, bzip2 and xz tars holding a file, a directory, a
symlink, a hardlink and a long (pax) name; and the zstd-compressed tar a
.conda package holds (pkg-*.tar.zst, info-*.tar.zst)."""
import io
import sys
import tarfile

import zstandard

out = sys.argv[1]
for mode in ("w", "w:gz", "w:bz2", "w:xz"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as t:
        data = b"hello\n" * 10
        f = tarfile.TarInfo("info/index.json")
        f.size = len(data)
        t.addfile(f, io.BytesIO(data))
        d = tarfile.TarInfo("lib")
        d.type = tarfile.DIRTYPE
        t.addfile(d)
        s = tarfile.TarInfo("lib/link")
        s.type, s.linkname = tarfile.SYMTYPE, "../info/index.json"
        t.addfile(s)
        h = tarfile.TarInfo("lib/hard")
        h.type, h.linkname = tarfile.LNKTYPE, "info/index.json"
        t.addfile(h)
        long = tarfile.TarInfo("x/" + "n" * 200 + "\u00e9")
        long.size = 1
        t.addfile(long, io.BytesIO(b"y"))
    name = mode.replace(":", "-")
    with open(f"{out}/seed-{name}.tar", "wb") as fh:
        fh.write(buf.getvalue())
    if mode == "w":
        with open(f"{out}/seed-zst.tar.zst", "wb") as fh:
            fh.write(zstandard.ZstdCompressor().compress(buf.getvalue()))
