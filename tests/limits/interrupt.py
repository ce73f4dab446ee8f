# SPDX-License-Identifier: BSD-3-Clause
"""SIGINT/SIGTERM during wheel unpack, conda extract and show leave no
scratch behind; a SIGKILL's leftovers are recognisable and the next run
removes them.

Fixtures, built here: a shared library with a 300 MiB section of random
bytes (gcc, objcopy), in a wheel (Python's zipfile) and in a .conda
(zipfile, tarfile, zstandard); for show, a wheel of 4000 small libraries. Each command is started, signalled as soon as
its scratch directory (`DEST/.NAME.extract-pid<PID>-*` or
`$TMPDIR/libpkg-repair-pid<PID>-*`) appears, and must die by that signal
(a shell reports 128+N: 130/143) with no scratch and no partial target left.
After a SIGKILL the scratch must still be there, carrying the dead pid, and
a complete second run must remove it.
"""
import base64
import glob
import hashlib
import io
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

import zstandard

PKGTOOL = os.environ["PKGTOOL"]
failures = []


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + digest.rstrip(b"=").decode()


def build_fixtures(tmp):
    src = os.path.join(tmp, "f.c")
    with open(src, "w") as f:
        f.write("int f(void) { return 1; }\n")
    small, big = os.path.join(tmp, "libf.so"), os.path.join(tmp, "big.so")
    blob = os.path.join(tmp, "blob.bin")
    with open(blob, "wb") as f:
        f.write(os.urandom(300 << 20))
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", small, src], check=True)
    subprocess.run(["objcopy", "--add-section", ".blob=" + blob, small, big],
                   check=True)
    os.unlink(blob)
    with open(big, "rb") as f:
        lib = f.read()
    files = {
        "big/__init__.py": b"",
        "big/libbig.so": lib,
        "big-1.0.dist-info/METADATA":
            b"Metadata-Version: 2.1\nName: big\nVersion: 1.0\n",
        "big-1.0.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
            b"Tag: py3-none-linux_x86_64\n",
    }
    wheel = os.path.join(tmp, "big-1.0-py3-none-linux_x86_64.whl")
    with zipfile.ZipFile(wheel, "w") as z:
        rows = []
        for name, data in files.items():
            z.writestr(name, data)
            rows.append(f"{name},{record_hash(data)},{len(data)}")
        rows.append("big-1.0.dist-info/RECORD,,")
        z.writestr("big-1.0.dist-info/RECORD", "\n".join(rows) + "\n")

    def tar_zst(members):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as t:
            for name, data in members:
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
        return zstandard.ZstdCompressor(level=1).compress(buf.getvalue())

    conda = os.path.join(tmp, "big-1.0-0.conda")
    with zipfile.ZipFile(conda, "w") as z:
        z.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
        z.writestr("pkg-big-1.0-0.tar.zst", tar_zst([("lib/libbig.so", lib)]))
        z.writestr("info-big-1.0-0.tar.zst", tar_zst(
            [("info/index.json", b'{"name":"big","version":"1.0"}')]))
    # show reads ELF members in place (no extraction), so one library is
    # analysed in milliseconds and its scratch may come and go between two
    # polls: show gets a wheel of many small deflated libraries instead, each
    # laid out in the scratch, which keeps it busy long enough to signal.
    with open(small, "rb") as f:
        small_lib = f.read()
    many = {f"many/libm{i}.so": small_lib for i in range(4000)}
    many["many/__init__.py"] = b""
    many["many-1.0.dist-info/METADATA"] = (
        b"Metadata-Version: 2.1\nName: many\nVersion: 1.0\n")
    many["many-1.0.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
        b"Tag: py3-none-linux_x86_64\n")
    show_wheel = os.path.join(tmp, "many-1.0-py3-none-linux_x86_64.whl")
    with zipfile.ZipFile(show_wheel, "w", zipfile.ZIP_DEFLATED) as z:
        rows = []
        for name, data in many.items():
            z.writestr(name, data)
            rows.append(f"{name},{record_hash(data)},{len(data)}")
        rows.append("many-1.0.dist-info/RECORD,,")
        z.writestr("many-1.0.dist-info/RECORD", "\n".join(rows) + "\n")
    return wheel, conda, show_wheel


def wait_for(pattern, proc, seconds=30):
    end = time.time() + seconds
    while time.time() < end and proc.poll() is None:
        found = glob.glob(pattern)
        if found:
            return found
        time.sleep(0.005)
    return []


def interrupt(what, cmd, scratch_pattern, leftovers_pattern, sig, env=None):
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    seen = wait_for(scratch_pattern, proc)
    if not seen:
        proc.kill()
        proc.wait()
        failures.append(f"{what}: no scratch matching {scratch_pattern}")
        return []
    proc.send_signal(sig)
    rc = proc.wait()
    left = [p for pat in leftovers_pattern for p in glob.glob(pat)]
    if rc != -sig:
        failures.append(f"{what}: {sig.name}: status {rc}, expected death by "
                        f"{sig.name} (shell: {128 + sig})")
    elif sig != signal.SIGKILL and left:
        failures.append(f"{what}: {sig.name} left {left}")
    else:
        print(f"ok: {what}: {sig.name} -> {rc}, left {left}")
    return left


with tempfile.TemporaryDirectory() as tmp:
    wheel, conda, show_wheel = build_fixtures(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    cases = [
        ("wheel unpack", [PKGTOOL, "wheel", "unpack", wheel, "-d",
                          os.path.join(tmp, "u")],
         os.path.join(tmp, "u", ".big-1.0.extract-pid*"),
         [os.path.join(tmp, "u", "*"), os.path.join(tmp, "u", ".*")]),
        ("conda extract", [PKGTOOL, "conda", "extract", conda, "-d",
                           os.path.join(tmp, "c")],
         os.path.join(tmp, ".c.extract-pid*"),
         [os.path.join(tmp, "c"), os.path.join(tmp, ".c.*")]),
        # The fixture's library needs nothing from libc (so no libc NEEDED):
        # --libc says what show can't tell from the binaries.
        ("show", [PKGTOOL, "show", "--libc", "glibc", show_wheel],
         os.path.join(tmp, "libpkg-repair-pid*"),
         [os.path.join(tmp, "libpkg-*")]),
    ]
    for what, cmd, scratch, leftovers in cases:
        for sig in (signal.SIGTERM, signal.SIGINT):
            interrupt(what, cmd, scratch, leftovers, sig, env)
        left = interrupt(what, cmd, scratch, [scratch], signal.SIGKILL, env)
        if not left:
            failures.append(f"{what}: SIGKILL left no scratch to test with")
            continue
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        still = [p for p in left if os.path.exists(p)]
        if still:
            failures.append(f"{what}: the next run left the stale {still}")
        else:
            print(f"ok: {what}: stale {left} removed by the next run")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("PASS")
