# SPDX-License-Identifier: BSD-3-Clause
"""A full disk, for real: the nightly's root (or its channel) on a small
tmpfs mounted in a private mount namespace (`unshare -m` as root, `unshare
-Urm` otherwise), so nothing outside the test sees it.

- a job that fills the disk fails with the reason recorded (state, job
  document, the log's last line), the runner's own records get written
  (its reserve is freed), the jobs after it still run, and nothing of the
  failed job is published;
- with no reserve the runner cannot record the job: one line naming the
  file, the job and the outcome it could not record, exit 2, nothing
  published; once there is room again `--resume` runs the job again;
- a nightly started on a full disk is refused before any job runs;
- a publish into a full channel fails with exit 2 and leaves `current`,
  `files/` and `releases/` as they were; it succeeds once there is room."""
import atexit
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IN_NAMESPACE = "LIBPKG_FULL_DISK_NAMESPACE"

if os.environ.get(IN_NAMESPACE) != "1":
    # Everything below runs in the private mount namespace.
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-Urm"]
    env = dict(os.environ, **{IN_NAMESPACE: "1"})
    sys.stdout.flush()
    os.execvpe(unshare[0], [*unshare, sys.executable, os.path.abspath(__file__)], env)

from nightlib import case, finish, load, pkgtool, scratch, sh_job, write_jobs  # noqa: E402

PY = "/usr/bin/python3"


def tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "nightly-full-disk", path],
                   check=True)
    # Unmounted before scratch() removes the directory (atexit runs last in
    # first): a mount point can't be removed while mounted.
    atexit.register(subprocess.run, ["umount", "-l", path])
    return path


def fill(path):
    """Fills the filesystem of `path` (the write fails with ENOSPC)."""
    p = subprocess.run(["sh", "-c", f"head -c 1G /dev/zero > {path}"], capture_output=True,
                       text=True)
    assert p.returncode != 0 and "No space left" in p.stderr, p.stderr


def wheel_job(name, project, version):
    return sh_job(name, f"echo ::step pack; {PY} {HERE}/make_wheel.py {{artifact_dir}} "
                        f"{project} {version}")


@case
def a_job_filling_the_disk_fails_with_the_reason_and_the_runner_records_it():
    d = scratch()
    root, channel = tmpfs(f"{d}/root", "4m"), f"{d}/channel"
    date = "2026_03_01"
    jobs = write_jobs(f"{d}/jobs.json", [
        wheel_job("good", "goodpkg", "1.0.dev20260301"),
        sh_job("fill", "echo ::step fill; head -c 1G /dev/zero > {artifact_dir}/big-1.0-py3-none-any.whl"),
        sh_job("after", "echo ::step after; echo still running"),
    ])
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", date, "-j", "1",
                "--channel", channel, check=1)
    assert "2 succeeded, 1 failed" in p.stdout, p.stdout
    nd = f"{root}/{date}"
    state = load(f"{nd}/state/fill.json")
    assert state["state"] == "FAILED" and state["failed_step"] == "fill", state
    assert "filesystem was full" in state["reason"], state
    doc = load(f"{nd}/jobs/fill.json")
    assert doc["state"] == "FAILED" and doc["reason"] == state["reason"], doc
    with open(f"{nd}/logs/failed/fill.log") as f:
        last = f.read().splitlines()[-1]
    assert last.startswith("::nightly fill: exit status 1") and "full" in last, last
    assert load(f"{nd}/state/after.json")["state"] == "SUCCEEDED"
    assert load(f"{nd}/state/good.json")["state"] == "SUCCEEDED"
    # only the passing job's wheel is published; the reserve is gone
    assert os.listdir(f"{channel}/files") == ["goodpkg-1.0.dev20260301-py3-none-any.whl"]
    assert not os.path.exists(f"{nd}/.runner.reserve")
    p = pkgtool("nightly", "status", "--root", root, "--date", date, check=0)
    (line,) = [x for x in p.stdout.splitlines() if " fill " in x]
    assert line.startswith("FAILED") and "filesystem was full" in line, p.stdout


@case
def the_room_the_freed_reserve_left_is_not_counted_as_free():
    # The disk fills (here by an earlier job, which is what a job that
    # fills it before its RUNNING state is written looks like: the flake
    # this case pins down); the runner's next write frees its reserve. A
    # job failing afterwards ends on a disk whose only room is that freed
    # reserve: still full for the jobs.
    d = scratch()
    root = tmpfs(f"{d}/root", "4m")
    date = "2026_03_06"
    jobs = write_jobs(f"{d}/jobs.json", [
        sh_job("filler", "echo ::step fill; head -c 1G /dev/zero > {nightly_dir}/../filler; true"),
        sh_job("fails", "echo ::step build; exit 3"),
    ])
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", date, "-j", "1",
                "--no-stats", check=1)
    assert "1 succeeded, 1 failed" in p.stdout, p.stdout
    nd = f"{root}/{date}"
    assert not os.path.exists(f"{nd}/.runner.reserve"), "the reserve was used"
    state = load(f"{nd}/state/fails.json")
    assert state["state"] == "FAILED" and "filesystem was full" in state["reason"], state


@case
def without_a_reserve_the_unrecorded_job_is_reported_and_resumed():
    d = scratch()
    root, channel = tmpfs(f"{d}/root", "2m"), f"{d}/channel"
    date = "2026_03_02"
    nd = f"{root}/{date}"
    big = f"{nd}/fill/big-1.0-py3-none-any.whl"
    jobs = write_jobs(f"{d}/jobs.json", [
        # fills the disk once its RUNNING state is written (that write
        # failing is the runner's too, but not this case)
        sh_job("fill", "echo ::step fill; if [ -e {nightly_dir}/../room ]; then echo fine; "
                       "else until grep -q RUNNING {nightly_dir}/state/fill.json; do sleep 0.02; "
                       "done; head -c 1G /dev/zero > {artifact_dir}/big-1.0-py3-none-any.whl; fi"),
        sh_job("next", "echo never"),
    ])
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", date, "-j", "1",
                "--reserve", "0", "--channel", channel, check=2)
    err = p.stderr
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "cannot record job fill as FAILED (exit 1, step fill" in err, err
    assert "No space left on device" in err and f"{nd}/jobs/" in err, err
    assert not os.path.exists(channel), "nothing published"
    # the states say what is left to do: fill unrecorded, next never started
    st = {j["job"]: j["state"] for j in json.loads(
        pkgtool("nightly", "status", "--root", root, "--date", date, "--json", check=0).stdout)["jobs"]}
    assert st == {"fill": "RUNNING", "next": "PENDING"}, st
    os.remove(big)
    open(f"{root}/room", "w").close()
    p = pkgtool("nightly", "run", "--resume", "--root", root, "--date", date,
                "--channel", channel, check=0)
    assert "(2 run now)" in p.stdout, p.stdout
    state = load(f"{nd}/state/fill.json")
    assert state["state"] == "SUCCEEDED" and state["attempt"] == 2, state
    assert os.path.exists(f"{nd}/logs/failed/fill.attempt1.log")
    assert load(f"{nd}/state/next.json")["state"] == "SUCCEEDED"


@case
def a_nightly_on_a_full_disk_runs_nothing():
    d = scratch()
    jobs = write_jobs(f"{d}/jobs.json", [sh_job("a", "touch {nightly_dir}/../ran")])
    # room for the lock's pid, not for the runner's reserve
    root = tmpfs(f"{d}/root", "1m")
    subprocess.run(["sh", "-c", f"head -c 900K /dev/zero > {root}/filler"], check=True)
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", root, "--date", "2026_03_03",
                check=2)
    assert p.stderr == (f"error: {root}/2026_03_03/.runner.reserve: cannot reserve 1048576 "
                        "bytes for the runner's records: No space left on device\n"), p.stderr
    # no room at all: the lock's pid cannot be written
    full = tmpfs(f"{d}/full", "1m")
    fill(f"{full}/filler")
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", full, "--date", "2026_03_03",
                check=2)
    assert p.stderr.startswith(f"error: {full}/2026_03_03/runner.lock: ") and \
        p.stderr.endswith("No space left on device\n") and p.stderr.count("\n") == 1, p.stderr
    for r in (root, full):
        assert not os.path.exists(f"{r}/ran")
        assert not os.path.exists(f"{r}/2026_03_03/jobs.json")
        assert not os.path.exists(f"{r}/2026_03_03/.runner.reserve")


@case
def a_publish_into_a_full_channel_changes_nothing():
    d = scratch()
    root, channel = f"{d}/root", tmpfs(f"{d}/channel", "3m")
    first = write_jobs(f"{d}/first.json", [wheel_job("w", "onepkg", "1.0.dev20260304")])
    pkgtool("nightly", "run", "--jobs", first, "--root", root, "--date", "2026_03_04",
            "--channel", channel, check=0)
    before = os.readlink(f"{channel}/current")
    files = sorted(os.listdir(f"{channel}/files"))
    releases = sorted(os.listdir(f"{channel}/releases"))
    with open(f"{channel}/manifest.json") as f:
        manifest = f.read()
    fill(f"{channel}/filler")
    second = write_jobs(f"{d}/second.json", [wheel_job("w", "onepkg", "1.0.dev20260305")])
    p = pkgtool("nightly", "run", "--jobs", second, "--root", root, "--date", "2026_03_05",
                "--channel", channel, check=2)
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "No space left on device" in p.stderr, p.stderr
    assert os.readlink(f"{channel}/current") == before
    assert sorted(os.listdir(f"{channel}/files")) == files
    assert sorted(os.listdir(f"{channel}/releases")) == releases
    with open(f"{channel}/manifest.json") as f:
        assert f.read() == manifest
    assert [n for n in os.listdir(channel) if n.startswith(".current")] == []
    os.remove(f"{channel}/filler")
    pkgtool("nightly", "publish", "--root", root, "--date", "2026_03_05", "--channel", channel,
            check=0)
    assert os.readlink(f"{channel}/current") != before
    assert "onepkg-1.0.dev20260305-py3-none-any.whl" in os.listdir(f"{channel}/files")


finish()
