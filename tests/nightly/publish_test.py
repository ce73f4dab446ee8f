# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool nightly publish` (and publishing at the end of `run`): only the
SUCCEEDED jobs' artifacts, a PEP 503 index (%2B links, #sha256=,
data-requires-python) with PEP 691 JSON beside it that pip installs from in
a venv, the newest nightly installed and imported, an older one
downloadable until --keep prunes it, a libtorch listing, and a failed
publish that leaves the visible channel untouched."""
import hashlib
import html.parser
import json
import os
import subprocess
import urllib.parse

from nightlib import case, finish, load, pkgtool, scratch, sh_job, write_jobs

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
D = scratch()
ROOT, CHANNEL = f"{D}/root", f"{D}/channel"
DATES = ["2026_03_01", "2026_03_02", "2026_03_03"]


def version(date):
    return "1.0.0.dev" + date.replace("_", "") + "+cpu"


def nightly(date, extra=(), check=None):
    v = version(date)
    jobs = write_jobs(f"{D}/jobs-{date}.json", [
        sh_job("wheel-cpu", f"{PY} {HERE}/make_wheel.py {{artifact_dir}} torchlike {v}"),
        sh_job("wheel-broken", f"{PY} {HERE}/make_wheel.py {{artifact_dir}} brokenpkg {v}; exit 1"),
        sh_job("libtorch-cpu", "cd {artifact_dir} && echo lib > lib.txt && "
               f"{PY} -m zipfile -c libtorch-shared-with-deps-{v}.zip lib.txt && rm lib.txt"),
        sh_job("conda-cpu", "mkdir -p prefix-{job}/lib && echo conda > prefix-{job}/lib/t.txt && "
               f"$PKGTOOL conda pack prefix-{{job}} --name torchlike --version "
               f"{v.split('+')[0]} --build py311_0 --subdir linux-64 --license BSD "
               "--format both -o {artifact_dir} && rm -r prefix-{job}"),
        *extra])
    return pkgtool("nightly", "run", "--jobs", jobs, "--root", ROOT, "--date", date,
                   "--channel", CHANNEL, "--keep", "2", check=check)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs))


def links(path):
    p = Links()
    with open(path) as f:
        p.feed(f.read())
    return p.links


def pip(*args):
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    return subprocess.run([f"{D}/venv/bin/python", "-m", "pip", *args], capture_output=True,
                          text=True, env=env)


INDEX = "file://" + urllib.parse.quote(f"{CHANNEL}/current/simple/")


@case
def publish_two_nightlies_and_install_the_newest():
    nightly(DATES[0], check=1)  # wheel-broken fails on purpose
    p = nightly(DATES[1], check=1)
    assert "published 4 file(s)" in p.stdout, p.stdout
    assert os.path.islink(f"{CHANNEL}/current")
    assert os.listdir(f"{CHANNEL}/releases") == [os.readlink(f"{CHANNEL}/current").split("/")[1]]
    page = f"{CHANNEL}/current/simple/torchlike/index.html"
    found = links(page)
    assert len(found) == 2, found
    for a in found:
        href = a["href"]
        assert "%2B" in href and "+" not in href, href
        url, frag = href.split("#")
        assert frag.startswith("sha256=")
        target = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(url)))
        with open(target, "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == frag[len("sha256="):]
        assert a["data-requires-python"] == ">=3.8"
    with open(page) as f:
        assert 'data-requires-python="&gt;=3.8"' in f.read()
    assert not os.path.exists(f"{CHANNEL}/current/simple/brokenpkg"), "a failed job published"
    # PEP 691 JSON beside the HTML
    j = load(f"{CHANNEL}/current/simple/torchlike/index.json")
    assert j["meta"]["api-version"] == "1.0" and j["name"] == "torchlike"
    assert sorted(f["filename"] for f in j["files"]) == sorted(
        urllib.parse.unquote(a["href"].split("#")[0].rsplit("/", 1)[1]) for a in found)
    assert all(f["requires-python"] == ">=3.8" and len(f["hashes"]["sha256"]) == 64
               for f in j["files"])
    root = load(f"{CHANNEL}/current/simple/index.json")
    assert root["projects"] == [{"name": "torchlike"}], root
    # libtorch listing
    lt = links(f"{CHANNEL}/current/libtorch/index.html")
    assert len(lt) == 2 and all("%2B" in a["href"] for a in lt), lt
    # pip into a venv: the newest nightly, imported
    subprocess.run([PY, "-m", "venv", f"{D}/venv"], check=True)
    p = pip("install", "--index-url", INDEX, "torchlike")
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run([f"{D}/venv/bin/python", "-c",
                          "import torchlike; print(torchlike.__version__)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == version(DATES[1]), out
    p = pip("download", "--no-deps", "-d", f"{D}/dl", "--index-url", INDEX,
            f"torchlike=={version(DATES[0])}")
    assert p.returncode == 0, p.stdout + p.stderr


@case
def conda_repodata_matches_what_cph_reads():
    rd_path = f"{CHANNEL}/current/conda/linux-64/repodata.json"
    rd = load(rd_path)
    assert rd["info"]["subdir"] == "linux-64" and rd["repodata_version"] == 1
    assert len(rd["packages"]) == 2 and len(rd["packages.conda"]) == 2, rd
    assert load(f"{CHANNEL}/current/conda/noarch/repodata.json")["packages"] == {}
    for section in ("packages", "packages.conda"):
        for fn, rec in rd[section].items():
            assert fn.endswith(".tar.bz2" if section == "packages" else ".conda")
            pkg = f"{CHANNEL}/current/conda/linux-64/{fn}"  # beside its repodata
            with open(pkg, "rb") as f:
                data = f.read()
            assert rec["sha256"] == hashlib.sha256(data).hexdigest()
            assert rec["md5"] == hashlib.md5(data).hexdigest()
            assert rec["size"] == len(data)
            out = f"{D}/cph-{fn}"
            subprocess.run(["cph", "extract", pkg, "--dest", out, "--info"], check=True,
                           capture_output=True)
            index = load(f"{out}/info/index.json")
            for key, value in index.items():
                assert rec[key] == value, (fn, key, rec[key], value)
            assert set(rec) == set(index) | {"sha256", "md5", "size"}, set(rec) ^ set(index)
    cd = load(f"{CHANNEL}/current/conda/channeldata.json")
    assert cd["channeldata_version"] == 1 and "linux-64" in cd["subdirs"]
    assert cd["packages"]["torchlike"]["subdirs"] == ["linux-64"]
    assert cd["packages"]["torchlike"]["version"] == version(DATES[1]).split("+")[0]


@case
def keep_prunes_the_oldest_nightly():
    p = nightly(DATES[2], check=1)
    assert f"pruned torchlike-{version(DATES[0])}-py3-none-any.whl" in p.stdout, p.stdout
    assert len(links(f"{CHANNEL}/current/simple/torchlike/index.html")) == 2
    rd = load(f"{CHANNEL}/current/conda/linux-64/repodata.json")
    assert len(rd["packages.conda"]) == 2 and not any("20260301" in n for n in rd["packages.conda"])
    assert not os.path.exists(f"{CHANNEL}/files/torchlike-{version(DATES[0])}-py3-none-any.whl")
    p = pip("download", "--no-deps", "-d", f"{D}/dl2", "--index-url", INDEX,
            f"torchlike=={version(DATES[0])}")
    assert p.returncode != 0, "a pruned version is still downloadable"
    p = pip("download", "--no-deps", "-d", f"{D}/dl2", "--index-url", INDEX,
            f"torchlike=={version(DATES[1])}")
    assert p.returncode == 0, p.stdout + p.stderr
    p = pip("install", "--upgrade", "--index-url", INDEX, "torchlike")
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run([f"{D}/venv/bin/python", "-c",
                          "import torchlike; print(torchlike.__version__)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == version(DATES[2]), out


@case
def a_failed_publish_changes_nothing_visible():
    before = os.readlink(f"{CHANNEL}/current")
    with open(f"{CHANNEL}/current/simple/torchlike/index.html") as f:
        page = f.read()
    date = "2026_03_04"
    bad = sh_job("bad-meta", f"{PY} {HERE}/make_wheel.py {{artifact_dir}} torchlike "
                 f"{version(date)} --bad-metadata")
    p = nightly(date, extra=[bad], check=2)
    assert "METADATA" in p.stderr and p.stderr.startswith("error: "), p.stderr
    assert os.readlink(f"{CHANNEL}/current") == before
    with open(f"{CHANNEL}/current/simple/torchlike/index.html") as f:
        assert f.read() == page
    assert [n for n in os.listdir(f"{CHANNEL}/releases") if n.startswith(".")] == []
    # publishing it again without the bad job is refused the same way: the
    # nightly is left for a human, nothing half-published
    p = pkgtool("nightly", "publish", "--root", ROOT, "--date", date, "--channel", CHANNEL,
                check=2)
    assert os.readlink(f"{CHANNEL}/current") == before


EVIL_CONDA = r"""
import io, json, sys, tarfile
data = json.dumps({"name": "evil", "version": "1", "build": "0", "build_number": 0,
                   "subdir": sys.argv[2]}).encode()
with tarfile.open(sys.argv[1] + "/evil-1-0.tar.bz2", "w:bz2") as t:
    info = tarfile.TarInfo("info/index.json")
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
"""


@case
def a_conda_subdir_that_is_not_a_platform_is_refused():
    with open(f"{D}/evil_conda.py", "w") as f:
        f.write(EVIL_CONDA)
    before = os.readlink(f"{CHANNEL}/current")
    for i, subdir in enumerate(["../../escaped", "/tmp/abs", "Linux-64"]):
        date = f"2026_04_0{i + 1}"
        evil = sh_job("evil", f"{PY} {D}/evil_conda.py {{artifact_dir}} '{subdir}'")
        p = pkgtool("nightly", "run", "--jobs", write_jobs(f"{D}/evil-{i}.json", [evil]),
                    "--root", ROOT, "--date", date, "--channel", CHANNEL, check=2)
        assert p.stderr.startswith("error: ") and "evil-1-0.tar.bz2" in p.stderr \
            and subdir in p.stderr, p.stderr
        assert os.readlink(f"{CHANNEL}/current") == before
        assert not os.path.exists(f"{D}/escaped") and not os.path.exists(f"{CHANNEL}/escaped")
        assert not os.path.exists("/tmp/abs")
        assert not os.path.exists(f"{CHANNEL}/files/evil-1-0.tar.bz2")


@case
def a_manifest_with_a_bad_conda_subdir_is_refused():
    manifest = f"{CHANNEL}/manifest.json"
    with open(manifest) as f:
        original = f.read()
    before = os.readlink(f"{CHANNEL}/current")
    for field in ("subdir", "index_json"):
        doc = json.loads(original)
        entry = next(e for e in doc["files"] if e["kind"] == "conda")
        if field == "subdir":
            entry["subdir"] = "../../escaped"
        else:
            index = json.loads(entry["index_json"])
            index["subdir"] = "../../escaped"
            entry["index_json"] = json.dumps(index)
        with open(manifest, "w") as f:
            json.dump(doc, f)
        p = pkgtool("nightly", "publish", "--root", ROOT, "--date", DATES[2],
                    "--channel", CHANNEL, check=2)
        assert "manifest.json" in p.stderr and entry["file"] in p.stderr \
            and "../../escaped" in p.stderr, p.stderr
        assert os.readlink(f"{CHANNEL}/current") == before
        assert not os.path.exists(f"{D}/escaped")
    with open(manifest, "w") as f:
        f.write(original)


@case
def symlinked_artifacts_are_neither_recorded_nor_published():
    root, channel, outside = f"{D}/root-links", f"{D}/channel-links", f"{D}/outside"
    os.makedirs(outside)
    v = version("2026_05_01")
    subprocess.run([PY, f"{HERE}/make_wheel.py", outside, "secretpkg", v], check=True)
    secret = f"secretpkg-{v}-py3-none-any.whl"
    jobs = write_jobs(f"{D}/links.json", [
        sh_job("links", f"{PY} {HERE}/make_wheel.py {{artifact_dir}} torchlike {v} && "
               f"ln -s {outside}/{secret} {{artifact_dir}}/{secret} && "
               f"mkdir {{artifact_dir}}/sub && ln -s {outside} {{artifact_dir}}/sub/dir")])
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", "2026_05_01",
                "--channel", channel, check=0)
    doc_file = f"{root}/2026_05_01/jobs/links.json"
    doc = load(doc_file)
    names = [a["name"] for a in doc["artifacts"]]
    assert len(names) == 1 and names[0].endswith(f"torchlike-{v}-py3-none-any.whl"), names
    assert not os.path.isabs(names[0]) and ".." not in names[0], names
    assert os.listdir(f"{channel}/files") == [f"torchlike-{v}-py3-none-any.whl"]
    assert any("symlink" in n for n in doc["notes"]), doc["notes"]
    # a job document naming a file outside the nightly, or a symlink, is refused
    before = os.readlink(f"{channel}/current")
    for name, says in ((f"../outside/{secret}", "leaves the nightly directory"),
                       (f"{outside}/{secret}", "leaves the nightly directory"),
                       (names[0].replace("torchlike", "secretpkg"), "symlink"),
                       # a symlinked directory on the way, not only at the end
                       (os.path.join(os.path.dirname(names[0]), "sub", "dir", secret),
                        "symlink")):
        bad = dict(doc, artifacts=[dict(doc["artifacts"][0], name=name)])
        with open(doc_file, "w") as f:
            json.dump(bad, f)
        p = pkgtool("nightly", "publish", "--root", root, "--date", "2026_05_01",
                    "--channel", channel, check=2)
        assert says in p.stderr and p.stderr.startswith("error: "), p.stderr
        assert os.readlink(f"{channel}/current") == before
        assert secret not in os.listdir(f"{channel}/files")


@case
def a_published_file_is_never_replaced_by_other_bytes():
    root, channel = f"{D}/root-same", f"{D}/channel-same"
    name = "libtorch-shared-with-deps-latest.zip"
    for date, content, status in (("2026_06_01", "one", 0), ("2026_06_02", "one", 0),
                                  ("2026_06_03", "two", 2)):
        jobs = write_jobs(f"{D}/same-{date}.json", [
            sh_job("lt", f"cd {{artifact_dir}} && echo {content} > lib.txt && "
                   f"{PY} -c \"import zipfile; z = zipfile.ZipFile('{name}', 'w'); "
                   "z.writestr(zipfile.ZipInfo('lib.txt', (2026, 1, 1, 0, 0, 0)), "
                   "open('lib.txt').read()); z.close()\" && rm lib.txt")])
        before = os.readlink(f"{channel}/current") if os.path.exists(channel) else None
        with open(f"{channel}/files/{name}", "rb") if before else open(os.devnull, "rb") as f:
            published = f.read()
        p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", date,
                    "--channel", channel, check=status)
        if status == 2:
            assert p.stderr.startswith("error: ") and f"files/{name}" in p.stderr, p.stderr
            assert os.readlink(f"{channel}/current") == before
            with open(f"{channel}/files/{name}", "rb") as f:
                assert f.read() == published, "the live file was replaced"


finish()
