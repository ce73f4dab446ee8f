#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool macho sign|verify` on files ld64.lld-14 links at test time (thin
# arm64 and x86_64, signed and unsigned, fat via llvm-lipo-14), checked by
# the independent verifier tests/tools/macho_cs_verify.py, llvm-otool-14 -l
# and lld's own signatures; bad input exits 2 and leaves the file untouched.
source "$(dirname "$0")/../lib/harness.sh"
require_tools clang-14 ld64.lld-14 llvm-lipo-14 llvm-otool-14
make_scratch
VERIFY="$LIBPKG_PYTHON $LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py"
cd "$SCRATCH"

cat >a.c <<'C'
int f(int x) { return x * 3 + 1; }
static const char big[20000] = {1};
int g(int i) { return big[i]; }
C
echo 'int main(void) { return 0; }' >m.c
# link SRC OUT [FLAGS...] (arm64 dylib unless FLAGS say otherwise)
link() {
  local src=$1 out=$2 target=arm64-apple-macos11
  shift 2
  if [[ ${1:-} == x86_64 ]]; then target=x86_64-apple-macos10.15; shift; fi
  mkdir -p "$(dirname "$out")"
  clang-14 -target $target -fuse-ld=lld -nostdlib -Wl,-undefined,dynamic_lookup \
    "$src" -o "$out" "$@"
}
link a.c signed/liba.dylib -shared -install_name @rpath/liba.dylib
link a.c unsigned/liba.dylib -shared -install_name @rpath/liba.dylib -Wl,-no_adhoc_codesign
link m.c signed/prog
link a.c x86/libx.dylib x86_64 -shared
link a.c x86s/libx.dylib x86_64 -shared -Wl,-adhoc_codesign

# expect RC CMD...: run CMD, check its exit status; stderr in $SCRATCH/err.
expect() {
  local want=$1 rc=0
  shift
  "$@" >out 2>err || rc=$?
  if [[ $rc == "$want" ]]; then pass; else
    fail "$* exited $rc, expected $want: $(head -c 400 err)"
  fi
}
has() { if grep -q -- "$2" "$1"; then pass; else fail "$1 lacks '$2': $(head -c 400 "$1")"; fi; }
# LC_CODE_SIGNATURE's fields of every slice (llvm-otool-14 -arch all shows
# only the first slice of a fat file: llvm-objdump-14 is the same reader).
otool_sig() { llvm-objdump-14 --macho --arch=all --private-headers "$1" | grep -A3 LC_CODE_SIGNATURE | grep -E 'dataoff|datasize' | tr -s ' '; }

case_begin "lld's signatures verify"
for f in signed/liba.dylib signed/prog x86s/libx.dylib; do
  expect 0 "$PKGTOOL" macho verify $f
  has out "valid"
  expect 0 $VERIFY $f
done

case_begin "a flipped byte in __TEXT names slice, CodeDirectory and page"
cp signed/liba.dylib flipped.dylib
printf '\xff' | dd of=flipped.dylib bs=1 seek=$((0x2010)) conv=notrunc 2>/dev/null
expect 2 "$PKGTOOL" macho verify flipped.dylib
has err "error: flipped.dylib (arm64): CodeDirectory 0 (hash type 2): page 2 (0x2000-0x3000): hash mismatch"
expect 1 $VERIFY flipped.dylib
has err "page 2 "

case_begin "re-signing lld's signature is a no-op, byte for byte"
cp -p signed/liba.dylib resigned.dylib
touch -d '2001-01-01' resigned.dylib
expect 0 "$PKGTOOL" macho sign resigned.dylib
if cmp -s resigned.dylib signed/liba.dylib; then pass; else fail "resigned file differs from lld's"; fi
if [[ $(stat -c %Y resigned.dylib) == $(date -d 2001-01-01 +%s) ]]; then pass; else fail "no-op sign rewrote the file"; fi

case_begin "re-signing after an edit fixes exactly the changed page"
cp flipped.dylib fixed.dylib
expect 0 "$PKGTOOL" macho sign fixed.dylib
expect 0 $VERIFY fixed.dylib
$VERIFY --json signed/liba.dylib >a.json
$VERIFY --json fixed.dylib >b.json
"$LIBPKG_PYTHON" - a.json b.json >diff.txt <<'PY'
import json, sys
a, b = (json.load(open(p))[0]["code_directories"][0]["pages"] for p in sys.argv[1:])
print(" ".join(str(i) for i, (x, y) in enumerate(zip(a, b)) if x != y))
PY
if [[ $(cat diff.txt) == 2 ]]; then pass; else fail "pages changed: $(cat diff.txt) (expected 2)"; fi

case_begin "ad-hoc signing an unsigned arm64 dylib gives lld's layout"
cp unsigned/liba.dylib adhoc.dylib
expect 0 "$PKGTOOL" macho sign adhoc.dylib
expect 0 $VERIFY adhoc.dylib
expect 0 "$PKGTOOL" macho verify adhoc.dylib
has out "identifier adhoc.dylib, ad-hoc"
# llvm-otool-14 -l before and after: only __LINKEDIT's sizes, the header's
# counts and the new LC_CODE_SIGNATURE (lld's own unsigned and signed links
# differ in section addresses: lld reserves the command's 16 bytes).
llvm-otool-14 -l unsigned/liba.dylib | tail -n +2 >before.txt
llvm-otool-14 -l adhoc.dylib | tail -n +2 >after.txt
diff before.txt after.txt | grep '^[<>]' >otool.diff || true
"$LIBPKG_PYTHON" - otool.diff "$(otool_sig adhoc.dylib | tr '\n' ' ')" <<'PY' && pass || fail "otool -l diff: $(cat otool.diff)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
dataoff, datasize = (int(x) for x in re.findall(r"\d+", sys.argv[2]))
allowed = [r"^[<>] +0xfeedfacf ", r"^< +vmsize ", r"^< +filesize ",
           r"^> +vmsize ", r"^> +filesize ", r"^> Load command \d+$",
           r"^> +cmd LC_CODE_SIGNATURE$", r"^> +cmdsize 16$",
           rf"^> +dataoff {dataoff}$", rf"^> +datasize {datasize}$"]
bad = [l for l in lines if not any(re.match(a, l) for a in allowed)]
sys.exit(1 if bad or len(lines) != 11 else 0)
PY
# The CodeDirectory fields other than the code limit are lld's.
$VERIFY --json signed/liba.dylib >lld.json
$VERIFY --json adhoc.dylib >ours.json
"$LIBPKG_PYTHON" - lld.json ours.json <<'PY' && pass || fail "CodeDirectory fields differ from lld's"
import json, sys
a, b = (json.load(open(p))[0]["code_directories"][0] for p in sys.argv[1:])
keys = ("slot", "version", "flags", "hash_type", "page_size", "n_special_slots", "exec_seg")
print({k: (a[k], b[k]) for k in keys})
sys.exit(0 if all(a[k] == b[k] for k in keys) else 1)
PY

case_begin "x86_64 unsigned dylib"
cp x86/libx.dylib x.dylib
expect 0 "$PKGTOOL" macho sign x.dylib
expect 0 $VERIFY x.dylib
[[ -n $(otool_sig x.dylib) ]] && pass || fail "otool sees no LC_CODE_SIGNATURE"

case_begin "fat files: each slice signed, verified, slices re-laid out"
llvm-lipo-14 -create unsigned/liba.dylib x86/libx.dylib -output fat.dylib
expect 2 "$PKGTOOL" macho verify fat.dylib
has err "fat.dylib (arm64): not signed"
expect 0 "$PKGTOOL" macho sign fat.dylib
expect 0 $VERIFY fat.dylib
expect 0 "$PKGTOOL" macho verify fat.dylib
has out "fat.dylib (x86_64): valid"
expect 0 llvm-lipo-14 fat.dylib -verify_arch arm64 x86_64
n=$(otool_sig fat.dylib | grep -c dataoff)
[[ $n == 2 ]] && pass || fail "otool sees $n signatures in fat.dylib"
llvm-lipo-14 -create signed/liba.dylib x86s/libx.dylib -output fats.dylib
expect 0 "$PKGTOOL" macho verify fats.dylib
off=$(llvm-objdump-14 --macho --universal-headers fats.dylib | awk '/architecture x86_64/{x=1} x && /offset/ && !seen {print $2; seen=1}')
printf '\x01' | dd of=fats.dylib bs=1 seek=$((off + 0x1010)) conv=notrunc 2>/dev/null
expect 2 "$PKGTOOL" macho verify fats.dylib
has err "fats.dylib (x86_64): CodeDirectory 0 (hash type 2): page 1 (0x1000-0x2000)"
# Re-signing a signed fat file patches the signatures in place: same size,
# only the x86_64 signature's bytes differ from before.
cp fats.dylib fats.before
expect 0 "$PKGTOOL" macho sign fats.dylib
expect 0 $VERIFY fats.dylib
n=$( (cmp -l fats.before fats.dylib || true) | wc -l)
[[ $(stat -c %s fats.dylib) == $(stat -c %s fats.before) && $n -ge 1 && $n -le 32 ]] &&
  pass || fail "fat re-sign changed $n bytes or the size"

case_begin "a CodeDirectory hashing fewer pages than its code limit grows on re-sign"
# Its hash area now covers 3 pages; re-signing hashes every page up to the
# code limit, so the signature grows: it is moved at the end of __LINKEDIT
# (it used to be copied over the next bytes, past the buffer in a fat file).
sigoff=$(otool_sig signed/liba.dylib | awk '/dataoff/{print $2}')
"$LIBPKG_PYTHON" - signed/liba.dylib short.dylib "$sigoff" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read()); s = int(sys.argv[3])
d[s+24+28:s+24+36] = struct.pack(">II", 3, 0x3000)  # nCodeSlots, codeLimit
open(sys.argv[2], "wb").write(d)
PY
llvm-lipo-14 -create short.dylib x86/libx.dylib -output shortfat.dylib
llvm-lipo-14 -create short.dylib x86s/libx.dylib -output shortfats.dylib
for f in short.dylib shortfat.dylib shortfats.dylib; do
  size=$(stat -c %s $f)
  expect 0 "$PKGTOOL" macho sign $f
  has out "$f (arm64): signed"
  expect 0 "$PKGTOOL" macho verify $f
  expect 0 $VERIFY $f
  [[ $(stat -c %s $f) -gt $size ]] && pass || fail "$f did not grow"
done
otool_sig short.dylib >short.sig
[[ $(awk '/datasize/{print $2}' short.sig) -gt $(otool_sig signed/liba.dylib | awk '/datasize/{print $2}') ]] &&
  pass || fail "datasize not grown: $(cat short.sig)"

case_begin "bad input: exit 2, file untouched"
sigoff=$(otool_sig signed/liba.dylib | awk '/dataoff/{print $2}')
# bad_case NAME PYTHON-EXPR-ON-bytearray-d MESSAGE
bad_case() {
  local name=$1 expr=$2 msg=$3
  "$LIBPKG_PYTHON" - signed/liba.dylib "$name" "$sigoff" <<PY
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read()); s = int(sys.argv[3])
$expr
open(sys.argv[2], "wb").write(d)
PY
  cp "$name" "$name.orig"
  for cmd in verify sign; do
    expect 2 "$PKGTOOL" macho $cmd "$name"
    has err "error: $name (arm64): $msg"
    if cmp -s "$name" "$name.orig"; then pass; else fail "$cmd modified $name"; fi
  done
  ls | grep -q "$name.*tmp" && fail "temporary left behind" || pass
}
bad_case bad_magic.dylib 'd[s:s+4] = b"\0\0\0\0"' "bad SuperBlob magic"
bad_case truncated.dylib 'del d[s + 100:]' "segment __LINKEDIT (fileoff"
bad_case shortsig.dylib 'c = d.find(struct.pack("<II", 0x1d, 16)); d[c+12:c+16] = struct.pack("<I", 100)' "SuperBlob length 0x"
bad_case count.dylib 'd[s+8:s+12] = struct.pack(">I", 999)' "SuperBlob count 999"
bad_case slots.dylib 'd[s+24+28:s+24+32] = struct.pack(">I", 999)' "CodeDirectory 0: hashOffset 0x68 + nCodeSlots\*hashSize (0x7ce0) past blob length 0x"
bad_case bloblen.dylib 'd[s+24+4:s+24+8] = struct.pack(">I", 0x10000)' "blob 0 (type 0x0) at 0x18 length 0x10000 past the SuperBlob length"
echo "not mach-o" >text.txt
expect 2 "$PKGTOOL" macho verify text.txt
has err "error: text.txt: not a Mach-O file (magic 0x"
expect 2 "$PKGTOOL" macho sign missing.dylib
has err "missing.dylib"
finish
