#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A C++ extension that needs GLIBCXX_3.4.30 (g++ 12's
# std::condition_variable::wait): `pkgtool show` must say manylinux_2_17 is
# blocked and explain it (file, GLIBCXX_3.4.30, demangled symbol); repair
# --plat manylinux2014 must refuse (exit 2, naming the file and the version,
# -w left empty); repair with the automatic tag must retag to the tag the
# independent computation (policy JSON + readelf -V) gives, and the result
# installs and runs.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools g++
make_scratch
cd "$SCRATCH"

build_fixture cxx
W=$WHEEL
make_plan plan.json "$W"
ext=$(plan_get plan.json 'p["elf_members"][0]')
best=$(plan_get plan.json 'p["after_repair"]')
log "independent computation: best tag $best"
if ! unzip -p "$W" "$ext" >ext.so || ! readelf -V --wide ext.so | grep -q 'GLIBCXX_3.4.30'; then
  missing "g++ did not produce a GLIBCXX_3.4.30 reference (not g++ 12+?)"
fi

case_begin "show"
expect_status 0 "pkgtool show --json" "$PKGTOOL" show "$W" --json
cp "$SCRATCH/last.out" show.json
py_check "show vs independent plan; manylinux_2_17 blocked by GLIBCXX_3.4.30 in $ext" \
  check-show plan.json show.json \
  --expect-blocker "manylinux_2_17:symbol_version:$ext:GLIBCXX_3.4.30:std::condition_variable::wait" \
  --expect-max GLIBCXX=3.4.30
expect_status 0 "pkgtool show (text)" "$PKGTOOL" show "$W"
check "text report explains GLIBCXX_3.4.30" grep -q 'GLIBCXX_3.4.30' "$SCRATCH/last.out"
check "text report shows the demangled symbol" grep -q 'std::condition_variable::wait' "$SCRATCH/last.out"

case_begin "--plat manylinux2014 refused"
expect_exit "repair --plat manylinux2014" 2 "GLIBCXX_3\.4\.30" "$PKGTOOL" repair "$W" -w out14 --plat manylinux2014
check "the message names the file" grep -qF "${ext##*/}" "$SCRATCH/out.log"
check "the message names the demangled symbol" grep -qF "std::condition_variable::wait" "$SCRATCH/out.log"
log "  message: $(head -c 400 "$SCRATCH/out.log")"
expect_empty_dir "nothing written" out14
expect_exit "repair --plat manylinux_2_17_x86_64" 2 "GLIBCXX_3\.4\.30" \
  "$PKGTOOL" repair "$W" -w out14 --plat manylinux_2_17_x86_64
expect_empty_dir "nothing written" out14

case_begin "automatic tag"
expect_status 0 "pkgtool repair (auto)" "$PKGTOOL" repair "$W" -w out
R=$(repaired_wheel out)
if [[ -z $R ]]; then
  fail "no output wheel: $(ls out 2>&1)"
  finish
fi
expect_eq "file name tag" "cxxpkg-2.0-$(plan_get plan.json '"-".join(p["wheel"].split("/")[-1].split("-")[2:4])')-${best}_x86_64.whl" "${R##*/}"
py_check "repaired wheel vs plan" check-repaired plan.json "$R"
readers_ok "$R"
expect_status 0 "repair --plat $best explicitly" "$PKGTOOL" repair "$W" -w out2 --plat "$best"
R2=$(repaired_wheel out2)
[[ -n $R2 ]] && expect_same_file "explicit --plat = auto" "$R" "$R2"
case_begin "a less compatible --plat, with and without --only-plat"
# manylinux_2_39 is below the reachable tag: the file name gets both (the
# more compatible one is added, as auditwheel does), unless --only-plat.
expect_status 0 "repair --plat manylinux_2_39" "$PKGTOOL" repair "$W" -w out39 --plat manylinux_2_39
R39=$(repaired_wheel out39)
check "both tags in the name: ${R39##*/}" \
  sh -c 'case "$1" in *-manylinux_2_39_x86_64.*) ;; *.manylinux_2_39_x86_64.whl) ;; *) exit 1;; esac; case "$1" in *"$2"_x86_64*) ;; *) exit 1;; esac' \
  _ "${R39##*/}" "$best"
check "WHEEL lists both tags" \
  sh -c 'unzip -p "$1" "*.dist-info/WHEEL" | grep -q "manylinux_2_39_x86_64" && unzip -p "$1" "*.dist-info/WHEEL" | grep -q "$2_x86_64"' \
  _ "$R39" "$best"
expect_status 0 "repair --plat manylinux_2_39 --only-plat" \
  "$PKGTOOL" repair "$W" -w out39o --plat manylinux_2_39 --only-plat
R39o=$(repaired_wheel out39o)
expect_eq "only the requested tag" "cxxpkg-2.0-$(plan_get plan.json '"-".join(p["wheel"].split("/")[-1].split("-")[2:4])')-manylinux_2_39_x86_64.whl" "${R39o##*/}"
check "WHEEL has only manylinux_2_39" \
  sh -c '[ "$(unzip -p "$1" "*.dist-info/WHEEL" | grep -c "^Tag:")" = 1 ] && unzip -p "$1" "*.dist-info/WHEEL" | grep -q "^Tag: .*-manylinux_2_39_x86_64$"' _ "$R39o"
expect_status 0 "wheel verify (--only-plat)" "$PKGTOOL" wheel verify "$R39o"

case_begin "--no-update-tags (auditwheel's): bundle, keep the input's tags"
expect_status 0 "repair --no-update-tags" "$PKGTOOL" repair "$W" -w outnt --no-update-tags
Rnt=$(repaired_wheel outnt)
expect_eq "file name unchanged" "${W##*/}" "${Rnt##*/}"
expect_eq "WHEEL tags unchanged" "$(unzip -p "$W" '*.dist-info/WHEEL' | grep '^Tag:')" \
  "$(unzip -p "$Rnt" '*.dist-info/WHEEL' | grep '^Tag:')"
expect_eq "same members as the retagged repair" "$(unzip -Z1 "$R" | sed 's/[.]dist-info/D/' | sort)" \
  "$(unzip -Z1 "$Rnt" | sed 's/[.]dist-info/D/' | sort)"
expect_status 0 "wheel verify (--no-update-tags)" "$PKGTOOL" wheel verify "$Rnt"

venv_install v "$R"
expect_eq "installed extension runs" "handshake done" "$(v/bin/python -c 'import cxxpkg; print(cxxpkg.handshake())' 2>&1)"

finish
