#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Nightly stats figures (issue 20): ingest rate of `pkgtool stats ingest`
and the time of `pkgtool nightly report` over N generated libpkg-job/1
documents (tests/nightly/stats_fixtures.py: 100 configurations x N/100
nights, each with an artifact, its largest members and a log path), on the
SQLite store and, with --postgresql, on a private PostgreSQL 15 server
started for the run (tests/nightly/pg_server.py).

    bench/nightly_stats_bench.py --build build [--documents 100000] [--runs 3]
                                 [--postgresql] [--pkgtool OTHER] [--keep DIR]

Targets: ingest >= 10,000 documents/s (SQLite); report < 2 s. Each timing is
the median (and best) of --runs, with the child's own CPU time (user+sys)
and peak RSS from wait4(2); for PostgreSQL the server's CPU is not in the
child's figure. --pkgtool times another binary (e.g. the previous build)
on the same databases in the same run, for a side-by-side ratio. Prints the
machine's load (uptime) before and after, since the machine may be shared."""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "nightly"))
import stats_fixtures  # noqa: E402


def run_once(argv):
    """(wall s, user+sys s, max RSS KB) of one run of argv."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed ({status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def timed(argv, runs):
    results = [run_once(argv) for _ in range(runs)]
    walls = [r[0] for r in results]
    return {"median": statistics.median(walls), "best": min(walls),
            "cpu": statistics.median(r[1] for r in results),
            "rss": max(r[2] for r in results), "runs": runs}


def show(what, t, extra=""):
    print(f"{what}: median {t['median']:.2f} s, best {t['best']:.2f} s of "
          f"{t['runs']} (user+sys {t['cpu']:.2f} s, max RSS "
          f"{t['rss'] / 1024:.0f} MB){extra}", flush=True)


def uptime(when):
    print(f"uptime {when}:", subprocess.run(["uptime"], capture_output=True,
                                            text=True).stdout.strip(), flush=True)


def bench_store(name, pkgtool, other, docs, n, runs, tmp, fresh):
    """Ingest into `runs` fresh stores (fresh(r) gives each URL; with
    `other`, its ingest into its own fresh stores, in turn), then the
    re-ingest and the reports on the last one."""
    binaries = [("", pkgtool)] + ([(" [other]", other)] if other else [])
    ingest = {label: [] for label, _ in binaries}
    for r in range(runs):  # the binaries in turn, run by run
        for label, binary in binaries:
            url = fresh(r) if not label else fresh(f"other{r}")
            ingest[label].append(run_once([binary, "stats", "ingest", "--db",
                                           url, docs]))
    for label, _ in binaries:
        walls = sorted(w for w, _, _ in ingest[label])
        med = statistics.median(walls)
        print(f"[{name}] ingest {n} documents (fresh store){label}: median "
              f"{med:.2f} s, best {walls[0]:.2f} s of {runs} -> "
              f"{n / med:,.0f} documents/s (median), {n / walls[0]:,.0f} "
              f"(best); client user+sys "
              f"{statistics.median(c for _, c, _ in ingest[label]):.2f} s, "
              f"max RSS {max(m for _, _, m in ingest[label]) / 1024:.0f} MB",
              flush=True)
    url = fresh(runs - 1)
    again = timed([pkgtool, "stats", "ingest", "--stats-url", url, docs], 1)
    show(f"[{name}] re-ingest (all unchanged)", again,
         f" -> {n / again['median']:,.0f} documents/s")
    out = os.path.join(tmp, f"report-{name}.html")
    for days in (30, 0):
        shown = f"all {n}" if days == 0 else str(min(n, days * 100))
        for label, binary in binaries:
            # --db: the option both binaries know.
            t = timed([binary, "nightly", "report", "--db", url, "--html",
                       out, "--days", str(days)], runs)
            show(f"[{name}] report --html --days {days} ({shown} documents "
                 f"shown){label}", t,
                 f", page {os.path.getsize(out) / 1e6:.1f} MB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--documents", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--postgresql", action="store_true")
    ap.add_argument("--pkgtool", help="another pkgtool to time the SQLite "
                    "report with, side by side")
    args = ap.parse_args()
    pkgtool = os.path.join(args.build, "tools", "pkgtool", "pkgtool")
    configs = [("manywheel", f"3.{9 + i % 5}", f"cu{118 + i // 5}")
               for i in range(100)]
    nights = args.documents // len(configs)
    uptime("before")
    with tempfile.TemporaryDirectory() as tmp:
        docs = os.path.join(tmp, "docs")
        os.makedirs(docs)
        n = 0
        for day, doc in stats_fixtures.history(
                nights, configs, datetime.date(2026, 11, 24)):
            with open(os.path.join(docs, f"{n:06d}.json"), "w") as f:
                json.dump(doc, f)
            n += 1
        size = sum(os.path.getsize(os.path.join(docs, f))
                   for f in os.listdir(docs))
        print(f"{n} documents, {size / 1e6:.0f} MB, {len(configs)} "
              f"configurations x {nights} nights", flush=True)
        bench_store("sqlite", pkgtool, args.pkgtool, docs, n, args.runs, tmp,
                    lambda r: os.path.join(tmp, f"stats{r}.db"))
        for f in os.listdir(tmp):  # the other binary's stores
            if f.startswith("statsother"):
                os.remove(os.path.join(tmp, f))
        if args.postgresql:
            from pg_server import PgServer
            with PgServer(durable=True) as pg:
                made = set()

                def fresh_pg(r):
                    if r not in made:  # (the last is asked for again)
                        pg.create_database(f"bench{r}")
                        made.add(r)
                    return pg.url(f"bench{r}")
                bench_store("postgresql", pkgtool, None, docs, n, args.runs,
                            tmp, fresh_pg)
    uptime("after")


if __name__ == "__main__":
    main()
