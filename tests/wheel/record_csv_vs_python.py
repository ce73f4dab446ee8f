#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""RECORD CSV quoting cross-checked with Python's csv module in the dialect
`wheel` writes RECORD with (csv.writer(..., lineterminator="\\n")).

1. Rows with awkward paths (commas, quotes, newlines, spaces, unicode,
   empty fields) written by Python are parsed by libpkg to the same rows.
2. libpkg formats the same rows byte-identically to Python's writer.
3. Python's csv reader reads libpkg's output back to the same rows.
4. Malformed CSV (unterminated quote) is rejected with exit 2.

One deliberate difference: we also quote fields containing a bare '\r'.
Python 3.11's writer doesn't when lineterminator is "\n", and then its own
reader splits the row there; so rows with '\r' are checked only for
"Python reads ours back to the same rows".
"""
import csv
import io
import json
import os
import random
import subprocess
import sys
import tempfile

PROBE = os.environ["WHEEL_PROBE"]

FIXED = [
    ["pkg/plain.py", "sha256=abc", "12"],
    ["pkg/with,comma.py", "sha256=abc", "1"],
    ['pkg/with"quote.py', "sha256=abc", "2"],
    ['"starts-with-quote', "", ""],
    ["pkg/new\nline.txt", "sha256=x", "3"],
    ["pkg/space name.py", "sha256=x", "0"],
    ["pkg/ünïcødé,名前.py", "sha256=x", "9"],
    ["pkg-1.0.dist-info/RECORD", "", ""],
    ["", "", ""],
    [",,,", '""', "'"],
]


def random_rows(n, rng):
    alphabet = 'ab,"\n /.é_-'
    rows = []
    for _ in range(n):
        rows.append(["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
                     for _ in range(3)])
    return rows


def python_csv(rows):
    buf = io.StringIO(newline="")
    w = csv.writer(buf, delimiter=",", quotechar='"', lineterminator="\n")
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def probe(cmd, data, tmp):
    path = os.path.join(tmp, "in")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(data)
    p = subprocess.run([PROBE, cmd, path], capture_output=True)
    return p


def main():
    rng = random.Random(1234)
    rows = FIXED + random_rows(300, rng)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        text = python_csv(rows)
        p = probe("csv-parse", text, tmp)
        assert p.returncode == 0, p.stderr
        parsed = json.loads(p.stdout)
        # csv.reader turns an empty line ("" written alone as '""') into [""].
        want = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
        if parsed != want:
            failures += 1
            for a, b in zip(parsed, want):
                if a != b:
                    print("parse mismatch:", repr(a), "!=", repr(b))
                    break
        if want != rows:
            print("note: Python itself does not round-trip some rows")

        p = probe("csv-format", json.dumps(rows), tmp)
        assert p.returncode == 0, p.stderr
        ours = p.stdout.decode("utf-8")
        if ours != text:
            failures += 1
            for a, b in zip(ours.split("\n"), text.split("\n")):
                if a != b:
                    print("format mismatch:", repr(a), "!=", repr(b))
                    break
        back = list(csv.reader(io.StringIO(ours, newline="")))
        if back != rows:
            failures += 1
            print("Python cannot read our output back to the same rows")

        cr_rows = [["pkg/cr\rlf\r\n.txt", "sha256=x", "3"], ["a\rb", "", ""]]
        p = probe("csv-format", json.dumps(cr_rows), tmp)
        back = list(csv.reader(io.StringIO(p.stdout.decode(), newline="")))
        if p.returncode != 0 or back != cr_rows:
            failures += 1
            print("rows with \\r don't read back:", back)
        p = probe("csv-parse", p.stdout.decode(), tmp)
        if p.returncode != 0 or json.loads(p.stdout) != cr_rows:
            failures += 1
            print("rows with \\r don't parse back:", p.stdout)

        p = probe("csv-parse", 'a,"unterminated\n', tmp)
        if p.returncode != 2 or b"unterminated" not in p.stderr:
            failures += 1
            print("malformed CSV not rejected:", p.returncode, p.stderr)
    print(f"{len(rows)} rows; {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
