# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool nightly run|status|describe|logs|cancel|list`: states, logs,
job documents, the runner lock, cancel (signal and from another process),
--resume after a killed runner, --retry-failed, bad input, retention."""
import hashlib
import json
import os
import signal
import subprocess
import time

from nightlib import (PKGTOOL, case, finish, load, pkgtool, run, scratch, sh_job,
                      write_jobs)

DATE = "2026_01_15"


def wait_for(pred, what, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def group_gone(pgid):
    """No live process in the group (zombies of an orphaned job wait for
    whatever reaps them here and count as gone)."""
    p = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True)
    for pid in p.stdout.split():
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    return False
        except FileNotFoundError:
            pass
    return True


def state(nd, job):
    p = os.path.join(nd, "state", job + ".json")
    return load(p) if os.path.exists(p) else None


@case
def states_logs_and_documents():
    d = scratch()
    jobs = write_jobs(f"{d}/jobs.json", [
        sh_job("good", "echo ::step build; echo building; sleep 0.3; echo ::step pack;"
               " printf 'PK' > \"$NIGHTLY_ARTIFACT_DIR/out.bin\"; echo done",
               config={"package_type": "manywheel", "python": "3.11", "accelerator": "cpu"},
               artifact_dir="manywheel/cpu"),
        sh_job("bad", "echo ::step configure; echo ::step compile; echo broken >&2; exit 3"),
        {"name": "absent", "argv": ["/nonexistent/tool", "x"]},
        sh_job("templated", "echo {greeting} {job} {date} > {artifact_dir}/t.txt",
               vars={"greeting": "hello world"}),
    ])
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", f"{d}/root", "--date", DATE,
                "-j", "2", check=1)
    assert "1 failed" not in p.stdout and "2 succeeded, 2 failed" in p.stdout, p.stdout
    nd = f"{d}/root/{DATE}"
    for sub in ("logs/running", "logs/succeeded", "logs/failed"):
        assert os.path.isdir(f"{nd}/{sub}"), sub
    assert os.listdir(f"{nd}/logs/running") == []
    assert sorted(os.listdir(f"{nd}/logs/succeeded")) == ["good.log", "templated.log"]
    assert sorted(os.listdir(f"{nd}/logs/failed")) == ["absent.log", "bad.log"]
    with open(f"{nd}/logs/failed/bad.log") as f:
        log = f.read()
    assert "broken" in log and "exit status 3" in log, log
    good, bad, absent = state(nd, "good"), state(nd, "bad"), state(nd, "absent")
    assert good["state"] == "SUCCEEDED" and good["exit_code"] == 0 and good["failed_step"] == ""
    assert bad["state"] == "FAILED" and bad["exit_code"] == 3 and bad["failed_step"] == "compile"
    assert absent["state"] == "FAILED" and absent["exit_code"] == 127
    assert absent["failed_step"] == "start"
    for s in (good, bad, absent):
        assert s["start"].endswith("Z") and s["end"] >= s["start"], s
    with open(f"{nd}/templated/t.txt") as f:
        assert f.read().strip() == f"hello world templated {DATE}"
    doc = load(f"{nd}/jobs/good.json")
    assert doc["schema"] == "libpkg-job/1" and doc["nightly"] == DATE
    assert doc["config"]["package_type"] == "manywheel" and doc["config"]["python"] == "3.11"
    assert doc["config"]["accelerator"] == "cpu"
    assert doc["state"] == "SUCCEEDED" and doc["log"] == "logs/succeeded/good.log"
    assert [s["name"] for s in doc["steps"]] == ["build", "pack"], doc["steps"]
    assert doc["steps"][0]["duration_s"] >= 0.2, doc["steps"]
    assert 0.3 <= doc["duration_s"] < 5
    assert doc["artifacts"] == [{
        "name": "manywheel/cpu/out.bin", "size": 2, "largest_members": None,
        "sha256": hashlib.sha256(b"PK").hexdigest()}], doc["artifacts"]
    assert doc["driver_summary"] is None and doc["check"] is None
    for key in ("schema", "nightly", "job", "config", "host", "start", "end", "duration_s",
                "state", "exit_code", "failed_step", "steps", "log", "artifacts",
                "driver_summary", "check"):
        assert key in doc, key
    bad_doc = load(f"{nd}/jobs/bad.json")
    assert bad_doc["failed_step"] == "compile" and bad_doc["exit_code"] == 3
    # status / describe / logs from another process
    p = pkgtool("nightly", "status", "--root", f"{d}/root", "--json", check=0)
    st = json.loads(p.stdout)
    assert [j["job"] for j in st["jobs"]] == ["good", "bad", "absent", "templated"]
    assert st["runner_pid"] is None and st["runner_held"] is False, st
    p = pkgtool("nightly", "status", "--root", f"{d}/root", check=0)
    assert "FAILED" in p.stdout and "compile" in p.stdout, p.stdout
    p = pkgtool("nightly", "describe", "bad", "--root", f"{d}/root", check=0)
    assert json.loads(p.stdout)["document"]["failed_step"] == "compile"
    p = pkgtool("nightly", "logs", "bad", "--root", f"{d}/root", "--tail", "1", check=0)
    assert p.stdout.startswith("::nightly bad: exit status 3"), p.stdout
    p = pkgtool("nightly", "logs", "nosuch", "--root", f"{d}/root", check=2)
    assert "no job named 'nosuch'" in p.stderr, p.stderr
    p = pkgtool("nightly", "list", "--root", f"{d}/root", check=0)
    assert DATE in p.stdout, p.stdout
    # a second fresh run of the same nightly is refused, nothing changed
    p = pkgtool("nightly", "run", "--jobs", jobs, "--root", f"{d}/root", "--date", DATE, check=2)
    assert "already has jobs" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    # --retry-failed runs only the failed jobs again, keeping the old logs
    before = load(f"{nd}/jobs/good.json")["start"]
    p = pkgtool("nightly", "run", "--retry-failed", "--root", f"{d}/root", "--date", DATE,
                check=1)
    assert "(2 run now)" in p.stdout, p.stdout
    assert load(f"{nd}/jobs/good.json")["start"] == before
    assert state(nd, "bad")["attempt"] == 2
    assert os.path.exists(f"{nd}/logs/failed/bad.attempt1.log")


@case
def driver_summary_gives_the_failing_step():
    d = scratch()
    summary = {"schema": "libpkg-driver/1", "passed": False, "artifacts": [],
               "checks": [{"schema": "libpkg-check/1", "passed": False, "checks": [
                   {"id": "integrity", "status": "pass"},
                   {"id": "symbol-versions", "status": "fail"}]}]}
    jobs = write_jobs(f"{d}/jobs.json", [
        sh_job("drv", "echo ::step bundle; echo '%s' > {summary}; exit 1" % json.dumps(summary)),
    ])
    pkgtool("nightly", "run", "--jobs", jobs, "--root", d, "--date", DATE, check=1)
    doc = load(f"{d}/{DATE}/jobs/drv.json")
    assert doc["failed_step"] == "check:symbol-versions", doc["failed_step"]
    assert doc["driver_summary"]["schema"] == "libpkg-driver/1"
    assert doc["check"]["checks"][1]["id"] == "symbol-versions"


@case
def zip_artifacts_list_their_largest_members():
    import zipfile
    d = scratch()
    jobs = write_jobs(f"{d}/jobs.json", [sh_job("z", "python3 -c \"import zipfile,os;"
        "z=zipfile.ZipFile(os.environ['NIGHTLY_ARTIFACT_DIR']+'/p-1.0-py3-none-any.whl','w');"
        "[z.writestr(f'm{{i}}.txt','x'*(i*100)) for i in range(12)]\"")])
    # not a complete wheel (no METADATA): publishing would refuse it
    pkgtool("nightly", "run", "--jobs", jobs, "--root", d, "--date", DATE, "--no-publish",
            check=0)
    assert not os.path.exists(f"{d}/channel")
    art = load(f"{d}/{DATE}/jobs/z.json")["artifacts"]
    assert len(art) == 1 and art[0]["name"] == "z/p-1.0-py3-none-any.whl"
    members = art[0]["largest_members"]
    with zipfile.ZipFile(f"{d}/{DATE}/z/p-1.0-py3-none-any.whl") as z:
        want = sorted(((i.file_size, i.filename) for i in z.infolist()), reverse=True)[:10]
    assert [(m["size"], m["name"]) for m in members] == want, members


@case
def lock_cancel_and_interrupt():
    d = scratch()
    jobs = write_jobs(f"{d}/jobs.json", [
        sh_job("slow", "echo ::step wait; echo started; sleep 60"),
        sh_job("victim", "echo ::step wait; sleep 60 & wait"),
        sh_job("later", "echo ::step later; sleep 60"),
        sh_job("never", "echo never"),
    ])
    nd = f"{d}/{DATE}"
    runner = subprocess.Popen([PKGTOOL, "nightly", "run", "--jobs", jobs, "--root", d,
                               "--date", DATE, "-j", "2", "--grace", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (state(nd, "slow") or {}).get("state") == "RUNNING"
                 and (state(nd, "victim") or {}).get("state") == "RUNNING", "two running jobs")
        # the log is written live
        wait_for(lambda: "started" in open(f"{nd}/logs/running/slow.log").read(), "live log")
        p = pkgtool("nightly", "logs", "slow", "--root", d, "--date", DATE, check=0)
        assert "started" in p.stdout
        # one runner per nightly: the second is refused naming the holder
        p = pkgtool("nightly", "run", "--resume", "--root", d, "--date", DATE, check=2)
        assert f"another runner (pid {runner.pid})" in p.stderr, p.stderr
        assert p.stderr.count("\n") == 1, p.stderr
        st = json.loads(pkgtool("nightly", "status", "--root", d, "--json", check=0).stdout)
        assert st["runner_pid"] == runner.pid and st["runner_held"] is True, st
        # cancel from another process
        victim_pid = state(nd, "victim")["pid"]
        p = pkgtool("nightly", "cancel", "victim", "--root", d, "--date", DATE, check=0)
        assert "cancel requested" in p.stdout, p.stdout
        wait_for(lambda: state(nd, "victim")["state"] == "CANCELLED", "victim cancelled")
        # its whole process group is gone (the backgrounded sleep too)
        wait_for(lambda: group_gone(victim_pid), "group gone")
        # SIGTERM to the runner: the running job stopped, the pending one recorded
        runner.send_signal(signal.SIGTERM)
        out, err = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130, (runner.returncode, out, err)
    for job in ("slow", "victim", "later", "never"):
        assert state(nd, job)["state"] == "CANCELLED", state(nd, job)
    assert state(nd, "never")["failed_step"] == "pending"
    assert state(nd, "later")["failed_step"] == "later"
    assert state(nd, "slow")["failed_step"] == "wait"
    assert os.path.exists(f"{nd}/logs/failed/slow.log")
    assert os.listdir(f"{nd}/logs/running") == []
    p = pkgtool("nightly", "cancel", "slow", "--root", d, "--date", DATE, check=2)
    assert "already finished" in p.stderr


@case
def killed_runner_then_resume():
    d = scratch()
    nd = f"{d}/{DATE}"
    jobs = write_jobs(f"{d}/jobs.json", [
        sh_job("quick", "echo quick"),
        sh_job("long", "echo ::step first; if [ -e {nightly_dir}/../second-time ]; "
               "then echo resumed; else sleep 60; fi"),
    ])
    runner = subprocess.Popen([PKGTOOL, "nightly", "run", "--jobs", jobs, "--root", d,
                               "--date", DATE, "-j", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: (state(nd, "long") or {}).get("state") == "RUNNING", "long running")
    child = state(nd, "long")["pid"]
    runner.kill()  # SIGKILL: no cleanup at all
    runner.wait()
    open(f"{d}/second-time", "w").close()
    # the child of the dead runner is still there: resume stops it first
    p = pkgtool("nightly", "run", "--resume", "--root", d, "--date", DATE, check=0)
    assert "(1 run now)" in p.stdout, p.stdout
    assert state(nd, "quick")["attempt"] == 1
    assert state(nd, "long")["state"] == "SUCCEEDED"
    assert state(nd, "long")["attempt"] == 2
    with open(f"{nd}/logs/succeeded/long.log") as f:
        assert "resumed" in f.read()
    # the crashed attempt's log is kept
    assert os.path.exists(f"{nd}/logs/failed/long.attempt1.log")
    assert group_gone(child)


@case
def a_reused_pid_is_never_killed():
    """After a reboot the pid in a RUNNING state may lead an unrelated group:
    cancel and --resume without a runner must leave it alone."""
    for how in ("cancel", "resume"):
        d = scratch()
        nd = f"{d}/{DATE}"
        jobs = write_jobs(f"{d}/jobs.json", [
            sh_job("long", "if [ ! -e {nightly_dir}/../second-time ]; then sleep 60; fi")])
        runner = subprocess.Popen([PKGTOOL, "nightly", "run", "--jobs", jobs, "--root", d,
                                   "--date", DATE],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: (state(nd, "long") or {}).get("state") == "RUNNING", "long running")
        child = state(nd, "long")["pid"]
        runner.kill()
        runner.wait()
        os.killpg(child, signal.SIGKILL)
        wait_for(lambda: group_gone(child), "the job gone")
        open(f"{d}/second-time", "w").close()
        # an unrelated process group leader now holds the pid of the state
        unrelated = subprocess.Popen(["sleep", "60"], start_new_session=True)
        try:
            path = f"{nd}/state/long.json"
            doc = load(path)
            doc["pid"] = unrelated.pid
            with open(path, "w") as f:
                json.dump(doc, f)
            if how == "cancel":
                pkgtool("nightly", "cancel", "long", "--root", d, "--date", DATE, check=0)
                assert state(nd, "long")["state"] == "CANCELLED"
            else:
                pkgtool("nightly", "run", "--resume", "--root", d, "--date", DATE, check=0)
                assert state(nd, "long")["state"] == "SUCCEEDED"
            time.sleep(0.2)
            assert unrelated.poll() is None, f"{how} killed an unrelated process"
        finally:
            unrelated.kill()
            unrelated.wait()


@case
def a_retry_starts_with_an_empty_artifact_dir():
    d = scratch()
    nd = f"{d}/{DATE}"
    jobs = write_jobs(f"{d}/jobs.json", [sh_job(
        "flaky", "if [ -e {nightly_dir}/../second-time ]; then echo b > {artifact_dir}/b.txt; "
        "else echo a > {artifact_dir}/a.txt; exit 1; fi")])
    pkgtool("nightly", "run", "--jobs", jobs, "--root", d, "--date", DATE, check=1)
    open(f"{d}/second-time", "w").close()
    pkgtool("nightly", "run", "--retry-failed", "--root", d, "--date", DATE, check=0)
    doc = load(f"{nd}/jobs/flaky.json")
    names = [a["name"] for a in doc["artifacts"]]
    assert names == ["flaky/b.txt"], names
    assert os.listdir(f"{nd}/flaky.attempt1") == ["a.txt"]


@case
def bad_input_is_one_line_exit_2():
    d = scratch()
    cases = [
        ("{not json", "not JSON"),
        ('{"jobs": [{"name": "a b", "argv": ["true"]}]}', "jobs[0]: bad name"),
        ('{"jobs": [{"name": "a", "argv": []}]}', "argv must be a non-empty list"),
        ('{"jobs": [{"name": "a", "argv": ["true"]}, {"name": "a", "argv": ["true"]}]}',
         "duplicate name"),
        ('{"jobs": [{"name": "a", "argv": ["true"], "artifact_dir": "../x"}]}',
         "must be a relative path inside the nightly"),
        ('{"jobs": [{"name": "a", "argv": ["true"], "colour": 1}]}', 'unknown field "colour"'),
        ('{"jobs": [{"name": "a"}]}', "no \\\"argv\\\"".replace("\\", "")),
    ]
    for i, (text, message) in enumerate(cases):
        path = f"{d}/bad{i}.json"
        with open(path, "w") as f:
            f.write(text)
        p = pkgtool("nightly", "run", "--jobs", path, "--root", f"{d}/r", check=2)
        assert p.stderr.startswith(f"error: {path}: ") and message in p.stderr, (text, p.stderr)
        assert p.stderr.count("\n") == 1, p.stderr
        with open(path) as f:
            assert f.read() == text  # inputs never modified
    assert not os.path.exists(f"{d}/r"), "nothing created for bad input"
    # unknown placeholder: the job fails? no - refused before it starts
    path = write_jobs(f"{d}/ph.json", [sh_job("ph", "echo {nosuch}")])
    p = pkgtool("nightly", "run", "--jobs", path, "--root", f"{d}/r2", check=2)
    assert "unknown placeholder {nosuch}" in p.stderr, p.stderr
    # bad matrix filter
    p = pkgtool("nightly", "run", "--command", "true", "--cuda", "cu999x", "--root", f"{d}/r",
                check=2)
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    p = pkgtool("nightly", "run", "--command", "true", "--package-type", "libtorch",
                "--python", "3.11", "--root", f"{d}/r", check=2)
    assert "no configuration matches" in p.stderr, p.stderr
    good = write_jobs(f"{d}/good.json", [sh_job("a", "true")])
    open(f"{d}/plainfile", "w").close()  # refused for root too
    p = pkgtool("nightly", "run", "--jobs", good, "--root", f"{d}/plainfile/sub", check=2)
    assert p.stderr.startswith("error: ") and "cannot create" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    # bad date
    p = pkgtool("nightly", "run", "--jobs", good, "--root", d, "--date", "2026_02_30", check=2)
    assert "error: 2026_02_30: not a date" in p.stderr, p.stderr
    # --resume of a nightly that never ran
    p = pkgtool("nightly", "run", "--resume", "--root", d, "--date", DATE, check=2)
    assert "no job list" in p.stderr, p.stderr
    # A job list that is a FIFO (or a device) is refused at once, not waited
    # on: the nightly reads its files through read_regular_file.
    os.mkfifo(f"{d}/fifo.json")
    for jobs in (f"{d}/fifo.json", "/dev/zero"):
        p = pkgtool("nightly", "run", "--jobs", jobs, "--root", f"{d}/r3", check=2, timeout=30)
        assert p.stderr.startswith(f"error: {jobs}: ") and "not a regular file" in p.stderr, p.stderr
        assert p.stderr.count("\n") == 1, p.stderr
    p = pkgtool("matrix", "--file", f"{d}/fifo.json", check=2, timeout=30)
    assert "not a regular file" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not os.path.exists(f"{d}/r3"), "nothing created for a FIFO job list"


def as_nobody():
    """The command prefix that runs a command as uid/gid 65534 when the
    tests run as root (root writes anywhere); none otherwise."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@case
def an_unwritable_root_is_one_line_exit_2_and_nothing_runs():
    d = scratch()
    os.chmod(d, 0o755)  # nobody reads the job file
    good = write_jobs(f"{d}/good.json", [sh_job("a", "touch {nightly_dir}/../../ran")])
    os.chmod(good, 0o644)
    os.makedirs(f"{d}/ro")
    os.chmod(f"{d}/ro", 0o555)
    # the root cannot be created
    p = run([*as_nobody(), PKGTOOL, "nightly", "run", "--jobs", good, "--root", f"{d}/ro/sub",
             "--date", DATE], expect=2)
    assert p.stderr == (f"error: {d}/ro/sub: cannot create the nightly folder: "
                        "Permission denied\n"), p.stderr
    assert not os.path.exists(f"{d}/ro/sub")
    # the root exists but the nightly cannot be made in it
    p = run([*as_nobody(), PKGTOOL, "nightly", "run", "--jobs", good, "--root", f"{d}/ro",
             "--date", DATE], expect=2)
    assert p.stderr == (f"error: {d}/ro/{DATE}: cannot create the nightly folder: "
                        "Permission denied\n"), p.stderr
    assert os.listdir(f"{d}/ro") == [] and not os.path.exists(f"{d}/ran")
    # a nightly that became read-only: its runner lock cannot be taken
    os.makedirs(f"{d}/rw")
    pkgtool("nightly", "run", "--jobs", good, "--root", f"{d}/rw", "--date", DATE,
            "--no-publish", check=0)
    for dirpath, dirnames, filenames in os.walk(f"{d}/rw"):
        os.chmod(dirpath, 0o555)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o444)
    p = run([*as_nobody(), PKGTOOL, "nightly", "run", "--retry-failed", "--root", f"{d}/rw",
             "--date", DATE], expect=2)
    assert p.stderr.startswith(f"error: {d}/rw/{DATE}/") and p.stderr.count("\n") == 1, p.stderr
    assert "Permission denied" in p.stderr, p.stderr


@case
def logs_tail_reads_backwards_from_the_end():
    """`logs --tail N` on a 600 MB log reads a few blocks from its end (the
    bytes read are counted by strace, independently of the clock), keeps
    CRLF, and gives the whole log when it has fewer lines."""
    d = scratch()
    jobs = write_jobs(f"{d}/jobs.json", [sh_job("big", "echo small")])
    pkgtool("nightly", "run", "--jobs", jobs, "--root", d, "--date", DATE, "--no-publish",
            check=0)
    log = f"{d}/{DATE}/logs/succeeded/big.log"
    with open(log, "r+b") as f:
        f.truncate(600 << 20)  # a sparse 600 MB of NULs, no newline
        f.seek(0, 2)
        f.write(b"".join(b"line %d\r\n" % i for i in range(1000)))
        f.write(b"last, no newline")
    size = os.path.getsize(log)
    trace = f"{d}/trace"
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=read,pread64", "-e", "signal=none",
                        "-o", trace, PKGTOOL, "nightly", "logs", "big", "--root", d, "--date",
                        DATE, "--tail", "3"], capture_output=True,  # bytes: CRLF kept
                       # LeakSanitizer cannot run under ptrace (sanitizer build)
                       env=dict(os.environ, ASAN_OPTIONS=":".join(
                           filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))))
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"line 998\r\nline 999\r\nlast, no newline", p.stdout
    read = 0
    with open(trace) as f:
        for line in f:
            if "= " in line and not line.rstrip().endswith(("= -1", ">")):
                value = line.rsplit("= ", 1)[1].split()[0]
                if value.isdigit():
                    read += int(value)
    assert read < (1 << 20), f"read {read} bytes of a {size}-byte log for 3 lines"
    # fewer lines than asked: all of it (checked on a small log)
    with open(log, "wb") as f:
        f.write(b"a\r\nb")
    p = subprocess.run([PKGTOOL, "nightly", "logs", "big", "--root", d, "--date", DATE,
                        "--tail", "50"], capture_output=True)
    assert p.returncode == 0 and p.stdout == b"a\r\nb", p
    open(log, "w").close()
    p = pkgtool("nightly", "logs", "big", "--root", d, "--date", DATE, "--tail", "5", check=0)
    assert p.stdout == "", repr(p.stdout)


@case
def logs_follow_prints_a_log_still_being_written_to_its_end():
    d = scratch()
    nd = f"{d}/{DATE}"
    jobs = write_jobs(f"{d}/jobs.json", [sh_job(
        "talk", "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.15; done; "
                "printf 'no newline at the end'")])
    runner = subprocess.Popen([PKGTOOL, "nightly", "run", "--jobs", jobs, "--root", d,
                               "--date", DATE, "--no-publish"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(f"{nd}/logs/running/talk.log")
                 and "line 2" in open(f"{nd}/logs/running/talk.log").read(), "two lines")
        follow = run([PKGTOOL, "nightly", "logs", "talk", "--root", d, "--date", DATE,
                      "--tail", "1", "--follow"], expect=0, timeout=30)
    finally:
        runner.wait(timeout=30)
    with open(f"{nd}/logs/succeeded/talk.log") as f:
        final = f.read()
    # the last line when it started, then everything to the end (across the
    # move to succeeded/), the runner's end line included
    assert final.endswith(follow.stdout), (follow.stdout, final)
    assert follow.stdout.startswith("line "), follow.stdout
    # the runner's line starts a line of its own
    assert "line 8\nno newline at the end\n::nightly talk: exit status 0" in follow.stdout, \
        follow.stdout


@case
def matrix_jobs_run_the_command_template():
    d = scratch()
    pkgtool("nightly", "run", "--command",
            "echo {build_environment} > {artifact_dir}/env.txt; test {python} != 3.12",
            "--package-type", "manywheel", "--cuda", "cpu", "--python", "3.11,3.12",
            "--root", d, "--date", DATE, check=1)
    nd = f"{d}/{DATE}"
    st = {j["job"]: j for j in json.loads(
        pkgtool("nightly", "status", "--root", d, "--json", check=0).stdout)["jobs"]}
    assert st["manywheel-py3_11-cpu"]["state"] == "SUCCEEDED", st
    assert st["manywheel-py3_12-cpu"]["state"] == "FAILED", st
    with open(f"{nd}/manywheel/cpu/manywheel-py3_11-cpu/env.txt") as f:
        assert f.read().strip() == "manywheel 3.11 cpu"
    doc = load(f"{nd}/jobs/manywheel-py3_11-cpu.json")
    assert doc["config"]["python"] == "3.11" and doc["config"]["accelerator"] == "cpu"


@case
def retention_keeps_today_recent_and_locked():
    d = scratch()
    good = write_jobs(f"{d}/good.json", [sh_job("a", "true")])
    from datetime import datetime, timedelta, timezone
    today = datetime.now(timezone.utc).date()
    names = {n: (today - timedelta(days=n)).strftime("%Y_%m_%d") for n in (0, 2, 6, 9)}
    for n in (2, 6, 9):
        os.makedirs(f"{d}/{names[n]}/logs")
    os.makedirs(f"{d}/not-a-nightly")
    # a held lock on the 9-day-old one: never deleted while its runner runs
    locker = subprocess.Popen(["flock", f"{d}/{names[9]}/runner.lock", "sleep", "30"])
    try:
        time.sleep(0.3)
        p = pkgtool("nightly", "run", "--jobs", good, "--root", d, "--keep-days", "5", check=0)
    finally:
        locker.kill()
        locker.wait()
    assert f"deleted {d}/{names[6]}" in p.stdout, p.stdout
    left = sorted(os.listdir(d))
    assert names[0] in left and names[2] in left and names[9] in left, left
    assert names[6] not in left and "not-a-nightly" in left, left


finish()
