# SPDX-License-Identifier: BSD-3-Clause
# The conda driver end to end: a prefix compiled here (a shared library, an
# executable and a Python-extension-like module linked with absolute RPATHs
# into the build prefix, a text file naming the prefix) → the driver →
# cph extract of both formats, paths.json vs the files, RPATHs with readelf,
# has_prefix, the extracted executable runs with the build prefix gone,
# index.json as configured, the input prefix unchanged, dry run, --json,
# bad input.
#
# Environment (ctest): CONDA_DRIVER, PKGTOOL, LIBPKG_PYTHON,
# LIBPKG_SOURCE_DIR.
source "$LIBPKG_SOURCE_DIR/tests/lib/harness.sh"
require_tools cph readelf gcc
CONDA_DRIVER=${CONDA_DRIVER:?CONDA_DRIVER must point at the conda driver}
CHECK=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/conda/conda_check.py")
export SOURCE_DATE_EPOCH=1700000000
umask 022
make_scratch

# The build prefix: what `make install` left, built for this very path.
P=$SCRATCH/build_prefix
SRC=$SCRATCH/src
SITE=lib/python3.11/site-packages
mkdir -p "$P/lib" "$P/bin" "$P/$SITE/foo" "$P/share/foo" "$SRC"
printf '#include <stdlib.h>\nint foo_answer(void) { return getenv("FOO_NO_SUCH_VARIABLE") ? 0 : 42; }\n' >"$SRC/foo.c"
printf 'int foo_answer(void);\nint main(void) { return foo_answer() == 42 ? 0 : 1; }\n' >"$SRC/main.c"
printf 'int foo_answer(void);\nint ext_answer(void) { return foo_answer(); }\n' >"$SRC/ext.c"
gcc -O1 -shared -fPIC -Wl,-soname,libfoo.so.1 -o "$P/lib/libfoo.so.1" "$SRC/foo.c"
ln -s libfoo.so.1 "$P/lib/libfoo.so"
# An absolute in-prefix entry plus one outside the prefix (a leaked build
# machine directory) that relocation must drop.
gcc -O1 -o "$P/bin/foo" "$SRC/main.c" -L"$P/lib" -lfoo \
  -Wl,-rpath,"$P/lib" -Wl,-rpath,/opt/leaked/lib
gcc -O1 -shared -fPIC -o "$P/$SITE/foo/_ext.so" "$SRC/ext.c" -L"$P/lib" -lfoo \
  -Wl,-rpath,"$P/lib"
printf 'prefix=%s\nlibdir=%s/lib\n' "$P" "$P" >"$P/share/foo/foo.cfg"
printf 'print("foo")\n' >"$P/$SITE/foo/__init__.py"
"$P/bin/foo" || fail "fixture: bin/foo does not run before packaging"
BEFORE=$(tree_digest "$P")

run_driver() { "$CONDA_DRIVER" --no-env "$@"; }

case_begin "cpu package, both formats"
OUT=$SCRATCH/out
expect_ok "driver (cpu)" run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --version 1.2.3 --depends 'libgcc-ng >=12' --license BSD-3-Clause \
  --summary 'foo for tests' -o "$OUT" --no-check
cp "$SCRATCH/out.log" "$SCRATCH/cpu.log"
STEM=pytorch-1.2.3-py3.11_cpu_0
for ext in conda tar.bz2; do
  [[ -f $OUT/$STEM.$ext ]] && pass || fail "no $STEM.$ext in $(ls "$OUT")"
done
expect_eq "nothing else in the output directory" "$STEM.conda $STEM.tar.bz2" \
  "$(cd "$OUT" && ls -A | sort | tr '\n' ' ' | sed 's/ $//')"
expect_ok "cph extract .conda" cph x "$OUT/$STEM.conda" --dest "$SCRATCH/x-conda"
expect_ok "cph extract .tar.bz2" cph x "$OUT/$STEM.tar.bz2" --dest "$SCRATCH/x-bz2"
X=$SCRATCH/x-conda/$STEM
XB=$SCRATCH/x-bz2/$STEM
[[ -d $X ]] || X=$SCRATCH/x-conda
[[ -d $XB ]] || XB=$SCRATCH/x-bz2
expect_ok "both formats hold the same tree" "${CHECK[@]}" tree-equal "$X" "$XB"
expect_ok "every file matches paths.json (.conda)" "${CHECK[@]}" check-paths "$X"
expect_ok "every file matches paths.json (.tar.bz2)" "${CHECK[@]}" check-paths "$XB"
expect_ok "has_prefix: the text file only" "${CHECK[@]}" has-prefix "$X" "$P" \
  text:share/foo/foo.cfg

rpath_of() { readelf -d "$1" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p'; }
expect_eq "bin/foo search path" 'RPATH $ORIGIN/../lib' "$(rpath_of "$X/bin/foo")"
expect_eq "extension search path" 'RPATH $ORIGIN/../../..' \
  "$(rpath_of "$X/$SITE/foo/_ext.so")"
expect_eq "libfoo search path" 'RPATH $ORIGIN' "$(rpath_of "$X/lib/libfoo.so.1")"
grep -q "dropped '/opt/leaked/lib' (outside the prefix)" "$SCRATCH/cpu.log" &&
  pass || fail "no note on the dropped outside entry: $(cat "$SCRATCH/cpu.log")"
grep -q 'relocate bin/foo: RUNPATH .* -> RPATH \$ORIGIN/../lib' "$SCRATCH/cpu.log" &&
  pass || fail "no relocation line for bin/foo: $(cat "$SCRATCH/cpu.log")"
expect_ok "pkgtool conda verify" "$PKGTOOL" conda verify "$OUT/$STEM.conda" \
  "$OUT/$STEM.tar.bz2"

# The relocated executable finds libfoo through $ORIGIN alone: with the
# build prefix moved away and no LD_LIBRARY_PATH.
mv "$P" "$P.away"
expect_ok "extracted bin/foo runs without the build prefix" \
  env -u LD_LIBRARY_PATH "$X/bin/foo"
mv "$P.away" "$P"
expect_eq "input prefix unchanged" "$BEFORE" "$(tree_digest "$P")"

expect_ok "index.json as configured" "$LIBPKG_PYTHON" - "$X/info/index.json" <<'EOF'
import json, sys
i = json.load(open(sys.argv[1]))
want = {"name": "pytorch", "version": "1.2.3", "build": "py3.11_cpu_0",
        "build_number": 0, "license": "BSD-3-Clause"}
for k, v in want.items():
    assert i.get(k) == v, (k, i.get(k), v)
assert i["depends"] == ["libgcc-ng >=12", "python >=3.11,<3.12.0a0"], i["depends"]
assert i["timestamp"] == 1700000000000, i["timestamp"]
EOF

case_begin "CUDA build string and injected requirement"
expect_ok "driver (cu124)" run_driver --prefix "$P" --build-env "conda 3.12 cu124" \
  --cudnn 9.1 --version 2.5.0 --format tar.bz2 -o "$SCRATCH/cuda" --no-check
CSTEM=pytorch-2.5.0-py3.12_cuda12.4_cudnn9.1_0
expect_ok "cph extract the CUDA package" cph x "$SCRATCH/cuda/$CSTEM.tar.bz2" \
  --dest "$SCRATCH/x-cuda"
CX=$SCRATCH/x-cuda/$CSTEM
[[ -d $CX ]] || CX=$SCRATCH/x-cuda
expect_ok "CUDA index.json" "$LIBPKG_PYTHON" - "$CX/info/index.json" <<'EOF'
import json, sys
i = json.load(open(sys.argv[1]))
assert i["build"] == "py3.12_cuda12.4_cudnn9.1_0", i["build"]
assert i["depends"] == ["python >=3.12,<3.13.0a0", "pytorch-cuda >=12.4,<12.5"], i["depends"]
EOF
[[ ! -e $SCRATCH/cuda/$CSTEM.conda ]] && pass || fail "--format tar.bz2 wrote a .conda"

case_begin "CUDA 13.0: cuDNN read from the toolkit's headers"
# A stand-in toolkit: CUDA 13.0 (version.json) with cuDNN 9.7.1 in
# include/cudnn_version.h; no --cudnn, no CUDNN_VERSION.
TK=$SCRATCH/toolkit
mkdir -p "$TK/include"
echo '{"cuda": {"name": "CUDA SDK", "version": "13.0.1"}}' >"$TK/version.json"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 7\n#define CUDNN_PATCHLEVEL 1\n' >"$TK/include/cudnn_version.h"
out=$(run_driver --prefix "$P" --build-env "conda 3.12 cu130" --cuda-root "$TK" --version 2.9.0 \
  --format tar.bz2 -o "$SCRATCH/cu130" --no-check --dry-run)
expect_eq "build string from the toolkit's cuDNN" 1 "$(grep -c '^  build string: py3.12_cuda13.0_cudnn9.7_0$' <<<"$out")"
expect_eq "says where it was read" 1 "$(grep -cF "cuDNN 9.7: read from the toolkit at $TK" <<<"$out")"
# A toolkit of another CUDA version does not count: the error asks for it.
echo '{"cuda": {"name": "CUDA SDK", "version": "12.8.0"}}' >"$TK/version.json"
expect_exit "no matching toolkit" 2 "cuDNN version" run_driver --prefix "$P" --build-env "conda 3.12 cu130" \
  --cuda-root "$TK" --version 2.9.0 -o "$SCRATCH/cu130" --no-check --dry-run
# This machine's toolkit, when it is CUDA 13.0 with cuDNN: its header's
# version, read here independently.
H=/usr/local/cuda/include/cudnn_version.h
# The list is read whole before grep: `pkgtool ... | grep -q` could end with
# pkgtool killed by SIGPIPE once grep matched, a false condition under
# pipefail.
cuda_list=$("$PKGTOOL" cuda list --json)
if [[ -f $H ]] && grep -q '"13\.0' <<<"$cuda_list"; then
  want=$(sed -n 's/^#define CUDNN_MAJOR \([0-9]*\)$/\1/p' "$H").$(sed -n 's/^#define CUDNN_MINOR \([0-9]*\)$/\1/p' "$H")
  out=$(run_driver --prefix "$P" --build-env "conda 3.12 cu130" --version 2.9.0 -o "$SCRATCH/cu130" --no-check --dry-run)
  expect_eq "real toolkit cuDNN $want" 1 "$(grep -c "^  build string: py3.12_cuda13.0_cudnn${want}_0$" <<<"$out")"
else
  log "  (no CUDA 13.0 toolkit with cuDNN at /usr/local/cuda: the stand-in case above covers the rule)"
fi

case_begin "metadata file and custom name"
cat >"$SCRATCH/meta.json" <<'EOF'
{"name": "foo-lib", "build_number": 3, "depends": ["zlib >=1.2"],
 "license": "MIT", "home": "https://example.invalid/foo"}
EOF
expect_ok "driver with --meta" run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --build-version 0.9 --meta "$SCRATCH/meta.json" --depends 'python >=3.11' \
  --format conda -o "$SCRATCH/meta-out" --no-check
MSTEM=foo-lib-0.9-py3.11_cpu_3
expect_ok "cph extract the custom package" cph x "$SCRATCH/meta-out/$MSTEM.conda" \
  --dest "$SCRATCH/x-meta"
MX=$SCRATCH/x-meta/$MSTEM
[[ -d $MX ]] || MX=$SCRATCH/x-meta
expect_ok "custom index.json" "$LIBPKG_PYTHON" - "$MX/info/index.json" "$MX/info/about.json" <<'EOF'
import json, sys
i = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
assert (i["name"], i["version"], i["build_number"]) == ("foo-lib", "0.9", 3), i
# The build string ends in the file's build number; a user's python spec
# replaces the injected pin.
assert i["build"] == "py3.11_cpu_3", i["build"]
assert i["depends"] == ["zlib >=1.2", "python >=3.11"], i["depends"]
assert i["license"] == "MIT" and a["home"] == "https://example.invalid/foo", (i, a)
EOF

case_begin "dry run and --json"
expect_ok "dry run" run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --version 1.2.3 -o "$SCRATCH/dry" --dry-run
[[ ! -e $SCRATCH/dry ]] && pass || fail "dry run created $SCRATCH/dry"
for want in "name: pytorch" "version: 1.2.3" "build string: py3.11_cpu_0" \
  "depends: python >=3.11,<3.12.0a0" "files: 5 (3 dynamic ELF, 3 relocated)" \
  "relocate lib/python3.11/site-packages/foo/_ext.so"; do
  grep -qF -- "$want" "$SCRATCH/out.log" && pass || fail "dry run lacks '$want'"
done
expect_eq "input prefix unchanged after the dry run" "$BEFORE" "$(tree_digest "$P")"
run_driver --prefix "$P" --build-env "conda 3.11 cpu" --version 1.2.3 \
  -o "$SCRATCH/json-out" --format conda --no-check --json >"$SCRATCH/summary.json" ||
  fail "driver --json failed"
expect_ok "--json summary parses (libpkg-driver/1)" "$LIBPKG_PYTHON" - \
  "$SCRATCH/summary.json" "$SCRATCH/json-out" <<'EOF'
import json, os, sys
s = json.load(open(sys.argv[1]))
assert s["schema"] == "libpkg-driver/1" and s["driver"] == "conda", s
assert s["config"]["package_type"] == "conda" and s["passed"] is True
arts = s["artifacts"]
assert [a["role"] for a in arts] == ["conda-v2"], arts
assert os.path.basename(arts[0]["path"]) == "pytorch-1.2.3-py3.11_cpu_0.conda"
assert arts[0]["size"] == os.path.getsize(os.path.join(sys.argv[2], os.path.basename(arts[0]["path"])))
d = s["plan_detail"]
assert d["schema"] == "libpkg-conda-plan/1" and d["elf_files"] == 3, d
r = {x["path"]: x for x in d["relocations"]}
assert r["bin/foo"]["new"] == "$ORIGIN/../lib" and r["bin/foo"]["new_tag"] == "RPATH", r
assert s["checks"] == []
EOF

case_begin "outputs into /dev/null: the bytes written are reported"
# Both outputs are symlinks to /dev/null, which the writers write into (the
# device stays a device). The summary used to take the size from the file:
# 0 bytes. Now it is what was written: with SOURCE_DATE_EPOCH the packages
# are byte-identical to the regular files of the first case.
SINK=$SCRATCH/sink
mkdir -p "$SINK"
ln -s /dev/null "$SINK/$STEM.conda"
ln -s /dev/null "$SINK/$STEM.tar.bz2"
run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --version 1.2.3 --depends 'libgcc-ng >=12' --license BSD-3-Clause \
  --summary 'foo for tests' -o "$SINK" --no-check --json >"$SCRATCH/sink.json" ||
  fail "driver into /dev/null failed: $(cat "$SCRATCH/sink.json")"
expect_ok "sizes reported = bytes written" "$LIBPKG_PYTHON" - \
  "$SCRATCH/sink.json" "$OUT" "$SINK" <<'EOF2'
import json, os, stat, sys
s = json.load(open(sys.argv[1]))
sizes = {os.path.basename(a["path"]): a["size"] for a in s["artifacts"]}
for name in ("pytorch-1.2.3-py3.11_cpu_0.conda", "pytorch-1.2.3-py3.11_cpu_0.tar.bz2"):
    want = os.path.getsize(os.path.join(sys.argv[2], name))
    assert want > 0 and sizes.get(name) == want, (name, sizes, want)
    assert stat.S_ISCHR(os.stat(os.path.join(sys.argv[3], name)).st_mode), name
EOF2

case_begin "--keep-outside-rpaths and --placeholder"
expect_ok "dry run keeping outside entries" run_driver --prefix "$P" \
  --build-env "conda 3.11 cpu" --keep-outside-rpaths --dry-run
grep -qF 'relocate bin/foo: RUNPATH '"$P"'/lib:/opt/leaked/lib -> RPATH $ORIGIN/../lib:/opt/leaked/lib' \
  "$SCRATCH/out.log" && pass || fail "outside entry not kept: $(cat "$SCRATCH/out.log")"
# Files built for another prefix than where they are staged: entries into
# either are relocated; only the build prefix is a placeholder.
expect_ok "driver with --placeholder" run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --placeholder /opt/conda-bld/env_placehold --format tar.bz2 -o "$SCRATCH/ph" --no-check
expect_ok "cph extract (placeholder)" cph x "$SCRATCH/ph/pytorch-1.0.0-py3.11_cpu_1.tar.bz2" \
  --dest "$SCRATCH/x-ph"
PX=$SCRATCH/x-ph/pytorch-1.0.0-py3.11_cpu_1
[[ -d $PX ]] || PX=$SCRATCH/x-ph
[[ ! -e $PX/info/has_prefix ]] && pass || fail "has_prefix for a placeholder no file holds"
expect_eq "bin/foo relocated from the staged path" 'RPATH $ORIGIN/../lib' "$(rpath_of "$PX/bin/foo")"

case_begin "check_binary on the packages"
expect_ok "driver with checks" run_driver --prefix "$P" --build-env "conda 3.11 cpu" \
  --version 1.2.3 -o "$SCRATCH/checked" --no-runtime --json
"$LIBPKG_PYTHON" - "$SCRATCH/out.log" <<'EOF' && pass || fail "checks: $(head -c 3000 "$SCRATCH/out.log")"
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s["checks"]) == 2, s["checks"]
for report in s["checks"]:
    ids = {c["id"]: c["status"] for c in report["checks"]}
    assert ids.get("integrity") == "pass", ids
    assert ids.get("rpath") == "pass", ids
    assert ids.get("dependencies") == "pass", ids
EOF

case_begin "bad input: exit 2, one line"
bad() {
  local what=$1 pattern=$2 rc=0
  shift 2
  run_driver "$@" -o "$SCRATCH/bad" >"$SCRATCH/bad.out" 2>"$SCRATCH/bad.err" || rc=$?
  if ((rc != 2)); then
    fail "$what: exit $rc, expected 2: $(cat "$SCRATCH/bad.err")"
  elif [[ $(wc -l <"$SCRATCH/bad.err") != 1 ]] || ! grep -Eq -- "$pattern" "$SCRATCH/bad.err"; then
    fail "$what: stderr is not one line matching /$pattern/: $(cat "$SCRATCH/bad.err")"
  else
    pass
  fi
}
bad "missing prefix" "^error: .*/nope: no such staged prefix" \
  --prefix "$SCRATCH/nope" --build-env "conda 3.11 cpu"
bad "CUDA without cuDNN" "^error: .*cuDNN" --prefix "$P" --build-env "conda 3.11 cu124"
printf '{"name": "x", "depends": "not-a-list"}' >"$SCRATCH/bad.json"
bad "bad metadata JSON" "^error: .*bad.json" --prefix "$P" --build-env "conda 3.11 cpu" \
  --meta "$SCRATCH/bad.json"
printf '{"name": ' >"$SCRATCH/broken.json"
bad "broken metadata JSON" "^error: .*broken.json" --prefix "$P" \
  --build-env "conda 3.11 cpu" --meta "$SCRATCH/broken.json"
bad "bad name" "^error: .*Bad Name" --prefix "$P" --build-env "conda 3.11 cpu" \
  --name 'Bad Name'
bad "bad format" "^error: --format: unknown package format 'zip'" --prefix "$P" \
  --build-env "conda 3.11 cpu" --format zip
bad "not a conda configuration" "^error: .*not conda" --prefix "$P" \
  --build-env "manywheel 3.11 cpu"
rc=0
run_driver --prefix "$P" --build-env "conda 3.11 cpu" -o "$P/dist" >/dev/null \
  2>"$SCRATCH/bad.err" || rc=$?
[[ $rc == 2 ]] && grep -q 'inside the staged prefix' "$SCRATCH/bad.err" && pass ||
  fail "output inside the prefix: exit $rc: $(cat "$SCRATCH/bad.err")"
[[ ! -e $SCRATCH/bad ]] && pass || fail "bad input left $SCRATCH/bad behind"
expect_eq "input prefix unchanged at the end" "$BEFORE" "$(tree_digest "$P")"

finish
