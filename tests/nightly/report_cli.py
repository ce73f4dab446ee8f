#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool nightly report` from a 30-night history: the --json data matches
what Python's sqlite3 reads from stats.db (cells, statuses, one size point
per night, today's size and status regressions with the threshold), the
page is one self-contained file (no script, stylesheet, font or URL from
elsewhere) whose links resolve to the logs, and bad input exits 2."""
import json
import os
import re
import sqlite3
import sys
import tempfile
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_fixtures  # noqa: E402
from nightlib import check, pkgtool  # noqa: E402


def label(pt, py, acc):
    return " ".join(p for p in (pt, f"py{py}" if py else "", acc) if p)


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.cells, self.links, self.urls = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "td" and "cell" in a.get("class", ""):
            self.cells.append(a)
        if tag == "a":
            self.links.append(a["href"])
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.urls.append(v)


with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "nightly")
    paths = stats_fixtures.write_history(root, 30)
    db = os.path.join(root, "stats.db")
    pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    out = os.path.join(tmp, "site", "report.html")
    pkgtool("nightly", "report", "--db", db, "--html", out, "--json",
        os.path.join(tmp, "site", "report.json"), check=0)
    data = json.load(open(os.path.join(tmp, "site", "report.json")))
    r = pkgtool("nightly", "report", "--db", db, "--json", "-", check=0)
    check(json.loads(r.stdout) == data, "--json - differs from --json FILE")

    con = sqlite3.connect(db)
    rows = con.execute("SELECT date, package_type, python, accelerator, status,"
                       " failure, log FROM documents").fetchall()
    check(len(data["cells"]) == len(rows) == 120, f"{len(data['cells'])} cells")
    want = {(label(pt, py, acc), d): (st, fail) for d, pt, py, acc, st, fail, _
            in rows}
    got = {(c["config"], c["date"]): (c["status"], c["failure"])
           for c in data["cells"]}
    check(got == want, "cells differ from the database")
    check(len(data["dates"]) == 30 and data["today"] == "2026-11-24",
          str(data["dates"][:2]))

    # Sizes: one point per night that has the package's artifact.
    for series in data["sizes"]:
        n = con.execute(
            "SELECT count(DISTINCT d.date) FROM artifacts a JOIN documents d "
            "ON d.key = a.doc_key WHERE d.package_type || ' ' || "
            "(CASE d.python WHEN '' THEN '' ELSE 'py' || d.python || ' ' END) "
            "|| d.accelerator = ?", (series["config"],)).fetchone()[0]
        check(len(series["points"]) == n, f"{series['config']}: "
              f"{len(series['points'])} points for {n} nights")
    first = next(s for s in data["sizes"]
                 if s["config"] == "manywheel py3.11 cu124")
    check(len(first["points"]) == 30, "the first configuration has 30 points")

    # Regressions: the 12% jump of manywheel py3.11 cu124 and the new failure
    # of manywheel py3.12 cpu.
    size = data["regressions"]["size"]
    check([(s["config"], s["package"]) for s in size] ==
          [("manywheel py3.11 cu124", "torch.whl")], str(size))
    check(abs(size[0]["growth"] - 0.12) < 0.001, str(size[0]["growth"]))
    check(size[0]["members"][0]["name"] == "torch/lib/libtorch_cpu.so",
          str(size[0]["members"]))
    status = data["regressions"]["status"]
    check([(s["config"], s["failure"]) for s in status] ==
          [("manywheel py3.12 cpu", "build")], str(status))
    # A threshold above the jump flags nothing.
    r = pkgtool("nightly", "report", "--db", db, "--json", "-",
            "--size-threshold", "15", check=0)
    check(json.loads(r.stdout)["regressions"]["size"] == [], "threshold 15%")
    # An older night as today: its window and nothing after it.
    r = pkgtool("nightly", "report", "--db", db, "--json", "-", "--date",
            "2026-11-10", "--days", "7", check=0)
    older = json.loads(r.stdout)
    check(older["dates"][0] == "2026-11-04" and older["dates"][-1] ==
          "2026-11-10", str(older["dates"]))
    check(all("2026-11-04" <= c["date"] <= "2026-11-10" for c in older["cells"]),
          "cells outside the window")

    # The page: self-contained, one cell per document, links to the logs.
    html = open(out, encoding="utf-8").read()
    page = Page()
    page.feed(html)
    check(not {"script", "link", "img", "iframe", "object"} & set(page.tags),
          "the page loads something")
    check(not re.search(r"(https?:)?//|@import|url\(", html),
          "the page refers to another site")
    check(len(page.cells) == 120, f"{len(page.cells)} cells in the page")
    for cell in page.cells:
        key = (cell["data-config"], cell["data-date"])
        check(cell["data-status"] == want[key][0], f"{key}: status")
    check(len(page.links) >= 120, f"{len(page.links)} links")
    for href in page.links:
        target = os.path.normpath(os.path.join(os.path.dirname(out), href))
        check(os.path.isfile(target), f"link {href} has no file")
    check(html.count('class="point') == sum(len(s["points"]) for s in
                                            data["sizes"] + data["durations"]),
          "chart points")
    check("No such" not in html and "torch/lib/libtorch_cpu.so" in html,
          "members that grew are named")

    # Bad input.
    r = pkgtool("nightly", "report", "--db", os.path.join(tmp, "none.db"), "--html",
            out, check=2)
    check(r.stderr.startswith("error: ") and "none.db" in r.stderr, r.stderr)
    r = pkgtool("nightly", "report", "--db", db, check=2)
    check("--html or --json" in r.stderr, r.stderr)
    r = pkgtool("nightly", "report", "--db", db, "--json", "-", "--date", "24.11.",
            check=2)
    check("not YYYY-MM-DD" in r.stderr, r.stderr)
    r = pkgtool("nightly", "nosuch", check=2)
    check("unknown subcommand" in r.stderr, r.stderr)
print("ok")
