# SPDX-License-Identifier: BSD-3-Clause
"""Runner overhead per job of `pkgtool nightly run` (target < 50 ms over the
job itself): N jobs of a trivial command run by the runner with -j 1,
against the same N commands run back to back by a plain loop of
subprocess.run. The difference per job is what the runner adds (spawn in a
process group, log file, state files, job document, moving the log).

usage: python3 bench/nightly_runner_bench.py PKGTOOL [N]"""
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    pkgtool = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    argv = ["/bin/true"]
    with tempfile.TemporaryDirectory(prefix="nightly-bench-") as d:
        t0 = time.perf_counter()
        for _ in range(n):
            subprocess.run(argv, check=True)
        plain = (time.perf_counter() - t0) / n
        jobs = [{"name": f"job{i:04d}", "argv": argv} for i in range(n)]
        with open(f"{d}/jobs.json", "w") as f:
            json.dump({"jobs": jobs}, f)
        t0 = time.perf_counter()
        subprocess.run([pkgtool, "nightly", "run", "--jobs", f"{d}/jobs.json", "--root",
                        f"{d}/root", "-j", "1", "-q"], check=True, stdout=subprocess.DEVNULL)
        runner = (time.perf_counter() - t0) / n
    print(f"{n} jobs of {' '.join(argv)}, -j 1")
    print(f"plain subprocess.run per job: {plain * 1000:.2f} ms")
    print(f"pkgtool nightly run per job:  {runner * 1000:.2f} ms")
    print(f"runner overhead per job:      {(runner - plain) * 1000:.2f} ms (target < 50 ms)")
    return 0 if runner - plain < 0.050 else 1


if __name__ == "__main__":
    sys.exit(main())
