#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of the libtorch driver (drivers/libtorch).

One case per ctest (LIBTORCH_CASE). Each compiles a small libtorch-like
install tree at test time (g++): libc10.so, libtorch_cpu.so (120 functions
with std::string / std::list in at:: and torch::, an OpenMP loop, -g,
RUNPATH pointing at the build directory as a careless build leaves it),
libtorch.so, a bin/ tool, headers, share/cmake/Torch/TorchConfig.cmake
recording _GLIBCXX_USE_CXX11_ABI; for CUDA cases a fake libcudart.so.12
and libnvrtc-builtins.so.12.4 described by a --cuda-table file (no CUDA
needed). The driver's outputs are then checked with independent tools:
Python's zipfile and zlib, `unzip -t`, readelf, g++ (a client compiled,
linked and run against the unzipped tree), gdb, git.

Environment: LIBTORCH_DRIVER (the driver binary), LIBTORCH_CASE.
Exit status: 0 pass, 1 a check failed or a tool is missing, 77 only for the
real-toolkit case on a machine without a CUDA 13 toolkit.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "common"))
import cuda_standin  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
from testlib import Checks, data_rows, missing, newest_per_major, readelf_dynamic, skip_no_gpu  # noqa: E402

DRIVER = os.environ.get("LIBTORCH_DRIVER", "")
CASE = os.environ.get("LIBTORCH_CASE", "")
CHECKS = Checks()
check = CHECKS.check


def run(argv, cwd=None, env=None, ok=True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in argv], cwd=cwd, env=env,
                       capture_output=True, text=True, errors="replace")
    if ok and p.returncode != 0:
        raise RuntimeError(f"{argv} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def driver(*args, ok=True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DESIRED_", "MATRIX_", "PACKAGE_TYPE", "BUILD_",
                                "LIBTORCH_VARIANT", "PYTORCH_", "GPU_ARCH"))}
    p = run([DRIVER, "--no-env", *args], env=env, ok=False)
    if ok and p.returncode != 0:
        raise RuntimeError(f"driver {args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p




def tree_digest(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            st = p.stat()
            out[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mode)
    return out


# ---------------------------------------------------------------- fixtures

HEADER = """#pragma once
#include <list>
#include <string>
namespace c10 { std::string c10_name(const std::string& s); }
namespace at {
%s
}
namespace torch {
int parallel_sum(int n);
std::string version();
std::string describe(const std::list<std::string>& parts);
}
"""

CLIENT = """#include <torch/api.h>
#include <cstdio>
int main() {
  std::string s = at::op_7("x", {"a", "b"});
  std::printf("%s %d %s\\n", s.c_str(), torch::parallel_sum(100),
              torch::version().c_str());
  return torch::parallel_sum(100) == 4950 && s == "op_7:x:2" ? 0 : 1;
}
"""

N_OPS = 120


def build_tree(work: Path, cuda: bool = False) -> dict:
    """Compiles the libtorch-like tree; returns paths of interest."""
    src, build, tree = work / "src", work / "build", work / "install"
    for d in (src, build / "lib", tree / "lib", tree / "include/torch",
              tree / "share/cmake/Torch", tree / "bin"):
        d.mkdir(parents=True, exist_ok=True)
    decls = "\n".join(
        f"std::string op_{i}(const std::string& s, const std::list<std::string>& l);"
        for i in range(N_OPS))
    (tree / "include/torch/api.h").write_text(HEADER % decls)
    (src / "c10.cpp").write_text(
        '#include <torch/api.h>\nnamespace c10 { std::string c10_name(const std::string& s) '
        '{ return "c10:" + s; } }\n')
    ops = "\n".join(
        f'std::string at::op_{i}(const std::string& s, const std::list<std::string>& l) '
        f'{{ return "op_{i}:" + s + ":" + std::to_string(l.size()); }}' for i in range(N_OPS))
    (src / "torch_cpu.cpp").write_text(
        "#include <torch/api.h>\n" + ops + """
int torch::parallel_sum(int n) {
  int total = 0;
#pragma omp parallel for reduction(+ : total)
  for (int i = 0; i < n; ++i) total += i;
  return total;
}
std::string torch::describe(const std::list<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += c10::c10_name(p);
  return out;
}
""")
    (src / "torch.cpp").write_text(
        '#include <torch/api.h>\nstd::string torch::version() { return "2.5.0"; }\n')
    (src / "tool.cpp").write_text(
        '#include <torch/api.h>\n#include <cstdio>\nint main() { std::printf("%s\\n", '
        'torch::version().c_str()); return torch::parallel_sum(10) == 45 ? 0 : 1; }\n')
    inc = ["-I", tree / "include", "-D_GLIBCXX_USE_CXX11_ABI=1", "-std=gnu++17"]
    # A leaked build directory in RUNPATH, as a build tree install may carry.
    leak = [f"-Wl,-rpath,{build / 'lib'}", "-Wl,--enable-new-dtags"]
    lib = build / "lib"
    run(["g++", "-shared", "-fPIC", "-O1", *inc, "-Wl,-soname,libc10.so", *leak,
         "-o", lib / "libc10.so", src / "c10.cpp"])
    run(["g++", "-shared", "-fPIC", "-O1", "-g", "-fopenmp", *inc,
         "-Wl,-soname,libtorch_cpu.so", *leak, "-o", lib / "libtorch_cpu.so",
         src / "torch_cpu.cpp", "-L", lib, "-lc10"])
    run(["g++", "-shared", "-fPIC", "-O1", *inc, "-Wl,-soname,libtorch.so", *leak,
         "-o", lib / "libtorch.so", src / "torch.cpp", "-L", lib, "-Wl,--no-as-needed",
         "-ltorch_cpu", "-lc10"])
    run(["g++", "-O1", *inc, *leak, "-o", build / "tool", src / "tool.cpp", "-L", lib,
         "-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10"])
    result = {"tree": tree, "build": build}
    if cuda:
        cdir = work / "cuda/lib64"
        cdir.mkdir(parents=True)
        # Enough of the runtime API for check_binary's GPU probe to say
        # "no device" (it dlopens the bundled runtime).
        (src / "cudart.c").write_text(
            "int cudaGetDeviceCount(int* n) { *n = 0; return 100; }\n"
            'const char* cudaGetErrorString(int e) { (void)e; return "no CUDA-capable '
            'device is detected"; }\n'
            "int cudaMalloc(void** p, unsigned long n) { (void)p; (void)n; return 100; }\n"
            "int cudaMemset(void* p, int v, unsigned long n) { (void)p; (void)v; (void)n; return 100; }\n"
            "int cudaMemcpy(void* d, const void* s, unsigned long n, int k) "
            "{ (void)d; (void)s; (void)n; (void)k; return 100; }\n"
            "int cudaFree(void* p) { (void)p; return 100; }\n"
            "int cudaDeviceSynchronize(void) { return 100; }\n"
            "int cudaRuntimeGetVersion(int* v) { *v = 12040; return 0; }\n")
        run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.12", "-o",
             cdir / "libcudart.so.12", src / "cudart.c"])
        (src / "builtins.c").write_text("int nvrtc_builtins_fake(void) { return 7; }\n")
        run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libnvrtc-builtins.so.12.4", "-o",
             cdir / "libnvrtc-builtins.so.12.4", src / "builtins.c"])
        (src / "torch_cuda.cpp").write_text(
            "extern \"C\" int cudaGetDeviceCount(int*);\n"
            "namespace torch { int cuda_devices() { int n = 0; cudaGetDeviceCount(&n); return n; } }\n")
        # Linked against the fake runtime without a search path to it: only
        # the CUDA table tells the driver where it lives.
        run(["g++", "-shared", "-fPIC", "-Wl,-soname,libtorch_cuda.so", *leak, "-o",
             lib / "libtorch_cuda.so", src / "torch_cuda.cpp", "-L", cdir, "-L", lib,
             "-Wl,--no-as-needed", "-l:libcudart.so.12", "-ltorch_cpu"])
        table = work / "cuda-table.json"
        table.write_text(json.dumps({
            "schema": 1,
            "library_dir": str(cdir),
            "versions": [{"cuda": "12.4",
                          "libraries": ["libcudart.so.12", "libnvrtc-builtins.so.12.4"],
                          "source": "test fixture"}]}))
        result["cuda_table"] = table
        result["cuda_dir"] = cdir
    for f in lib.iterdir():
        shutil.copy2(f, tree / "lib" / f.name)
    shutil.copy2(build / "tool", tree / "bin/tool")
    (tree / "share/cmake/Torch/TorchConfig.cmake").write_text(
        'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")\n')
    (work / "client.cpp").write_text(CLIENT)
    result["client"] = work / "client.cpp"
    return result


def common_args(fx: dict, out: Path, variant: str, cuda: str = "cpu") -> list:
    args = ["--tree", fx["tree"], "--variant", variant, "--cuda", cuda, "--abi", "cxx11",
            "--build-version", "2.5.0", "--build-hash", "0123abcd" * 5,
            "--client", fx["client"], "-o", out, "--json", "-j", "2"]
    if "cuda_table" in fx:
        args += ["--cuda-table", fx["cuda_table"]]
    return args


def unzip(zip_path: Path, dest: Path) -> Path:
    p = run(["unzip", "-q", "-o", zip_path, "-d", dest], ok=False)
    check(p.returncode == 0, f"unzip extracts {zip_path.name}", p.stderr)
    return dest / "libtorch"


def client_runs(root: Path, client: Path, work: Path, what: str) -> None:
    exe = work / "client-exe"
    p = run(["g++", client, "-I", root / "include", "-D_GLIBCXX_USE_CXX11_ABI=1",
             "-std=gnu++17", "-L", root / "lib", f"-Wl,-rpath,{root / 'lib'}",
             "-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10", "-o", exe], ok=False)
    check(p.returncode == 0, f"client compiles and links against {what}", p.stderr)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    p = run([exe], env=env, ok=False)
    check(p.returncode == 0 and p.stdout.startswith("op_7:x:2 4950 2.5.0"),
          f"client runs against {what}", p.stdout + p.stderr)


def summary_of(p: subprocess.CompletedProcess) -> dict:
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"no JSON summary:\n{p.stdout}\n{p.stderr}")


# ---------------------------------------------------------------- cases

def layout_checks(zpath: Path, version: str) -> list[str]:
    with zipfile.ZipFile(zpath) as z:
        names = z.namelist()
        check(all(n.startswith("libtorch/") for n in names), "every member under libtorch/")
        for d in ("lib/", "include/", "share/", "bin/"):
            check(f"libtorch/{d}" in names, f"libtorch/{d} in the zip")
        check(z.read("libtorch/build-version").decode() == version + "\n",
              "build-version holds the version")
        check(z.read("libtorch/build-hash").decode() == "0123abcd" * 5 + "\n",
              "build-hash holds the given hash")
        check(z.testzip() is None, "zipfile CRCs verify")
    p = run(["unzip", "-t", zpath], ok=False)
    check(p.returncode == 0, "unzip -t passes", p.stdout + p.stderr)
    return names


def case_with_deps(work: Path) -> None:
    fx = build_tree(work)
    before = tree_digest(fx["tree"])
    out = work / "dist"
    p = driver(*common_args(fx, out, "shared-with-deps"))
    s = summary_of(p)
    check(s["passed"], "check_binary passes on the zip", p.stdout)
    zname = "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip"
    zpath = out / zname
    latest = out / "libtorch-cxx11-abi-shared-with-deps-latest.zip"
    check(zpath.is_file() and latest.is_file(), "zip and -latest copy written")
    check(latest.read_bytes() == zpath.read_bytes(), "-latest is a byte copy")
    roles = {a["role"]: a for a in s["artifacts"]}
    check(roles["libtorch"]["checked"] and not roles["libtorch-latest"]["checked"],
          "only the zip is checked, not the -latest copy")
    check(len(s["checks"]) == 1, "one check report")
    names = layout_checks(zpath, "2.5.0")
    gomp = [n for n in names if re.fullmatch(r"libtorch/lib/libgomp-[0-9a-f]{8}\.so\.1", n)]
    check(len(gomp) == 1, "libgomp bundled under a hashed name", str(names))
    root = unzip(zpath, work / "unzipped")
    if gomp:
        g = root / gomp[0].removeprefix("libtorch/")
        check(readelf_dynamic(g).get("SONAME") == g.name, "bundled libgomp's SONAME is its file name")
        sysgomp = next(x for x in s["plan_detail"]["grafts"] if x["soname"] == "libgomp.so.1")
        check(g.name.split("-")[1].startswith(sysgomp["sha256"][:8]),
              "hash in the name is the source's sha256")
    cpu = readelf_dynamic(root / "lib/libtorch_cpu.so")
    check(gomp and gomp[0].split("/")[-1] in cpu["NEEDED"] and "libgomp.so.1" not in cpu["NEEDED"],
          "libtorch_cpu.so NEEDs the bundled name", str(cpu))
    for f in sorted((root / "lib").iterdir()):
        if f.is_file() and not f.is_symlink():
            d = readelf_dynamic(f)
            check(d.get("RUNPATH") == "$ORIGIN" and d["RPATH"] is None,
                  f"lib/{f.name}: RUNPATH $ORIGIN (build path dropped)", str(d))
    check(readelf_dynamic(root / "bin/tool").get("RUNPATH") == "$ORIGIN/../lib",
          "bin/tool: RUNPATH $ORIGIN/../lib")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    shutil.rmtree(fx["build"])  # the leaked RUNPATH must not be what works
    p = run([root / "bin/tool"], env=env, ok=False)
    check(p.returncode == 0 and p.stdout.strip() == "2.5.0", "bin/tool runs from the unzipped tree",
          p.stdout + p.stderr)
    ldd = run(["ldd", root / "lib/libtorch_cpu.so"], env=env).stdout
    check(re.search(r"libgomp-[0-9a-f]{8}\.so\.1 => " + re.escape(str(root / "lib")), ldd)
          is not None, "ldd finds the bundled libgomp in lib/", ldd)
    client_runs(root, fx["client"], work, "the with-deps zip")
    check(tree_digest(fx["tree"]) == before, "input tree unchanged (contents and modes)")
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".")]
    check(not leftovers, "no scratch left in the output directory", str(leftovers))


def case_without_deps(work: Path) -> None:
    fx = build_tree(work)
    out = work / "dist"
    p = driver(*common_args(fx, out, "shared-without-deps"), "--no-latest")
    s = summary_of(p)
    check(s["passed"], "check_binary passes on the without-deps zip", p.stdout)
    zpath = out / "libtorch-cxx11-abi-shared-without-deps-2.5.0.zip"
    check(sorted(x.name for x in out.iterdir()) == [zpath.name], "--no-latest: only the zip")
    names = layout_checks(zpath, "2.5.0")
    check(not any("libgomp" in n for n in names), "no libgomp in a without-deps zip")
    root = unzip(zpath, work / "unzipped")
    cpu = readelf_dynamic(root / "lib/libtorch_cpu.so")
    check("libgomp.so.1" in cpu["NEEDED"], "libtorch_cpu.so still NEEDs libgomp.so.1")
    check(cpu.get("RUNPATH") == "$ORIGIN", "RUNPATH $ORIGIN in every variant", str(cpu))
    check(any("libgomp.so.1" in line for line in s["plan"]), "plan names libgomp as external",
          "\n".join(s["plan"]))
    client_runs(root, fx["client"], work, "the without-deps zip")


def case_cuda(work: Path) -> None:
    fx = build_tree(work, cuda=True)
    before = tree_digest(fx["tree"])
    out = work / "dist"
    p = driver(*common_args(fx, out, "static-with-deps", cuda="12.4"))
    s = summary_of(p)
    check(s["passed"], "check_binary passes on the CUDA zip", p.stdout)
    zpath = out / "libtorch-cxx11-abi-static-with-deps-2.5.0.zip"
    names = layout_checks(zpath, "2.5.0")
    check("libtorch/lib/libnvrtc-builtins.so.12.4" in names,
          "libnvrtc-builtins keeps its name (dlopened by name)", str(names))
    cudart = [n for n in names if re.fullmatch(r"libtorch/lib/libcudart-[0-9a-f]{8}\.so\.12", n)]
    check(len(cudart) == 1, "libcudart bundled under a hashed name", str(names))
    root = unzip(zpath, work / "unzipped")
    tc = readelf_dynamic(root / "lib/libtorch_cuda.so")
    check(bool(cudart) and cudart[0].split("/")[-1] in tc["NEEDED"],
          "libtorch_cuda.so NEEDs the bundled cudart", str(tc))
    acc = next(c for c in s["checks"][0]["checks"] if c["id"] == "accelerator")
    check(acc["status"] == "pass", "accelerator check passes (table libraries carried)", str(acc))
    check(any("static variant" in n for n in s["notes"]),
          "static variant without .a files gets a note", str(s["notes"]))
    check(tree_digest(fx["tree"]) == before, "input tree unchanged")


def case_debug_split(work: Path) -> None:
    fx = build_tree(work)
    before = tree_digest(fx["tree"])
    out = work / "dist"
    p = driver(*common_args(fx, out, "shared-with-deps"), "--debug-split")
    s = summary_of(p)
    check(s["passed"], "check_binary passes with the debug split", p.stdout)
    check(tree_digest(fx["tree"]) == before, "input tree unchanged by the split",
          "objcopy must write new files, not through the staging hard links")
    debug = [x for x in out.iterdir() if x.name.startswith("debug-libtorch-")]
    check(len(debug) == 1, "one debug zip", str(list(out.iterdir())))
    m = re.fullmatch(r"debug-libtorch-cxx11-abi-shared-with-deps-2\.5\.0-([0-9a-f]{8})\.zip",
                     debug[0].name) if debug else None
    check(m is not None, "debug zip name carries the CRC", debug[0].name if debug else "")
    roles = {a["role"]: a for a in s["artifacts"]}
    check("debug-libtorch" in roles and not roles["debug-libtorch"]["checked"],
          "debug zip is an artifact, not checked")
    with zipfile.ZipFile(debug[0]) as z:
        check(z.namelist() == ["debug/", "debug/libtorch_cpu.so.dbg"],
              "debug zip holds debug/libtorch_cpu.so.dbg", str(z.namelist()))
        dbg_bytes = z.read("debug/libtorch_cpu.so.dbg")
    dbg = work / "libtorch_cpu.so.dbg"
    dbg.write_bytes(dbg_bytes)
    root = unzip(out / "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip", work / "unzipped")
    lib = root / "lib/libtorch_cpu.so"
    dump = run(["readelf", "--string-dump=.gnu_debuglink", lib]).stdout
    check("libtorch_cpu.so.dbg" in dump, ".gnu_debuglink names libtorch_cpu.so.dbg", dump)
    sec = run(["objcopy", "--dump-section", f".gnu_debuglink={work / 'link.bin'}", lib,
               work / "scratch.o"], ok=False)
    link = (work / "link.bin").read_bytes() if sec.returncode == 0 else b""
    stored = int.from_bytes(link[-4:], "little") if len(link) >= 8 else None
    crc = zlib.crc32(dbg_bytes)
    check(stored == crc, "stored debuglink CRC == zlib.crc32 of the .dbg file",
          f"stored {stored} crc {crc}")
    check(m is not None and int(m.group(1), 16) == crc, "debug zip name CRC == zlib.crc32")
    sections = run(["readelf", "-SW", lib]).stdout
    check(".debug_info" not in sections, "stripped library has no .debug_info")
    check(".debug_info" in run(["readelf", "-SW", dbg]).stdout, ".dbg has .debug_info")
    info = run(["readelf", "--debug-dump=info", dbg]).stdout
    check("parallel_sum" in info, "debug info of the .dbg names parallel_sum")
    if shutil.which("gdb") is None:
        missing("gdb not installed (scripts/setup.sh installs it)")
    g = run(["gdb", "-batch", "-nx", "-ex", "info line torch::parallel_sum", lib], ok=False)
    check("torch_cpu.cpp" not in g.stdout, "gdb finds no line info without the .dbg",
          g.stdout)
    shutil.copy(dbg, lib.parent / dbg.name)  # gdb looks next to the library
    g = run(["gdb", "-batch", "-nx", "-ex", "info line torch::parallel_sum", lib], ok=False)
    check("torch_cpu.cpp" in g.stdout, "gdb finds line info through the debuglink",
          g.stdout + g.stderr)
    (lib.parent / dbg.name).unlink()
    client_runs(root, fx["client"], work, "the stripped libtorch_cpu.so")
    # The hash comes from the source checkout when not given.
    if shutil.which("git") is None:
        missing("git not installed (scripts/setup.sh installs it)")
    src = work / "checkout"
    src.mkdir()
    genv = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    run(["git", "init", "-q", src], env=genv)
    run(["git", "-C", src, "commit", "-q", "--allow-empty", "-m", "x"], env=genv)
    head = run(["git", "-C", src, "rev-parse", "HEAD"]).stdout.strip()
    args = [a for a in common_args(fx, work / "dist-git", "shared-without-deps")]
    i = args.index("--build-hash")
    del args[i:i + 2]
    p = driver(*args, "--source", src, "--no-check")
    with zipfile.ZipFile(work / "dist-git/libtorch-cxx11-abi-shared-without-deps-2.5.0.zip") as z:
        check(z.read("libtorch/build-hash").decode() == head + "\n",
              "build-hash = git rev-parse HEAD of --source")


def case_dry_run(work: Path) -> None:
    fx = build_tree(work)
    before = tree_digest(fx["tree"])
    out = work / "dist"
    p = driver(*common_args(fx, out, "shared-with-deps"), "--dry-run", "--debug-split")
    s = summary_of(p)
    check(s["dry_run"] and not s["artifacts"] and not s["checks"], "dry run: no artifacts, no checks")
    check(not out.exists(), "dry run: output directory not created")
    plan = "\n".join(s["plan"])
    check("libgomp" in plan and "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip" in plan
          and "<crc32>" in plan, "plan names the graft, the zip and the debug zip", plan)
    check(s["plan_detail"]["schema"] == "libpkg-tree-bundle/1", "plan detail embedded")
    check(tree_digest(fx["tree"]) == before, "input tree unchanged")
    p = driver(*common_args(fx, out, "shared-with-deps")[:-3], "--dry-run")
    check(p.returncode == 0 and "libgomp" in p.stdout and not out.exists(),
          "text dry run prints the plan", p.stdout)


def case_wheel(work: Path) -> None:
    fx = build_tree(work)
    tree = fx["tree"]
    whl = work / "torch-2.5.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for f in sorted(tree.rglob("*")):
            rel = f.relative_to(tree)
            if f.is_file() and rel.parts[0] != "bin":
                info = zipfile.ZipInfo(f"torch/{rel}")
                info.external_attr = (f.stat().st_mode & 0o777) << 16
                z.writestr(info, f.read_bytes())
        z.writestr("torch/__init__.py", "")
        z.writestr("torch-2.5.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    out = work / "dist"
    args = common_args(fx, out, "shared-with-deps")
    args[0:2] = ["--wheel", whl]
    p = driver(*args)
    s = summary_of(p)
    check(s["passed"], "check_binary passes on the zip made from a wheel", p.stdout)
    names = layout_checks(out / "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip", "2.5.0")
    check("libtorch/include/torch/api.h" in names and
          "libtorch/share/cmake/Torch/TorchConfig.cmake" in names,
          "headers and cmake files taken from the wheel")
    check(not any(n.endswith("__init__.py") or "dist-info" in n for n in names),
          "no Python files in the zip", str(names))


def case_bad_input(work: Path) -> None:
    fx = build_tree(work)
    out = work / "dist"

    def bad(what: str, args: list) -> None:
        p = driver(*args, ok=False)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "),
              f"{what}: exit 2 with one error line", f"rc={p.returncode}\n{p.stderr}")

    base = common_args(fx, out, "shared-with-deps")
    bad("missing tree", ["--tree", work / "nope", *base[2:]])
    nolib = work / "nolib"
    (nolib / "include").mkdir(parents=True)
    bad("tree without lib/", ["--tree", nolib, *base[2:]])
    bad("unknown variant", [*base[:2], "--variant", "shared-with-everything", *base[4:]])
    whl = work / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("x/__init__.py", "")
        z.writestr("x/include/x.h", "")
    bad("wheel without lib", ["--wheel", whl, *base[2:]])
    bad("no build hash", [a for a in base if a not in ("--build-hash", "0123abcd" * 5)])
    (fx["tree"] / "python").mkdir()
    bad("extra top-level entry without --skip-other", base)
    bad("tree and wheel", [*base, "--wheel", whl])
    check(not out.exists() or not any(out.iterdir()), "bad input writes nothing")
    p = driver(*base, "--skip-other")
    check(p.returncode == 0, "--skip-other leaves python/ out", p.stderr)


def case_table_versions(work: Path) -> None:
    """Every version of the built-in table: libtorch_cuda.so relinked
    against a stand-in root's runtime (the table's libraries compiled with
    their real SONAMEs: libnvrtc-builtins.so → .so.X.Y), the driver run
    with the built-in table and --cuda-root, its own check and `pkgtool
    check --expect-table` pass, and the builtins keep their versioned
    name."""
    fx = build_tree(work, cuda=True)
    del fx["cuda_table"]
    pkgtool = os.environ["PKGTOOL"]
    src = Path(os.environ.get("LIBPKG_SOURCE_DIR", Path(__file__).resolve().parents[3]))
    versions = [v["cuda"] for v in json.loads((src / "data/cuda/cuda.json").read_text())["versions"]
                if "libraries" in v]
    check({"12.6", "12.8", "12.9", "13.0"} <= set(versions), f"versions {versions}")
    for version in data_rows(versions, newest_per_major):
        libs = cuda_standin.table_libraries(pkgtool, version)
        root = work / f"root-{version}"
        made = cuda_standin.make_root(root, libs, version)
        cudart = next(path for name, (path, _) in made.items() if name.startswith("libcudart.so"))
        tree = work / f"tree-{version}"
        shutil.copytree(fx["tree"], tree, symlinks=True)
        lib = tree / "lib"
        (lib / "libtorch_cuda.so").unlink()
        run(["g++", "-shared", "-fPIC", "-Wl,-soname,libtorch_cuda.so", "-o", lib / "libtorch_cuda.so",
             work / "src/torch_cuda.cpp", "-L", cudart.parent, "-L", lib, "-Wl,--no-as-needed",
             f"-l:{cudart.name}", "-ltorch_cpu"])
        out = work / f"dist-{version}"
        args = common_args({**fx, "tree": tree}, out, "shared-with-deps", cuda=version)
        p = driver(*args, "--cuda-root", root, ok=False)
        check(p.returncode == 0, f"CUDA {version}: the driver's own check passes", p.stdout[-3000:] + p.stderr)
        if p.returncode != 0:
            continue
        zpath = next(out.glob("libtorch-*.zip"))
        with zipfile.ZipFile(zpath) as z:
            names = z.namelist()
        for entry in libs:
            want = cuda_standin.real_soname(entry["soname"], version)
            stem, rest = want.split(".so", 1)
            hit = [n for n in names if re.fullmatch(rf"libtorch/lib/{re.escape(stem)}(-[0-9a-f]{{8}})?\.so{re.escape(rest)}", n)]
            check(len(hit) == 1, f"CUDA {version}: {want} bundled", str(names))
            if entry["keep_name"]:
                check(hit == [f"libtorch/lib/{want}"], f"CUDA {version}: {want} keeps its name", str(hit))
        r = run([pkgtool, "check", zpath, "--cuda", version, "--expect-table", "--no-runtime"], ok=False)
        check(r.returncode == 0, f"CUDA {version}: pkgtool check --expect-table passes", r.stdout[-3000:] + r.stderr)


REAL_CUDA = Path("/usr/local/cuda")


def case_real_cuda13(work: Path) -> None:
    """The real toolkit (label `long`): libtorch_cuda.so relinked against
    this machine's libcudart.so.13, libcublas.so.13 and libcudnn.so.9; the
    13.0 table's files the toolkit lacks from a stand-in root; the
    shared-with-deps zip bundles the table, and a client using the CUDA
    library links against the unzipped tree and runs with /usr/local/cuda*
    and ld.so.cache hidden, every CUDA library mapped from the zip's lib/."""
    if not (REAL_CUDA / "lib64/libcudart.so.13").exists():
        skip_no_gpu(f"no CUDA 13 toolkit at {REAL_CUDA} (this case needs the real libraries)")
    if shutil.which("unshare") is None:
        raise RuntimeError("unshare not installed (util-linux, scripts/setup.sh)")
    lib64 = REAL_CUDA / "lib64"
    fx = build_tree(work, cuda=True)
    del fx["cuda_table"]
    pkgtool = os.environ["PKGTOOL"]
    libs = cuda_standin.table_libraries(pkgtool, "13.0")
    lacking = [l for l in libs if not (Path(l["path"]).exists() or (lib64 / Path(l["path"]).name).exists())]
    standin = work / "standin"
    cuda_standin.make_root(standin, lacking, "13.0")
    lib = fx["tree"] / "lib"
    src = work / "src/torch_cuda_real.cpp"
    src.write_text(
        "#include <cstddef>\n"
        "extern \"C\" int cudaRuntimeGetVersion(int*);\n"
        "extern \"C\" std::size_t cudnnGetVersion();\n"
        "extern \"C\" int cublasGetProperty(int, int*);\n"
        "namespace torch { int cuda_check() { int v = 0, m = 0; cudaRuntimeGetVersion(&v);\n"
        "  return v == 13000 && cudnnGetVersion() >= 90000 && cublasGetProperty(0, &m) == 0 && m == 13; } }\n")
    (lib / "libtorch_cuda.so").unlink()
    run(["g++", "-shared", "-fPIC", "-Wl,-soname,libtorch_cuda.so", "-o", lib / "libtorch_cuda.so", src,
         "-L", lib64, "-L", lib, "-Wl,--no-as-needed", "-l:libcudart.so.13", "-l:libcublas.so.13",
         "-l:libcudnn.so.9", "-ltorch_cpu"])
    out = work / "dist"
    p = driver(*common_args(fx, out, "shared-with-deps", cuda="13.0"), "--cuda-root", REAL_CUDA,
               "--cuda-root", standin, ok=False)
    check(p.returncode == 0, "the driver bundles the real 13.0 table and its check passes",
          p.stdout[-3000:] + p.stderr)
    if p.returncode != 0:
        return
    zpath = next(out.glob("libtorch-*-shared-with-deps-*.zip"))
    root = unzip(zpath, work / "unzipped")
    for sub in ("", "_graph", "_ops", "_engines_precompiled"):
        check((root / f"lib/libcudnn{sub}.so.9").is_file(), f"libcudnn{sub}.so.9 bundled under its name")
    check((root / "lib/libnvrtc-builtins.so.13.0").is_file(), "libnvrtc-builtins.so.13.0 kept")
    client = work / "cuda_client.cpp"
    client.write_text(
        "#include <cstdio>\n#include <fstream>\n#include <string>\n"
        "namespace torch { int cuda_check(); }\n"
        "int main() { std::ifstream maps(\"/proc/self/maps\"); std::string line;\n"
        "  while (std::getline(maps, line)) if (line.find(\".so\") != std::string::npos) std::printf(\"%s\\n\", line.c_str());\n"
        "  return torch::cuda_check() ? 0 : 3; }\n")
    exe = work / "cuda-client"
    r = run(["g++", client, "-o", exe, "-L", root / "lib", f"-Wl,-rpath,{root / 'lib'}", "-Wl,--no-as-needed",
             "-ltorch_cuda"], ok=False)
    check(r.returncode == 0, "client links against the unzipped libtorch_cuda", r.stderr)
    r = cuda_standin.run_toolkit_hidden([exe], work)
    check(r.returncode == 0, "client runs with the toolkit hidden", r.stdout[-2000:] + r.stderr)
    mapped = {line.split()[-1] for line in r.stdout.splitlines() if line.split()}
    for stem in ("libcudart", "libcublas", "libcublasLt", "libcudnn"):
        mine = [m for m in mapped if Path(m).name.startswith((stem + "-", stem + "."))]
        check(bool(mine) and all(m.startswith(str(root / "lib") + "/") for m in mine),
              f"{stem} mapped from the zip's lib/", str(mine))
    check(not any(m.startswith("/usr/local/cuda") for m in mapped), "nothing from the toolkit", str(sorted(mapped)))


def case_promised_link(work: Path) -> None:
    """A libtorch configuration promises a C++ distribution that links: the
    driver passes check_binary --require link, so a link check that would
    skip (no C++ compiler) fails the run instead of passing it."""
    fx = build_tree(work)
    out = work / "dist"
    saved = os.environ.get("CXX")
    os.environ["CXX"] = str(work / "no-such-c++")
    try:
        p = driver(*common_args(fx, out, "shared-without-deps"), "--no-latest", ok=False)
    finally:
        if saved is None:
            del os.environ["CXX"]
        else:
            os.environ["CXX"] = saved
    check(p.returncode == 1, f"a promised link check that skips fails the run (exit {p.returncode})",
          p.stdout + p.stderr)
    s = summary_of(p)
    check("promised checks (--require): link" in s["notes"], "the summary names the promise", str(s["notes"]))
    by_id = {c["id"]: c for c in s["checks"][0]["checks"]} if s["checks"] else {}
    link = by_id.get("link", {})
    check(link.get("status") == "fail" and "no C++ compiler" in link.get("summary", ""),
          "link: failed, saying why it could not run", str(link))
    # Control: with the compiler the same run passes and the link check ran.
    p = driver(*common_args(fx, work / "dist2", "shared-without-deps"), "--no-latest")
    s = summary_of(p)
    by_id = {c["id"]: c for c in s["checks"][0]["checks"]}
    check(s["passed"] and by_id["link"]["status"] == "pass", "control: link passes with a compiler",
          str(by_id.get("link")))


def case_chunk_cache(work: Path) -> None:
    """The driver's zip goes through the chunk cache: the summary reports
    misses on a cold cache, hits on a warm one, null with --no-cache, and
    the three zips are byte-identical."""
    fx = build_tree(work)
    # A member of several 8 MiB chunks (the cache takes members of at least
    # one chunk): compressible text, deterministic.
    words = [f"w{i}x{i * 7919 % 1000}" for i in range(3000)]
    with open(Path(fx["tree"]) / "share" / "big.txt", "w") as f:
        for i in range(1_600_000):
            f.write(words[(i * 2654435761) % 3000] + (" " if i % 13 else "\n"))
    zips = {}
    os.environ["SOURCE_DATE_EPOCH"] = "1700000000"  # staging copies get new mtimes
    for mode in ("cold", "warm", "off"):
        out = work / f"dist-{mode}"
        extra = ["--no-cache"] if mode == "off" else ["--cache-dir", work / "cache"]
        p = driver(*common_args(fx, out, "shared-with-deps"), "--no-latest", "--no-check",
                   *extra)
        s = summary_of(p)
        c = s.get("cache")
        if mode == "off":
            check(c is None, "--no-cache: the summary's cache is null", str(c))
        elif mode == "cold":
            check(c is not None and c["hits"] == 0 and c["misses"] >= 2,
                  "cold cache: misses reported", str(c))
        else:
            check(c is not None and c["hits"] >= 2 and c["misses"] == 0
                  and c["bytes_saved"] >= 8 << 20, "warm cache: hits and bytes saved", str(c))
            check(c is not None and c["tagged_hits"] == c["hits"],
                  "warm cache: every hit trusted by this user's tag", str(c))
        zips[mode] = (out / "libtorch-cxx11-abi-shared-with-deps-2.5.0.zip").read_bytes()
    check(zips["cold"] == zips["off"] and zips["warm"] == zips["off"],
          "zips byte-identical with and without the cache")


CASES = {
    "chunk_cache": case_chunk_cache,
    "with_deps": case_with_deps,
    "without_deps": case_without_deps,
    "cuda": case_cuda,
    "table_versions": case_table_versions,
    "real_cuda13": case_real_cuda13,
    "debug_split": case_debug_split,
    "dry_run": case_dry_run,
    "wheel": case_wheel,
    "bad_input": case_bad_input,
    "promised_link": case_promised_link,
}


def main() -> int:
    if not DRIVER or not os.access(DRIVER, os.X_OK):
        missing("LIBTORCH_DRIVER not set or not executable")
    if CASE not in CASES:
        print(f"unknown LIBTORCH_CASE '{CASE}' (known: {', '.join(CASES)})")
        return 2
    for tool in ("g++", "gcc", "readelf", "unzip", "objcopy", "ldd"):
        if not shutil.which(tool):
            missing(f"{tool} not found")
    keep = os.environ.get("LIBPKG_KEEP_TMP") == "1"
    work = Path(tempfile.mkdtemp(prefix=f"libpkg-libtorch-{CASE}-"))
    try:
        CASES[CASE](work)
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return CHECKS.status()


if __name__ == "__main__":
    sys.exit(main())
