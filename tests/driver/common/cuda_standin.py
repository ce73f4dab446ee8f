# SPDX-License-Identifier: BSD-3-Clause
"""Stand-in CUDA roots for the driver tests, built at test time.

The per-CUDA table (data/cuda/cuda.json) is read through `pkgtool config
--json`, and each library it lists is compiled as a tiny shared library with
the SONAME the real toolkit gives it: the table's file name, except
`libnvrtc-builtins.so`, which is a link to `libnvrtc-builtins.so.X.Y` (the
real SONAME; the table names the link). Files go where the table says under
the root (`lib64`, `extras/CUPTI/lib64`; absolute directories such as
/usr/lib64 are re-rooted), or to a `move` directory to exercise fallbacks.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

CUDART_C = """\
/* Stand-in CUDA runtime: the entry points check_binary's gpu probe calls,
   each answering 100 (cudaErrorNoDevice). */
#include <stddef.h>
int cudaGetDeviceCount(int* count) { *count = 0; return 100; }
const char* cudaGetErrorString(int e) { return e == 100 ? "no CUDA-capable device is detected" : "?"; }
int cudaRuntimeGetVersion(int* v) { *v = CUDA_VERSION_NUMBER; return 0; }
int cudaMalloc(void** p, size_t n) { (void)n; *p = NULL; return 100; }
int cudaMemset(void* p, int v, size_t n) { (void)p; (void)v; (void)n; return 100; }
int cudaMemcpy(void* d, const void* s, size_t n, int k) { (void)d; (void)s; (void)n; (void)k; return 100; }
int cudaFree(void* p) { (void)p; return 100; }
int cudaDeviceSynchronize(void) { return 100; }
"""

CUDA_ROOT = "/usr/local/cuda/"


def _run(argv) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p


def table_libraries(pkgtool: str, version: str, arch: str = "x86_64") -> list[dict]:
    """The unconditional entries of the built-in table for `arch`, as
    `pkgtool config --json` reports them (path, soname, arch, optional)."""
    tag = "cu" + version.replace(".", "")
    env = f"manywheel 3.9 {tag}" + ("" if arch == "x86_64" else f" {arch}")
    doc = json.loads(_run([pkgtool, "config", env, "--json"]).stdout)
    libs = doc["cuda_table"]["libraries"]
    if libs is None:
        return []
    return [lib for lib in libs if lib["arch"] in ("", arch) and not lib["condition"]]


def real_soname(table_name: str, version: str) -> str:
    """The SONAME the toolkit gives the file the table names."""
    return f"libnvrtc-builtins.so.{version}" if table_name == "libnvrtc-builtins.so" else table_name


def relative_path(path: str) -> Path:
    """Where a table path goes under a stand-in root."""
    return Path(path[len(CUDA_ROOT):] if path.startswith(CUDA_ROOT) else path.lstrip("/"))


def make_root(root: Path, libs: list[dict], version: str, cc: str = "gcc", move: dict | None = None,
              skip: set | None = None) -> dict:
    """Compiles every entry of `libs` under `root`; `move` maps a file name
    to another directory under the root, `skip` leaves files out. Returns
    {table name: (path of the real file, its SONAME)}."""
    move, skip = move or {}, skip or set()
    root.mkdir(parents=True, exist_ok=True)
    stub_c, cudart_c = root / "stub.c", root / "cudart.c"
    stub_c.write_text("int cuda_stand_in(void) { return 1; }\n")
    major, minor = version.split(".")
    cudart_c.write_text(CUDART_C.replace("CUDA_VERSION_NUMBER", str(int(major) * 1000 + int(minor) * 10)))
    objs = {}
    for name, src in (("stub", stub_c), ("cudart", cudart_c)):
        objs[name] = root / f"{name}.o"
        _run([cc, "-c", "-fPIC", "-O1", "-o", objs[name], src])
    out = {}
    for lib in libs:
        name = Path(lib["path"]).name
        if name in skip:
            continue
        rel = relative_path(lib["path"])
        d = root / (move[name] if name in move else rel.parent)
        d.mkdir(parents=True, exist_ok=True)
        soname = real_soname(lib["soname"], version)
        real = d / soname
        obj = objs["cudart"] if name.startswith("libcudart.so") else objs["stub"]
        _run([cc, "-shared", f"-Wl,-soname,{soname}", "-o", real, obj])
        if soname != name:
            (d / name).symlink_to(soname)
        out[lib["soname"]] = (real, soname)
    for f in (stub_c, cudart_c, *objs.values()):
        f.unlink()
    return out


def run_toolkit_hidden(argv: list, scratch: Path) -> subprocess.CompletedProcess:
    """Runs argv in a private mount namespace (unshare -m) where every
    /usr/local/cuda* directory is an empty directory and /etc/ld.so.cache an
    empty file: nothing of the toolkit can be found but what the package
    under test carries. `scratch` holds the empty stand-ins."""
    empty = scratch / "empty-dir"
    empty.mkdir(exist_ok=True)
    (scratch / "empty-cache").write_bytes(b"")
    mounts = [f"mount --bind {empty} {d}" for d in sorted(Path("/usr/local").glob("cuda*"))
              if d.is_dir() and not d.is_symlink()]
    mounts.append(f"mount --bind {scratch / 'empty-cache'} /etc/ld.so.cache")
    script = " && ".join(mounts + ['exec "$@"'])
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME")}
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                           *map(str, argv)], capture_output=True, text=True, cwd=scratch, env=env)
