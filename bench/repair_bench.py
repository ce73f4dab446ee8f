#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of `pkgtool repair` against the shell pipeline it replaces.

The input is a torch-like wheel built here: a small extension
torch/_C.<EXT_SUFFIX> needing torch/lib/libtorchlike.so, which links the
CUDA toolkit's libcudart, libcublas (-> libcublasLt), libcudnn and libnccl
and the system's libgomp. libcudnn_engines_precompiled.so.9 (dlopen()ed by
cuDNN at run time, so no DT_NEEDED names it) is bundled too, as PyTorch's
builder does, with its closure (libcudnn_graph.so.9): about 1 GB of
libraries to graft in total (the table header gives the actual size).

Rows (medians over --runs, both in the same run, alternating which goes
first; warm page cache):
  shell pipeline  builder-scripts.md §2.4 as PyTorch's manywheel/build_common.sh
                  does it: unzip; cp each dependency into torch/lib; rename
                  it with the first 8 hex digits of its sha256 (libnvrtc-
                  builtins*, libcudnn*, libcublas* keep their names);
                  `patchelf --print-needed | grep` + `--replace-needed` on
                  every *.so* for every dependency; `patchelf --set-rpath`
                  '$ORIGIN:$ORIGIN/lib' on torch/*.so* and '$ORIGIN' on
                  torch/lib/*.so*; RECORD rebuilt with `openssl dgst -sha256
                  -binary | openssl base64` + sed; `zip -r -6`. Debian's
                  /usr/bin/patchelf.
  pkgtool repair  `pkgtool repair -w OUT -z 6 --lib-dir torch/lib --include
                  libcudnn_engines_precompiled.so.9 --plat TAG`: the same
                  libraries grafted (checked against its --dry-run plan).
  with --cache    pkgtool repair with the chunk cache (`--no-cache` on the
                  row above): cold (cache emptied before each run), warm
                  (the same wheel again) and "other extension, warm" (the
                  wheel with a different torch/_C: a second Python version
                  over the same CUDA libraries), and that again with every
                  hit inflated and compared instead of trusted by its tag
                  (the cache's tag key opened to others for the run, so
                  pkgtool refuses it: the cost of another user's entries in
                  a shared cache); cold and warm outputs must be
                  byte-identical to --no-cache's.

  auditwheel      with --auditwheel PATH: `auditwheel repair -z 6 --plat TAG
                  -w OUT` (LD_LIBRARY_PATH=/usr/local/cuda/lib64, the
                  patchelf of --aw-patchelf first in PATH), cold, and with
                  --cache also on the other-extension wheel. auditwheel has
                  no --include, so with --auditwheel the fixture's
                  libtorchlike.so names libcudnn_engines_precompiled.so.9 in
                  a DT_NEEDED (linked with --no-as-needed) and no row passes
                  --include: every tool grafts the same closure, found the
                  same way. One more pkgtool row with auditwheel's own
                  layout and options (`pkgtool repair -z 6 --no-default-
                  keep-names`: <dist>.libs/, every graft renamed, --no-cache)
                  compares like with like; the other rows keep torch/lib.
                  The sets of grafted libraries (names without the hash)
                  must be equal across all rows, and the outputs' sizes and
                  platform tags are printed side by side.

Both outputs are checked before their times count: zipfile reads every
member (CRC), the member sets are equal (graft names are the same sha256
rule in both), every ELF's NEEDED resolves (real ld.so via ldd, no
LD_LIBRARY_PATH) inside the extracted wheel or to a system library every
manylinux policy allows, and `pkgtool wheel verify` accepts both RECORDs.
Wall time, user+sys CPU and peak RSS (the largest process of the tree)
come from wait4 through bench/rusage_exec.c.

Without /usr/local/cuda the benchmark is skipped (exit 0 with a message).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import Launcher, Sample, human_mb, human_ratio, log, run_text, table, write_dist_info

HERE = Path(__file__).resolve().parent
# The repair tests' ldd parsing (the real loader's view): one copy for
# the tests and the benchmark.
sys.path.insert(0, str(HERE.parent / "tests" / "bundle" / "lib"))
from repaircheck import ldd_map  # noqa: E402

DEFAULT_PKGTOOL = str(HERE.parent / "build/tools/pkgtool/pkgtool")
CUDA_LIB = Path("/usr/local/cuda/lib64")
SYSTEM_LIB = Path("/usr/lib/x86_64-linux-gnu")
PATCHELF = "/usr/bin/patchelf"
EPOCH = "1700000000"
KEEP_NAME_GLOBS = ["libnvrtc-builtins.s*", "libcudnn*", "libcublas*"]
# Linked by libtorchlike.so (soname, a function it calls).
LINKED = [
    ("cudart", "cudaRuntimeGetVersion"),
    ("cublas", "cublasGetVersion_v2"),
    ("cublasLt", "cublasLtGetVersion"),
    ("cudnn", "cudnnGetVersion"),
    ("nccl", "ncclGetVersion"),
]
INCLUDED = ["libcudnn_engines_precompiled.so.9"]  # dlopen()ed by cuDNN


def find_lib(stem: str) -> Path | None:
    """lib<stem>.so (the link-time name) in the CUDA dir or the system's."""
    for d in (CUDA_LIB, SYSTEM_LIB):
        p = d / f"lib{stem}.so"
        if p.exists():
            return p
    return None


def policy_whitelist(pkgtool_src: Path) -> set[str]:
    for cand in (pkgtool_src / "data/policy/manylinux-policy.json",
                 Path("/work/shared/data/policy/manylinux-policy.json")):
        if cand.is_file():
            pols = json.loads(cand.read_text())
            # Allowed by every manylinux policy: safe to leave outside.
            sets = [set(p["lib_whitelist"]) for p in pols if p["name"] != "linux"]
            return set.intersection(*sets)
    # auditwheel's manylinux_2_5 whitelist core.
    return {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
            "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1"}


# ------------------------------------------------------------ the input wheel


@dataclass
class Fixture:
    wheel: Path
    deps: list[tuple[str, Path]]  # (soname, path) to bundle, in closure order
    graft_bytes: int
    tag: str


def build_fixture(work: Path, pkgtool: str, whitelist: set[str], link_included: bool = False) -> Fixture:
    """link_included: libtorchlike.so also gets a DT_NEEDED on each INCLUDED
    library (for a tool without --include, auditwheel)."""
    tree = work / "tree/torchlike-1.0"
    lib = tree / "torch/lib"
    lib.mkdir(parents=True)
    links = []
    calls = []
    for stem, fn in LINKED:
        p = find_lib(stem)
        if p is None:
            log(f"  (lib{stem}.so not found: not linked)")
            continue
        links += [f"-L{p.parent}", f"-l{stem}"]
        calls.append(fn)
    if link_included:
        links += [f"-L{CUDA_LIB}"] + [f"-l:{n}" for n in INCLUDED if (CUDA_LIB / n).exists()]
    src = work / "torchlike.c"
    src.write_text(
        "#include <omp.h>\n"
        + "".join(f"extern int {fn}();\n" for fn in calls)
        # Real relocations against each library (not just DT_NEEDED).
        + "void* volatile torchlike_refs[] = {" + ", ".join(f"(void*)&{fn}" for fn in calls) + "};\n"
        + "int torchlike_probe(void) {\n  int n = 0;\n"
        + "#pragma omp parallel reduction(+ : n)\n  n += 1;\n  return n > 0;\n}\n")
    p = run_text(["gcc", "-O1", "-fPIC", "-shared", "-fopenmp", "-Wl,-soname,libtorchlike.so",
                  "-Wl,--no-as-needed", "-o", str(lib / "libtorchlike.so"), str(src), *links])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build libtorchlike.so:\n{p.stderr}")
    inc = sysconfig.get_paths()["include"]
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    csrc = work / "torch_C.c"
    csrc.write_text(
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\nint torchlike_probe(void);\n"
        "static PyObject* probe(PyObject* s, PyObject* a) { (void)s; (void)a;"
        " return PyLong_FromLong(torchlike_probe()); }\n"
        "static PyMethodDef m[] = {{\"probe\", probe, METH_NOARGS, \"\"}, {NULL, NULL, 0, NULL}};\n"
        "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_C\", NULL, -1, m, NULL, NULL, NULL, NULL};\n"
        "PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&d); }\n")
    p = run_text(["gcc", "-O1", "-fPIC", "-shared", f"-I{inc}", "-o", str(tree / f"torch/_C{ext}"),
                  str(csrc), f"-L{lib}", "-ltorchlike", "-Wl,-rpath,$ORIGIN/lib"])
    if p.returncode != 0:
        raise SystemExit(f"error: cannot build torch/_C:\n{p.stderr}")
    (tree / "torch/__init__.py").write_text("from ._C import probe\n")
    tag = write_dist_info(tree, "torchlike", "1.0", "repair_bench")
    out = work / "input"
    out.mkdir()
    p = run_text([pkgtool, "wheel", "pack", str(tree), "-d", str(out)],
                 env=dict(os.environ, SOURCE_DATE_EPOCH=EPOCH))
    if p.returncode != 0:
        raise SystemExit(f"error: pkgtool wheel pack: {p.stderr}")
    wheel = next(out.glob("*.whl"))

    # The libraries to bundle: libtorchlike's closure (ld.so's view) and the
    # dlopen()ed cuDNN engine library with its own, minus what every
    # manylinux policy allows.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["LD_LIBRARY_PATH"] = str(CUDA_LIB)
    deps: dict[str, Path] = {}
    roots = [lib / "libtorchlike.so"] + [CUDA_LIB / n for n in INCLUDED if (CUDA_LIB / n).exists()]
    for r in roots:
        if r.parent == CUDA_LIB:
            deps[r.name] = r
        for soname, path in ldd_map(r, env).items():
            if path is None:
                raise SystemExit(f"error: {r}: {soname} not found")
            if soname not in whitelist and not soname.startswith("ld-linux") and soname != "libtorchlike.so":
                deps.setdefault(soname, Path(path))
    size = sum(p.stat().st_size for p in deps.values())
    return Fixture(wheel, list(deps.items()), size, tag)


# ------------------------------------------------------------ the old pipeline


SHELL_PIPELINE = r"""
set -euo pipefail
pkg=$1 out=$2 tmp=$3 deps_file=$4 keep_globs=$5
PATCHELF_BIN=${PATCHELF_BIN:-patchelf}
mkdir -p "$tmp" && cd "$tmp"
unzip -q "$pkg"
PREFIX=torch
[[ -d torch ]] || PREFIX=libtorch

fname_with_sha256() {
  local HASH basename initname
  HASH=$(sha256sum "$1" | cut -c1-8)
  basename=$(basename "$1")
  for g in $keep_globs; do
    # shellcheck disable=SC2053
    if [[ $basename == $g ]]; then echo "$1"; return; fi
  done
  initname=$(cut -d. -f1 <<<"$basename")
  echo "$(dirname "$1")/$initname-$HASH.$(cut -d. -f2- <<<"$basename")"
}

replace_needed_sofiles() {
  find "$1" -name '*.so*' | while read -r sofile; do
    origname=$2
    patchedname=$3
    if [[ "$origname" != "$patchedname" ]]; then
      set +e
      origname=$($PATCHELF_BIN --print-needed "$sofile" | grep "$origname.*")
      ERRCODE=$?
      set -e
      if [ "$ERRCODE" -eq "0" ]; then
        $PATCHELF_BIN --replace-needed "$origname" "$patchedname" "$sofile"
      fi
    fi
  done
}

while read -r filepath; do
  filename=$(basename "$filepath")
  destpath=$PREFIX/lib/$filename
  if [[ "$filepath" != "$destpath" ]]; then
    cp "$filepath" "$destpath"
  fi
  patchedpath=$(fname_with_sha256 "$destpath")
  patchedname=$(basename "$patchedpath")
  if [[ "$destpath" != "$patchedpath" ]]; then
    mv "$destpath" "$patchedpath"
  fi
  replace_needed_sofiles "$PREFIX" "$filename" "$patchedname"
done <"$deps_file"

find $PREFIX -maxdepth 1 -type f -name "*.so*" | while read -r sofile; do
  $PATCHELF_BIN --set-rpath '$ORIGIN:$ORIGIN/lib' "$sofile"
done
find $PREFIX/lib -maxdepth 1 -type f -name "*.so*" | while read -r sofile; do
  $PATCHELF_BIN --set-rpath '$ORIGIN' "$sofile"
done

record_file=$(echo "$(basename "$pkg")" | sed -e 's/-cp.*$/.dist-info\/RECORD/g')
if [[ -e $record_file ]]; then
  : >"$record_file"
  for fname in $(find * -type f | sort); do
    if [[ $fname == "$record_file" ]]; then
      echo "$fname,," >>"$record_file"
    else
      HASH=$(openssl dgst -sha256 -binary "$fname" | openssl base64 | sed -e 's/+/-/g' | sed -e 's/\//_/g' | sed -e 's/=//g')
      FSIZE=$(ls -nl "$fname" | awk '{print $5}')
      echo "$fname,sha256=$HASH,$FSIZE" >>"$record_file"
    fi
  done
fi
zip -rq -6 "$out/$(basename "$pkg")" *
"""


# ------------------------------------------------------------------ checking


def check_output(wheel: Path, fx: Fixture, whitelist: set[str], pkgtool: str, work: Path) -> set[str]:
    """CRCs, RECORD (pkgtool wheel verify), every NEEDED resolved inside the
    wheel or to an allowed system library. Returns the member set."""
    with zipfile.ZipFile(wheel) as z:
        bad = z.testzip()
        if bad:
            raise RuntimeError(f"{wheel}: member {bad} fails its CRC")
        members = {i.filename for i in z.infolist() if not i.is_dir()}
        x = work / "check"
        shutil.rmtree(x, ignore_errors=True)
        z.extractall(x)
    p = run_text([pkgtool, "wheel", "verify", str(wheel)])
    if p.returncode != 0:
        raise RuntimeError(f"pkgtool wheel verify {wheel}: {p.stdout}{p.stderr}")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    for m in sorted(members):
        f = x / m
        with open(f, "rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
        for soname, where in ldd_map(f, env).items():
            inside = where is not None and Path(where).resolve().is_relative_to(x.resolve())
            if not inside and soname not in whitelist and not soname.startswith("ld-linux"):
                raise RuntimeError(f"{wheel}: {m}: {soname} resolves to {where}, outside the wheel")
    shutil.rmtree(x)
    return members


GRAFT_HASH = re.compile(r"-[0-9a-f]{8}(?=\.so)")


def grafted(members: set[str], fx: Fixture) -> set[str]:
    """The sonames of the libraries an output grafted (wherever it puts them:
    torch/lib or <dist>.libs), from the member names without the hash a
    graft may carry. A graft is named after the soname or, as auditwheel
    does, after the file the soname resolved to (libgomp.so.1.0.0)."""
    names = {}
    for soname, path in fx.deps:
        names[soname] = soname
        names[path.resolve().name] = soname
    out = set()
    for m in members:
        base = m.rsplit("/", 1)[-1]
        if ".so" in base and "/" in m and (m.split("/")[0].endswith(".libs") or m.startswith("torch/lib/")):
            if base != "libtorchlike.so":
                plain = GRAFT_HASH.sub("", base)
                out.add(names.get(plain, plain))
    return out


def platform_tags(wheel: Path) -> str:
    """The platform tags of a wheel's file name (the part after the ABI tag)."""
    return wheel.name[:-len(".whl")].split("-")[-1]


def normalize(members: set[str]) -> set[str]:
    """Member names with dist-info tags and graft hashes blanked; the SBOM
    pkgtool adds (<dist-info>/sboms/pkgtool.cdx.json) has no counterpart in
    the shell pipeline."""
    return {re.sub(r"-[0-9a-f]{8}\.so", "-HASH.so", m) for m in members
            if "/sboms/" not in m}


# --------------------------------------------------------------------- rows


@dataclass
class Row:
    label: str
    samples: list[Sample] = field(default_factory=list)
    size: int = 0
    ref: "Row | None" = None  # the auditwheel row this one is compared with

    def med(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    def cpu(self) -> float:
        return statistics.median(s.user_s + s.sys_s for s in self.samples)


def profile(out_dir: str, repair_argv: list[str], work: Path, env: dict) -> None:
    """perf record -e cpu-clock of a cold-cache and a warm-cache repair;
    reports by DSO and by symbol (children not folded in: self time)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = work / "profile-cache"
    shutil.rmtree(cache, ignore_errors=True)
    for name in ("cold", "warm"):
        dest = work / f"profile-{name}"
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        data = out / f"{name}.perf.data"
        p = run_text(["perf", "record", "-e", "cpu-clock", "-F", "499", "-o", str(data), "--",
                      *repair_argv, "-w", str(dest), "--cache-dir", str(cache)], env=env)
        if p.returncode != 0:
            raise SystemExit(f"error: perf record ({name}): {p.stderr[-2000:]}")
        for sort in ("dso", "dso,sym"):
            rep = run_text(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                            "--sort", sort, "--percent-limit", "0.3"])
            (out / f"{name}.{sort.replace(',', '-')}.txt").write_text(rep.stdout)
        log(f"profile {name}: {out}/{name}.dso.txt, {name}.dso-sym.txt")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgtool", default=DEFAULT_PKGTOOL, help="pkgtool binary (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3, help="runs per row; the table shows medians")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pkgtool -j")
    ap.add_argument("--plat", default="auto", help="pkgtool repair --plat (default %(default)s)")
    ap.add_argument("--only", choices=["shell", "pkgtool"],
                    help="time only one side (pkgtool: every pkgtool row, and auditwheel's if given)")
    ap.add_argument("--auditwheel", metavar="PATH",
                    help="also time `auditwheel repair` (e.g. the wrapper bench/get_auditwheel.sh prints); "
                         "the fixture then links the dlopen()ed cuDNN library (see above)")
    ap.add_argument("--aw-patchelf", default=PATCHELF, metavar="PATH",
                    help="the patchelf auditwheel runs (put first in its PATH; default %(default)s)")
    ap.add_argument("--tmpdir", default=None, help="work directory")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="also write the samples to this file")
    ap.add_argument("--cache", action="store_true",
                    help="also time pkgtool with the chunk cache: cold (emptied before each run), "
                         "warm (the same wheel again), and a second wheel (another extension, "
                         "same libraries: a second Python version) over the warm cache")
    ap.add_argument("--profile", metavar="DIR",
                    help="instead of timing: sample pkgtool repair (-j --jobs) with `perf record -e "
                         "cpu-clock` (software timer sampling: this VM exposes no hardware counters), "
                         "cold cache then warm cache, and write perf reports by DSO and by symbol "
                         "into DIR")
    args = ap.parse_args()

    if not CUDA_LIB.is_dir():
        print(f"skipped: {CUDA_LIB} not found (the benchmark needs the CUDA toolkit's libraries)")
        return 0
    for tool in ("gcc", "unzip", "zip", "openssl", "ldd", PATCHELF):
        if not shutil.which(tool):
            print(f"skipped: {tool} not installed")
            return 0
    has_repair = run_text([args.pkgtool, "repair", "--help"]).returncode == 0
    if args.only != "shell" and not has_repair:
        log("note: this pkgtool has no 'repair' command: timing the shell pipeline only")
        args.only = "shell"

    aw_version = aw_patchelf = None
    if args.auditwheel:
        p = run_text([args.auditwheel, "--version"])
        if p.returncode != 0:
            raise SystemExit(f"error: {args.auditwheel} --version: {p.stderr}")
        aw_version = p.stdout.split(" installed")[0].strip()
        aw_patchelf = run_text([args.aw_patchelf, "--version"]).stdout.strip()
        if not aw_patchelf:
            raise SystemExit(f"error: {args.aw_patchelf} --version printed nothing")
    whitelist = policy_whitelist(HERE.parent)
    with tempfile.TemporaryDirectory(prefix="repair-bench-", dir=args.tmpdir) as tmp:
        work = Path(tmp)
        launcher = Launcher(work)
        linked = bool(args.auditwheel)
        fx = build_fixture(work, args.pkgtool, whitelist, link_included=linked)
        log(f"input: {fx.wheel.name} ({fx.wheel.stat().st_size / 1e6:.1f} MB); to graft: "
            f"{len(fx.deps)} libraries, {fx.graft_bytes / 1e9:.2f} GB: "
            + ", ".join(s for s, _ in fx.deps))
        deps_file = work / "deps.txt"
        deps_file.write_text("".join(f"{p}\n" for _, p in fx.deps))
        script = work / "pipeline.sh"
        script.write_text(SHELL_PIPELINE)
        env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH, PATCHELF_BIN=PATCHELF)
        env.pop("LD_LIBRARY_PATH", None)

        repair_argv = [args.pkgtool, "repair", str(fx.wheel), "-z", "6", "--lib-dir", "torch/lib",
                       "--lib-path", str(CUDA_LIB), "--plat", args.plat, "-j", str(args.jobs)]
        if not linked:
            for inc in INCLUDED:
                repair_argv += ["--include", inc]
        # auditwheel's layout and naming: <dist>.libs, every graft renamed.
        aw_layout_argv = [args.pkgtool, "repair", str(fx.wheel), "-z", "6", "--no-default-keep-names",
                          "--lib-path", str(CUDA_LIB), "--plat", args.plat, "-j", str(args.jobs), "--no-cache"]
        aw_argv = [args.auditwheel or "auditwheel", "repair", "-z", "6", "--plat", args.plat]
        aw_env = dict(env, LD_LIBRARY_PATH=str(CUDA_LIB))
        if args.auditwheel:
            awbin = work / "aw-bin"
            awbin.mkdir()
            (awbin / "patchelf").symlink_to(Path(args.aw_patchelf).resolve())
            aw_env["PATH"] = f"{awbin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        shell = Row("shell pipeline (unzip, cp, patchelf, openssl, zip -6)")
        # --no-cache always: the default chunk cache would be warm from the
        # second run on.
        ours = Row(f"pkgtool repair -z 6 -j {args.jobs} --no-cache")
        aw = Row(f"auditwheel repair -z 6 ({aw_version}, {aw_patchelf})")
        aw_layout = Row(f"pkgtool repair -z 6 -j {args.jobs} --no-cache, auditwheel's layout", ref=aw)
        ours.ref = aw
        cache_dir = work / "chunk-cache"
        cold = Row(f"pkgtool repair -j {args.jobs}, cold cache", ref=aw)
        warm = Row(f"pkgtool repair -j {args.jobs}, warm cache", ref=aw)
        aw_second = Row("auditwheel repair -z 6, other extension")
        second = Row(f"pkgtool repair -j {args.jobs}, other extension, warm cache", ref=aw_second)
        # The same over entries whose tags this user cannot trust (another
        # user's in a shared cache; every entry before tags): the key file
        # is opened to others for the run, so it is refused and each hit is
        # inflated and compared instead.
        untagged = Row(f"pkgtool repair -j {args.jobs}, other extension, warm cache, "
                       "every hit inflated (untrusted tags)", ref=aw_second)
        key_file = cache_dir / f".hit-key-{os.geteuid()}"
        second_wheel = None
        if args.cache:
            # A second Python version: the same wheel with another extension
            # binary (a byte appended: still a valid ELF, other content), the
            # same CUDA libraries to graft.
            with zipfile.ZipFile(fx.wheel) as z:
                ext_member = next(n for n in z.namelist() if n.startswith("torch/_C."))
                other = work / "other_ext.so"
                other.write_bytes(z.read(ext_member) + b"\0")
            (work / "second").mkdir()
            second_wheel = work / "second" / fx.wheel.name
            p = run_text([args.pkgtool, "wheel", "update", str(fx.wheel), "--set",
                          f"{ext_member}={other}", "-o", str(second_wheel), "--no-cache"])
            if p.returncode != 0:
                raise SystemExit(f"error: building the second wheel: {p.stderr}")

        if has_repair:
            dry = run_text(repair_argv + ["-w", str(work / "dry"), "--dry-run", "--json"], env=env)
            if dry.returncode != 0:
                raise SystemExit(f"error: pkgtool repair --dry-run: {dry.stderr}")
            plan = json.loads(dry.stdout)
            planned = sorted(g["soname"] for g in plan["grafts"])
            if planned != sorted(s for s, _ in fx.deps):
                raise SystemExit(f"error: pkgtool plans to graft {planned}, the shell pipeline "
                                 f"{sorted(s for s, _ in fx.deps)}")

        if args.profile:
            profile(args.profile, repair_argv, work, env)
            return 0

        members = {}
        outputs = {}
        for i in range(args.runs):
            order = ["shell", "pkgtool"] + (["aw", "aw-layout"] if args.auditwheel else [])
            if i % 2:
                order.reverse()
            if args.cache:
                order += ["cold", "warm", "second", "untagged"]
                if args.auditwheel:
                    order.insert(len(order) - 4 if i % 2 else len(order), "aw-second")
            for side in order:
                if args.only and side != args.only and not (args.only == "pkgtool" and side != "shell"):
                    continue
                out = work / f"out-{side}"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                if side == "shell":
                    unz = work / "unzipped"
                    shutil.rmtree(unz, ignore_errors=True)
                    s = launcher.run([shutil.which("bash") or "/bin/bash", str(script), str(fx.wheel), str(out), str(unz), str(deps_file),
                                      " ".join(KEEP_NAME_GLOBS)], env=env)
                    shutil.rmtree(unz, ignore_errors=True)
                    row = shell
                elif side == "pkgtool":
                    s = launcher.run(repair_argv + ["-w", str(out), "--no-cache"], env=env)
                    row = ours
                elif side == "aw-layout":
                    s = launcher.run(aw_layout_argv + ["-w", str(out)], env=env)
                    row = aw_layout
                elif side in ("aw", "aw-second"):
                    wheel_in = fx.wheel if side == "aw" else second_wheel
                    s = launcher.run(aw_argv + ["-w", str(out), str(wheel_in)], env=aw_env)
                    row = aw if side == "aw" else aw_second
                else:
                    if side == "cold":
                        shutil.rmtree(cache_dir, ignore_errors=True)
                    argv = list(repair_argv)
                    if side in ("second", "untagged"):
                        argv[2] = str(second_wheel)
                    if side == "untagged":
                        key_file.chmod(0o644)
                    try:
                        s = launcher.run(argv + ["-w", str(out), "--cache-dir", str(cache_dir)], env=env)
                    finally:
                        if side == "untagged":
                            key_file.chmod(0o600)
                    if side == "untagged" and "tag key" not in s.stderr:
                        raise SystemExit("error: the untrusted-tag run did not refuse the key")
                    row = {"cold": cold, "warm": warm, "second": second, "untagged": untagged}[side]
                if not s.ok:
                    raise SystemExit(f"error: {side}: {s.describe_failure()}\n{s.stderr[-3000:]}")
                produced = next(out.glob("*.whl"))
                if i == 0:
                    members[side] = check_output(produced, fx, whitelist, args.pkgtool, work)
                    outputs[side] = f"{produced.name}, {produced.stat().st_size} bytes"
                row.samples.append(s)
                row.size = produced.stat().st_size
                log(f"  run {i + 1} {side}: {s.wall_s:.1f} s wall, {s.user_s + s.sys_s:.1f} s CPU, "
                    f"{s.rss_kib / 1024:.0f} MiB peak RSS")
        if args.cache and "pkgtool" in members:
            ref = next((work / "out-pkgtool").glob("*.whl")).read_bytes()
            for side in ("cold", "warm"):
                if next((work / f"out-{side}").glob("*.whl")).read_bytes() != ref:
                    raise SystemExit(f"error: the {side}-cache output differs from --no-cache's")
            log("  outputs: cold and warm cache byte-identical to --no-cache")
        if "shell" in members and "pkgtool" in members:
            a, b = normalize(members["shell"]), normalize(members["pkgtool"])
            if a != b:
                raise SystemExit(f"error: outputs differ in members: shell-only {sorted(a - b)[:5]}, "
                                 f"pkgtool-only {sorted(b - a)[:5]}")
            log("  outputs: same members (modulo graft hashes), every NEEDED resolves inside")
        if members:
            want = {s for s, _ in fx.deps}
            for side, ms in members.items():
                if grafted(ms, fx) != want:
                    raise SystemExit(f"error: {side} grafted {sorted(grafted(ms, fx))}, expected {sorted(want)}")
            log(f"  outputs: every row grafted the same {len(want)} libraries")

        rows = [r for r in (shell, aw, aw_second, ours, aw_layout, cold, warm, second, untagged) if r.samples]
        base = shell.med("wall_s") if shell.samples else None
        header = ["pipeline", "wall s", "user+sys s", "peak RSS MiB", "output MB", "speed-up"]
        if args.auditwheel:
            # wall and CPU: auditwheel's / the row's (a speed-up); RSS: the
            # row's / auditwheel's (a fraction). The reference of each row is
            # auditwheel on the same input wheel.
            header += ["wall × auditwheel", "CPU × auditwheel", "RSS ÷ auditwheel"]
        cells = []
        for r in rows:
            c = [r.label, f"{r.med('wall_s'):.2f}", f"{r.cpu():.2f}", human_mb(r.med("rss_kib")),
                 f"{r.size / 1e6:.1f}", human_ratio(base / r.med("wall_s")) if base else "—"]
            if args.auditwheel:
                ref = r.ref if r.ref is not None and r.ref.samples else None
                c += [human_ratio(ref.med("wall_s") / r.med("wall_s")) if ref else "—",
                      human_ratio(ref.cpu() / r.cpu()) if ref else "—",
                      f"{r.med('rss_kib') / ref.med('rss_kib'):.2f}" if ref else "—"]
            cells.append(c)
        print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
              f"{os.cpu_count()} CPUs; {platform.release()}; {len(fx.deps)} libraries, "
              f"{fx.graft_bytes / 1e9:.2f} GB grafted from {CUDA_LIB} + {SYSTEM_LIB}; "
              f"runs {args.runs} (medians); shell pipeline's patchelf: "
              f"{run_text([PATCHELF, '--version']).stdout.strip()}")
        if args.auditwheel:
            print(f"fixture: libtorchlike.so linked against {', '.join(INCLUDED)} (no --include anywhere); "
                  f"auditwheel: {aw_version} with {aw_patchelf} ({Path(args.aw_patchelf).resolve()}), "
                  f"/usr/bin/python3 {platform.python_version()}")
        print(table(header, cells, args.markdown))
        for side, name in outputs.items():
            print(f"output of {side}: {name} ({len(members[side])} members)")
        if args.json:
            Path(args.json).write_text(json.dumps([
                {"row": r.label, "ref": r.ref.label if r.ref else None,
                 "wall_s": [s.wall_s for s in r.samples],
                 "cpu_s": [s.user_s + s.sys_s for s in r.samples],
                 "rss_kib": [s.rss_kib for s in r.samples], "size": r.size} for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
