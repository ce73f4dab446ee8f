# SPDX-License-Identifier: BSD-3-Clause
"""Long calls release the GIL: another Python thread keeps running while
libpkg packs and verifies a large wheel."""

import os
import threading
import time

import libpkg
from conftest import write_tree


def test_pack_and_verify_release_the_gil(tmp_path):
    files = {f"big/blob{i}.bin": os.urandom(4 << 20) for i in range(12)}
    tree = write_tree(tmp_path / "tree", "bigpkg", "1.0", "py3-none-any", files)
    results = {}

    def work():
        start = time.monotonic()
        whl = libpkg.wheel.pack(tree, tmp_path / "out", level=9, threads=1).path
        results["report"] = libpkg.wheel.verify(whl, threads=1)
        results["seconds"] = time.monotonic() - start

    ticks = 0
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert results["report"].ok
    # With the GIL held for the whole call this loop could not run at all
    # while the worker was inside libpkg; allow for scheduling noise.
    expected = results["seconds"] / 0.001
    assert results["seconds"] > 0.05
    assert ticks > min(20, expected / 10), (ticks, results["seconds"])


def test_concurrent_calls_from_threads(pure_wheel, tmp_path):
    """The library keeps no global state: the same calls from several
    threads at once give the same answers."""
    from concurrent.futures import ThreadPoolExecutor

    def job(i):
        w = libpkg.wheel.open(pure_wheel)
        out = w.retag(build=str(i + 1), out_dir=tmp_path / f"t{i}")
        return w.verify().ok, libpkg.wheel.verify(out).ok, out.name

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(job, range(8)))
    assert all(a and b for a, b, _ in results)
    assert sorted(n for _, _, n in results) == sorted(
        f"purepkg-2.5.0+cu124-{i + 1}-py3-none-any.whl" for i in range(8))
