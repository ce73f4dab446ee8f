# SPDX-License-Identifier: BSD-3-Clause
"""A short nightly end to end: a wheel with a C extension compiled at test
time goes through the real `manywheel` driver in one job, another
configuration is made to fail on purpose (a wheel for another Python than
the configuration's), a third job is a cheap command; then every state, log
location, job document (with the driver's summary and check report), the
published index (PEP 503 page and PEP 691 JSON, hashes against hashlib),
the stats rows (the job documents ingested into stats.db, read back with
Python's sqlite3) and the report's cells are checked, and pip installs the
published wheel into a venv and imports its extension."""
import hashlib
import json
import os
import sqlite3
import subprocess
import urllib.parse

from nightlib import case, finish, load, pkgtool, scratch, sh_job, write_jobs

PY = "/usr/bin/python3"
MANYWHEEL = os.path.join(os.environ["LIBPKG_BINARY_DIR"], "drivers", "manywheel", "manywheel")
D = scratch()
DATE = "2026_04_01"
VERSION = "1.0.0.dev20260401"


def build_input_wheel():
    """torchlike with an extension module, packed as a linux_x86_64 wheel."""
    tree = f"{D}/tree"
    os.makedirs(f"{tree}/torchlike")
    with open(f"{D}/ext.c", "w") as f:
        f.write('#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, '
                '"_C", NULL, -1, NULL};\nPyMODINIT_FUNC PyInit__C(void) '
                '{ return PyModule_Create(&m); }\n')
    include = subprocess.run([PY, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    suffix = subprocess.run([PY, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", f"-I{include}", f"{D}/ext.c", "-o",
                    f"{tree}/torchlike/_C{suffix}"], check=True)
    with open(f"{tree}/torchlike/__init__.py", "w") as f:
        f.write(f"from . import _C\n__version__ = {VERSION!r}\n")
    tag = subprocess.run([PY, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                         capture_output=True, text=True, check=True).stdout.strip()
    dist = f"{tree}/torchlike-{VERSION}.dist-info"
    os.makedirs(dist)
    with open(f"{dist}/METADATA", "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: torchlike\nVersion: {VERSION}\n"
                "Requires-Python: >=3.8\n\n")
    with open(f"{dist}/WHEEL", "w") as f:
        f.write(f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                f"Tag: {tag}-{tag}-linux_x86_64\n")
    pkgtool("wheel", "pack", tree, "-d", f"{D}/in", check=0)
    (wheel,) = os.listdir(f"{D}/in")
    return f"{D}/in/{wheel}", tag


@case
def manywheel_nightly_end_to_end():
    wheel, tag = build_input_wheel()
    py = f"{tag[2]}.{tag[3:]}"
    other = "3.12" if py != "3.12" else "3.13"
    drive = (f"echo ::step manywheel; {MANYWHEEL} --wheel {wheel} --cuda cpu --python {{python}} "
             "--no-runtime -o {artifact_dir} --json > {summary}")
    jobs = write_jobs(f"{D}/jobs.json", [
        sh_job(f"manywheel-py{py.replace('.', '_')}-cpu", drive,
               config={"package_type": "manywheel", "python": py, "accelerator": "cpu"}),
        sh_job(f"manywheel-py{other.replace('.', '_')}-cpu", drive,  # fails: wrong python
               config={"package_type": "manywheel", "python": other, "accelerator": "cpu"}),
        sh_job("smoke", "echo ::step smoke; echo fine"),
    ])
    good, bad = f"manywheel-py{py.replace('.', '_')}-cpu", f"manywheel-py{other.replace('.', '_')}-cpu"
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", f"{D}/root", "--date", DATE,
                "-j", "2", "--channel", f"{D}/channel", check=1)
    assert "2 succeeded, 1 failed, 0 cancelled" in p.stdout, p.stdout
    nd = f"{D}/root/{DATE}"
    st = {j["job"]: j for j in json.loads(pkgtool(
        "nightly", "status", "--root", f"{D}/root", "--json", check=0).stdout)["jobs"]}
    assert st[good]["state"] == "SUCCEEDED" and st["smoke"]["state"] == "SUCCEEDED", st
    assert st[bad]["state"] == "FAILED" and st[bad]["exit_code"] == 2, st[bad]
    assert st[bad]["failed_step"] == "manywheel", st[bad]
    # every state: finished, timed, first attempt, its log where it ended up
    for job, s in st.items():
        where = "failed" if job == bad else "succeeded"
        assert s["attempt"] == 1 and s["signal"] == 0 and s["reason"] == "", s
        assert s["start"] and s["end"] >= s["start"], s
        assert s["log"] == f"logs/{where}/{job}.log", s
        assert os.path.isfile(f"{nd}/{s['log']}"), s
        if job != bad:
            assert s["exit_code"] == 0 and s["failed_step"] == "", s
    assert os.listdir(f"{nd}/logs/running") == []
    assert sorted(os.listdir(f"{nd}/logs/succeeded")) == sorted([f"{good}.log", "smoke.log"])
    assert os.listdir(f"{nd}/logs/failed") == [f"{bad}.log"]
    with open(f"{nd}/logs/failed/{bad}.log") as f:
        assert "error: " in f.read()
    doc = load(f"{nd}/jobs/{good}.json")
    assert doc["state"] == "SUCCEEDED" and doc["config"]["python"] == py
    assert doc["driver_summary"]["schema"] == "libpkg-driver/1"
    assert doc["driver_summary"]["passed"] is True
    assert doc["check"]["schema"] == "libpkg-check/1" and doc["check"]["passed"] is True
    (art,) = doc["artifacts"]
    assert "manylinux" in art["name"] and art["name"].endswith(".whl"), art
    assert any(m["name"].startswith("torchlike/_C") for m in art["largest_members"])
    # published: the manylinux wheel, not the input; pip installs and imports it
    page = f"{D}/channel/current/simple/torchlike/index.html"
    with open(page) as f:
        text = f.read()
    assert os.path.basename(art["name"]) in text and "linux_x86_64.whl" not in text.replace(
        "manylinux", ""), text
    # PEP 691 beside it: the same file, its sha256 that of the bytes published
    page_json = load(f"{D}/channel/current/simple/torchlike/index.json")
    (entry,) = page_json["files"]
    with open(f"{D}/channel/files/{entry['filename']}", "rb") as f:
        published = hashlib.sha256(f.read()).hexdigest()
    assert entry["filename"] == os.path.basename(art["name"]), entry
    assert entry["hashes"]["sha256"] == published == art["sha256"], entry
    assert entry["requires-python"] == ">=3.8", entry
    root_json = load(f"{D}/channel/current/simple/index.json")
    assert [p["name"] for p in root_json["projects"]] == ["torchlike"], root_json
    # the failed configuration's files are nowhere in the channel
    assert os.listdir(f"{D}/channel/files") == [entry["filename"]]

    # stats: the runner recorded the job documents in stats.db as each job
    # ended, one row per job; ingesting the same documents again changes
    # nothing
    db = f"{D}/root/stats.db"
    p = pkgtool("stats", "ingest", "--db", db, f"{nd}/jobs", check=0)
    assert "0 inserted, 0 replaced, 3 unchanged" in p.stdout, p.stdout
    con = sqlite3.connect(db)
    rows = {r[0]: r[1:] for r in con.execute(
        "SELECT job, status, date, package_type, python, accelerator, log, failure "
        "FROM documents")}
    assert rows[good] == ("SUCCEEDED", "2026-04-01", "manywheel", py, "cpu",
                          f"logs/succeeded/{good}.log", ""), rows[good]
    assert rows[bad][:6] == ("FAILED", "2026-04-01", "manywheel", other, "cpu",
                             f"logs/failed/{bad}.log"), rows[bad]
    assert rows[bad][6] == "manywheel", rows[bad]
    assert rows["smoke"] == ("SUCCEEDED", "2026-04-01", "", "", "", "logs/succeeded/smoke.log",
                             ""), rows["smoke"]
    arts = con.execute("SELECT d.job, a.name, a.size, a.sha256 FROM artifacts a "
                       "JOIN documents d ON d.key = a.doc_key").fetchall()
    assert arts == [(good, art["name"], art["size"], art["sha256"])], arts
    # the report over them: one cell per configuration, linking to its log
    pkgtool("nightly", "report", "--db", db, "--html", f"{D}/report.html", "--json",
            f"{D}/report.json", check=0)
    report = load(f"{D}/report.json")
    assert report["today"] == "2026-04-01", report["today"]
    cells = {c["job"]: c for c in report["cells"]}
    assert cells[good]["status"] == "SUCCEEDED" and cells[good]["date"] == "2026-04-01", cells
    assert cells[bad]["status"] == "FAILED" and cells[bad]["failure"] == "manywheel", cells
    assert cells[bad]["log"].endswith(f"root/{DATE}/logs/failed/{bad}.log"), cells[bad]
    with open(f"{D}/report.html") as f:
        assert f"{DATE}/logs/failed/{bad}.log" in f.read()

    subprocess.run([PY, "-m", "venv", f"{D}/venv"], check=True)
    index = "file://" + urllib.parse.quote(f"{D}/channel/current/simple/")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    p = subprocess.run([f"{D}/venv/bin/python", "-m", "pip", "install", "--index-url", index,
                        "torchlike"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run([f"{D}/venv/bin/python", "-c",
                          "import torchlike, torchlike._C; print(torchlike.__version__)"],
                         capture_output=True, text=True, check=True, cwd="/").stdout.strip()
    assert out == VERSION, out
    p = pkgtool("nightly", "list", "--root", f"{D}/root", check=0)
    assert f"{DATE}" in p.stdout and "    3" in p.stdout, p.stdout


finish()
