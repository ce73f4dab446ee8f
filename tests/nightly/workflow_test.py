# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool workflow`: the GitHub Actions workflow written from the matrix.

- structure (read with python3-yaml): top-level keys, `on` a string key,
  job ids GitHub accepts, every `needs` names a job and they form no cycle,
  one matrix entry per configuration for several filters (the count and
  the build names equal `pkgtool matrix`'s), macOS packaging jobs after
  their build jobs, the final job after every packaging job, artifact names
  unique over the whole run and the final job's downloads matching them;
  the same arguments give the same bytes;
- every packaging step run as CI would (bash -e, the job's environment with
  the matrix values), for every configuration of the whole matrix, with
  $LIBPKG_BIN pointing at the built tools: each names an existing driver
  whose flags parse (drivers with --dry-run added; their summary's
  configuration is the entry's BUILD_ENVIRONMENT);
- the plan job's script on a fake checkout, and the final job's import,
  ingest, publish and report steps on fake downloaded artifacts: one job
  document per configuration, the passing ones published, one stats row
  per configuration, a report;
- --check: 0 for an equal file, 1 naming the first difference for an
  edited, truncated or stale file (the matrix file changed), 2 for a
  missing file; bad filters exit 2 writing nothing."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import zipfile

import yaml

from nightlib import PKGTOOL, case, finish, load, pkgtool, run, scratch

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ["LIBPKG_SOURCE_DIR"]
TOOLS = {"manywheel": os.environ["MANYWHEEL"], "conda": os.environ["CONDA_DRIVER"],
         "libtorch": os.environ["LIBTORCH_DRIVER"], "wheel_macos": os.environ["WHEEL_MACOS"],
         "pkgtool": PKGTOOL, "check_binary": os.environ["CHECK_BINARY"]}
DRIVERS = {"manywheel", "conda", "libtorch", "wheel_macos"}
PLAN = {"date": "2026_11_27", "day": "2026-11-27", "epoch": "1795737600",
        "base_version": "2.6.0.dev20261127", "sha": "0123456789abcdef0123456789abcdef01234567"}
FILTERS = [
    [],
    ["--package-type", "manywheel", "--cuda", "cpu"],
    ["--package-type", "libtorch", "--cuda", "cu124,rocm6.1"],
    ["--package-type", "wheel"],
    ["--package-type", "conda", "--python", "3.11", "--python", "3.12"],
    ["--cuda", "cu126", "--python", "3.12"],
    ["--package-type", "libtorch", "--cuda", "cpu"],
]
JOB_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def generate(*args):
    return pkgtool("workflow", *args, check=0).stdout


def matrix_names(args):
    doc = json.loads(pkgtool("matrix", *args, check=0).stdout)
    return [e["build_name"] for e in doc["include"]]


def package_jobs(jobs):
    return [j for j, job in jobs.items()
            if any(s.get("id") == "package" for s in job.get("steps", []))]


def needs_of(job):
    n = job.get("needs", [])
    return [n] if isinstance(n, str) else n


def substitute(text, entry):
    """${{ matrix.X }}, ${{ needs.plan.outputs.X }} and ${{ env.X }} as
    GitHub fills them for one matrix entry."""
    def value(m):
        e = m.group(1)
        if e.startswith("matrix."):
            return entry[e[len("matrix."):]]
        if e.startswith("needs.plan.outputs."):
            return PLAN[e[len("needs.plan.outputs."):]]
        raise AssertionError(f"unexpected expression {e}")
    return re.sub(r"\$\{\{ ([^}]*) \}\}", value, text)


@case
def structure_and_one_entry_per_configuration():
    for args in FILTERS:
        text = generate(*args)
        assert text == generate(*args), f"{args}: not deterministic"
        doc = yaml.safe_load(text)
        assert list(doc) == ["name", "on", "permissions", "concurrency", "defaults", "env",
                             "jobs"], list(doc)
        assert set(doc["on"]) == {"schedule", "workflow_dispatch"}, doc["on"]
        jobs = doc["jobs"]
        for j, job in jobs.items():
            assert JOB_ID.match(j), j
            for n in needs_of(job):
                assert n in jobs, f"{j} needs {n}"
        # no cycle: a topological order exists
        done, order = set(), []
        while len(done) < len(jobs):
            ready = [j for j in jobs if j not in done and set(needs_of(jobs[j])) <= done]
            assert ready, f"{args}: a cycle among {set(jobs) - done}"
            done |= set(ready)
            order += ready
        assert order[0] == "plan" and order[-1] == "nightly", order
        packaging = package_jobs(jobs)
        names = [e["build_name"] for j in packaging
                 for e in jobs[j]["strategy"]["matrix"]["include"]]
        want = matrix_names(args)
        count = int(pkgtool("matrix", *args, "--count", check=0).stdout)
        assert len(names) == count == len(want), (args, len(names), count)
        assert sorted(names) == sorted(want) and len(set(names)) == len(names), args
        assert f"# {count} configuration" in text, text[:400]
        assert set(needs_of(jobs["nightly"])) == {"plan", *packaging}, jobs["nightly"]
        for j in packaging:
            job = jobs[j]
            assert job["strategy"]["fail-fast"] is False
            assert job["container"]["image"] == "${{ matrix.image }}", job
            for e in job["strategy"]["matrix"]["include"]:
                assert e["image"] and e["runs_on"], e
            if j.endswith("-macos"):
                build = jobs[j + "-build"]
                assert j + "-build" in needs_of(job) and "container" not in build
                assert build["strategy"]["matrix"]["include"] == \
                    job["strategy"]["matrix"]["include"]
        # artifact names: unique over the run, and what the final job fetches
        uploads = []
        for j, job in jobs.items():
            entries = job.get("strategy", {}).get("matrix", {}).get("include", [{}])
            for s in job["steps"]:
                if s.get("uses", "").startswith("actions/upload-artifact@"):
                    for e in entries:
                        uploads.append(substitute(s["with"]["name"], e))
        assert len(uploads) == len(set(uploads)), [u for u in uploads if uploads.count(u) > 1]
        for n in names:
            assert f"summary-{n}" in uploads and f"package-{n}" in uploads, n
        patterns = [s["with"]["pattern"] for s in jobs["nightly"]["steps"]
                    if s.get("uses", "").startswith("actions/download-artifact@")]
        assert patterns == ["summary-*", "package-*"], patterns


def wrappers(d):
    """$LIBPKG_BIN for the test: the drivers with --dry-run added (and what
    stands for the build images' CUDA toolkits: a one-library table, see
    below, and a cuDNN version), pkgtool and check_binary as built."""
    os.makedirs(f"{d}/bin")
    for name, real in TOOLS.items():
        extra = ' --dry-run --cuda-table "$WORKFLOW_TEST_TABLE" $WORKFLOW_TEST_EXTRA' \
            if name in DRIVERS else ""
        with open(f"{d}/bin/{name}", "w") as f:
            f.write(f'#!/bin/sh\nexec "{real}" "$@"{extra}\n')
        os.chmod(f"{d}/bin/{name}", 0o755)
    return f"{d}/bin"


def fake_cuda_libraries(d, versions):
    """The CUDA versions' tables replaced by one real library each
    (libcudart.so.MAJOR, compiled here for x86_64 and for aarch64): this
    machine has none of those toolkits, and the drivers look their tables'
    files up even on a dry run. The generated flags are passed unchanged."""
    os.makedirs(f"{d}/cuda")
    with open(f"{d}/cuda/rt.c", "w") as f:
        f.write("int cudart_stub(void) { return 0; }\n")
    table = {"schema": 1, "versions": []}
    for v in sorted(versions):
        soname = f"libcudart.so.{v.split('.')[0]}"
        libraries = []
        for arch, cc in (("x86_64", "gcc"), ("aarch64", "aarch64-linux-gnu-gcc")):
            os.makedirs(f"{d}/cuda/{arch}", exist_ok=True)
            lib = f"{d}/cuda/{arch}/{soname}"
            if not os.path.exists(lib):
                subprocess.run([cc, "-shared", "-fPIC", "-nostdlib", "-o", lib,
                                f"{d}/cuda/rt.c", f"-Wl,-soname,{soname}"], check=True)
            libraries.append({"file": soname, "dir": f"{d}/cuda/{arch}", "arch": arch})
        table["versions"].append({"cuda": v, "libraries": libraries})
    with open(f"{d}/cuda/table.json", "w") as f:
        json.dump(table, f)
    return f"{d}/cuda/table.json"


def macho_binary(d, arch, target, kind):
    """A Mach-O bundle or dylib (clang-14 + ld64.lld, as tests/macho): what
    the macOS builds' extension and libraries stand for."""
    out = f"{d}/macho/{arch}{kind}"
    if not os.path.exists(out):
        os.makedirs(f"{d}/macho", exist_ok=True)
        with open(f"{d}/macho/ext.c", "w") as f:
            f.write("int torch_stub(void) { return 1; }\n")
        subprocess.run(["clang-14", "-target", f"{arch}-apple-macos{target}", "-fuse-ld=lld",
                        "-nostdlib", "-Wl,-undefined,dynamic_lookup", kind, "-o", out,
                        f"{d}/macho/ext.c"], check=True)
    with open(out, "rb") as f:
        return f.read()


def wheel(path, python, tag, extension):
    tag = f"cp{python.replace('.', '')}-none-{tag}"
    name = f"torch-2.6.0.dev20261127-{tag}.whl"
    dist = "torch-2.6.0.dev20261127.dist-info"
    files = {"torch/__init__.py": "",
             f"torch/_C.cpython-{python.replace('.', '')}-darwin.so": extension,
             f"{dist}/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0.dev20261127\n",
             f"{dist}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n"}
    files[f"{dist}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{dist}/RECORD,,\n"
    os.makedirs(path, exist_ok=True)
    with zipfile.ZipFile(f"{path}/{name}", "w") as z:
        for n, t in files.items():
            z.writestr(n, t)


def fixtures(work, recipe, entry):
    """What the steps before the packaging step leave in the workspace."""
    os.makedirs(f"{work}/pytorch")
    if recipe == "conda":
        py = entry["python"]
        os.makedirs(f"{work}/conda-prefix/lib/python{py}/site-packages/torch")
        open(f"{work}/conda-prefix/lib/python{py}/site-packages/torch/__init__.py", "w").close()
    if recipe in ("libtorch", "libtorch-macos"):
        for sub in ("lib", "include/torch", "share/cmake/Torch"):
            os.makedirs(f"{work}/libtorch-install/{sub}")
        with open(f"{work}/libtorch-install/include/torch/torch.h", "w") as f:
            f.write("#pragma once\n")
    if recipe == "libtorch-macos":
        with open(f"{work}/libtorch-install/lib/libc10.dylib", "wb") as f:
            f.write(macho_binary(os.path.dirname(work), entry["macos_arch"],
                                 entry["macosx_deployment_target"], "-dynamiclib"))
    if recipe == "libtorch-macos":
        os.makedirs(f"{work}/built")
        subprocess.run(["tar", "-C", f"{work}/libtorch-install", "-cf",
                        f"{work}/built/libtorch-install.tar", "."], check=True)
        shutil.rmtree(f"{work}/libtorch-install")
    if recipe == "wheel-macos":
        target = entry["macosx_deployment_target"]
        wheel(f"{work}/built", entry["python"], f"macosx_{target.replace('.', '_')}_{entry['arch']}",
              macho_binary(os.path.dirname(work), entry["arch"], target, "-bundle"))


@case
def every_packaging_step_names_a_driver_whose_flags_parse():
    d = scratch()
    doc = yaml.safe_load(generate())
    cuda = {e["accelerator"] for j in package_jobs(doc["jobs"])
            for e in doc["jobs"][j]["strategy"]["matrix"]["include"]
            if e["accelerator"].startswith("cu")}
    table = fake_cuda_libraries(d, {f"{c[2:-1]}.{c[-1]}" for c in cuda})
    bindir = wrappers(d)
    ran = 0
    for j in package_jobs(doc["jobs"]):
        job = doc["jobs"][j]
        (step,) = [s for s in job["steps"] if s.get("id") == "package"]
        first = step["run"].splitlines()
        driver_lines = [x for x in first if x.startswith('"$LIBPKG_BIN/')]
        assert driver_lines, step["run"]
        for line in driver_lines:
            tool = line.split('"')[1].split("/", 1)[1]
            assert tool in TOOLS, f"{j}: {tool} is not one of libpkg's tools"
        for entry in job["strategy"]["matrix"]["include"]:
            work = f"{d}/{entry['build_name']}"
            fixtures(work, j, entry)
            env = {k: substitute(str(v), entry) for k, v in job["env"].items()}
            env.update(PATH=os.environ["PATH"], HOME=d, RUNNER_TEMP=f"{work}/.tmp",
                       LIBPKG_BIN=bindir, WORKFLOW_TEST_TABLE=table,
                       XDG_CACHE_HOME=f"{d}/cache", GITHUB_WORKSPACE=work)
            if j == "conda" and entry["accelerator"] != "cpu":
                # the conda images' toolkits carry cudnn_version.h, which
                # the driver reads the version from; here --cudnn stands in
                env["WORKFLOW_TEST_EXTRA"] = "--cudnn 9.1"
            os.makedirs(env["RUNNER_TEMP"])
            script = f"{work}/.package.sh"
            with open(script, "w") as f:
                f.write(step["run"])
            p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                               cwd=work, env=env, capture_output=True, text=True)
            assert p.returncode == 0, (entry["build_name"], p.stdout, p.stderr)
            if j == "libtorch-macos":
                zips = [n for n in os.listdir(f"{work}/dist") if n.endswith(".zip")]
                assert f"libtorch-macos-{entry['arch']}-{env['PYTORCH_BUILD_VERSION']}.zip" \
                    in zips, zips
                report = load(f"{work}/dist/check-{entry['build_name']}.json")
                assert report["schema"] == "libpkg-check/1" and report["passed"], report
            else:
                summary = load(f"{work}/summary/{entry['build_name']}.json")
                assert summary["schema"] == "libpkg-driver/1" and summary["dry_run"] is True
                assert summary["config"]["build_environment"] == entry["build_environment"], \
                    (summary["config"], entry)
                assert summary["config"]["version"] == env["PYTORCH_BUILD_VERSION"] and \
                    summary["config"]["build_number"] == 0, (summary["config"], env)
            ran += 1
    assert ran == int(pkgtool("matrix", "--count", check=0).stdout), ran


@case
def a_driver_that_stops_on_bad_input_leaves_no_summary():
    """An empty summary/*.json would make the final job's ingest refuse
    the whole batch: the step keeps the driver's status and writes none."""
    d = scratch()
    doc = yaml.safe_load(generate("--package-type", "manywheel", "--cuda", "cpu"))
    job = doc["jobs"]["manywheel"]
    (step,) = [s for s in job["steps"] if s.get("id") == "package"]
    entry = job["strategy"]["matrix"]["include"][0]
    env = {k: substitute(str(v), entry) for k, v in job["env"].items()}
    os.makedirs(f"{d}/.tmp")
    env.update(PATH=os.environ["PATH"], RUNNER_TEMP=f"{d}/.tmp", LIBPKG_BIN=os.path.dirname(
        TOOLS["manywheel"]))
    with open(f"{d}/package.sh", "w") as f:
        f.write(step["run"])
    # no pytorch/ checkout: the driver exits 2
    p = subprocess.run(["bash", "-e", f"{d}/package.sh"], cwd=d, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 2 and "error: " in p.stderr, (p.returncode, p.stderr)
    assert os.listdir(f"{d}/summary") == [], os.listdir(f"{d}/summary")


@case
def the_plan_and_the_final_job_run_as_written():
    d = scratch()
    args = ["--package-type", "manywheel", "--cuda", "cpu"]
    doc = yaml.safe_load(generate(*args))
    # the plan job's script on a checkout with version.txt
    src = f"{d}/plan/pytorch"
    os.makedirs(src)
    with open(f"{src}/version.txt", "w") as f:
        f.write("2.6.0a0\n")
    subprocess.run(["git", "-C", src, "init", "-q"], check=True)
    subprocess.run(["git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                    "-q", "--allow-empty", "-m", "x"], check=True)
    (plan,) = [s for s in doc["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    out = f"{d}/plan/output"
    run(["bash", "-e", "-c", plan["run"]], expect=0, cwd=f"{d}/plan",
        env=dict(os.environ, GITHUB_OUTPUT=out))
    got = dict(line.split("=", 1) for line in open(out).read().splitlines())
    assert set(got) == {"date", "day", "epoch", "base_version", "sha"}, got
    assert re.fullmatch(r"\d{4}_\d{2}_\d{2}", got["date"]) and \
        got["day"] == got["date"].replace("_", "-"), got
    assert got["base_version"] == "2.6.0.dev" + got["date"].replace("_", ""), got
    assert int(got["epoch"]) % 86400 == 0 and re.fullmatch("[0-9a-f]{40}", got["sha"]), got

    # the final job on what the packaging jobs would have uploaded: two
    # configurations passed, one failed its check (summary, no package),
    # the others never wrote a summary
    names = matrix_names(args)
    work = f"{d}/final"
    for i, n in enumerate(names[:3]):
        entry = [e for e in doc["jobs"]["manywheel"]["strategy"]["matrix"]["include"]
                 if e["build_name"] == n][0]
        summary = {"schema": "libpkg-driver/1", "driver": "manywheel",
                   "config": {"build_environment": entry["build_environment"],
                              "package_type": "manywheel", "python": entry["python"],
                              "accelerator": "cpu"},
                   "dry_run": False, "artifacts": [], "notes": [], "passed": i < 2,
                   "seconds": 60.0 + i,
                   "checks": [{"schema": "libpkg-check/1", "passed": i < 2, "checks": [
                       {"id": "symbol-versions", "status": "pass" if i < 2 else "fail"}]}]}
        os.makedirs(f"{work}/summaries", exist_ok=True)
        with open(f"{work}/summaries/{n}.json", "w") as f:
            json.dump(summary, f)
        if i < 2:
            subprocess.run([sys.executable, f"{HERE}/make_wheel.py",
                            f"{work}/packages/package-{n}", f"torch{i}", "2.6.0.dev20261127"],
                           check=True)
    final = doc["jobs"]["nightly"]
    env = dict(os.environ, GITHUB_WORKSPACE=work, LIBPKG_BIN=os.path.dirname(PKGTOOL),
               NIGHTLY_DATE=PLAN["date"], NIGHTLY_DAY=PLAN["day"])
    for step in final["steps"]:
        if step["name"] in ("import", "ingest", "publish", "report"):
            p = run(["bash", "-e", "-c", step["run"]], cwd=work, env=env)
            assert p.returncode == 0, (step["name"], p.stdout, p.stderr)
    nd = f"{work}/nightly/{PLAN['date']}"
    states = {n: load(f"{nd}/state/{n}.json") for n in names}
    assert [n for n in names if states[n]["state"] == "SUCCEEDED"] == names[:2], states
    assert states[names[2]]["failed_step"] == "check:symbol-versions", states[names[2]]
    for n in names[3:]:
        assert states[n]["state"] == "FAILED" and states[n]["failed_step"] == "import", states[n]
    assert sorted(os.listdir(f"{work}/nightly/channel/files")) == sorted(
        f"torch{i}-2.6.0.dev20261127-py3-none-any.whl" for i in range(2))
    con = sqlite3.connect(f"{work}/nightly/stats.db")
    rows = con.execute("SELECT schema, status, python, date FROM documents").fetchall()
    assert len(rows) == len(names), rows
    assert sorted(r[0] for r in rows) == sorted(["libpkg-driver/1"] * 3 +
                                                ["libpkg-job/1"] * (len(names) - 3)), rows
    assert {r[3] for r in rows} == {PLAN["day"]}, rows
    assert sum(r[1] == "SUCCEEDED" for r in rows) == 2, rows
    assert os.path.getsize(f"{work}/nightly/report/index.html") > 0


@case
def check_equal_edited_truncated_and_stale():
    d = scratch()
    matrix = f"{d}/matrix.json"
    shutil.copy(f"{SOURCE}/data/matrix.json", matrix)
    out = f"{d}/.github/workflows/nightly.yml"
    args = ["--matrix-file", matrix, "--package-type", "conda", "--cron", "0 3 * * *", "-o", out]
    p = pkgtool("workflow", *args, check=0)
    assert p.stdout == f"{out}: written\n", p.stdout
    with open(out) as f:
        text = f.read()
    assert "--check " + out in text and "--matrix-file " + matrix in text
    p = pkgtool("workflow", "--check", out, check=0)
    assert "matches" in p.stdout, p.stdout
    pkgtool("workflow", "--check", out, *args, check=0)
    # edited: the first changed line is named, with both texts
    lines = text.splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if "timeout-minutes: 480" in line)
    edited = "".join(lines[:n] + [lines[n].replace("480", "481")] + lines[n + 1:])
    with open(out, "w") as f:
        f.write(edited)
    p = pkgtool("workflow", "--check", out, check=1)
    assert p.stderr.startswith(f"{out}:{n + 1}: differs from what `pkgtool workflow") and \
        '"    timeout-minutes: 480"' in p.stderr and '"    timeout-minutes: 481"' in p.stderr, \
        p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    # truncated
    with open(out, "w") as f:
        f.write("".join(lines[:-3]))
    p = pkgtool("workflow", "--check", out, check=1)
    assert p.stderr.startswith(f"{out}:{len(lines) - 2}:") and "found end of file" in p.stderr, \
        p.stderr
    # stale: the matrix file changed since the workflow was generated
    with open(out, "w") as f:
        f.write(text)
    doc = load(matrix)
    for g in doc["groups"]:
        if g["package_type"] == "conda":
            g["pythons"].append("3.13")
    with open(matrix, "w") as f:
        json.dump(doc, f)
    p = pkgtool("workflow", "--check", out, check=1)
    assert p.stderr.startswith(f"{out}:2:") and "configurations" in p.stderr, p.stderr
    # regenerated from the new data it matches again
    pkgtool("workflow", *args, check=0)
    pkgtool("workflow", "--check", out, check=0)
    # a file that is not there
    p = pkgtool("workflow", "--check", f"{d}/none.yml", check=2)
    assert p.stderr.startswith(f"error: {d}/none.yml: ") and p.stderr.count("\n") == 1


@case
def bad_filters_exit_2_and_write_nothing():
    d = scratch()
    for args, says in ((["--cuda", "cu999x"], "cu999x"),
                       (["--package-type", "nosuch"], "nosuch"),
                       (["--python", "2.5x"], "2.5x"),
                       (["--package-type", "libtorch", "--python", "3.11"],
                        "no configuration matches"),
                       (["--matrix-file", f"{d}/missing.json"], "missing.json")):
        p = pkgtool("workflow", *args, "-o", f"{d}/w.yml", check=2)
        assert p.stderr.startswith("error: ") and says in p.stderr, (args, p.stderr)
        assert p.stderr.count("\n") == 1, (args, p.stderr)
        assert not os.path.exists(f"{d}/w.yml")
    p = pkgtool("workflow", "--no-such-option", check=2)
    assert p.stderr.startswith("error: "), p.stderr


finish()
