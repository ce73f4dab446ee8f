#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool show` / `repair` give auditwheel's answers (issue 15), each class
# with fixtures built here (lib/fidelity.py) and asserting the tag, the
# blockers and the exit status:
#   libc        no interpreter, no libc NEEDED: decided from the extension
#               suffix (-linux-musl.so musl; -linux-gnu.so glibc from
#               CPython 3.11 on), then the wheel tag, then --libc;
#               undecidable = exit 2 naming --libc; a musl binary never
#               gets a manylinux tag
#   ARM         armv7l = EABI5 hard-float ARMv7: armel (soft-float) and
#               ARMv6 builds: exit 2 saying why
#   Python ABI  PyFPE_* / PyUnicodeUCS2_*: a blocker naming the symbol
#   libpython   NEEDED libpython: not compatible as it is, repair drops it
#   foreign     aarch64/s390x/ppc64le wheels analysed without sysroots get
#               the tag readelf + the policy JSON give; --ldpaths/--root
#               find a target library to graft
#   Android     bionic (versioned libc.so, /system/bin/linker64): android_
#               tags from data/policy/android-policy.json, never musllinux
#   unrepairable  --plat auto exits 2 naming the blockers (ceiling,
#               blacklist, Python ABI); --plat linux still writes the wheel;
#               a weak reference to a black-listed symbol doesn't count
#   exit codes  show/repair of a pure or unknown-architecture wheel, or
#               of one whose tag names another architecture than its
#               ELF files: 2
#   ISA level   an x86-64 file whose GNU property note needs x86-64-v3
#               (-Wl,-z,x86-64-v3) blocks every policy, as it is and after
#               repair (also a grafted library); --disable-isa-ext-check
#               lifts it; `check` says the ISA level, not the symbol
#               versions, makes the best fit linux_x86_64
#   SBOM        <dist-info>/sboms/pkgtool.cdx.json: CycloneDX required
#               fields, SHA-256 of each original, dpkg -S owner as purl,
#               listed in RECORD; deterministic
# Missing compilers are failures (scripts/setup.sh installs them).
source "$(dirname "$0")/lib/common.sh"
FID=("$LIBPKG_PYTHON" "$REPAIRTEST_DIR/lib/fidelity.py")
for t in gcc musl-gcc readelf rpm rpmbuild arm-linux-gnueabi-gcc arm-linux-gnueabihf-gcc \
  aarch64-linux-gnu-gcc s390x-linux-gnu-gcc powerpc64le-linux-gnu-gcc; do
  command -v "$t" >/dev/null || {
    echo "FAIL: $t not installed (scripts/setup.sh installs it)" >&2
    exit 1
  }
done
make_scratch
cd "$SCRATCH"

if ! "${FID[@]}" build "$SCRATCH/fx" >fx.json 2>fx.err; then
  fail "building the fixtures: $(cat fx.err)"
  finish
fi
fx() { plan_get fx.json "p['$1']"; }
# show_json KEY [FLAGS...]: `show --json` of fixture KEY (exit 0) into KEY.json.
show_json() {
  local key=$1
  shift
  expect_status 0 "show $key $*" "$PKGTOOL" show "$(fx "$key")" --json "$@"
  cp "$SCRATCH/last.out" "$key.json"
}
jget() { plan_get "$1.json" "$2"; }
# no_policy_of_family KEY PREFIX: no policy named PREFIX* was evaluated.
no_family() {
  expect_eq "$1: no $2 policy evaluated" "[]" "$(jget "$1" "[x['name'] for x in p['policies'] if x['name'].startswith('$2')]")"
}

case_begin "libc: musl binary (NEEDED libc.so)"
show_json musl_needed
expect_eq "libc" "musl" "$(jget musl_needed 'p["libc"]')"
expect_eq "as-is tag" "musllinux_1_1_x86_64" "$(jget musl_needed 'p["tags"]["as_is"]')"
no_family musl_needed manylinux
expect_exit "repair --plat manylinux_2_17 of a musl wheel" 2 "musl" \
  "$PKGTOOL" repair "$(fx musl_needed)" -w out_m --plat manylinux_2_17
expect_status 0 "repair (auto)" "$PKGTOOL" repair "$(fx musl_needed)" -w out_m
check "repaired wheel is musllinux, not manylinux" bash -c '[[ $(ls out_m) == *musllinux_1_1_x86_64* && $(ls out_m) != *manylinux* ]]'
expect_exit "--libc glibc contradicts the binary" 2 "--libc glibc.*musl" \
  "$PKGTOOL" show "$(fx musl_needed)" --libc glibc
show_json musl_gnu_name
expect_eq "a -linux-gnu.so name does not override a musl binary" "musl" "$(jget musl_gnu_name 'p["libc"]')"

case_begin "libc: silent binaries"
check "fixture has no interpreter and no NEEDED" bash -c \
  "! readelf -lW $SCRATCH/fx/objs/silent.so | grep -q 'interpreter' && ! readelf -dW $SCRATCH/fx/objs/silent.so | grep -q NEEDED"
show_json suffix_musl
expect_eq "-linux-musl.so suffix: libc" "musl" "$(jget suffix_musl 'p["libc"]')"
expect_eq "-linux-musl.so suffix: tag" "musllinux_1_1_x86_64" "$(jget suffix_musl 'p["tags"]["as_is"]')"
no_family suffix_musl manylinux
expect_status 0 "repair --dry-run (musl suffix)" "$PKGTOOL" repair "$(fx suffix_musl)" -w o --dry-run --json
expect_eq "repair tags (musl suffix)" "['musllinux_1_1_x86_64']" "$(plan_get "$SCRATCH/last.out" 'p["tags"]')"
show_json suffix_gnu311
expect_eq "cpython-311 -linux-gnu.so: libc" "glibc" "$(jget suffix_gnu311 'p["libc"]')"
expect_eq "cpython-311 -linux-gnu.so: tag" "manylinux_2_5_x86_64" "$(jget suffix_gnu311 'p["tags"]["as_is"]')"
expect_exit "cpython-310 -linux-gnu.so, linux_ tag: undecidable" 2 "cannot tell.*--libc glibc\|musl" \
  "$PKGTOOL" show "$(fx suffix_gnu310)"
expect_exit "repair of the undecidable wheel" 2 "--libc" "$PKGTOOL" repair "$(fx suffix_gnu310)" -w o310
expect_empty_dir "nothing written" o310
show_json suffix_gnu310 --libc musl
expect_eq "--libc musl decides" "musl musllinux_1_1_x86_64" "$(jget suffix_gnu310 'p["libc"], p["tags"]["as_is"]' | tr -d "(),'")"
show_json tag_musl
expect_eq "musllinux wheel tag decides" "musl musllinux_1_1_x86_64" "$(jget tag_musl 'p["libc"], p["tags"]["as_is"]' | tr -d "(),'")"
show_json tag_many
expect_eq "manylinux wheel tag decides" "glibc manylinux_2_5_x86_64" "$(jget tag_many 'p["libc"], p["tags"]["as_is"]' | tr -d "(),'")"

case_begin "ARM float ABI"
check "readelf: the armhf fixture is hard-float EABI5" grep -q "Version5 EABI, hard-float ABI" <<<"$(readelf -hW "$SCRATCH/fx/objs/armhf.so")"
check "readelf: the armel fixture is soft-float" grep -q "soft-float ABI" <<<"$(readelf -hW "$SCRATCH/fx/objs/armel.so")"
check "readelf: the ARMv6 fixture says v6" grep -q "Tag_CPU_arch: v6" <<<"$(readelf -A "$SCRATCH/fx/objs/armv6.so")"
show_json armhf
expect_eq "armhf: tag (readelf + policy JSON)" "$("${FID[@]}" expect-tag "$(fx armhf)" armv7l)" "$(jget armhf 'p["tags"]["as_is"]')"
expect_exit "armel (soft-float): show" 2 "soft-float.*no policy applies" "$PKGTOOL" show "$(fx armel)"
expect_exit "armel (soft-float): repair" 2 "soft-float" "$PKGTOOL" repair "$(fx armel)" -w oarm
expect_exit "ARMv6 hard-float: show" 2 "ARMv6.*no policy applies" "$PKGTOOL" show "$(fx armv6)"
expect_empty_dir "nothing written" oarm

case_begin "Python ABI symbols"
for k in pyfpe:PyFPE_jbuf ucs2:PyUnicodeUCS2_FromString; do
  key=${k%%:*} sym=${k#*:}
  show_json "$key"
  expect_eq "$key: after repair still linux" "linux_x86_64" "$(jget "$key" 'p["tags"]["after_repair"]')"
  expect_eq "$key: every manylinux policy blocked by $sym" "True" \
    "$(jget "$key" "all(any(b['kind'] == 'python_abi' and b['detail'] == '$sym' for b in x['after_repair']['blockers']) for x in p['policies'] if x['name'] != 'linux')")"
  expect_exit "$key: repair (auto) refuses, naming $sym" 2 "$sym" "$PKGTOOL" repair "$(fx "$key")" -w "o_$key"
  expect_empty_dir "$key: nothing written" "o_$key"
  expect_status 0 "$key: repair --plat linux" "$PKGTOOL" repair "$(fx "$key")" -w "o_$key" --plat linux
  check "$key: linux_x86_64 wheel written" bash -c "ls o_$key | grep -q 'linux_x86_64.whl'"
done

case_begin "libpython"
show_json libpython
lp=$(dynamic_values "$SCRATCH/fx/objs/pylink.so" NEEDED | grep '^libpython' || true)
check "fixture NEEDs libpython ($lp)" test -n "$lp"
expect_eq "as is: linux" "linux_x86_64" "$(jget libpython 'p["tags"]["as_is"]')"
after=$(jget libpython 'p["tags"]["after_repair"]')
expect_eq "after repair: the tag readelf + policy give without libpython" \
  "$("${FID[@]}" expect-tag "$(fx suffix_gnu311)" x86_64)" "$after"
expect_eq "as-is blocker names $lp" "True" \
  "$(jget libpython "any(b['kind'] == 'libpython' and b['detail'] == '$lp' for x in p['policies'] if x['tag'] == '$after' for b in x['as_is']['blockers'])")"
expect_status 0 "repair" "$PKGTOOL" repair "$(fx libpython)" -w o_lp
R=$(repaired_wheel o_lp)
if [[ -n $R ]]; then
  unzip -q -o "$R" pl/_m.so -d o_lp/x
  check "repair dropped the libpython NEEDED" bash -c "! readelf -dW o_lp/x/pl/_m.so | grep -q libpython"
  check "repaired wheel is $after" bash -c "[[ $R == *$after* ]]"
else
  fail "repair wrote no wheel"
fi

case_begin "foreign architectures without sysroots"
for arch in aarch64 s390x ppc64le; do
  show_json "cross_$arch"
  expect_eq "$arch: arch" "$arch" "$(jget "cross_$arch" 'p["arch"]')"
  expect_eq "$arch: tag (readelf + policy JSON)" "$("${FID[@]}" expect-tag "$(fx "cross_$arch")" "$arch")" \
    "$(jget "cross_$arch" 'p["tags"]["as_is"]')"
  expect_eq "$arch: nothing missing" "[]" "$(jget "cross_$arch" 'p["missing"]')"
  expect_exit "$arch: show text has auditwheel's sentence" 0 \
    "^$(basename "$(fx "cross_$arch")" | sed 's/[.]/[.]/g') is consistent with the following platform tag: \"$(jget "cross_$arch" 'p["tags"]["as_is"]')\"[.]\$" \
    "$PKGTOOL" show "$(fx "cross_$arch")"
  expect_status 0 "$arch: repair" "$PKGTOOL" repair "$(fx "cross_$arch")" -w "o_$arch"
done
# auditwheel's test_non_platform_wheel_bad_arch: an aarch64 wheel named
# *_x86_64 is refused (exit 2 here, 1 there), not analysed as x86_64.
cp "$(fx cross_aarch64)" crossaarchsixfour-1.0-cp312-cp312-linux_x86_64.whl
for args in "show" "repair -w o_badarch --allow-unverified"; do
  # shellcheck disable=SC2086
  expect_exit "${args%% *}: aarch64 binaries in a *_x86_64 wheel" 2 \
    "platform tag linux_x86_64 is not for aarch64, the architecture of its ELF files" \
    "$PKGTOOL" $args crossaarchsixfour-1.0-cp312-cp312-linux_x86_64.whl
done
expect_empty_dir "bad arch: nothing written" o_badarch
show_json cross_foo
expect_eq "libfoo (target-only) is missing without the sysroot" "['libfoo.so.1']" "$(jget cross_foo '[m["soname"] for m in p["missing"]]')"
expect_exit "repair without the sysroot: not found" 2 "libfoo\.so\.1" "$PKGTOOL" repair "$(fx cross_foo)" -w o_foo
SYSROOT=$(fx sysroot)
expect_status 0 "repair --ldpaths <sysroot>/usr/lib" "$PKGTOOL" repair "$(fx cross_foo)" -w o_foo --ldpaths "$SYSROOT/usr/lib"
R=$(repaired_wheel o_foo)
check "libfoo grafted (--ldpaths)" bash -c "unzip -Z1 '$R' | grep -q '^crossfoo.libs/libfoo-'"
check "tag manylinux aarch64" bash -c "[[ '$R' == *manylinux_2_31_aarch64* ]]"
expect_status 0 "repair --root <sysroot>" "$PKGTOOL" repair "$(fx cross_foo)" -w o_root --root "$SYSROOT"
R=$(repaired_wheel o_root)
check "libfoo grafted (--root)" bash -c "unzip -Z1 '$R' | grep -q '^crossfoo.libs/libfoo-'"

case_begin "Android"
check "readelf: the stub libc.so versions LIBC" grep -q "Name: LIBC" <<<"$(readelf -V "$SCRATCH/fx/objs/bionic_ext.so")"
check "readelf: the executable's interpreter" grep -q "/system/bin/linker64" <<<"$(readelf -lW "$SCRATCH/fx/objs/bionic_tool")"
show_json android
expect_eq "bionic, not musl" "bionic" "$(jget android 'p["libc"]')"
expect_eq "tag" "android_21_arm64_v8a" "$(jget android 'p["tags"]["as_is"]')"
no_family android musllinux
no_family android manylinux
show_json android_cam
expect_eq "libcamera2ndk.so needs API 24" "android_24_arm64_v8a" "$(jget android_cam 'p["tags"]["as_is"]')"
expect_eq "android_21 blocker names libcamera2ndk.so" "True" \
  "$(jget android_cam "any(b['detail'] == 'libcamera2ndk.so' for x in p['policies'] if x['name'] == 'android_21' for b in x['as_is']['blockers'])")"
expect_status 0 "repair --dry-run" "$PKGTOOL" repair "$(fx android_cam)" -w o --dry-run --json
expect_eq "repair tags" "['android_24_arm64_v8a']" "$(plan_get "$SCRATCH/last.out" 'p["tags"]')"

# check's symbol-versions names bionic, not musl, for a claimed glibc tag.
expect_exit "check --platform manylinux on Android: binaries link bionic" 1 \
  "platform tag manylinux_2_17_aarch64 is for glibc but the binaries link bionic" \
  "$PKGTOOL" check "$(fx android)" --no-runtime --platform manylinux_2_17_aarch64
check "check on Android never says musl" bash -c "! grep -q musl '$SCRATCH/out.log'"

case_begin "unrepairable wheels"
W=$(fx getrandom)
expect_exit "ceiling: repair (auto) exits 2 naming GLIBC_2.25" 2 "GLIBC_2\.25" \
  "$PKGTOOL" repair "$W" -w o_c --policy-file "$(fx policy_ceiling)"
expect_empty_dir "nothing written" o_c
expect_exit "two policies blocked: the refusal names the most permissive (manylinux_2_17)" 2 \
  "even the most permissive, manylinux_2_17_x86_64, is blocked by:" \
  "$PKGTOOL" repair "$W" -w o_c --policy-file "$(fx policy_ceiling2)"
expect_status 0 "ceiling: --plat linux writes the wheel" "$PKGTOOL" repair "$W" -w o_c --policy-file "$(fx policy_ceiling)" --plat linux
check "linux_x86_64 wheel" bash -c "ls o_c | grep -q linux_x86_64.whl"
expect_exit "blacklist: repair (auto) exits 2 naming getrandom" 2 "getrandom" \
  "$PKGTOOL" repair "$W" -w o_b --policy-file "$(fx policy_blacklist)"
show_json getrandom --policy-file "$(fx policy_blacklist)"
expect_eq "blacklist: only the strong reference blocks (getentropy is weak)" "['getrandom']" \
  "$(jget getrandom "[b['detail'] for x in p['policies'] if x['name'] == 'manylinux_2_5' for b in x['after_repair']['blockers']]")"
check "readelf: getentropy is a weak reference" grep -Eq "WEAK +DEFAULT +UND getentropy" <<<"$(readelf --dyn-syms -W "$SCRATCH/fx/objs/rnd.so")"

case_begin "exit codes: pure and unknown-architecture wheels"
expect_exit "show of a pure wheel" 2 "^error: .*purefid-1\.0-py3-none-any\.whl: no ELF files" "$PKGTOOL" show "$(fx pure)"
expect_exit "show of an unknown-architecture wheel" 2 "^error: .*oddarch.*sparcv9.*no platform policy covers it" \
  "$PKGTOOL" show "$(fx unknown_arch)"
expect_exit "repair of an unknown-architecture wheel" 2 "sparcv9" "$PKGTOOL" repair "$(fx unknown_arch)" -w o_u
# auditwheel's --allow-pure-python-wheel: show accepts it, repair copies it.
expect_exit "show --allow-pure-python-wheel" 0 "pure-Python wheel" \
  "$PKGTOOL" show --allow-pure-python-wheel "$(fx pure)"
expect_status 0 "show --allow-pure-python-wheel --json" \
  "$PKGTOOL" show --allow-pure-python-wheel --json "$(fx pure)"
expect_eq "json: pure" "True" "$(plan_get "$SCRATCH/last.out" 'p["pure"]')"
expect_status 0 "repair --allow-pure-python-wheel" \
  "$PKGTOOL" repair --allow-pure-python-wheel "$(fx pure)" -w o_pure
expect_same_file "copied unchanged" "$(fx pure)" "o_pure/$(basename "$(fx pure)")"
expect_status 0 "again, the output directory being the wheel's own" \
  "$PKGTOOL" repair --allow-pure-python-wheel "o_pure/$(basename "$(fx pure)")" -w o_pure
expect_same_file "still unchanged" "$(fx pure)" "o_pure/$(basename "$(fx pure)")"
expect_exit "the flag accepts only pure wheels" 2 "sparcv9" \
  "$PKGTOOL" repair --allow-pure-python-wheel "$(fx unknown_arch)" -w o_u

case_begin "SBOM of the grafted libraries"
W=$(fx sbom)
expect_status 0 "repair (grafts libzstd.so.1 and libbar.so.1)" "$PKGTOOL" repair "$W" -w o_s --lib-path "$(fx sbom_libs)"
R=$(repaired_wheel o_s)
if [[ -n $R ]]; then
  if out=$("${FID[@]}" check-sbom "$R" 2>&1); then pass; else fail "CycloneDX document: $out"; fi
  readers_ok "$R"
  doc=$(unzip -p "$R" sbompkg-1.0.dist-info/sboms/pkgtool.cdx.json 2>/dev/null || true)
  owner=$(dpkg -S "$(readlink -f "$(gcc -print-file-name=libzstd.so.1)")" 2>/dev/null | cut -d: -f1 || true)
  [[ -z $owner ]] && owner=$(dpkg -S "$(readlink -f /lib/x86_64-linux-gnu/libzstd.so.1 | sed 's,^/usr,,')" | cut -d: -f1)
  check "libzstd's purl names its Debian package ($owner)" grep -q "\"purl\": \"pkg:deb/debian/$owner@[^\"]*?arch=amd64\"" <<<"$doc"
  check "libbar (ours) has no purl" "$LIBPKG_PYTHON" -c '
import json, sys
d = json.loads(sys.stdin.read())
bar = [c for c in d["components"] if c["name"].startswith("libbar")]
sys.exit(not (len(bar) == 1 and "purl" not in bar[0]))' <<<"$doc"
  expect_status 0 "repair again" "$PKGTOOL" repair "$W" -w o_s2 --lib-path "$(fx sbom_libs)"
  expect_same_file "SBOM and wheel are deterministic" "$R" "$(repaired_wheel o_s2)"
else
  fail "repair wrote no wheel"
fi

case_begin "SBOM: dpkg asked once per chunk cache"
# dpkg and dpkg-query behind wrappers that log each call; the wrappers are
# part of the memo's key, and a file younger than two seconds is never
# memoized.
mkdir -p dpkgshim
for tool in dpkg dpkg-query; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/dpkg.log"\nexec "%s" "$@"\n' \
    "$tool" "$SCRATCH" "$(command -v $tool)" >dpkgshim/$tool
  chmod +x dpkgshim/$tool
done
sleep 2.2
: >"$SCRATCH/dpkg.log"
calls() { wc -l <"$SCRATCH/dpkg.log"; }
for run in 1 2; do
  expect_status 0 "repair with a cache, run $run" env PATH="$SCRATCH/dpkgshim:$PATH" \
    "$PKGTOOL" repair "$W" -w o_memo$run --lib-path "$(fx sbom_libs)" --cache-dir "$SCRATCH/owner_cache"
  [[ $run == 1 ]] && first=$(calls)
done
check "run 1 asked dpkg -S and dpkg-query ($first calls)" test "$first" -ge 2
expect_eq "run 2 asked nothing" "$first" "$(calls)"
expect_same_file "run 2's wheel (SBOM included) is the uncached run's" "$R" "$(repaired_wheel o_memo2)"
expect_status 0 "repair with --no-cache" env PATH="$SCRATCH/dpkgshim:$PATH" \
  "$PKGTOOL" repair "$W" -w o_memo3 --lib-path "$(fx sbom_libs)" --no-cache
check "--no-cache asks dpkg again" test "$(calls)" -gt "$first"
expect_same_file "and writes the same wheel" "$R" "$(repaired_wheel o_memo3)"

case_begin "SBOM on an rpm build host"
# A real rpm database (rpm's own macros through HOME: %_dbpath) in which a
# package built here with rpmbuild owns libbar.so.1 (registered with
# --justdb, so the file stays where the fixture put it); pkgtool runs with
# a PATH holding only rpm, as on a RHEL/manylinux image without dpkg.
RH=$SCRATCH/rpmhome
mkdir -p "$RH/top/SPECS" rpmbin
BAR=$(readlink -f "$(fx sbom_libs)/libbar.so.1")
printf '%%_dbpath %s/db\n%%_topdir %s/top\n' "$RH" "$RH" >"$RH/.rpmmacros"
cat >"$RH/top/SPECS/bar.spec" <<SPEC
Name: sbombar
Version: 1.2
Release: 3
Summary: libbar for the SBOM test
License: BSD
BuildArch: x86_64
%description
libbar for the SBOM test
%install
mkdir -p %{buildroot}$(dirname "$BAR")
cp $BAR %{buildroot}$BAR
%files
$BAR
SPEC
HOME=$RH rpmbuild -bb --quiet "$RH/top/SPECS/bar.spec" >rpmbuild.log 2>&1 || fail "rpmbuild: $(tail -5 rpmbuild.log)"
HOME=$RH rpm --initdb
HOME=$RH rpm -i --justdb --nodeps --noscripts "$RH"/top/RPMS/x86_64/sbombar-1.2-3.x86_64.rpm >rpmi.log 2>&1 || fail "rpm -i: $(cat rpmi.log)"
expect_eq "independent: rpm -qf names the owner" "sbombar 1.2-3" \
  "$(HOME=$RH rpm -qf --queryformat '%{NAME} %{VERSION}-%{RELEASE}' "$BAR")"
ln -s "$(command -v rpm)" rpmbin/rpm
expect_status 0 "repair with only rpm on PATH" env PATH="$SCRATCH/rpmbin" HOME="$RH" \
  "$PKGTOOL" repair "$W" -w o_rpm --lib-path "$(fx sbom_libs)"
R=$(repaired_wheel o_rpm)
if [[ -n $R ]]; then
  doc=$(unzip -p "$R" sbompkg-1.0.dist-info/sboms/pkgtool.cdx.json 2>/dev/null || true)
  distro=$(. /etc/os-release && echo "$ID")
  expect_eq "libbar: rpm purl, version, publisher" \
    "pkg:rpm/$distro/sbombar@1.2-3?arch=x86_64 1.2-3 $distro" \
    "$("$LIBPKG_PYTHON" -c '
import json, sys
d = json.loads(sys.stdin.read())
bar = [c for c in d["components"] if c["name"].startswith("libbar")][0]
print(bar.get("purl"), bar.get("version"), bar.get("publisher"))' <<<"$doc")"
  check "libzstd (not in the rpm database): no purl" "$LIBPKG_PYTHON" -c '
import json, sys
d = json.loads(sys.stdin.read())
z = [c for c in d["components"] if c["name"].startswith("libzstd")]
sys.exit(not (len(z) == 1 and "purl" not in z[0]))' <<<"$doc"
fi
expect_status 0 "repair without grafts" "$PKGTOOL" repair "$(fx suffix_gnu311)" -w o_ns
case_begin "auditwheel's default -w: ./wheelhouse, several wheels in one call"
mkdir -p cwd_default
w1=$(fx suffix_gnu311) w2=$(fx tag_many)
(cd cwd_default && "$PKGTOOL" repair "$w1" "$w2" >../default.log 2>&1) &&
  pass || fail "repair without -w: $(cat default.log)"
expect_eq "without -w: both wheels in ./wheelhouse" 2 \
  "$(find cwd_default/wheelhouse -name '*.whl' 2>/dev/null | wc -l)"
check "no SBOM when nothing is grafted" bash -c "! unzip -Z1 \"\$(ls o_ns/*.whl)\" | grep -q sboms/"

case_begin "x86-64 ISA level (GNU property note)"
check "readelf -n shows the x86-64-v3 need" bash -c \
  "readelf -nW '$SCRATCH/fx/objs/isa_v3.so' | grep -q 'x86 ISA needed: .*x86-64-v3'"
show_json isa_v3
expect_eq "isa_v3: as-is tag" "linux_x86_64" "$(jget isa_v3 'p["tags"]["as_is"]')"
expect_eq "isa_v3: after-repair tag" "linux_x86_64" "$(jget isa_v3 'p["tags"]["after_repair"]')"
for when in as_is after_repair; do
  expect_eq "isa_v3: every manylinux policy blocked ($when) naming the level" "True" \
    "$(jget isa_v3 "all(any(b['kind'] == 'isa_extension' and b['detail'] == 'x86-64-v3' and b['file'].endswith('_m.cpython-312-x86_64-linux-gnu.so') for b in x['$when']['blockers']) for x in p['policies'] if x['name'] != 'linux')")"
done
expect_exit "isa_v3: show text names file and level" 0 \
  "_m\.cpython-312-x86_64-linux-gnu\.so: requires the x86-64-v3 instruction set.*--disable-isa-ext-check" \
  "$PKGTOOL" show "$(fx isa_v3)"
# check: an x86-64-v3 manylinux2014 wheel needing GLIBC_2.25: the best fit
# is linux_x86_64 because of the ISA level, not the versions; say so.
expect_exit "isa_v3_rnd: check names the policy the versions fit and the ISA block" 1 \
  "best fit: linux_x86_64; the symbol versions alone fit manylinux_2_[0-9]+_x86_64, blocked by .*x86-64-v3" \
  "$PKGTOOL" check "$(fx isa_v3_rnd)" --no-runtime
expect_exit "isa_v3: repair (auto) exits 2 naming the level" 2 "x86-64-v3" \
  "$PKGTOOL" repair "$(fx isa_v3)" -w o_isa
expect_empty_dir "isa_v3: nothing written" o_isa
show_json isa_v3 --disable-isa-ext-check
cp isa_v3.json isa_v3_off.json
expect_eq "isa_v3: --disable-isa-ext-check: as-is manylinux" "manylinux" \
  "$(jget isa_v3_off 'p["tags"]["as_is"][:9]')"
expect_eq "isa_v3: --disable-isa-ext-check: no isa blocker" "False" \
  "$(jget isa_v3_off "any(b['kind'] == 'isa_extension' for x in p['policies'] for w in ('as_is', 'after_repair') for b in x[w]['blockers'])")"
expect_status 0 "isa_v3: repair --disable-isa-ext-check" \
  "$PKGTOOL" repair "$(fx isa_v3)" -w o_isa --disable-isa-ext-check
check "isa_v3: manylinux wheel written" bash -c "ls o_isa | grep -q 'manylinux.*_x86_64.whl'"
# A baseline extension whose library needs x86-64-v3: as it is the library
# blocks; after repair the grafted copy's ISA level does.
show_json isa_graft --lib-path "$(fx isa_libs)"
expect_eq "isa_graft: after-repair tag" "linux_x86_64" "$(jget isa_graft 'p["tags"]["after_repair"]')"
expect_eq "isa_graft: the grafted library blocks after repair" "True" \
  "$(jget isa_graft "all(any(b['kind'] == 'isa_extension' and b['file'] == 'libisafoo.so.1' for b in x['after_repair']['blockers']) for x in p['policies'] if x['name'] != 'linux')")"
expect_exit "isa_graft: repair (auto) exits 2 naming the library" 2 "libisafoo\.so\.1: requires the x86-64-v3" \
  "$PKGTOOL" repair "$(fx isa_graft)" -w o_isag --lib-path "$(fx isa_libs)"
expect_status 0 "isa_graft: repair --disable-isa-ext-check" \
  "$PKGTOOL" repair "$(fx isa_graft)" -w o_isag --lib-path "$(fx isa_libs)" --disable-isa-ext-check
check "isa_graft: manylinux wheel with the library grafted" bash -c \
  "ls o_isag/*manylinux*_x86_64.whl >/dev/null && \"$LIBPKG_PYTHON\" -m zipfile -l o_isag/*.whl | grep -q 'libisafoo'"

finish
