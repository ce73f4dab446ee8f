#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The stats store on a real PostgreSQL 15 server (pg_server.py starts one in
a temporary directory), with psql as the independent reader:

- ingest + query + report: the rows and JSONB documents psql reads match
  the documents; `stats query` is read-only (a READ ONLY transaction); the
  same ingest into SQLite and PostgreSQL gives the same `nightly report
  --json` and the same HTML page (every cell's data compared);
- idempotent re-ingest (also of re-formatted documents);
- two writers at once, on a fresh database (both create the schema) and on
  overlapping and distinct documents: nothing lost, nothing twice;
- server down, wrong URL, wrong password, a refused document, a server
  killed during an ingest: one line, exit 2, nothing half-ingested, the
  password never printed;
- a field the columns don't have is queryable with no migration;
- builds told apart only by a variant field (libtorch variant, ABI) keep
  their own `variant`, rows and size series, as on SQLite; a store made by
  the old schema is read as it is and upgraded by the first writer, nothing
  lost;
- `nightly run --stats-url` stores each job's document; an unreachable store
  stops the run before any job starts."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import stats_fixtures  # noqa: E402
import stats_variants as sv  # noqa: E402
from pg_server import PASSWORD, PgServer, free_port  # noqa: E402

PKGTOOL = os.environ["PKGTOOL"]


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def run(*args, expect=0):
    r = subprocess.run([PKGTOOL, *args], capture_output=True, text=True)
    check(r.returncode == expect,
          f"pkgtool {' '.join(args[:4])}...: exit {r.returncode} != {expect}\n"
          f"{r.stdout}{r.stderr}")
    check(PASSWORD not in r.stdout + r.stderr,
          f"the password was printed:\n{r.stdout}{r.stderr}")
    return r


def one_line_error(r, *needles):
    check(r.stderr.startswith("error: ") and r.stderr.count("\n") == 1,
          f"not one error line: {r.stderr!r}")
    for n in needles:
        check(n in r.stderr, f"{n!r} not in {r.stderr!r}")


def write_docs(folder, docs, indent=None):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i, d in enumerate(docs):
        p = os.path.join(folder, f"{i:05d}-{d['job']}.json")
        with open(p, "w") as f:
            json.dump(d, f, indent=indent)
        paths.append(p)
    return paths


def count(pg, db, table="documents"):
    return int(pg.psql(db, f"SELECT count(*) FROM {table}")[0][0])


class Cells(HTMLParser):
    """Each grid cell's attributes and link, each chart point's data."""

    def __init__(self):
        super().__init__()
        self.cells, self.points, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "cell" in a.get("class", ""):
            self._cell = dict(a)
            self.cells.append(self._cell)
        elif tag == "a" and self._cell is not None:
            self._cell["href"] = a.get("href")
        elif tag == "circle":
            self.points.append(a)

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None


def page(path):
    p = Cells()
    p.feed(Path(path).read_text(encoding="utf-8"))
    return p


def ingest_query_report(pg, tmp):
    root = os.path.join(tmp, "nightly")
    paths = stats_fixtures.write_history(root, 30)
    docs = {f"job:{d['nightly']}/{d['job']}": d
            for d in (json.load(open(p)) for p in paths)}
    url = pg.url("stats")
    r = run("stats", "ingest", "--stats-url", url, *paths)
    check(f"{len(paths)} inserted, 0 replaced, 0 unchanged" in r.stdout, r.stdout)
    # The store's name in messages: the URL without its password.
    check(r.stdout.startswith(f"postgresql://writer@127.0.0.1:{pg.port}/stats:"),
          r.stdout)

    rows = pg.rows("stats", "SELECT key, date, package_type, python, accelerator,"
                   " job, status, log, failure, doc FROM documents")
    check(len(rows) == len(docs), f"{len(rows)} rows for {len(docs)} documents")
    for row in rows:
        d = docs[row["key"]]
        c = d["config"]
        want = (d["nightly"].replace("_", "-"), c["package_type"], c["python"],
                c["accelerator"], d["job"], d["state"], d["log"])
        got = tuple(row[k] for k in ("date", "package_type", "python",
                                     "accelerator", "job", "status", "log"))
        check(got == want, f"{row['key']}: {got} != {want}")
        check(row["doc"] == d, f"{row['key']}: the JSONB document differs")
    arts = pg.rows("stats", "SELECT doc_key, name, size, sha256 FROM artifacts")
    want = sorted((k, a["name"], a["size"], a["sha256"])
                  for k, d in docs.items() for a in d["artifacts"])
    check(sorted((a["doc_key"], a["name"], a["size"], a["sha256"])
                 for a in arts) == want, "artifacts differ")

    # The same documents into SQLite: the built-in and ad-hoc queries agree.
    sqlite = os.path.join(root, "stats.db")
    run("stats", "ingest", "--stats-url", "sqlite:" + sqlite, *paths)
    for sql in ("SELECT status, count(*) AS n, sum(duration_s) AS seconds "
                "FROM documents GROUP BY status ORDER BY status",
                "SELECT d.date, a.name, a.size FROM artifacts a JOIN documents "
                "d ON d.key = a.doc_key WHERE d.date = '2026-11-24' "
                "ORDER BY a.name"):
        on_pg = json.loads(run("stats", "query", "--stats-url", url, sql,
                               "--json").stdout)
        on_sqlite = json.loads(run("stats", "query", "--db", sqlite, sql,
                                   "--json").stdout)
        check(on_pg == on_sqlite and on_pg, f"{sql}: {on_pg} != {on_sqlite}")
    # The dialects differ for JSON: ->> here, json_extract on SQLite.
    r = run("stats", "query", "--stats-url", url,
            "SELECT DISTINCT doc->>'host' AS host FROM documents", "--json")
    check(json.loads(r.stdout) == [{"host": "builder-1"}], r.stdout)
    r = run("stats", "query", "--stats-url", url,
            "SELECT status, count(*) FROM documents GROUP BY 1 ORDER BY 1")
    lines = r.stdout.splitlines()
    check(lines[0].split() == ["status", "count"] and len(lines) == 4, r.stdout)

    # Read-only: a write is refused by the server, nothing changes.
    n = count(pg, "stats")
    for sql in ("DELETE FROM documents",
                "WITH gone AS (DELETE FROM artifacts RETURNING 1) "
                "SELECT count(*) FROM gone",
                "CREATE TABLE sneaky (x int)"):
        r = run("stats", "query", "--stats-url", url, sql, expect=2)
        one_line_error(r, "read-only transaction")
    r = run("stats", "query", "--stats-url", url,
            "SELECT 1; DELETE FROM documents", expect=2)
    one_line_error(r, "multiple commands")
    r = run("stats", "query", "--stats-url", url, "SELECT nope FROM documents",
            expect=2)
    one_line_error(r, f"error: postgresql://writer@127.0.0.1:{pg.port}/stats: "
                   "SQL: column \"nope\" does not exist")
    check(count(pg, "stats") == n and count(pg, "stats", "artifacts") == len(want),
          "a query wrote")
    check(not pg.psql("stats", "SELECT 1 FROM pg_tables WHERE tablename = "
                      "'sneaky'"), "a query created a table")

    # The report: the same data from both stores, the same page.
    site = os.path.join(tmp, "site")
    for args in ([], ["--days", "0"], ["--days", "7", "--date", "2026-11-10"],
                 ["--size-threshold", "15"]):
        outs = {}
        for name, store in (("pg", url), ("sqlite", sqlite)):
            html = os.path.join(site, f"{name}.html")
            js = os.path.join(site, f"{name}.json")
            run("nightly", "report", "--stats-url", store, "--html", html,
                "--json", js, "--nightly-root", root, *args)
            outs[name] = (json.load(open(js)), page(html),
                          Path(html).read_bytes())
        pg_json, pg_page, pg_bytes = outs["pg"]
        sq_json, sq_page, sq_bytes = outs["sqlite"]
        check(pg_json == sq_json, f"report {args}: the JSON differs")
        check(pg_json["cells"] or args, "no cells")
        check(pg_page.cells == sq_page.cells and pg_page.points ==
              sq_page.points, f"report {args}: the page's cells differ")
        check(len(pg_page.cells) == len(pg_json["cells"]),
              f"{len(pg_page.cells)} cells on the page")
        check(pg_bytes == sq_bytes, f"report {args}: the pages differ")
    full = outs["pg"][0]
    check(len(full["cells"]) == 120 and full["regressions"]["status"],
          "the fixture's report")
    # With PostgreSQL, log links need --nightly-root (default: the current
    # directory): run from the root, the links are the same.
    r = subprocess.run([PKGTOOL, "nightly", "report", "--stats-url", url,
                        "--json", "-"], cwd=root, capture_output=True, text=True)
    check(r.returncode == 0 and json.loads(r.stdout)["cells"] ==
          outs["pg"][0]["cells"], r.stderr)
    return paths, docs, sqlite


def idempotent(pg, tmp, paths, docs, sqlite):
    url = pg.url("stats")
    r = run("stats", "ingest", "--stats-url", url, *paths)
    check(f"0 inserted, 0 replaced, {len(paths)} unchanged" in r.stdout, r.stdout)
    # The same documents re-formatted (spacing, key order) are the same.
    shuffled = [dict(reversed(list(d.items()))) for d in docs.values()]
    again = write_docs(os.path.join(tmp, "reformatted"), shuffled, indent=3)
    for store in (url, sqlite):
        r = run("stats", "ingest", "--stats-url", store, *again)
        check(f"0 inserted, 0 replaced, {len(again)} unchanged" in r.stdout,
              r.stdout)
    check(count(pg, "stats") == len(docs), "re-ingest duplicated documents")
    # A re-run job replaces its row and its artifacts.
    doc = copy.deepcopy(next(iter(docs.values())))
    doc["state"], doc["failed_step"] = "FAILED", "build"
    doc["artifacts"][0]["size"] += 1
    (p,) = write_docs(os.path.join(tmp, "rerun"), [doc])
    r = run("stats", "ingest", "--stats-url", url, p)
    check("0 inserted, 1 replaced, 0 unchanged" in r.stdout, r.stdout)
    key = f"job:{doc['nightly']}/{doc['job']}"
    got = pg.rows("stats", f"SELECT d.status, a.size FROM documents d JOIN "
                  f"artifacts a ON a.doc_key = d.key WHERE d.key = '{key}'")
    check(got == [{"status": "FAILED", "size": doc["artifacts"][0]["size"]}],
          str(got))
    # Driver summaries (keyed by content) are idempotent too.
    summary = {"schema": "libpkg-driver/1", "driver": "manywheel",
               "config": {"build_environment": "manywheel 3.13 cu126",
                          "package_type": "manywheel", "python": "3.13",
                          "accelerator": "cu126"},
               "artifacts": [{"role": "wheel", "path": "/ci/torch-9.whl",
                              "size": 4242}],
               "checks": [], "passed": True, "seconds": 77.5}
    sp = os.path.join(tmp, "summary.json")
    json.dump(summary, open(sp, "w"))
    run("stats", "ingest", "--stats-url", url, "--date", "2026-11-25", sp)
    r = run("stats", "ingest", "--stats-url", url, "--date", "2026-11-25", sp)
    check("0 inserted, 0 replaced, 1 unchanged" in r.stdout, r.stdout)


def two_writers(pg, tmp):
    # Two writers on a fresh database: both create the schema at once, then
    # each ingests its own documents and a shared set.
    for round_ in range(2):
        db = f"writers{round_}"
        pg.create_database(db)
        shared = list(d for _, d in stats_fixtures.history(
            40, [("manywheel", "3.12", f"cu{i}") for i in range(10)]))
        own = [list(d for _, d in stats_fixtures.history(
            40, [("conda", f"3.{w}{i}", "cpu") for i in range(10)]))
            for w in range(2)]
        batches = []
        for w in range(2):
            # The shared documents in opposite orders: locks taken in key
            # order whatever the input order, so no deadlock.
            docs = own[w] + (shared if w == 0 else shared[::-1])
            batches.append(write_docs(os.path.join(tmp, f"w{round_}{w}"), docs))
        procs = [subprocess.Popen([PKGTOOL, "stats", "ingest", "--stats-url",
                                   pg.url(db), *b], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for b in batches]
        outs = [p.communicate() for p in procs]
        for p, (out, err) in zip(procs, outs):
            check(p.returncode == 0, f"a concurrent ingest failed: {err}")
        want = len(shared) + len(own[0]) + len(own[1])
        got = pg.rows(db, "SELECT count(*) AS n, count(DISTINCT key) AS k "
                      "FROM documents")
        check(got == [{"n": want, "k": want}], f"{got}, want {want}")
        inserted = sum(int(out.split(": ")[1].split()[0]) for out, _ in outs)
        check(inserted == want, f"{inserted} inserted by the two writers, "
              f"{want} documents: {outs}")
        n_art = sum(len(d["artifacts"]) for d in shared + own[0] + own[1])
        check(count(pg, db, "artifacts") == n_art, "artifacts lost or doubled")


def bad_stores(pg, tmp, paths):
    docs = paths[:5]
    before = count(pg, "stats")
    # Nothing listens there: the server is down.
    down = pg.url("stats", port=free_port())
    r = run("stats", "ingest", "--stats-url", down, *docs, expect=2)
    one_line_error(r, "error: postgresql://writer@127.0.0.1:", "cannot connect")
    # Wrong password, unknown database, unknown user.
    r = run("stats", "ingest", "--stats-url", pg.url("stats", password="nope"),
            *docs, expect=2)
    one_line_error(r, "password authentication failed")
    check("nope" not in r.stderr, r.stderr)
    r = run("stats", "query", "--stats-url", pg.url("nosuchdb"), "SELECT 1",
            expect=2)
    one_line_error(r, 'database "nosuchdb" does not exist')
    r = run("nightly", "report", "--stats-url", pg.url("stats").replace(
        "writer:", "stranger:"), "--json", "-", expect=2)
    one_line_error(r, "stranger")
    # A URL libpq cannot parse.
    r = run("stats", "query", "--stats-url", "postgresql://writer:" + PASSWORD +
            "@127.0.0.1/stats?nosuchoption=1", "SELECT 1", expect=2)
    one_line_error(r, "--stats-url")
    # A database without the tables: the report says so.
    pg.create_database("empty")
    r = run("nightly", "report", "--stats-url", pg.url("empty"), "--json", "-",
            expect=2)
    one_line_error(r, "no stats tables")
    # A batch with a malformed file or a document PostgreSQL cannot store
    # (a NUL character): the file named, nothing of the batch written.
    fresh = [stats_fixtures.job_document(stats_fixtures.datetime.date(2027, 1, 1),
                                         c, "SUCCEEDED", 5)
             for c in stats_fixtures.CONFIGS]
    good = write_docs(os.path.join(tmp, "fresh"), fresh)
    broken = os.path.join(tmp, "broken.json")
    open(broken, "w").write('{"schema": "libpkg-job/1", "job": ')
    r = run("stats", "ingest", "--stats-url", pg.url("stats"), *good, broken,
            expect=2)
    one_line_error(r, f"error: {broken}: malformed JSON")
    nul = dict(fresh[0], job="nul-job", host="a\u0000b")
    (nul_path,) = write_docs(os.path.join(tmp, "nul"), [nul])
    r = run("stats", "ingest", "--stats-url", pg.url("stats"), *good, nul_path,
            expect=2)
    one_line_error(r, f"error: {nul_path}: PostgreSQL refused the document")
    check(count(pg, "stats") == before, "a refused batch was half ingested")

    # The server killed during a large ingest: all of the batch or none.
    many = [d for _, d in stats_fixtures.history(
        200, [("manywheel", f"3.{i}", "cu999") for i in range(100)])]
    big = write_docs(os.path.join(tmp, "big"), many)
    proc = subprocess.Popen([PKGTOOL, "stats", "ingest", "--stats-url",
                             pg.url("stats"), *big], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    pg.stop("immediate")
    out, err = proc.communicate()
    pg.start()
    stored = int(pg.psql("stats", "SELECT count(*) FROM documents WHERE "
                         "accelerator = 'cu999'")[0][0])
    print(f"server stopped during an ingest of {len(many)}: exit "
          f"{proc.returncode}, {stored} stored", flush=True)
    if proc.returncode == 0:
        check(stored == len(many), f"{stored} of {len(many)} after exit 0")
    else:
        check(proc.returncode == 2 and err.startswith("error: ") and
              err.count("\n") == 1 and PASSWORD not in err, err)
        check(stored == 0, f"{stored} documents of a failed batch stored")
    check(count(pg, "stats") == before + stored, "other rows changed")


def new_field(pg, tmp):
    doc = stats_fixtures.job_document(stats_fixtures.datetime.date(2027, 2, 1),
                                      stats_fixtures.CONFIGS[0], "SUCCEEDED", 9)
    doc["sccache"] = {"hits": 412, "misses": 9}
    doc["runner_kernel"] = "6.1.0-28"
    (p,) = write_docs(os.path.join(tmp, "newfield"), [doc])
    sqlite = os.path.join(tmp, "newfield.db")
    for store in (pg.url("stats"), sqlite):
        run("stats", "ingest", "--stats-url", store, p)
    r = run("stats", "query", "--stats-url", pg.url("stats"),
            "SELECT doc->>'runner_kernel' AS kernel, "
            "(doc->'sccache'->>'hits')::int AS hits FROM documents "
            "WHERE doc ? 'sccache'", "--json")
    check(json.loads(r.stdout) == [{"kernel": "6.1.0-28", "hits": 412}], r.stdout)
    r = run("stats", "query", "--db", sqlite,
            "SELECT json_extract(doc, '$.runner_kernel') AS kernel, "
            "json_extract(doc, '$.sccache.hits') AS hits FROM documents",
            "--json")
    check(json.loads(r.stdout) == [{"kernel": "6.1.0-28", "hits": 412}], r.stdout)
    # The tables were not changed to hold it.
    cols = pg.psql("stats", "SELECT column_name FROM information_schema.columns"
                   " WHERE table_name = 'documents' ORDER BY ordinal_position")
    check([c[0] for c in cols] == ["key", "schema", "date", "package_type",
                                   "python", "accelerator", "variant", "job",
                                   "status",
                                   "start", "duration_s", "log", "failure",
                                   "doc", "seq"], str(cols))


def sql_text(value):
    return "NULL" if value is None else f"$v${value}$v$"


def variants(pg, tmp):
    def report(store):
        return json.loads(run("nightly", "report", "--stats-url", store,
                              "--json", "-", "--date",
                              sv.NIGHT.isoformat()).stdout)

    # Four libtorch builds and two CI summaries of one night: the variant
    # column as psql reads it, the report as on SQLite.
    docs = sv.job_documents()
    paths = write_docs(os.path.join(tmp, "variants"), docs)
    sums = write_docs(os.path.join(tmp, "variant-ci"),
                      [dict(d, job="ci") for d in sv.driver_summaries()])
    pg.create_database("variants")
    sqlite = os.path.join(tmp, "variants.db")
    for store in (pg.url("variants"), "sqlite:" + sqlite):
        run("stats", "ingest", "--stats-url", store, *paths)
        run("stats", "ingest", "--stats-url", store, "--date",
            sv.NIGHT.isoformat(), *sums)
    got = sorted((r["job"], r["variant"]) for r in pg.rows(
        "variants", "SELECT job, variant FROM documents WHERE schema = "
        "'libpkg-job/1'"))
    check(got == sorted((d["job"], sv.variant_of(v, a))
                        for d, (v, a) in zip(docs, sv.BUILDS)), str(got))
    on_pg = report(pg.url("variants"))
    sv.check_report(on_pg, check)
    check({c["config"] for c in on_pg["cells"] if "cu124" in c["config"]} ==
          set(sv.DRIVER_LABELS), str(on_pg["configs"]))
    on_sqlite = report("sqlite:" + sqlite)
    for r in (on_pg, on_sqlite):
        for c in r["cells"]:
            c["log"] = None  # PostgreSQL's are relative to the cwd
    check(on_pg == on_sqlite, "the variant reports differ")

    # A store made by the old schema (tables owned by the writer, as an
    # older pkgtool made them).
    pg.create_database("oldschema")
    old = [d for _, d in stats_fixtures.history(3)] + docs
    sql = ["SET ROLE writer;", sv.OLD_PG_SCHEMA]
    for doc in old:
        row, arts = sv.old_rows(doc)
        sql.append("INSERT INTO documents (key, schema, date, package_type, "
                   "python, accelerator, job, status, start, duration_s, log, "
                   "failure, doc) VALUES (" +
                   ", ".join(sql_text(v) for v in row) + ");")
        for a in arts:
            sql.append("INSERT INTO artifacts (doc_key, name, size, sha256) "
                       "VALUES (" + ", ".join(sql_text(v) for v in a) + ");")
    pg.psql("oldschema", "\n".join(sql))
    columns = ("key, schema, date, package_type, python, accelerator, job, "
               "status, start, duration_s, log, failure, doc, seq")
    before = pg.rows("oldschema",
                     f"SELECT {columns} FROM documents ORDER BY key")
    before_arts = pg.rows("oldschema", "SELECT * FROM artifacts")
    has_variant = ("SELECT count(*) FROM information_schema.columns WHERE "
                   "table_name = 'documents' AND column_name = 'variant'")
    # A reader reads it as it is: variants '', the builds told apart by job.
    data = report(pg.url("oldschema"))
    check(all(c["variant"] == "" for c in data["cells"]), "old variants")
    check({c["config"] for c in data["cells"]
           if c["config"].startswith("libtorch cpu (")} ==
          {f"libtorch cpu ({d['job']})" for d in
           docs + [{"job": "libtorch-cpu"}]}, str(data["configs"]))
    check(pg.psql("oldschema", has_variant) == [["0"]],
          "a reader changed the schema")
    # The first writer adds the column; old rows are '' and unchanged.
    (fresh,) = write_docs(os.path.join(tmp, "variant-fresh"), [
        stats_fixtures.job_document(stats_fixtures.datetime.date(2026, 11, 25),
                                    ("manywheel", "3.12", "cpu"),
                                    "SUCCEEDED", 5)])
    r = run("stats", "ingest", "--stats-url", pg.url("oldschema"), fresh)
    check("1 inserted" in r.stdout, r.stdout)
    check(pg.psql("oldschema", has_variant) == [["1"]], "no variant column")
    check(pg.rows("oldschema", f"SELECT {columns} FROM documents WHERE "
                  "variant = '' AND date < '2026-11-25' ORDER BY key") == before,
          "old rows changed by the upgrade")
    check(sorted(map(json.dumps, pg.rows(
        "oldschema", "SELECT * FROM artifacts WHERE doc_key NOT LIKE "
        "'job:2026_11_25/%'"))) == sorted(map(json.dumps, before_arts)),
        "old artifacts changed by the upgrade")
    # Re-ingesting the old libtorch documents fills their variant.
    r = run("stats", "ingest", "--stats-url", pg.url("oldschema"), *paths)
    check("0 inserted, 4 replaced, 0 unchanged" in r.stdout, r.stdout)
    r = run("stats", "ingest", "--stats-url", pg.url("oldschema"), *paths)
    check("0 inserted, 0 replaced, 4 unchanged" in r.stdout, r.stdout)
    sv.check_report(report(pg.url("oldschema")), check)


def runner(pg, tmp):
    jobs = os.path.join(tmp, "jobs.json")
    json.dump({"jobs": [
        {"name": "ok", "argv": ["sh", "-c", "echo ::step build; true"],
         "config": {"package_type": "manywheel", "python": "3.12",
                    "accelerator": "cpu"}},
        {"name": "broken", "argv": ["sh", "-c", "echo ::step compile; exit 3"],
         "config": {"package_type": "manywheel", "python": "3.12",
                    "accelerator": "cu124"}}]}, open(jobs, "w"))
    pg.create_database("runner")
    root = os.path.join(tmp, "runs")
    r = run("nightly", "run", "--jobs", jobs, "--root", root, "--date",
            "2026-11-24", "--no-publish", "--stats-url",
            pg.socket_url("runner"), expect=1)
    got = pg.rows("runner", "SELECT job, status, failure, doc->>'exit_code' AS "
                  "code FROM documents ORDER BY job")
    check(got == [{"job": "broken", "status": "FAILED", "failure": "compile",
                   "code": "3"},
                  {"job": "ok", "status": "SUCCEEDED", "failure": "",
                   "code": "0"}], f"{got}\n{r.stdout}{r.stderr}")
    stored = json.load(open(os.path.join(root, "2026_11_24", "jobs", "ok.json")))
    check(pg.rows("runner", "SELECT doc FROM documents WHERE job = 'ok'") ==
          [{"doc": stored}], "the stored document differs from jobs/ok.json")
    # --retry-failed: the re-run's document replaces the failed one.
    run("nightly", "run", "--root", root, "--date", "2026-11-24",
        "--retry-failed", "--no-publish", "--stats-url",
        pg.socket_url("runner"), expect=1)
    check(pg.rows("runner", "SELECT job, doc->>'attempt' AS attempt FROM "
                  "documents ORDER BY job") ==
          [{"job": "broken", "attempt": "2"}, {"job": "ok", "attempt": "1"}],
          "the retried job's document")
    # Without --stats-url the documents go to ROOT/stats.db.
    root2 = os.path.join(tmp, "runs2")
    run("nightly", "run", "--jobs", jobs, "--root", root2, "--no-publish",
        expect=1)
    r = run("stats", "query", "--db", os.path.join(root2, "stats.db"),
            "SELECT job, status FROM documents ORDER BY job", "--json")
    check(json.loads(r.stdout) == [{"job": "broken", "status": "FAILED"},
                                   {"job": "ok", "status": "SUCCEEDED"}],
          r.stdout)
    # An unreachable store stops the run before any job starts.
    root3 = os.path.join(tmp, "runs3")
    r = run("nightly", "run", "--jobs", jobs, "--root", root3, "--date",
            "2026-11-24", "--no-publish", "--stats-url",
            pg.url("runner", port=free_port()), expect=2)
    one_line_error(r, "cannot connect")
    check(not os.path.exists(os.path.join(root3, "2026_11_24", "jobs.json")),
          "jobs ran without a store")


def main():
    with PgServer() as pg, tempfile.TemporaryDirectory() as tmp:
        paths, docs, sqlite = ingest_query_report(pg, tmp)
        idempotent(pg, tmp, paths, docs, sqlite)
        new_field(pg, tmp)
        variants(pg, tmp)
        two_writers(pg, tmp)
        runner(pg, tmp)
        bad_stores(pg, tmp, paths)
    print("ok")


if __name__ == "__main__":
    main()
