# SPDX-License-Identifier: BSD-3-Clause
"""A private PostgreSQL 15 server for the stats tests, started in a
temporary directory with Debian's postgresql-15 (initdb/pg_ctl, installed by
scripts/setup.sh; a missing one is a failure, never a skip).

    with PgServer() as pg:
        pg.url("stats")                 # postgresql://writer:PASSWORD@127.0.0.1:PORT/stats
        pg.socket_url("stats")          # host=SOCKDIR port=PORT dbname=stats user=postgres
        pg.psql("stats", "SELECT ...")  # rows as lists of strings (the oracle)

The server listens on a free loopback port (password logins, SCRAM) and on a
Unix socket in its own directory (trusted logins of the superuser). initdb
refuses to run as root, so under root the server runs as uid/gid 65534
(`setpriv`). It is stopped and its directory removed on exit, also when the
test fails or is interrupted (SIGTERM from ctest's timeout)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing  # noqa: E402

BIN = Path("/usr/lib/postgresql/15/bin")
PASSWORD = "s3cret-Pg-pw"  # the writer role's: must never appear in output
NOBODY = 65534


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, durable=False):
        # Tests run with fsync off (nothing to keep); a benchmark wants the
        # server's real commit cost.
        self.durable = durable
        for tool in ("initdb", "pg_ctl", "psql", "postgres"):
            if not (BIN / tool).exists():
                missing(f"{BIN / tool} (Debian package postgresql-15)")
        # In /tmp whatever TMPDIR says: uid 65534 must reach it, and a Unix
        # socket's path must stay under 108 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix="libpkg-pg-", dir="/tmp"))
        self.data = self.dir / "data"
        self.sockets = self.dir / "sockets"
        self.port = free_port()
        self.started = False

    # Runs a server tool as the unprivileged owner of the cluster.
    def _as_owner(self, argv, **kw):
        if os.geteuid() == 0:
            argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                    "--clear-groups", "--"] + argv
        return subprocess.run(argv, capture_output=True, text=True, **kw)

    def __enter__(self):
        self.sockets.mkdir()
        pwfile = self.dir / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if os.geteuid() == 0:
            for p in (self.dir, self.sockets, pwfile):
                os.chown(p, NOBODY, NOBODY)
        # Stop the server on SIGTERM too (ctest's timeout), then die.
        self._old_term = signal.signal(signal.SIGTERM, self._on_term)
        r = self._as_owner([str(BIN / "initdb"), "-D", str(self.data),
                            "-U", "postgres", "--pwfile", str(pwfile),
                            "--auth-local=trust", "--auth-host=scram-sha-256",
                            "--encoding=UTF8", "--locale=C.UTF-8"],
                           env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
        if r.returncode != 0:
            self.__exit__(None, None, None)
            raise AssertionError(f"initdb failed:\n{r.stdout}{r.stderr}")
        self.start()
        self.psql("postgres", f"CREATE ROLE writer LOGIN PASSWORD '{PASSWORD}'")
        self.create_database("stats")
        return self

    def start(self):
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                   f"-c unix_socket_directories={self.sockets} "
                   f"-c fsync={'on' if self.durable else 'off'} "
                   "-c max_connections=40")
        r = self._as_owner([str(BIN / "pg_ctl"), "-D", str(self.data), "-o",
                            options, "-l", str(self.dir / "server.log"), "-w",
                            "-t", "60", "start"])
        if r.returncode != 0:
            log = (self.dir / "server.log")
            raise AssertionError(f"pg_ctl start failed:\n{r.stdout}{r.stderr}"
                                 f"{log.read_text() if log.exists() else ''}")
        self.started = True

    def stop(self, mode="fast"):
        if self.started:
            self._as_owner([str(BIN / "pg_ctl"), "-D", str(self.data), "-m",
                            mode, "-w", "stop"])
            self.started = False

    def _on_term(self, signum, frame):
        self.__exit__(None, None, None)
        sys.exit(1)

    def __exit__(self, *exc):
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            signal.signal(signal.SIGTERM, self._old_term)

    def create_database(self, name):
        self.psql("postgres", f"CREATE DATABASE {name} OWNER writer")

    def url(self, database, password=PASSWORD, port=None):
        return (f"postgresql://writer:{password}@127.0.0.1:"
                f"{port or self.port}/{database}")

    def socket_url(self, database):
        return (f"host={self.sockets} port={self.port} dbname={database} "
                "user=postgres")

    def psql(self, database, sql):
        """Rows of `sql` as lists of strings, read with psql (the oracle)."""
        r = subprocess.run([str(BIN / "psql"), "-X", "-q", "-At", "-F", "\x1f",
                            "-v", "ON_ERROR_STOP=1", "-h", str(self.sockets),
                            "-p", str(self.port), "-U", "postgres", "-d",
                            database, "-c", sql],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"psql {sql!r}: {r.stderr}")
        return [line.split("\x1f") for line in r.stdout.splitlines()]

    def rows(self, database, sql):
        """The rows of `sql` as JSON objects (jsonb_agg: one line however
        many rows, and documents come back as values)."""
        (line,) = self.psql(database, "SELECT coalesce(jsonb_agg(t), '[]') "
                            f"FROM ({sql}) t")
        return json.loads(line[0])
