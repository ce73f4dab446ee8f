#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Configurations that differ only in a variant field (libtorch variant, C++
ABI, os, arch, a job file's own config fields) keep distinct rows, cells and
size series in the stats store and the report, with Python's sqlite3 as the
independent reader:

- four libtorch builds of one night (shared-with-deps/-without-deps/static,
  cxx11/pre-cxx11): four `variant` values, four grid rows and size series,
  labelled by their variant, in the JSON and the HTML page;
- two CI driver summaries that differ only in libtorch_variant: two rows;
- two jobs of one night with the same config: two rows, named by job;
- the runner's own recording: a matrix nightly of every libtorch cpu build
  gives one row per `pkgtool matrix` entry, labelled from its fields;
- a store made by the old schema (no variant column): a read-only report
  works on it unchanged, an ingest adds the column (old rows ''), nothing is
  lost, and re-ingesting an old document fills its variant."""
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from html import unescape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_fixtures  # noqa: E402
import stats_variants as sv  # noqa: E402
from nightlib import check, pkgtool  # noqa: E402


def write(folder, docs):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i, d in enumerate(docs):
        p = os.path.join(folder, f"{i:03d}-{d.get('job', 'summary')}.json")
        with open(p, "w") as f:
            json.dump(d, f)
        paths.append(p)
    return paths


def report(db, *extra):
    r = pkgtool("nightly", "report", "--db", db, "--json", "-", "--date",
                sv.NIGHT.isoformat(), *extra, check=0)
    return json.loads(r.stdout)


def row_headers(html):
    return [unescape(h) for h in
            re.findall(r'<th class="config">([^<]*)</th>', html)]


def variants(tmp):
    db = os.path.join(tmp, "stats.db")
    docs = sv.job_documents()
    paths = write(os.path.join(tmp, "jobs"), docs)
    r = pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    check("4 inserted" in r.stdout, r.stdout)
    con = sqlite3.connect(db)
    got = sorted(con.execute("SELECT job, variant FROM documents"))
    want = sorted((d["job"], sv.variant_of(v, a))
                  for d, (v, a) in zip(docs, sv.BUILDS))
    check(got == want, f"variant column {got} != {want}")
    data = report(db)
    sv.check_report(data, check)
    check(len(data["configs"]) == 4, str(data["configs"]))
    # The page: one grid row per build, its header the label.
    html = os.path.join(tmp, "report.html")
    pkgtool("nightly", "report", "--db", db, "--html", html, "--date",
            sv.NIGHT.isoformat(), check=0)
    headers = row_headers(open(html, encoding="utf-8").read())
    check(sorted(headers) == sorted(sv.label_of(v, a) for v, a in sv.BUILDS),
          f"HTML rows {headers}")

    # CI summaries told apart only by libtorch_variant (same driver name).
    sums = write(os.path.join(tmp, "ci"), sv.driver_summaries())
    pkgtool("stats", "ingest", "--db", db, "--date", sv.NIGHT.isoformat(),
            *sums, check=0)
    data = report(db)
    ci = {c["config"] for c in data["cells"] if "cu124" in c["config"]}
    check(ci == set(sv.DRIVER_LABELS), f"CI rows {ci}")
    sizes = {s["config"]: [p["size"] for p in s["points"]]
             for s in data["sizes"] if "cu124" in s["config"]}
    check(sizes == {k: [v] for k, v in sv.DRIVER_LABELS.items()}, str(sizes))

    # Two jobs of a job file with the same config: two rows, named by job.
    twins = [sv.libtorch_job("static", "cxx11", 1000 * (i + 1), job=name)
             for i, name in enumerate(("twin-a", "twin-b"))]
    db2 = os.path.join(tmp, "twins.db")
    pkgtool("stats", "ingest", "--db", db2,
            *write(os.path.join(tmp, "twins"), twins), check=0)
    labels = sorted(c["config"] for c in report(db2)["cells"])
    base = sv.label_of("static", "cxx11")
    check(labels == [f"{base} (twin-a)", f"{base} (twin-b)"], str(labels))

    # A job file's own config field is part of the variant (key=value).
    odd = [sv.libtorch_job("static", "cxx11", 10, job="img-a",
                           extra={"image": "a:1"}),
           sv.libtorch_job("static", "cxx11", 20, job="img-b",
                           extra={"image": "b:2"})]
    db3 = os.path.join(tmp, "odd.db")
    pkgtool("stats", "ingest", "--db", db3,
            *write(os.path.join(tmp, "odd"), odd), check=0)
    labels = sorted(c["config"] for c in report(db3)["cells"])
    check(labels == [f"{base} image=a:1", f"{base} image=b:2"], str(labels))


def old_store(tmp):
    os.makedirs(tmp)
    db = os.path.join(tmp, "old.db")
    con = sqlite3.connect(db)
    con.executescript(sv.OLD_SQLITE_SCHEMA)
    # The old history (4 configurations × 5 nights) and the four libtorch
    # builds, as an older pkgtool stored them.
    history = [d for _, d in stats_fixtures.history(5)]
    old_docs = history + sv.job_documents()
    for doc in old_docs:
        row, arts = sv.old_rows(doc)
        con.execute("INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    row)
        con.executemany("INSERT INTO artifacts VALUES (?,?,?,?)", arts)
    con.commit()
    before_docs = sorted(con.execute("SELECT * FROM documents"))
    before_arts = sorted(con.execute("SELECT * FROM artifacts"))
    con.close()
    pristine = os.path.join(tmp, "pristine.db")
    shutil.copy(db, pristine)

    # Read-only: the report reads it as it is (no variant: every row ''),
    # and does not change it. The libtorch builds keep their rows, told
    # apart by job.
    data = report(db)
    libtorch = sorted(c["config"] for c in data["cells"]
                      if c["date"] == sv.NIGHT.isoformat()
                      and c["config"].startswith("libtorch cpu ("))
    # (libtorch-cpu: the history's own libtorch job, the same config.)
    check(libtorch == sorted(f"libtorch cpu ({d['job']})" for d in
                             sv.job_documents() + [{"job": "libtorch-cpu"}]),
          str(libtorch))
    check(all(c["variant"] == "" for c in data["cells"]), "old variants")
    r = pkgtool("stats", "query", "--db", db, "SELECT count(*) AS n FROM "
                "pragma_table_info('documents') WHERE name = 'variant'",
                "--json", check=0)
    check(json.loads(r.stdout) == [{"n": 0}], "a reader changed the schema")
    check(open(db, "rb").read() == open(pristine, "rb").read(),
          "a read-only report changed the old store")

    # A writer upgrades it: the column added, old rows '' and intact.
    fresh = stats_fixtures.job_document(
        stats_fixtures.datetime.date(2026, 11, 25), ("manywheel", "3.12", "cpu"),
        "SUCCEEDED", 5)
    fresh["config"]["cxx_abi"] = "cxx11"
    r = pkgtool("stats", "ingest", "--db", db,
                *write(os.path.join(tmp, "fresh"), [fresh]), check=0)
    check("1 inserted" in r.stdout, r.stdout)
    con = sqlite3.connect(db)
    cols = [c[1] for c in con.execute("PRAGMA table_info(documents)")]
    check(cols.count("variant") == 1, str(cols))
    after = sorted(con.execute(
        "SELECT key, schema, date, package_type, python, accelerator, job, "
        "status, start, duration_s, log, failure, doc FROM documents "
        "WHERE variant = ''"))
    check(after == before_docs, "old rows changed by the upgrade")
    check(sorted(con.execute("SELECT * FROM artifacts WHERE doc_key != ?",
                             (f"job:2026_11_25/{fresh['job']}",)))
          == before_arts, "old artifacts changed by the upgrade")
    check(con.execute("SELECT variant FROM documents WHERE date = "
                      "'2026-11-25'").fetchall() == [("cxx11",)], "new row")
    con.close()

    # Re-ingesting the old libtorch documents fills their variant.
    paths = write(os.path.join(tmp, "again"), sv.job_documents())
    r = pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    check("0 inserted, 4 replaced, 0 unchanged" in r.stdout, r.stdout)
    r = pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    check("0 inserted, 0 replaced, 4 unchanged" in r.stdout, r.stdout)
    sv.check_report(report(db), check)
    # Opening the upgraded store again (writer and reader) changes nothing.
    pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    sv.check_report(report(db), check)


def runner(tmp):
    entries = json.loads(pkgtool("matrix", "--package-type", "libtorch",
                                 "--cuda", "cpu", check=0).stdout)["include"]
    check(len(entries) >= 4, f"{len(entries)} libtorch cpu builds")
    root = os.path.join(tmp, "root")
    pkgtool("nightly", "run", "--command",
            "mkdir -p {artifact_dir} && head -c 1000 /dev/zero > "
            "{artifact_dir}/libtorch-2.6.0.zip", "--package-type", "libtorch",
            "--cuda", "cpu", "--root", root, "--date", "2026_11_24",
            "--no-publish", "-q", "-j2", check=0)

    def variant(e):
        return " ".join(e[k] for k in ("libtorch_variant", "cxx_abi", "os",
                                       "arch") if e[k])
    con = sqlite3.connect(os.path.join(root, "stats.db"))
    got = dict(con.execute("SELECT job, variant FROM documents"))
    check(got == {e["build_name"]: variant(e) for e in entries}, str(got))
    data = report(os.path.join(root, "stats.db"))
    want = sorted(f"libtorch cpu {variant(e)}" for e in entries)
    check(data["configs"] == want, f"{data['configs']} != {want}")
    check(sorted(s["config"] for s in data["sizes"]) == want,
          str(data["sizes"]))


with tempfile.TemporaryDirectory() as tmp:
    variants(os.path.join(tmp, "v"))
    runner(os.path.join(tmp, "r"))
    old_store(os.path.join(tmp, "o"))
print("ok")
