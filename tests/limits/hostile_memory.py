# SPDX-License-Identifier: BSD-3-Clause
"""What an input can make us allocate is bounded, and over the bound the
error names the file (never a bare std::bad_alloc).

Crafted with Python's zipfile: a .conda whose pkg component is deflated
(the zip format allows it) and inflates to 600 MiB (zstd magic, then zeros:
a ~600 KiB file), and a wheel whose deflated RECORD declares 600 MiB. Each
pkgtool command runs under an address-space limit of 400 MiB
(RLIMIT_AS, as `ulimit -v` sets) and must exit 2 with `error: FILE: ...`
(wheel verify: exit 1 with a finding naming the wheel and the bound); a
reader that inflates the member into memory dies with bad_alloc there.
Every run also has its peak RSS checked (200 MiB above start-up; under
ASan, whose shadow memory cannot start under RLIMIT_AS, that check alone).
"""
import os
import resource
import subprocess
import sys
import tempfile
import zipfile

PKGTOOL = os.environ["PKGTOOL"]
MIB = 1024 * 1024
LIMIT = 400 * MIB
BIG = 600 * MIB
failures = []


# An ASan build reserves terabytes of address space for its shadow memory
# and cannot start under RLIMIT_AS: there the peak RSS bound alone applies.
SANITIZED = "libasan" in subprocess.run(["ldd", PKGTOOL], capture_output=True,
                                        text=True).stdout


def limited():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def peak_rss_kib(cmd):
    pid = os.fork()
    if pid == 0:
        limited()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss


BASE_RSS = None


def add_deflated_zeros(z, name, prefix=b""):
    info = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with z.open(info, "w", force_zip64=True) as f:
        f.write(prefix)
        chunk = bytes(8 * MIB)
        left = BIG - len(prefix)
        while left > 0:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n


def run(what, cmd, path, status=2):
    """`status` 2: `error: FILE: ...` on stderr; 1: a verify finding naming
    the file on stdout."""
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limited)
    # Memory: at most 200 MiB above what `pkgtool --version` needs (a
    # sanitized build has ~80 MiB of runtime before it reads a byte); the
    # member inflated into memory needed 600 MiB.
    rss = peak_rss_kib(cmd) - BASE_RSS
    if rss > 200 * 1024:
        failures.append(f"{what}: peak RSS {rss} KiB above start-up, "
                        "expected < 200 MiB")
    err = (p.stderr if status == 2 else p.stdout).strip()
    if status == 1:
        err = "error: " + "\n".join(l for l in err.splitlines() if "more than" in l)
    name = os.path.basename(path)
    if p.returncode != status:
        failures.append(f"{what}: exit {p.returncode}, expected {status}: "
                        f"{p.stdout} {p.stderr}")
    elif not err.startswith("error: ") or name not in err.splitlines()[0]:
        failures.append(f"{what}: error does not name {name}: {err}")
    elif "bad_alloc" in err:
        failures.append(f"{what}: bad_alloc: {err}")
    else:
        print(f"ok: {what}: {err.splitlines()[0]}")


BASE_RSS = peak_rss_kib([PKGTOOL, "--version"])
with tempfile.TemporaryDirectory() as tmp:
    conda = os.path.join(tmp, "bomb-1-0.conda")
    with zipfile.ZipFile(conda, "w") as z:
        z.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
        add_deflated_zeros(z, "pkg-bomb-1-0.tar.zst", b"\x28\xb5\x2f\xfd")
        z.writestr("info-bomb-1-0.tar.zst", b"")
    print(f"{conda}: {os.path.getsize(conda)} bytes")
    run("conda verify", [PKGTOOL, "conda", "verify", conda], conda)
    run("conda extract", [PKGTOOL, "conda", "extract", conda, "-d",
                          os.path.join(tmp, "out")], conda)
    if os.path.exists(os.path.join(tmp, "out")):
        failures.append("conda extract left its target behind")

    wheel = os.path.join(tmp, "bomb-1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("bomb/__init__.py", "")
        z.writestr("bomb-1.0.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: bomb\nVersion: 1.0\n")
        z.writestr("bomb-1.0.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
                   "Tag: py3-none-any\n")
        add_deflated_zeros(z, "bomb-1.0.dist-info/RECORD")
    run("wheel verify", [PKGTOOL, "wheel", "verify", wheel], wheel, status=1)

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("PASS")
