#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool show` + `pkgtool repair` on chainpkg: three extensions that link
# the system's zlib (allowed), libarchive (not allowed: grafted with its
# whole closure: libacl, liblzma, libzstd, libxml2, libicu*, ...), libgomp
# and our own libchain1 -> libchain2 from a directory outside the wheel; one
# extension has DT_RPATH, one DT_RUNPATH, one (in a subpackage) shares
# libchain1, is linked with libpython and needs libinner.so from inside the
# wheel through an $ORIGIN-relative RUNPATH entry (kept by repair).
#
# Checked against an independent plan (ldd + readelf + policy JSON): show's
# tags, graft flags, realpaths and verdicts; the repaired wheel's name, WHEEL
# tags, members (one copy per library, hashed names), every ELF's NEEDED /
# SONAME / RPATH, eu-elflint, zipfile / wheel verify / WheelFile; pip
# installs it, and it imports and runs with our library directory deleted
# and the system's libarchive, libgomp, ... hidden by bind mounts, where the
# unrepaired wheel fails to import. `show` on the repaired wheel reports
# nothing left to graft.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools eu-elflint
make_scratch
cd "$SCRATCH"

case_begin "fixture"
build_fixture chain
W=$WHEEL
make_plan plan.json "$W"
log "plan: as_is $(plan_get plan.json 'p["as_is"]'), after repair $(plan_get plan.json 'p["after_repair"]'), \
$(plan_get plan.json 'len(p["grafts"])') grafts: $(plan_get plan.json '" ".join(sorted(p["grafts"]))')"
for lib in libarchive.so.13 libgomp.so.1 libchain1.so libchain2.so libzstd.so.1 liblzma.so.5; do
  expect_eq "plan grafts $lib" "True" "$(plan_get plan.json "'$lib' in p['grafts']")"
done
expect_eq "plan: libz is allowed, not grafted" "False" "$(plan_get plan.json "'libz.so.1' in p['grafts']")"

case_begin "show before repair"
expect_status 0 "pkgtool show --json" "$PKGTOOL" show "$W" --json
cp "$SCRATCH/last.out" show.json
py_check "show --json vs independent plan" check-show plan.json show.json
expect_status 0 "pkgtool show (text)" "$PKGTOOL" show "$W"
check "text report names libarchive" grep -q 'libarchive.so.13' "$SCRATCH/last.out"
check "text report names the after-repair tag" grep -q "$(plan_get plan.json 'p["after_repair"]')" "$SCRATCH/last.out"

case_begin "repair"
expect_status 0 "pkgtool repair" "$PKGTOOL" repair "$W" -w out
R=$(repaired_wheel out)
if [[ -z $R ]]; then
  fail "no single wheel in out/: $(ls out 2>&1)"
  finish
fi
check "prints 'wrote out/NAME.whl'" grep -q "wrote .*${R##*/}" "$SCRATCH/last.out"
py_check "repaired wheel vs plan (name, tags, members, NEEDED/SONAME/RPATH, ldd inside)" \
  check-repaired plan.json "$R"
py_check "eu-elflint --gnu-ld: no new messages" check-elflint plan.json "$R"
readers_ok "$R"
# The SBOM of 14 grafts, most owned by Debian packages (one dpkg lookup for
# all): each purl is checked against dpkg -S.
if out=$("$LIBPKG_PYTHON" "$REPAIRTEST_DIR/lib/fidelity.py" check-sbom "$R" 2>&1); then
  pass
else
  fail "SBOM: $out"
fi
owned=$(for f in $(system_realpaths plan.json); do
  dpkg -S "$f" >/dev/null 2>&1 || dpkg -S "${f#/usr}" >/dev/null 2>&1 && echo x
done | wc -l)
check "dpkg owns some grafts ($owned)" test "$owned" -gt 5
expect_eq "SBOM: a purl for every graft dpkg owns" "$owned" \
  "$(unzip -p "$R" chainpkg-1.0.dist-info/sboms/pkgtool.cdx.json | grep -c '"purl": "pkg:deb/')"

case_begin "readelf details"
unzip -q "$R" -d ux
ext1r=$(ls ux/chainpkg/_ext1_rpath.*.so)
ext1u=$(ls ux/chainpkg/_ext1_runpath.*.so)
ext2=$(ls ux/chainpkg/sub/_ext2.*.so)
c1=$(plan_get plan.json 'p["grafts"]["libchain1.so"]["member"]')
c2=$(plan_get plan.json 'p["grafts"]["libchain2.so"]["member"]')
arch=$(plan_get plan.json 'p["grafts"]["libarchive.so.13"]["member"]')
for f in "$ext1r" "$ext1u"; do
  d=$(readelf -dW "$f")
  check "${f##*/}: NEEDED ${c1##*/}" grep -q "(NEEDED).*\[${c1##*/}\]" <<<"$d"
  check "${f##*/}: NEEDED ${arch##*/}" grep -q "(NEEDED).*\[${arch##*/}\]" <<<"$d"
  check "${f##*/}: NEEDED libz.so.1 kept" grep -q '(NEEDED).*\[libz.so.1\]' <<<"$d"
  expect_eq "${f##*/}: DT_RPATH" '$ORIGIN/../chainpkg.libs' "$(sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p' <<<"$d")"
  expect_eq "${f##*/}: no DT_RUNPATH" "" "$(grep '(RUNPATH)' <<<"$d" || true)"
done
d=$(readelf -dW "$ext2")
# The old entry inside the wheel ($ORIGIN/../_private, where libinner.so is)
# stays; the one outside (our library directory) goes.
expect_eq "_ext2: DT_RPATH entries" '$ORIGIN/../../chainpkg.libs $ORIGIN/../_private' \
  "$(sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p' <<<"$d" | tr ':' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "_ext2: no DT_RUNPATH" "" "$(grep '(RUNPATH)' <<<"$d" || true)"
check "_ext2: NEEDED libinner.so kept" grep -q '(NEEDED).*\[libinner.so\]' <<<"$d"
expect_eq "libinner.so not grafted" "" "$(find ux -name 'libinner*' ! -path '*/_private/*')"
expect_eq "_ext2: libpython NEEDED removed" "" "$(grep -o '\[libpython[^]]*\]' <<<"$d" || true)"
check "_ext2: NEEDED ${c1##*/}" grep -q "(NEEDED).*\[${c1##*/}\]" <<<"$d"
d=$(readelf -dW "ux/$c1")
expect_eq "grafted libchain1: SONAME" "${c1##*/}" "$(sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' <<<"$d")"
check "grafted libchain1: NEEDED ${c2##*/}" grep -q "(NEEDED).*\[${c2##*/}\]" <<<"$d"
expect_eq "grafted libchain1: DT_RPATH \$ORIGIN" '$ORIGIN' "$(sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p' <<<"$d")"
expect_eq "grafted libchain1: old RUNPATH gone" "" "$(grep '(RUNPATH)' <<<"$d" || true)"
d=$(readelf -dW "ux/$c2")
# libchain2 needs no other graft but had a build-tree RPATH: auditwheel's
# rule puts $ORIGIN in its place (the build directory must not leak).
expect_eq "grafted libchain2: DT_RPATH \$ORIGIN" '$ORIGIN' "$(sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p' <<<"$d")"
expect_eq "one libchain1 copy" 1 "$(find ux -name 'libchain1*' | wc -l)"
expect_eq "one libarchive copy" 1 "$(find ux -name 'libarchive*' | wc -l)"
# The grafted file names carry the first 8 hex digits of the source's sha256.
h=$(sha256sum "$(readlink -f /usr/lib/x86_64-linux-gnu/libarchive.so.13 2>/dev/null || echo /nonexistent)" 2>/dev/null | cut -c1-8 || true)
if [[ -n $h ]]; then
  expect_eq "libarchive graft name" "chainpkg.libs/libarchive-$h.so.13" "$arch"
fi

case_begin "show after repair"
expect_status 0 "pkgtool show repaired --json" "$PKGTOOL" show "$R" --json
cp "$SCRATCH/last.out" show2.json
expect_eq "nothing left to graft; as_is tag = target" \
  "[] $(plan_get plan.json 'p["after_repair"]')_x86_64" \
  "$("$LIBPKG_PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
print([e["soname"] for e in j["external_libraries"] if e.get("graft")], j["tags"]["as_is"])' show2.json 2>&1)"

case_begin "install and run"
CALL='import chainpkg._ext1_rpath as a, chainpkg._ext1_runpath as b, chainpkg.sub._ext2 as c; print(a.info(), b.info(), c.value())'
WANT="(891568578, 'hello from libarchive', 1, 123) (891568578, 'hello from libarchive', 1, 123) 128"
venv_install v0 "$W"
# Baseline: the unrepaired wheel works while everything is in place.
expect_eq "unrepaired wheel runs with its libraries present" "$WANT" "$(v0/bin/python -c "$CALL" 2>&1)"
venv_install v1 "$R"
mv "$LIBS" "$LIBS.gone"
expect_eq "repaired wheel runs with libchain* deleted" "$WANT" "$(v1/bin/python -c "$CALL" 2>&1)"
out=$(v0/bin/python -c "$CALL" 2>&1 || true)
check "unrepaired wheel fails without libchain*: $out" grep -q 'libchain1.so' <<<"$out"
mv "$LIBS.gone" "$LIBS"

case_begin "check_binary"
# The unrepaired wheel links libarchive, libgomp and libchain* from outside
# and has an absolute RPATH into the fixture's library directory; the
# repaired one passes every check, importing in a fresh venv included.
failing_checks() { # failing_checks REPORT.json: "id id ..." of failed checks
  "$LIBPKG_PYTHON" -c '
import json, sys
print(" ".join(c["id"] for c in json.load(open(sys.argv[1]))["checks"] if c["status"] == "fail"))' "$1"
}
expect_status 1 "pkgtool check (unrepaired)" "$PKGTOOL" check "$W" --json --python "$LIBPKG_PYTHON"
cp "$SCRATCH/last.out" check0.json
expect_eq "unrepaired: dependencies and rpath fail" "dependencies rpath" "$(failing_checks check0.json)"
for lib in libarchive.so.13 libgomp.so.1 libchain1.so; do
  check "unrepaired: dependencies names $lib" grep -q "needs $lib" check0.json
done
check "unrepaired: rpath names the library directory" grep -q "$LIBS" check0.json
expect_status 0 "pkgtool check (repaired)" "$PKGTOOL" check "$R" --json --python "$LIBPKG_PYTHON"
cp "$SCRATCH/last.out" check1.json
expect_eq "repaired: import passes" "pass" "$("$LIBPKG_PYTHON" -c '
import json, sys
print({c["id"]: c["status"] for c in json.load(open(sys.argv[1]))["checks"]}["import"])' check1.json)"

case_begin "system libraries hidden"
if can_hide; then
  hide=$(system_realpaths plan.json)
  log "hiding: $hide"
  check "libarchive among hidden files" grep -q libarchive <<<"$hide"
  check "libgomp among hidden files" grep -q libgomp <<<"$hide"
  out=$(hidden_run "$hide" v0/bin/python -c "$CALL" || true)
  check "unrepaired wheel fails with the system libraries hidden: $out" \
    grep -Eq 'libarchive|libgomp|file too short' <<<"$out"
  mv "$LIBS" "$LIBS.gone"
  expect_eq "repaired wheel runs with system libraries hidden and libchain* deleted" "$WANT" \
    "$(hidden_run "$hide" v1/bin/python -c "$CALL")"
  mv "$LIBS.gone" "$LIBS"
fi

finish
