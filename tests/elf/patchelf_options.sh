#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# patchelf 0.18 options (issue 15): --print-os-abi/--set-os-abi,
# --print-execstack/--set-execstack/--clear-execstack, --no-default-lib,
# --add-debug-tag, --clear-symbol-version, --no-sort and @FILE arguments;
# unknown options and a missing --rename-dynamic-symbols map are errors
# (exit 2), never a silent no-op (renaming itself: rename_symbols.sh). Checked against Debian's patchelf where it has the option
# (0.14: --no-default-lib, --clear-symbol-version: identical readelf views),
# otherwise with readelf, eu-elflint and by running the edited program.
source "$(dirname "$0")/lib/common.sh"
require_elf_tools eu-elflint gcc
make_scratch
cd "$SCRATCH"
P=$PATCHELF_OURS

cat >prog.c <<'C'
#include <stdio.h>
int main(void) { puts("ran"); return 0; }
C
gcc -O1 -o prog prog.c
# A library with a versioned definition, for --clear-symbol-version.
printf 'int vfunc(void) { return 7; }\n' >v.c
printf 'V1 { global: vfunc; local: *; };\n' >v.map
gcc -shared -fPIC -Wl,--version-script,v.map -o libv.so v.c

elflint_ok() {
  if eu-elflint --gnu-ld "$2" >"$SCRATCH/lint" 2>&1; then pass; else
    fail "$1: eu-elflint: $(head -c 400 "$SCRATCH/lint")"
  fi
}
runs() { if [[ $("./$2") == ran ]]; then pass; else fail "$1: the edited program does not run"; fi; }

case_begin "os abi"
expect_eq "print System V" "System V" "$("$P" --print-os-abi prog)"
for spec in "FreeBSD:FreeBSD:UNIX - FreeBSD" "  linux :Linux:UNIX - GNU" "sysv:System V:UNIX - System V" \
  "gnu-hurd:GNU Hurd:" "OpenVMS:OpenVMS:"; do
  IFS=: read -r arg printed readelf_name <<<"$spec"
  cp prog abi
  pe_ok "set-os-abi '$arg'" --set-os-abi "$arg" abi
  expect_eq "print after '$arg'" "$printed" "$("$P" --print-os-abi abi)"
  if [[ -n $readelf_name ]]; then
    expect_eq "readelf after '$arg'" "$readelf_name" \
      "$(readelf -h abi | sed -n 's/^ *OS\/ABI: *//p')"
  fi
  cmp -s <(tail -c +9 prog) <(tail -c +9 abi) && pass || fail "set-os-abi '$arg' changed more than EI_OSABI"
done
rc=0
"$P" --set-os-abi Plan9 prog 2>err || rc=$?
expect_eq "unknown OS ABI: exit status" 2 "$rc"
grep -q "unrecognized OS ABI 'Plan9'" err && pass || fail "unknown OS ABI message: $(cat err)"
printf '\x61' | dd of=abi bs=1 seek=7 conv=notrunc status=none
expect_eq "unnamed EI_OSABI prints as hex" "0x61" "$("$P" --print-os-abi abi)"

case_begin "execstack"
expect_eq "default" "execstack: -" "$("$P" --print-execstack prog)"
cp prog xs
pe_ok "set-execstack" --set-execstack xs
expect_eq "after set" "execstack: X" "$("$P" --print-execstack xs)"
expect_eq "readelf GNU_STACK flags" "RWE" "$(readelf -lW xs | awk '$1 == "GNU_STACK" {print $7}')"
elflint_ok "set-execstack" xs
runs "set-execstack" xs
pe_ok "clear-execstack" --clear-execstack xs
expect_eq "after clear" "execstack: -" "$("$P" --print-execstack xs)"
expect_same_file "clear after set restores the file" prog xs
# Together with a growing edit the flag lands in the rewritten table.
LONG=/opt/$(printf 'long-runpath-entry-%.0s' {1..20})
cp prog xg
pe_ok "set-execstack with growth" --set-execstack --set-rpath "$LONG" xg
expect_eq "growth: execstack" "execstack: X" "$("$P" --print-execstack xg)"
expect_eq "growth: rpath" "$LONG" "$("$P" --print-rpath xg)"
elflint_ok "set-execstack with growth" xg
runs "set-execstack with growth" xg
# No PT_GNU_STACK: patchelf would add one; we refuse (exit 2), unchanged.
gcc -O1 -Wl,-z,noexecstack -o nostack prog.c
"$LIBPKG_PYTHON" - nostack <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
phoff = struct.unpack_from("<Q", d, 32)[0]
phnum = struct.unpack_from("<H", d, 56)[0]
for i in range(phnum):
    o = phoff + 56 * i
    if struct.unpack_from("<I", d, o)[0] == 0x6474e551:
        struct.pack_into("<I", d, o, 0)  # PT_GNU_STACK -> PT_NULL
open(sys.argv[1], "wb").write(d)
PY
expect_eq "no PT_GNU_STACK prints ?" "execstack: ?" "$("$P" --print-execstack nostack)"
cp nostack nostack.orig
rc=0
"$P" --set-execstack nostack 2>err || rc=$?
expect_eq "set-execstack without PT_GNU_STACK: exit status" 2 "$rc"
grep -q "^error: nostack: .*no PT_GNU_STACK" err && pass || fail "no PT_GNU_STACK message: $(cat err)"
expect_same_file "refused file unchanged" nostack.orig nostack
rc=0
"$P" --set-execstack --clear-execstack prog 2>err || rc=$?
expect_eq "set and clear together: exit status" 2 "$rc"

case_begin "no-default-lib and add-debug-tag"
cp prog ours
cp prog theirs
pe_ok "no-default-lib" --no-default-lib ours
"$REF_PATCHELF" --no-default-lib theirs
expect_eq "DT_FLAGS_1 as Debian patchelf" \
  "$(readelf -dW theirs | grep -E 'FLAGS_1' | sed 's/^ *0x[0-9a-f]* //')" \
  "$(readelf -dW ours | grep -E 'FLAGS_1' | sed 's/^ *0x[0-9a-f]* //')"
elflint_ok "no-default-lib" ours
cp libv.so libnodef.so
pe_ok "no-default-lib on a library without DT_FLAGS_1" --no-default-lib libnodef.so
readelf -dW libnodef.so | grep -q 'FLAGS_1.*NODEFLIB' && pass || fail "DT_FLAGS_1 NODEFLIB not added"
elflint_ok "no-default-lib (added entry)" libnodef.so
cp libv.so libdbg.so
pe_ok "add-debug-tag" --add-debug-tag libdbg.so
expect_eq "one DT_DEBUG" 1 "$(readelf -dW libdbg.so | grep -c '(DEBUG)')"
pe_ok "add-debug-tag again" --add-debug-tag libdbg.so
expect_eq "still one DT_DEBUG" 1 "$(readelf -dW libdbg.so | grep -c '(DEBUG)')"
elflint_ok "add-debug-tag" libdbg.so

case_begin "clear-symbol-version"
cp libv.so ours.so
cp libv.so theirs.so
pe_ok "clear-symbol-version" --clear-symbol-version vfunc ours.so
"$REF_PATCHELF" --clear-symbol-version vfunc theirs.so
expect_eq "vfunc unversioned" "vfunc" "$(nm -D --defined-only ours.so | awk '$3 ~ /^vfunc/ {print $3}')"
expect_same_file "same bytes as Debian patchelf" theirs.so ours.so
elflint_ok "clear-symbol-version" ours.so

case_begin "@FILE arguments"
printf '/opt/from-file' >rpath.txt
cp prog at
pe_ok "--set-rpath @file" --set-rpath @rpath.txt at
expect_eq "rpath from the file" "/opt/from-file" "$("$P" --print-rpath at)"
printf 'libextra.so.1' >needed.txt
pe_ok "--add-needed @file" --add-needed @needed.txt at
"$P" --print-needed at | grep -qx libextra.so.1 && pass || fail "--add-needed @file not applied"
printf 'at.out' >out.txt
pe_ok "--output @file" --set-soname x --output @out.txt at
[[ -f at.out ]] && pass || fail "--output @file did not write at.out"
# The contents are taken exactly, as patchelf does (a trailing newline too).
printf '/opt/nl\n' >nl.txt
cp prog nl
pe_ok "--set-rpath @file with newline" --set-rpath @nl.txt nl
# "/opt/nl\n" plus the line end of --print-rpath: 9 bytes.
expect_eq "rpath keeps the newline" 9 "$("$P" --print-rpath nl | wc -c)"
# A pipe works too (process substitution).
cp prog pipe
pe_ok "--set-rpath @<(printf ...)" --set-rpath @<(printf '/opt/piped') pipe
expect_eq "rpath from a pipe" /opt/piped "$("$P" --print-rpath pipe)"
printf '' >empty.txt
cp prog empty
pe_ok "--set-rpath @empty" --set-rpath @empty.txt empty
expect_eq "empty rpath from an empty file" "" "$("$P" --print-rpath empty)"
rc=0
"$P" --set-rpath @missing.txt prog 2>err || rc=$?
expect_eq "@missing: exit status" 2 "$rc"
grep -q "^error: missing.txt: " err && pass || fail "@missing message: $(cat err)"
cp prog at2
pe_ok "--no-sort is accepted" --no-sort --set-rpath /x at2
expect_eq "--no-sort edit" /x "$("$P" --print-rpath at2)"

# Deliberate difference: patchelf rewrites .dynstr and overwrites the old
# RPATH string with 'X's; pkgtool never changes bytes it does not own when a
# table grows: the old .dynstr stays as it was and a new one (old contents +
# new strings) is appended. Both results must run; only ours keeps the old
# string's bytes, and ours is never smaller than the input.
case_begin "growing .dynstr: appended, old strings kept"
gcc -O1 -Wl,--enable-new-dtags -Wl,-rpath,/opt/old-runpath-marker -o rp prog.c
cp rp rp.ours
cp rp rp.theirs
pe_ok "growing set-rpath" --set-rpath "$LONG" rp.ours
"$REF_PATCHELF" --set-rpath "$LONG" rp.theirs
# (Twice, in fact: in the original .dynstr and in the appended copy.)
if grep -q -a /opt/old-runpath-marker rp.ours; then pass; else fail "ours: the old string's bytes were changed"; fi
expect_eq "patchelf: old string overwritten" 0 "$(grep -c -a /opt/old-runpath-marker rp.theirs || true)"
expect_eq "both: new RUNPATH" "$LONG|$LONG" "$("$P" --print-rpath rp.ours)|$("$P" --print-rpath rp.theirs)"
runs "growing set-rpath (ours)" rp.ours
runs "growing set-rpath (patchelf)" rp.theirs

case_begin "unsupported options are errors"
cp libv.so ren.so
for args in "--rename-dynamic-symbols no-such-map.txt" "--frobnicate" "--set-rpath"; do
  rc=0
  # shellcheck disable=SC2086
  "$P" $args ren.so 2>err || rc=$?
  expect_eq "'$args': exit status" 2 "$rc"
done
expect_same_file "refused options leave the file" libv.so ren.so

finish
