# SPDX-License-Identifier: BSD-3-Clause
"""Documents of one night that differ only in a configuration's variant
fields, what the report must make of them, and the stats schema as it was
before the `variant` column (to test the upgrade of an old store), shared by
stats_variant_cli.py (SQLite) and stats_pg_cli.py (PostgreSQL)."""
import copy
import datetime
import json

import stats_fixtures

NIGHT = datetime.date(2026, 11, 24)
LIBTORCH = ("libtorch", "", "cpu")

# (libtorch_variant, cxx_abi): the four libtorch builds of one night, all
# under one job-name-free label before the variant column.
BUILDS = [("shared-with-deps", "cxx11"), ("shared-with-deps", "pre-cxx11"),
          ("shared-without-deps", "cxx11"), ("static", "cxx11")]


def libtorch_job(variant, abi, size, job=None, extra=None):
    """A runner's libtorch-cpu document of NIGHT with the matrix's config
    fields (jobs_from_matrix), succeeded with one artifact of `size`."""
    doc = stats_fixtures.job_document(NIGHT, LIBTORCH, "SUCCEEDED", size)
    doc["job"] = job or f"libtorch-cpu-{variant}-{abi}"
    doc["log"] = f"logs/succeeded/{doc['job']}.log"
    doc["config"].update({"cxx_abi": abi, "libtorch_variant": variant,
                          "os": "linux", "arch": "x86_64",
                          "build_environment": f"libtorch cpu {variant}"})
    doc["config"].update(extra or {})
    abi_part = "cxx11-abi-" if abi == "cxx11" else ""
    doc["artifacts"][0]["name"] = (
        f"libtorch-{abi_part}{variant}-2.6.0.dev20261124+cpu.zip")
    return doc


def job_documents():
    """The four libtorch builds of NIGHT, sizes 100, 200, 300, 400 MB."""
    return [libtorch_job(v, a, 100_000_000 * (i + 1))
            for i, (v, a) in enumerate(BUILDS)]


def variant_of(variant, abi):
    return f"{variant} {abi} linux x86_64"


def label_of(variant, abi):
    return f"libtorch cpu {variant_of(variant, abi)}"


def driver_summaries():
    """Two CI summaries (libpkg-driver/1) of one configuration but the
    libtorch variant: the same `driver` (their job name) and no
    build_environment, so only the variant tells them apart."""
    base = {"schema": "libpkg-driver/1", "driver": "libtorch",
            "config": {"package_type": "libtorch", "python": "",
                       "accelerator": "cu124", "cxx_abi": "cxx11",
                       "os": "linux", "arch": "x86_64",
                       "package_name": "torch", "version": "2.6.0",
                       "build_number": 0},
            "passed": True, "seconds": 12.5, "checks": [], "artifacts": []}
    out = []
    for variant, size in (("shared-with-deps", 5000), ("static", 7000)):
        d = copy.deepcopy(base)
        d["config"]["libtorch_variant"] = variant
        d["artifacts"] = [{"role": "libtorch", "path":
                           f"/out/libtorch-cxx11-abi-{variant}-2.6.0.zip",
                           "size": size}]
        out.append(d)
    return out


DRIVER_LABELS = {
    "libtorch cu124 shared-with-deps cxx11 linux x86_64 package_name=torch":
        5000,
    "libtorch cu124 static cxx11 linux x86_64 package_name=torch": 7000,
}


def check_report(report, check):
    """The report of job_documents() (and driver_summaries() when ingested):
    one row, one cell and one size series per build, labelled by its
    variant, the cells' variant as stored."""
    want = {label_of(v, a): (variant_of(v, a), 100_000_000 * (i + 1))
            for i, (v, a) in enumerate(BUILDS)}
    cells = {c["config"]: c for c in report["cells"]
             if c["date"] == NIGHT.isoformat()
             and c["config"].startswith("libtorch cpu ")}
    check(sorted(cells) == sorted(want),
          f"libtorch rows {sorted(cells)} != {sorted(want)}")
    for label, (variant, _) in want.items():
        check(cells[label]["variant"] == variant and
              cells[label]["status"] == "SUCCEEDED", str(cells[label]))
    sizes = {s["config"]: s for s in report["sizes"]
             if s["config"].startswith("libtorch cpu ")}
    check(sorted(sizes) == sorted(want), f"size series {sorted(sizes)}")
    for label, (_, size) in want.items():
        check([p["size"] for p in sizes[label]["points"]] == [size],
              f"{label}: {sizes[label]['points']}")


# The stats schema before the variant column (stats_sqlite_store.cpp and
# stats_pg_store.cpp as of commit e0e8e5c), to make a store as an older
# pkgtool left it.
OLD_INDEXES = """
CREATE INDEX documents_date ON documents(date);
CREATE INDEX documents_config ON documents(package_type, python, accelerator);
CREATE INDEX documents_job ON documents(job);
CREATE INDEX documents_status ON documents(status);
CREATE INDEX artifacts_doc ON artifacts(doc_key);
CREATE INDEX artifacts_name ON artifacts(name);
"""

OLD_SQLITE_SCHEMA = """
CREATE TABLE documents (
  key TEXT PRIMARY KEY, schema TEXT NOT NULL, date TEXT NOT NULL,
  package_type TEXT NOT NULL, python TEXT NOT NULL, accelerator TEXT NOT NULL,
  job TEXT NOT NULL, status TEXT NOT NULL, start TEXT, duration_s REAL,
  log TEXT, failure TEXT NOT NULL, doc TEXT NOT NULL);
CREATE TABLE artifacts (
  doc_key TEXT NOT NULL REFERENCES documents(key) ON DELETE CASCADE,
  name TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT);
""" + OLD_INDEXES

OLD_PG_SCHEMA = """
CREATE TABLE documents (
  key text COLLATE "C" PRIMARY KEY, schema text NOT NULL,
  date text COLLATE "C" NOT NULL, package_type text NOT NULL,
  python text NOT NULL, accelerator text NOT NULL, job text NOT NULL,
  status text NOT NULL, start text COLLATE "C", duration_s double precision,
  log text, failure text NOT NULL, doc jsonb NOT NULL, seq bigserial NOT NULL);
CREATE TABLE artifacts (
  doc_key text COLLATE "C" NOT NULL REFERENCES documents(key) ON DELETE CASCADE,
  name text NOT NULL, size bigint NOT NULL, sha256 text,
  seq bigserial NOT NULL);
""" + OLD_INDEXES


def old_rows(doc):
    """The row an older pkgtool stored for a libpkg-job/1 document:
    (documents values, [artifact values])."""
    c = doc["config"]
    key = f"job:{doc['nightly']}/{doc['job']}"
    documents = (key, "libpkg-job/1", doc["nightly"].replace("_", "-"),
                 c["package_type"], c["python"], c["accelerator"], doc["job"],
                 doc["state"], doc["start"], doc["duration_s"], doc["log"], "",
                 json.dumps(doc))
    artifacts = [(key, a["name"], a["size"], a["sha256"])
                 for a in doc["artifacts"]]
    return documents, artifacts
