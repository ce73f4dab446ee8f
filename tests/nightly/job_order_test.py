# SPDX-License-Identifier: BSD-3-Clause
"""`pkgtool nightly run` start order (issue 18): jobs of one chunk group
(os/arch/accelerator, docs/nightly.md) never run at the same time while a
job of another group is waiting, the groups are interleaved, the list's
order is kept within a group, in the status and with --list-order."""
import json
import os
from datetime import datetime

from nightlib import case, finish, load, pkgtool, scratch, sh_job, write_jobs

DATE = "2026_02_03"
# Sanitized builds run slower (tests/CMakeLists.txt): the long jobs last longer.
SCALE = float(os.environ.get("LIBPKG_TIME_SCALE", "1"))


def job(name, accelerator, seconds, python="3.11", **fields):
    # Each job appends its name when it starts: the start order, exactly.
    return sh_job(name, f"echo {name} >> {{nightly_dir}}/order.txt; sleep {seconds}",
                  config={"package_type": "manywheel", "python": python,
                          "accelerator": accelerator}, **fields)


def matrix(cudas, pythons, seconds):
    """One job per CUDA and Python, CUDA by CUDA (the naive order)."""
    return [job(f"{cuda}-py{py}", cuda, seconds, python=py) for cuda in cudas for py in pythons]


def run_nightly(d, jobs, *flags, date=DATE):
    path = write_jobs(f"{d}/jobs-{date}.json", jobs)
    pkgtool("nightly", "run", "--jobs", path, "--root", f"{d}/root", "--date", date,
            "--no-publish", *flags, check=0)
    nd = f"{d}/root/{date}"
    with open(f"{nd}/order.txt") as f:
        order = f.read().split()
    states = {j["name"]: load(f"{nd}/state/{j['name']}.json") for j in jobs}
    assert all(s["state"] == "SUCCEEDED" for s in states.values()), states
    return nd, order, states


def t(stamp):
    return datetime.fromisoformat(stamp.rstrip("Z"))


def clashes(states, group):
    """Each start of a job while a job of its own group ran although a job
    of a group with nothing running was still waiting: what the runner must
    never do. (A start while only running groups wait is allowed: a queue
    never idles.)"""
    found = []
    for name, s in states.items():
        at = t(s["start"])

        def running(other):
            o = states[other]
            return other != name and t(o["start"]) <= at < t(o["end"])

        busy = {group[o] for o in states if running(o)}
        if group[name] not in busy:
            continue
        waiting = [o for o in states if t(states[o]["start"]) > at and group[o] not in busy]
        if waiting:
            found.append(f"{name} started at {s['start']} beside its group, {waiting} waiting")
    return found


@case
def two_groups_listed_group_by_group_never_run_together():
    # The bug: 3 Pythons of cu126 then 3 of cu130, two queues; a runner in
    # list order starts py3.10 and py3.11 of cu126 at once (both miss the
    # chunk cache).
    d = scratch()
    jobs = matrix(("cu126", "cu130"), ("3.10", "3.11", "3.12"), 0.4)
    nd, order, states = run_nightly(d, jobs, "-j", "2")
    group = {j["name"]: j["config"]["accelerator"] for j in jobs}
    # Equal lengths: no job ever runs beside one of its own group.
    for a in states:
        for b in states:
            if a < b and group[a] == group[b]:
                sa, sb = states[a], states[b]
                apart = t(sa["end"]) <= t(sb["start"]) or t(sb["end"]) <= t(sa["start"])
                assert apart, (a, sa["start"], sa["end"], b, sb["start"], sb["end"])
    assert set(order[:2]) == {"cu126-py3.10", "cu130-py3.10"}, order
    # Within a group the list's order; the status and jobs.json keep the list.
    for cuda in ("cu126", "cu130"):
        assert [n for n in order if n.startswith(cuda)] == [
            f"{cuda}-py{py}" for py in ("3.10", "3.11", "3.12")], order
    status = json.loads(pkgtool("nightly", "status", "--root", f"{d}/root", "--date", DATE,
                                "--json", check=0).stdout)
    assert [j["job"] for j in status["jobs"]] == [j["name"] for j in jobs], status
    assert [j["name"] for j in load(f"{nd}/jobs.json")["jobs"]] == [j["name"] for j in jobs]


@case
def a_free_queue_skips_to_a_group_with_nothing_running():
    # cu126's jobs are long, the others short: when a short job ends, the
    # next in the interleaved order is cu126's second (its first still
    # runs), so the queue starts a cu128 or cu130 job first. (A queue that
    # took the order as it is would start cu126's second beside its first
    # with cu128-py3.12 and cu130-py3.12 waiting.)
    d = scratch()
    long = 2.5 * SCALE
    jobs = matrix(("cu126",), ("3.11", "3.12"), long) + matrix(("cu128", "cu130"), ("3.11", "3.12"), 0.1)
    _, order, states = run_nightly(d, jobs, "-j", "2")
    group = {j["name"]: j["config"]["accelerator"] for j in jobs}
    assert clashes(states, group) == [], clashes(states, group)
    assert order[-1] == "cu126-py3.12", order
    # With the list's order, the two cu126 jobs start together.
    _, order, states = run_nightly(d, jobs, "-j", "2", "--list-order", date="2026_02_04")
    assert set(order[:2]) == {"cu126-py3.11", "cu126-py3.12"}, order
    assert clashes(states, group) != []


@case
def one_queue_interleaves_deterministically():
    d = scratch()
    jobs = matrix(("cu126", "cu130", "rocm6.2"), ("3.11", "3.12"), 0.02)
    want = ["cu126-py3.11", "cu130-py3.11", "rocm6.2-py3.11",
            "cu126-py3.12", "cu130-py3.12", "rocm6.2-py3.12"]
    for date in ("2026_02_05", "2026_02_06"):
        _, order, _ = run_nightly(d, jobs, "-j", "1", date=date)
        assert order == want, order
    _, order, _ = run_nightly(d, jobs, "-j", "1", "--list-order", date="2026_02_07")
    assert order == [j["name"] for j in jobs], order


@case
def one_group_or_no_groups_keep_the_list_order():
    d = scratch()
    one = matrix(("cu130",), ("3.13", "3.10", "3.12"), 0.02)
    _, order, _ = run_nightly(d, one, "-j", "1")
    assert order == [j["name"] for j in one], order
    # Jobs without an accelerator: the runner knows nothing of their
    # libraries, each is its own group.
    bare = [sh_job(n, f"echo {n} >> {{nightly_dir}}/order.txt") for n in ("z", "a", "m", "b")]
    _, order, _ = run_nightly(d, bare, "-j", "1", date="2026_02_08")
    assert order == ["z", "a", "m", "b"], order


@case
def resume_interleaves_the_unfinished_jobs():
    # A nightly whose runner died: the jobs still to run are interleaved
    # among themselves, the finished ones are not run again.
    d = scratch()
    jobs = matrix(("cu126", "cu130"), ("3.10", "3.11", "3.12"), 0.02)
    nd, order, _ = run_nightly(d, jobs, "-j", "1")
    for name in ("cu126-py3.10", "cu126-py3.11", "cu130-py3.12"):
        with open(f"{nd}/state/{name}.json") as f:
            s = json.load(f)
        s["state"] = "PENDING"
        with open(f"{nd}/state/{name}.json", "w") as f:
            json.dump(s, f)
    os.remove(f"{nd}/order.txt")
    pkgtool("nightly", "run", "--resume", "--root", f"{d}/root", "--date", DATE, "-j", "1",
            "--no-publish", check=0)
    with open(f"{nd}/order.txt") as f:
        assert f.read().split() == ["cu126-py3.10", "cu130-py3.12", "cu126-py3.11"]


finish()
