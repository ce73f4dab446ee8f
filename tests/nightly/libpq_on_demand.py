#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""libpq is loaded when the PostgreSQL stats store is first used, not by every
libpkg program at start (libpkg/src/nightly/libpq_loader.hpp):

- pkgtool, check_binary, the drivers and the Python extension do not NEED
  libpq.so.5 (readelf -d, cross-checked with LIEF);
- `pkgtool --version`, `check_binary --help`, a SQLite stats query and
  `import libpkg` do not load it (LD_DEBUG=files); a postgresql:// store
  does, by dlopen ("dynamically loaded");
- with libpq.so.5 unusable (the real file hidden under /dev/null in a
  private mount namespace, so the loader's real search path is exercised,
  no test-only switch) the programs start and work, and the PostgreSQL
  store fails with one line naming --stats-url and libpq.so.5, exit 2,
  the password not printed; the same with a libpq.so.5 built here that
  lacks most functions (an old or foreign libpq).

The store on a real PostgreSQL 15 server is nightly_stats_postgresql."""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
from testlib import case, check, finish, missing, readelf_dynamic, require_tools, run  # noqa: E402

PKGTOOL = os.environ["PKGTOOL"]
PROGRAMS = [p for p in os.environ.get("LIBPKG_PROGRAMS", "").split(":") if p]
PY_MODULE = os.environ.get("LIBPKG_PYTHON_MODULE")
LIEF_DUMP = os.environ.get("LIEF_DUMP")
PY = os.environ.get("LIBPKG_PYTHON", "/usr/bin/python3")
PASSWORD = "hunter2-secret"
# Port 1 on the loopback: nothing listens, the connection is refused at once.
PG_URL = f"postgresql://ci:{PASSWORD}@127.0.0.1:1/stats"

require_tools("readelf", "unshare", "mount", "cc")
# A build configured without the bindings (the sanitizer pass of
# scripts/test.sh) has no module to check; any other build must name it.
BINDINGS = os.environ.get("LIBPKG_PYTHON_BINDINGS") != "OFF"
if len(PROGRAMS) < 6 or (BINDINGS and not PY_MODULE) or not LIEF_DUMP:
    missing("LIBPKG_PROGRAMS (6 programs), LIBPKG_PYTHON_MODULE and LIEF_DUMP from ctest")
MODULES = [PY_MODULE] if BINDINGS else []
PYTHONPATH = str(Path(PY_MODULE).parent.parent) if BINDINGS else ""
CHECK_BINARY = next(p for p in PROGRAMS if Path(p).name == "check_binary")


def real_libpq() -> str:
    """The file the dynamic loader opens for libpq.so.5 (its own search)."""
    code = ("import ctypes; ctypes.CDLL('libpq.so.5'); "
            "print([l.split()[-1] for l in open('/proc/self/maps') if 'libpq.so' in l][0])")
    p = run([PY, "-c", code], expect=0)
    return os.path.realpath(p.stdout.strip())


def loaded_files(argv, env=None) -> list:
    """The shared objects the dynamic loader opened running argv, with how
    ("needed by", "dynamically loaded by"), from LD_DEBUG=files."""
    e = dict(os.environ, LD_DEBUG="files", **(env or {}))
    p = subprocess.run(argv, capture_output=True, text=True, env=e)
    return re.findall(r"file=(\S+) \[\d+\];\s+(needed by|dynamically loaded by)", p.stderr)


def names(files) -> list:
    return [Path(f).name for f, _ in files]


@case
def no_program_needs_libpq():
    for path in PROGRAMS + MODULES:
        needed = readelf_dynamic(path)["NEEDED"]
        check("libc.so.6" in needed, f"{path}: readelf shows no NEEDED at all: {needed}")
        check(not any(n.startswith("libpq.so") for n in needed),
              f"{path} NEEDS libpq: {needed}")


@case
def lief_agrees():
    # LIEF 0.9 parses whole files (seconds each): pkgtool, check_binary, a
    # driver and the Python extension.
    some = [PKGTOOL, CHECK_BINARY, PROGRAMS[2], *MODULES]
    dumped = json.loads(run([LIEF_DUMP, *some], expect=0).stdout)
    for path, d in zip(some, dumped):
        check(d["needed"] == readelf_dynamic(path)["NEEDED"],
              f"{path}: LIEF {d['needed']} != readelf")
        check(not any(n.startswith("libpq.so") for n in d["needed"]),
              f"{path} NEEDS libpq (LIEF): {d['needed']}")


@case
def startup_does_not_load_libpq():
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "pkgtool --version": [PKGTOOL, "--version"],
            "check_binary --help": [CHECK_BINARY, "--help"],
            "stats query on SQLite": [PKGTOOL, "stats", "query", "--stats-url",
                                      f"{tmp}/none.db", "SELECT 1"],
        }
        if BINDINGS:
            runs["import libpkg"] = [PY, "-c", "import libpkg"]
        for what, argv in runs.items():
            files = loaded_files(argv, {"PYTHONPATH": PYTHONPATH})
            # The LD_DEBUG output is read: libstdc++ is always there.
            check("libstdc++.so.6" in names(files), f"{what}: no LD_DEBUG output: {files}")
            check(not any(n.startswith("libpq.so") for n in names(files)),
                  f"{what} loads libpq: {names(files)}")


@case
def postgresql_store_loads_libpq_by_dlopen():
    files = loaded_files([PKGTOOL, "stats", "query", "--stats-url", PG_URL, "SELECT 1"])
    how = [h for f, h in files if Path(f).name == "libpq.so.5"]
    check(how == ["dynamically loaded by"], f"libpq.so.5 not dlopen()ed once: {files}")


def without_libpq(replacement, argv, env=None):
    """Runs argv in a private mount namespace where the loader's libpq.so.5
    is `replacement` (bind-mounted over the real file)."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-Urm"]
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    e = dict(os.environ, **(env or {}))
    return subprocess.run([*unshare, "sh", "-c", script, "sh", replacement, real_libpq(),
                           *map(str, argv)], capture_output=True, text=True, env=e)


def one_line_error(p, *needles):
    check(p.returncode == 2, f"exit {p.returncode}, expected 2: {p.stdout}{p.stderr}")
    check(p.stderr.startswith("error: ") and p.stderr.count("\n") == 1,
          f"not one error line: {p.stderr!r}")
    for n in needles:
        check(n in p.stderr, f"{n!r} not in {p.stderr!r}")
    check(PASSWORD not in p.stdout + p.stderr, f"the password was printed: {p.stderr!r}")


@case
def programs_start_without_libpq():
    p = without_libpq("/dev/null", [PKGTOOL, "--version"])
    check(p.returncode == 0 and p.stdout.startswith("pkgtool "),
          f"pkgtool --version without libpq: exit {p.returncode}\n{p.stdout}{p.stderr}")
    # The namespace really hides it: a program that NEEDS libpq cannot start.
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "needs_pq.c")
        src.write_text("int PQlibVersion(void);\nint main(void) { return PQlibVersion() > 0 ? 0 : 1; }\n")
        exe = Path(tmp, "needs_pq")
        run(["cc", src, "-o", exe, f"-l:{Path(real_libpq()).name}",
             f"-L{Path(real_libpq()).parent}"], expect=0)
        run([exe], expect=0)
        p = without_libpq("/dev/null", [exe])
        check(p.returncode != 0 and "libpq.so.5" in p.stderr,
              f"a program needing libpq started with libpq hidden: {p.returncode} {p.stderr!r}")
        imports = [[PY, "-c", "import libpkg; print(libpkg.__name__)"]] if BINDINGS else []
        for argv in [[CHECK_BINARY, "--help"], *imports]:
            p = without_libpq("/dev/null", argv, {"PYTHONPATH": PYTHONPATH})
            check(p.returncode == 0, f"{argv[-1]} without libpq: exit {p.returncode}\n{p.stderr}")
        # SQLite stores work as before.
        p = without_libpq("/dev/null", [PKGTOOL, "stats", "query", "--stats-url",
                                        f"{tmp}/none.db", "SELECT 1"])
        check(p.returncode == 2 and "no such database" in p.stderr,
              f"SQLite store without libpq: {p.returncode} {p.stderr!r}")


@case
def postgresql_store_without_libpq_is_one_line():
    for url in (PG_URL, f"host=127.0.0.1 port=1 dbname=stats password={PASSWORD}"):
        for argv in (["stats", "query", "--stats-url", url, "SELECT 1"],
                     ["stats", "ingest", "--stats-url", url, "/nonexistent.json"]):
            p = without_libpq("/dev/null", [PKGTOOL, *argv])
            one_line_error(p, "error: --stats-url: the PostgreSQL stats store needs libpq.so.5",
                           "apt install libpq5", "file too short")


@case
def postgresql_store_with_an_incomplete_libpq():
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "old_pq.c")
        src.write_text("int PQlibVersion(void) { return 80400; }\n"
                       "void PQclear(void *result) { (void)result; }\n")
        lib = Path(tmp, "libpq.so.5")
        run(["cc", "-shared", "-fPIC", "-Wl,-soname,libpq.so.5", src, "-o", lib], expect=0)
        p = without_libpq(lib, [PKGTOOL, "stats", "query", "--stats-url", PG_URL, "SELECT 1"])
        one_line_error(p, "needs libpq.so.5", "libpq.so.5 lacks PQconndefaults", "PQexec,",
                       "PQsetSingleRowMode")
        check("PQclear" not in p.stderr, f"PQclear is there: {p.stderr!r}")


finish()
