# SPDX-License-Identifier: BSD-3-Clause
"""Generated `libpkg-job/1` histories for the stats, report and bench tests.

write_history(root, nights, configs) writes what a runner leaves behind:
<root>/<YYYY_MM_DD>/jobs/<job>.json and the job's log under
<root>/<YYYY_MM_DD>/logs/{succeeded,failed}/<job>.log, with sizes that grow
slowly, a few failures, and one size jump on the last night. The layout of
the documents follows docs/nightly.md; only the fields the stats store and
the report read need to be right, the rest is plausible.
"""
import datetime
import hashlib
import json
import os

CONFIGS = [
    ("manywheel", "3.11", "cu124"),
    ("manywheel", "3.12", "cpu"),
    ("conda", "3.11", "cu121"),
    ("libtorch", "", "cpu"),
]


def job_name(config):
    package_type, python, accelerator = config
    parts = [package_type] + ([f"py{python.replace('.', '_')}"] if python else [])
    return "-".join(parts + [accelerator])


def artifact_name(config, day):
    package_type, python, accelerator = config
    stamp = day.strftime("%Y%m%d")
    if package_type == "conda":
        return f"pytorch-2.6.0.dev{stamp}-py{python}_{accelerator}_0.tar.bz2"
    if package_type == "libtorch":
        return f"libtorch-cxx11-abi-shared-with-deps-2.6.0.dev{stamp}+{accelerator}.zip"
    tag = "cp" + python.replace(".", "")
    return (f"torch-2.6.0.dev{stamp}+{accelerator}-{tag}-{tag}-"
            "manylinux_2_28_x86_64.whl")


def job_document(day, config, state, size, failed_step=None, failed_check=None,
                 duration=600.0, log=None):
    nightly = day.strftime("%Y_%m_%d")
    job = job_name(config)
    start = datetime.datetime.combine(day, datetime.time(1, 0),
                                      datetime.timezone.utc)
    end = start + datetime.timedelta(seconds=duration)
    name = artifact_name(config, day)
    artifacts = []
    if state == "SUCCEEDED" or failed_step == "check":
        lib = size * 3 // 4
        artifacts.append({
            "name": name, "size": size,
            "sha256": hashlib.sha256(f"{name}{size}".encode()).hexdigest(),
            "largest_members": [{"name": "torch/lib/libtorch_cpu.so", "size": lib},
                                {"name": "torch/lib/libc10.so", "size": size // 10}],
        })
    check = None
    if failed_check:
        check = {"schema": "libpkg-check/1", "artifact": name, "passed": False,
                 "checks": [{"id": failed_check, "status": "fail",
                             "summary": "failed", "problems": [], "notes": []},
                            {"id": "integrity", "status": "pass",
                             "summary": "ok", "problems": [], "notes": []}]}
    folder = "succeeded" if state == "SUCCEEDED" else "failed"
    return {
        "schema": "libpkg-job/1", "nightly": nightly, "job": job,
        "config": {"package_type": config[0], "python": config[1],
                   "accelerator": config[2]},
        "host": "builder-1",
        "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": end.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": duration, "state": state,
        "exit_code": 0 if state == "SUCCEEDED" else 1,
        "failed_step": failed_step,
        "steps": [{"name": "build", "duration_s": duration * 0.8},
                  {"name": "check", "duration_s": duration * 0.2}],
        "log": log or f"logs/{folder}/{job}.log",
        "artifacts": artifacts, "driver_summary": None, "check": check,
    }


def history(nights, configs=CONFIGS, last=datetime.date(2026, 11, 24)):
    """Yields (day, document) for `nights` nights ending at `last`."""
    for n in range(nights):
        day = last - datetime.timedelta(days=nights - 1 - n)
        for c, config in enumerate(configs):
            size = 100_000_000 * (c + 1) + n * 10_000
            if n == nights - 1 and c == 0:
                size = size * 112 // 100  # today's regression
            state, step, check = "SUCCEEDED", None, None
            # The first configuration always has an artifact (its size
            # chart has a point every night); the others fail now and then.
            if c == 0:
                if n % 9 == 4:
                    state, step, check = "FAILED", "check", "cxx11-abi"
            elif n == nights - 1 and c == 1:
                state, step = "FAILED", "build"  # today's new failure
            elif (n + c) % 7 == 3:
                state, step = "FAILED", "build"
            elif (n * 3 + c) % 11 == 5:
                state, step, check = "FAILED", "check", "cxx11-abi"
            elif (n + 2 * c) % 13 == 6:
                state, step = "CANCELLED", None
            yield day, job_document(day, config, state, size, step, check,
                                    duration=600.0 + 5 * n + 60 * c)


def write_history(root, nights, configs=CONFIGS, last=datetime.date(2026, 11, 24)):
    """Writes documents and logs; returns the document paths."""
    paths = []
    for day, doc in history(nights, configs, last):
        night = os.path.join(root, day.strftime("%Y_%m_%d"))
        os.makedirs(os.path.join(night, "jobs"), exist_ok=True)
        log = os.path.join(night, doc["log"])
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as f:
            f.write(f"log of {doc['job']} on {doc['nightly']}: {doc['state']}\n")
        path = os.path.join(night, "jobs", doc["job"] + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        paths.append(path)
    return paths
