#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool repair` options on the chainpkg fixture (see chain.sh), each
# compared with the independent plan of repaircheck.py:
#   --dry-run [--json]     prints the plan (grafts = the independent plan),
#                          writes nothing into -w
#   -j1 / -j2, twice       byte-identical output wheels
#   -j1 / -j3 under strace every thread pool of the repair (analysis,
#                          planning, writing) has -j threads: three times
#                          as many threads are created with -j3 as with -j1
#   --rpath-tag runpath    DT_RUNPATH instead of DT_RPATH everywhere
#   --exclude GLOB         soname glob and path glob: the library and its
#                          subtree are not grafted
#   --lib-dir / --lib-sdir graft directory inside the wheel, RPATHs relative
#                          to it; the result installs and runs; -L is
#                          --lib-sdir (a directory, the old --lib-path
#                          spelling, is refused; so is show -L)
#   --keep-name            a soname glob keeps the library's name
#   --strip                no .symtab left in the ELF members
#   --strip-level L        all = --strip; debug = the sections `strip -g`
#                          leaves; both flags, or an unknown level: exit 2
#   --policy-file F        a policy that allows libarchive: it and its
#                          subtree are no longer grafted
#   --ldpaths DIRS         replaces the system directories: the system
#                          libraries are then missing (exit 2)
#   --json                 the result of a real run names the wheel written
#   -z 0                   grafted and edited members are stored
source "$(dirname "$0")/lib/common.sh"
require_repair_tools
make_scratch
cd "$SCRATCH"

build_fixture chain
W=$WHEEL
make_plan plan.json "$W"

case_begin "dry run"
expect_status 0 "repair --dry-run --json" "$PKGTOOL" repair "$W" -w dry --dry-run --json
cp "$SCRATCH/last.out" dry.json
py_check "dry-run plan vs independent plan" check-dry-run plan.json dry.json
expect_empty_dir "--dry-run --json writes nothing" dry
expect_status 0 "repair --dry-run (text)" "$PKGTOOL" repair "$W" -w dry --dry-run
check "text plan names the libarchive graft" grep -q "$(plan_get plan.json 'p["grafts"]["libarchive.so.13"]["member"].split("/")[-1]')" "$SCRATCH/last.out"
expect_empty_dir "--dry-run writes nothing" dry

case_begin "determinism"
expect_status 0 "repair -j1" "$PKGTOOL" repair "$W" -w d1 -j 1
expect_status 0 "repair -j2" "$PKGTOOL" repair "$W" -w d2 -j 2
expect_status 0 "repair -j2 again" "$PKGTOOL" repair "$W" -w d3 -j 2
r1=$(repaired_wheel d1) r2=$(repaired_wheel d2) r3=$(repaired_wheel d3)
if [[ -n $r1 && -n $r2 && -n $r3 ]]; then
  expect_same_file "-j1 vs -j2 byte-identical" "$r1" "$r2"
  expect_same_file "twice byte-identical" "$r2" "$r3"
  if ! cmp -s "$r1" "$r2"; then
    "$LIBPKG_PYTHON" - "$r1" "$r2" >&2 <<'EOF' || true
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
ia = [(i.filename, i.date_time, i.CRC, i.external_attr) for i in a.infolist()]
ib = [(i.filename, i.date_time, i.CRC, i.external_attr) for i in b.infolist()]
print("  first differences:", [(x, y) for x, y in zip(ia, ib) if x != y][:3] or (len(ia), len(ib)))
EOF
  fi
else
  fail "determinism: missing output wheel(s): $(ls d1 d2 d3 2>&1 | tr '\n' ' ')"
fi

case_begin "-j bounds every thread pool"
# strace counts the threads created (clone/clone3 with CLONE_THREAD). The
# planning pool used to have one thread per core whatever -j said, which
# breaks the ratio on any machine.
if ! command -v strace >/dev/null; then
  fail "strace missing (scripts/setup.sh installs it)"
else
  count_threads() {
    # Under ASan, LeakSanitizer's exit-time check ptraces the process, which
    # strace already does: it would fail the run. Leaks are checked by every
    # other case of the sanitizer pass.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      strace -f -qq -e trace=clone,clone3 -o "$SCRATCH/strace.out" "$@" >/dev/null 2>&1 || return 1
    grep -c CLONE_THREAD "$SCRATCH/strace.out"
  }
  for mode in --dry-run ""; do
    rm -rf jt
    t1=$(count_threads "$PKGTOOL" repair "$W" -w jt -j 1 $mode) || fail "repair -j 1 $mode failed"
    rm -rf jt
    t3=$(count_threads "$PKGTOOL" repair "$W" -w jt -j 3 $mode) || fail "repair -j 3 $mode failed"
    check "repair ${mode:-(write)}: threads created with -j 1 ($t1) > 0, with -j 3 ($t3) = 3 x" \
      test "${t1:-0}" -gt 0 -a "${t3:-0}" -eq $((3 * ${t1:-0}))
  done
fi

case_begin "--rpath-tag runpath"
expect_status 0 "repair --rpath-tag runpath" "$PKGTOOL" repair "$W" -w rp --rpath-tag runpath
R=$(repaired_wheel rp)
[[ -n $R ]] && py_check "runpath variant vs plan" check-repaired plan.json "$R" --rpath-tag runpath

case_begin "--exclude soname glob"
make_plan plan_ex.json "$W" --exclude 'libarchive.so*'
expect_eq "plan: libarchive subtree not grafted" "False False True" \
  "$(plan_get plan_ex.json '"libarchive.so.13" in p["grafts"], "libxml2.so.2" in p["grafts"], "libgomp.so.1" in p["grafts"]')"
expect_status 0 "dry run --exclude" "$PKGTOOL" repair "$W" -w ex --exclude 'libarchive.so*' --dry-run --json
cp "$SCRATCH/last.out" dry_ex.json
py_check "--exclude plan vs independent plan" check-dry-run plan_ex.json dry_ex.json
check "excluded listed" grep -q 'libarchive.so.13' <<<"$(plan_get dry_ex.json 'p.get("excluded")' 2>/dev/null)"
expect_status 0 "repair --exclude" "$PKGTOOL" repair "$W" -w ex --exclude 'libarchive.so*'
R=$(repaired_wheel ex)
if [[ -n $R ]]; then
  py_check "--exclude result vs plan" check-repaired plan_ex.json "$R"
  expect_eq "--exclude: tag not blocked by the excluded library" \
    "$(plan_get plan_ex.json 'p["after_repair"]')" \
    "$(plan_get plan_ex.json 'p["target"]')"
fi

case_begin "--exclude path glob"
gomp=$(plan_get plan.json 'p["grafts"]["libgomp.so.1"]["source"]')
make_plan plan_exp.json "$W" --exclude "${gomp%/*}/libgomp*"
expect_eq "plan: libgomp not grafted" "False" "$(plan_get plan_exp.json '"libgomp.so.1" in p["grafts"]')"
expect_status 0 "dry run --exclude PATH" "$PKGTOOL" repair "$W" -w exp --exclude "${gomp%/*}/libgomp*" --dry-run --json
cp "$SCRATCH/last.out" dry_exp.json
py_check "--exclude path plan vs independent plan" check-dry-run plan_exp.json dry_exp.json

case_begin "--lib-dir"
make_plan plan_ld.json "$W" --lib-dir chainpkg/_vendor
expect_status 0 "repair --lib-dir chainpkg/_vendor" "$PKGTOOL" repair "$W" -w ld --lib-dir chainpkg/_vendor
R=$(repaired_wheel ld)
if [[ -n $R ]]; then
  py_check "--lib-dir result vs plan" check-repaired plan_ld.json "$R"
  unzip -q "$R" -d ldx
  expect_eq "_ext1_rpath RPATH with --lib-dir" '$ORIGIN/_vendor' \
    "$(dynamic_values ldx/chainpkg/_ext1_rpath.*.so RPATH)"
  venv_install v "$R"
  mv "$LIBS" "$LIBS.gone"
  expect_eq "--lib-dir wheel runs without libchain*" "128" \
    "$(v/bin/python -c 'import chainpkg.sub._ext2 as m; print(m.value())' 2>&1)"
  mv "$LIBS.gone" "$LIBS"
fi

case_begin "--lib-sdir"
make_plan plan_sd.json "$W" --lib-sdir .bundled
expect_status 0 "dry run --lib-sdir .bundled" "$PKGTOOL" repair "$W" -w sd --lib-sdir .bundled --dry-run --json
cp "$SCRATCH/last.out" dry_sd.json
py_check "--lib-sdir plan vs independent plan" check-dry-run plan_sd.json dry_sd.json
# -L is --lib-sdir, as in auditwheel and delocate. It used to be
# --lib-path: a directory given the old way is refused, not taken as a
# suffix.
expect_status 0 "-L .bundled" "$PKGTOOL" repair "$W" -w sd -L .bundled --dry-run --json
check "-L gives the --lib-sdir plan" cmp -s dry_sd.json "$SCRATCH/last.out"
expect_status 2 "-L DIR (the old --lib-path)" "$PKGTOOL" repair "$W" -w sdx -L "$LIBS"
check "says -L is --lib-sdir and names --lib-path" grep -q \
  "^error: -L $LIBS: -L is --lib-sdir.*--lib-path DIR" "$SCRATCH/last.err"
expect_status 2 "-Lsub/dir" "$PKGTOOL" repair "$W" -w sdx -Lsub/dir
expect_empty_dir "refused -L writes nothing" sdx
expect_status 2 "show -L DIR" "$PKGTOOL" show "$W" -L "$LIBS"
check "show points at --lib-path" grep -q "show has no -L.*--lib-path DIR" "$SCRATCH/last.err"

case_begin "--keep-name"
expect_status 0 "dry run --keep-name 'libzstd*'" "$PKGTOOL" repair "$W" -w kn --keep-name 'libzstd*' --dry-run --json
expect_eq "libzstd keeps its name" "chainpkg.libs/libzstd.so.1 True" \
  "$(plan_get "$SCRATCH/last.out" '" ".join(str(x) for g in p["grafts"] if g["soname"] == "libzstd.so.1" for x in (g["member"], g["keep_name"]))')"
expect_status 0 "dry run with defaults" "$PKGTOOL" repair "$W" -w kn --dry-run --json
expect_eq "libzstd renamed by default" "False" \
  "$(plan_get "$SCRATCH/last.out" '[g["keep_name"] for g in p["grafts"] if g["soname"] == "libzstd.so.1"][0]')"
expect_empty_dir "dry runs write nothing" kn

case_begin "--strip"
expect_status 0 "repair --strip" "$PKGTOOL" repair "$W" -w st --strip
R=$(repaired_wheel st)
if [[ -n $R ]]; then
  unzip -q "$R" -d stx
  orig_syms=$(unzip -p "$W" "$(unzip -Z1 "$W" | grep _ext1_rpath)" >orig_ext.so && readelf -SW orig_ext.so | grep -c '\.symtab' || true)
  expect_eq "input extension has a .symtab (the case can fail)" 1 "$orig_syms"
  expect_eq "no .symtab after --strip" "" "$(for f in $(find stx -name '*.so*'); do readelf -SW "$f" | grep -l '\.symtab' >/dev/null && echo "$f"; done | head -3)"
  py_check "--strip result vs plan" check-repaired plan.json "$R"
  venv_install vs "$R"
  expect_eq "stripped wheel runs" "128" "$(vs/bin/python -c 'import chainpkg.sub._ext2 as m; print(m.value())' 2>&1)"
fi

# strip runs through run_process: a failing strip's own output is in the
# error (with its exit status), and nothing is written.
mkdir -p fakebin
printf '#!/bin/sh\necho "fake strip refuses $2" >&2\nexit 3\n' >fakebin/strip
chmod +x fakebin/strip
expect_status 2 "repair --strip with a failing strip" env PATH="$PWD/fakebin:$PATH" "$PKGTOOL" repair "$W" -w stbad --strip
expect_eq "the error carries strip's status and output" 1 \
  "$(grep -c '^error: .*: strip -s failed (exit status 3): fake strip refuses ' "$SCRATCH/last.err")"
expect_empty_dir "a failed strip writes nothing" stbad

case_begin "--strip-level (auditwheel 6.5)"
expect_status 0 "repair --strip-level all" "$PKGTOOL" repair "$W" -w sla --strip-level all
[[ -n $R ]] && expect_same_file "--strip-level all = --strip" "$R" "$(repaired_wheel sla)"
expect_status 0 "repair --strip-level debug" "$PKGTOOL" repair "$W" -w sld --strip-level debug
Rd=$(repaired_wheel sld)
if [[ -n $Rd ]]; then
  ext=$(unzip -Z1 "$W" | grep _ext1_rpath)
  unzip -p "$Rd" "$ext" >debug_ext.so
  cp orig_ext.so indep_g.so && strip -g indep_g.so
  sections() { readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) .*/\1/p' | sort; }
  expect_eq "sections as 'strip -g' leaves them" "$(sections indep_g.so)" "$(sections debug_ext.so)"
  expect_eq "debug keeps .symtab" 1 "$(readelf -SW debug_ext.so | grep -c '\.symtab' || true)"
fi
expect_exit "--strip and --strip-level conflict" 2 "Cannot specify both --strip and --strip-level" \
  "$PKGTOOL" repair "$W" -w slc --strip --strip-level debug
expect_exit "unknown level" 2 "strip-level" "$PKGTOOL" repair "$W" -w slc --strip-level invalid
expect_empty_dir "refused: nothing written" slc

case_begin "--policy-file"
pol=$("$LIBPKG_PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import repaircheck; print(repaircheck.policy_file())' "$REPAIRTEST_DIR/lib")
"$LIBPKG_PYTHON" - "$pol" mypolicy.json <<'PYEOF'
import json, sys
policies = json.load(open(sys.argv[1]))
for p in policies:
    if p["name"] != "linux":
        p["lib_whitelist"].append("libarchive.so.13")
json.dump(policies, open(sys.argv[2], "w"))
PYEOF
REPAIRCHECK_POLICY=$PWD/mypolicy.json make_plan plan_pf.json "$W"
expect_eq "plan: libarchive and its subtree allowed" "False False True" \
  "$(plan_get plan_pf.json '"libarchive.so.13" in p["grafts"], "libxml2.so.2" in p["grafts"], "libgomp.so.1" in p["grafts"]')"
expect_status 0 "dry run --policy-file" "$PKGTOOL" repair "$W" -w pf --policy-file mypolicy.json --dry-run --json
cp "$SCRATCH/last.out" dry_pf.json
py_check "--policy-file plan vs independent plan" check-dry-run plan_pf.json dry_pf.json
expect_status 0 "show --policy-file" "$PKGTOOL" show "$W" --policy-file mypolicy.json --json
cp "$SCRATCH/last.out" show_pf.json
py_check "show --policy-file vs independent plan" check-show plan_pf.json show_pf.json

case_begin "--ldpaths"
expect_exit "repair --ldpaths $SCRATCH/empty: system libraries missing" 2 "libarchive\.so\.13" \
  "$PKGTOOL" repair "$W" -w lp --ldpaths "$SCRATCH/empty"
expect_empty_dir "nothing written" lp

case_begin "-z 0"
expect_status 0 "repair -z 0" "$PKGTOOL" repair "$W" -w z0 -z 0
R=$(repaired_wheel z0)
if [[ -n $R ]]; then
  expect_eq "grafted members stored" "stored" "$("$LIBPKG_PYTHON" -c '
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
grafts = [i for i in z.infolist() if i.filename.startswith("chainpkg.libs/")]
print("stored" if grafts and all(i.compress_type == zipfile.ZIP_STORED for i in grafts) else
      [(i.filename, i.compress_type) for i in grafts][:3])' "$R" 2>&1)"
  py_check "-z 0 result vs plan" check-repaired plan.json "$R"
fi

case_begin "--json result"
expect_status 0 "repair --json" "$PKGTOOL" repair "$W" -w js --json
R=$(repaired_wheel js)
expect_eq "JSON names the wheel written" "$(realpath "$R")" \
  "$(plan_get "$SCRATCH/last.out" '__import__("os").path.realpath((p.get("result") or {}).get("path") or p.get("output"))' 2>&1)"

case_begin "TMPDIR behind a symlink"
# The scratch tree is found through the symlink; libinner.so (inside the
# wheel) must still be recognised as the wheel's own, not as external.
mkdir -p realtmp && ln -sfn "$PWD/realtmp" linktmp
expect_status 0 "show --json (plain TMPDIR)" "$PKGTOOL" show --json "$W"
cp "$SCRATCH/last.out" show_plain.json
expect_status 0 "show --json (TMPDIR=symlink)" env TMPDIR="$PWD/linktmp" "$PKGTOOL" show --json "$W"
cp "$SCRATCH/last.out" show_link.json
check "same external libraries either way" "$LIBPKG_PYTHON" - show_plain.json show_link.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
names = lambda d: sorted(e["soname"] for e in d["external_libraries"])
assert names(a) == names(b), (names(a), names(b))
assert "libinner.so" not in names(b), names(b)
assert a["tags"] == b["tags"], (a["tags"], b["tags"])
PY
expect_eq "scratch removed from the linked TMPDIR" "" "$(ls realtmp)"

finish
