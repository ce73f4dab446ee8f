#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool stats ingest|query` against Python's sqlite3 as the independent
reader: columns and artifacts match the documents, re-ingesting duplicates
nothing, a malformed file fails the batch with `error: FILE:` and exit 2
writing nothing, driver summaries land in the same columns, queries are
read-only, and two ingests at once lose nothing (WAL + busy timeout)."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_fixtures  # noqa: E402
from nightlib import PKGTOOL, check, pkgtool  # noqa: E402


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "stats.db")
    paths = stats_fixtures.write_history(os.path.join(tmp, "root"), 10)
    docs = [json.load(open(p)) for p in paths]

    r = pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    check(f"{len(paths)} inserted" in r.stdout, r.stdout)
    con = sqlite3.connect(db)
    check(con.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "not WAL")
    rows = {k: (d, pt, py, acc, job, st, log)
            for k, d, pt, py, acc, job, st, log in con.execute(
                "SELECT key, date, package_type, python, accelerator, job, "
                "status, log FROM documents")}
    check(len(rows) == len(docs), f"{len(rows)} rows for {len(docs)} documents")
    for doc in docs:
        key = f"job:{doc['nightly']}/{doc['job']}"
        c = doc["config"]
        want = (doc["nightly"].replace("_", "-"), c["package_type"], c["python"],
                c["accelerator"], doc["job"], doc["state"], doc["log"])
        check(rows[key] == want, f"{key}: {rows[key]} != {want}")
        stored = con.execute("SELECT doc FROM documents WHERE key = ?",
                             (key,)).fetchone()[0]
        check(json.loads(stored) == doc, f"{key}: document not stored as is")
        sizes = sorted(s for (s,) in con.execute(
            "SELECT size FROM artifacts WHERE doc_key = ?", (key,)))
        check(sizes == sorted(a["size"] for a in doc["artifacts"]),
              f"{key}: artifact sizes {sizes}")

    # Idempotent: the same documents again change nothing.
    r = pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    check(f"0 inserted, 0 replaced, {len(paths)} unchanged" in r.stdout, r.stdout)
    check(con.execute("SELECT count(*) FROM documents").fetchone()[0] == len(docs),
          "re-ingest duplicated documents")

    # A directory stands for the documents under it.
    db3 = os.path.join(tmp, "dir.db")
    r = pkgtool("stats", "ingest", "--db", db3, os.path.join(tmp, "root"), check=0)
    check(f"{len(paths)} inserted" in r.stdout, r.stdout)

    # A malformed file: the whole batch is refused, naming the file.
    fresh = [stats_fixtures.job_document(
        stats_fixtures.datetime.date(2027, 1, 1), c, "SUCCEEDED", 5)
        for c in stats_fixtures.CONFIGS]
    fresh_paths = []
    for i, d in enumerate(fresh):
        p = os.path.join(tmp, f"fresh{i}.json")
        json.dump(d, open(p, "w"))
        fresh_paths.append(p)
    bad = os.path.join(tmp, "broken.json")
    open(bad, "w").write('{"schema": "libpkg-job/1", "job": ')
    r = pkgtool("stats", "ingest", "--db", db, *fresh_paths, bad, check=2)
    check(r.stderr.startswith(f"error: {bad}: malformed JSON"), r.stderr)
    check(con.execute("SELECT count(*) FROM documents WHERE date = '2027-01-01'")
          .fetchone()[0] == 0, "a refused batch was half ingested")
    wrong = os.path.join(tmp, "wrong.json")
    json.dump({"schema": "something/2"}, open(wrong, "w"))
    r = pkgtool("stats", "ingest", "--db", db, wrong, check=2)
    check(r.stderr.startswith(f"error: {wrong}: schema"), r.stderr)

    # A driver summary from a CI job: same columns, dated by --date.
    summary = {"schema": "libpkg-driver/1", "driver": "manywheel",
               "config": {"build_environment": "manywheel 3.13 cu126",
                          "package_type": "manywheel", "python": "3.13",
                          "accelerator": "cu126"},
               "dry_run": False, "plan": [], "plan_detail": None,
               "artifacts": [{"role": "wheel", "path": "/ci/dist/torch-9.whl",
                              "size": 4242, "checked": True}],
               "checks": [], "notes": [], "passed": True, "seconds": 77.5}
    sp = os.path.join(tmp, "summary.json")
    json.dump(summary, open(sp, "w"), indent=1)
    pkgtool("stats", "ingest", "--db", db, "--date", "2026-11-24", sp, check=0)
    pkgtool("stats", "ingest", "--db", db, "--date", "2026-11-24", sp, check=0)
    got = con.execute("SELECT date, package_type, python, accelerator, job, "
                      "status, duration_s FROM documents WHERE schema = "
                      "'libpkg-driver/1'").fetchall()
    check(got == [("2026-11-24", "manywheel", "3.13", "cu126",
                   "manywheel 3.13 cu126", "SUCCEEDED", 77.5)], str(got))

    # Without --date, a summary is dated by its file's modification day (UTC).
    summary["passed"] = False
    sp2 = os.path.join(tmp, "summary2.json")
    json.dump(summary, open(sp2, "w"))
    os.utime(sp2, (1700000000, 1700000000))  # 2023-11-14T22:13:20Z
    pkgtool("stats", "ingest", "--db", db, sp2, check=0)
    got = con.execute("SELECT date, status FROM documents WHERE schema = "
                      "'libpkg-driver/1' ORDER BY date").fetchall()
    check(got == [("2023-11-14", "FAILED"), ("2026-11-24", "SUCCEEDED")],
          str(got))
    r = pkgtool("stats", "ingest", "--db", db, "--date", "yesterday", sp2, check=2)
    check("not YYYY-MM-DD" in r.stderr, r.stderr)

    # query: JSON and table agree with sqlite3; writes are refused.
    sql = ("SELECT status, count(*) AS n FROM documents GROUP BY status "
           "ORDER BY status")
    want = [{"status": s, "n": n} for s, n in con.execute(sql)]
    r = pkgtool("stats", "query", "--db", db, sql, "--json", check=0)
    check(json.loads(r.stdout) == want, r.stdout)
    r = pkgtool("stats", "query", "--db", db, sql, "--table", check=0)
    lines = r.stdout.splitlines()
    check(lines[0].split() == ["status", "n"], r.stdout)
    check([l.split() for l in lines[1:]] == [[w["status"], str(w["n"])]
                                             for w in want], r.stdout)
    r = pkgtool("stats", "query", "--db", db,
            "SELECT json_extract(doc, '$.host') AS host FROM documents "
            "WHERE schema = 'libpkg-job/1' LIMIT 1", "--json", check=0)
    check(json.loads(r.stdout) == [{"host": "builder-1"}], r.stdout)
    before = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    r = pkgtool("stats", "query", "--db", db, "DELETE FROM documents", check=2)
    check("readonly" in r.stderr, r.stderr)
    r = pkgtool("stats", "query", "--db", db, "SELECT nope FROM documents", check=2)
    check(r.stderr.startswith(f"error: {db}: SQL: no such column"), r.stderr)
    check(con.execute("SELECT count(*) FROM documents").fetchone()[0] == before,
          "a query wrote")
    con.close()

    # Two writers at once: every document of both arrives.
    both = []
    for w in range(2):
        d = os.path.join(tmp, f"writer{w}")
        configs = [("manywheel", f"3.{w}{i}", "cpu") for i in range(10)]
        both.append(stats_fixtures.write_history(d, 60, configs))
    db2 = os.path.join(tmp, "shared.db")
    pkgtool("stats", "ingest", "--db", db2, both[0][0], check=0)  # create the schema
    procs = [subprocess.Popen([PKGTOOL, "stats", "ingest", "--db", db2, *p],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for p in both]
    for p in procs:
        out, err = p.communicate()
        check(p.returncode == 0, f"concurrent ingest failed: {err.decode()}")
    con = sqlite3.connect(db2)
    n = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    check(n == len(both[0]) + len(both[1]), f"{n} documents after two writers")
    con.close()
print("ok")
