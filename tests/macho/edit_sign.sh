#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Signing on edit: `pkgtool macho edit` re-signs a changed signed slice
# (only the header pages rehashed, the signature keeps its offset, size and
# every other byte) and ad-hoc signs a changed unsigned thin arm64 file;
# --no-sign opts out; a signature already stale where the re-signer looks
# is refused. Checked with `pkgtool macho verify`, the independent
# verifier tests/tools/macho_cs_verify.py and a page-by-page comparison of
# the CodeDirectory hashes done here.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-lipo-14 llvm-objdump-14
make_scratch
VERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")
cd "$SCRATCH"
cat >a.c <<'C'
int f(int x) { return x * 3 + 1; }
static const char big[20000] = {1};
int g(int i) { return big[i]; }
C
dylib() { # TARGET OUT EXTRA...: a 6-page dylib with room for edits
  local t=$1 out=$2
  shift 2
  mcc "$t" -dynamiclib -o "$out" a.c -install_name @rpath/liba.dylib "$@"
}
dylib arm64-apple-macos11 signed.dylib -Wl,-headerpad_max_install_names
dylib arm64-apple-macos11 unsigned.dylib -Wl,-headerpad_max_install_names -Wl,-no_adhoc_codesign
dylib arm64-apple-macos11 tight.dylib -Wl,-no_adhoc_codesign
dylib x86_64-apple-macos10.15 x86.dylib -Wl,-headerpad_max_install_names
llvm-lipo-14 -create x86.dylib signed.dylib -output fat.dylib
llvm-lipo-14 -create x86.dylib unsigned.dylib -output fatu.dylib

# changed_pages BEFORE AFTER [ARCH]: the page numbers whose hash differs in
# the primary CodeDirectory; also asserts that the signature kept its
# offset and size and that no other byte of it or of the file past the load
# commands changed.
changed_pages() {
  "$LIBPKG_PYTHON" - "$@" <<'PY'
import struct, sys
from macholib import MachO
def sig(path, arch):
    data = open(path, "rb").read()
    for h in MachO.MachO(path).headers:
        if arch and h.header.cputype != {"arm64": 0x0100000C, "x86_64": 0x01000007}[arch]:
            continue
        cs = [c for lc, c, d in h.commands if lc.cmd == 0x1D][0]
        s = h.offset + cs.dataoff
        blob = data[s:s + cs.datasize]
        count = struct.unpack(">I", blob[8:12])[0]
        for i in range(count):
            typ, off = struct.unpack(">II", blob[12 + 8 * i:20 + 8 * i])
            if typ == 0:
                cd = off
        hash_off, _, _, n, _, hsize = struct.unpack(">IIIIIB", blob[cd + 16:cd + 37])
        hashes = [blob[cd + hash_off + i * hsize:cd + hash_off + (i + 1) * hsize] for i in range(n)]
        rest = blob[:cd + hash_off] + blob[cd + hash_off + n * hsize:]
        return data, h, cs.dataoff, cs.datasize, hashes, rest
a, ha, aoff, asize, ahash, arest = sig(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else "")
b, hb, boff, bsize, bhash, brest = sig(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
assert (aoff, asize) == (boff, bsize), "signature moved or resized"
assert arest == brest, "signature bytes other than page hashes changed"
assert len(a) == len(b)
hdr = ha.offset + 32 + max(ha.header.sizeofcmds, hb.header.sizeofcmds)
sig_at = ha.offset + aoff
assert a[hdr:sig_at] == b[hdr:sig_at], "bytes between the load commands and the signature changed"
print(" ".join(str(i) for i in range(len(ahash)) if ahash[i] != bhash[i]))
PY
}

# patch_signed FILE last-byte|hash-offset: FILE (a thin signed slice) with
# the last byte its signature covers flipped, or its CodeDirectory's
# hashOffset pointed past the blob.
patch_signed() {
  "$LIBPKG_PYTHON" - "$@" <<'PY'
import struct, sys
path, what = sys.argv[1], sys.argv[2]
d = bytearray(open(path, "rb").read())
off = 32
for _ in range(struct.unpack_from("<I", d, 16)[0]):
    cmd, size = struct.unpack_from("<II", d, off)
    if cmd == 0x1D:
        sig = struct.unpack_from("<I", d, off + 8)[0]
    off += size
if what == "last-byte":
    d[sig - 1] ^= 0x01
else:
    cd = struct.unpack_from(">I", d, sig + 16)[0]
    struct.pack_into(">I", d, sig + cd + 16, 0xFFFF0000)
open(path, "wb").write(d)
PY
}

case_begin "signed arm64: -id/-add_rpath re-signs, only the header page rehashed"
cp signed.dylib s.dylib
expect_status 0 "edit" "$PKGTOOL" macho edit -id @rpath/libnew.dylib -add_rpath @loader_path/../lib s.dylib
check "no warning" test ! -s "$SCRATCH/last.err"
check "pkgtool macho verify" "$PKGTOOL" macho verify s.dylib
check "independent verifier" "${VERIFY[@]}" s.dylib
check "original was valid too (the oracle is not vacuous)" "${VERIFY[@]}" signed.dylib
pages=$(changed_pages signed.dylib s.dylib)
check "only page 0 rehashed (got '$pages')" test "$pages" = 0
check "edit applied" grep -qx @loader_path/../lib <(llvm-objdump-14 --macho --rpaths s.dylib | tail -n +2)
check "identifier kept" grep -q "identifier signed.dylib" <("$PKGTOOL" macho verify s.dylib)

case_begin "the unsigned-by-edit state is caught by both verifiers (--no-sign)"
cp signed.dylib stale.dylib
expect_status 0 "edit --no-sign" "$PKGTOOL" macho edit --no-sign -add_rpath /x stale.dylib
check "warning names the slice" grep -q "stale.dylib (arm64): the code signature no longer matches" "$SCRATCH/last.err"
expect_status 2 "pkgtool macho verify fails" "$PKGTOOL" macho verify stale.dylib
check "names page 0" grep -q "page 0 (0x0-0x1000): hash mismatch" "$SCRATCH/last.err"
if "${VERIFY[@]}" stale.dylib >/dev/null 2>&1; then fail "independent verifier accepted a stale signature"; else pass; fi

case_begin "a signature already stale before the edit is refused, not laundered"
# stale.dylib's page 0 no longer matches its signature (the --no-sign edit
# above). Re-signing only the edited page would make the file verify
# again while vouching for bytes nobody checked: refused before writing.
cp stale.dylib stale2.dylib
expect_status 2 "signed edit of a stale file" "$PKGTOOL" macho edit -add_rpath /y stale2.dylib
check "names file, slice and page" grep -q \
  "^error: stale2.dylib (arm64): the code signature does not verify before the edit (CodeDirectory 0 (hash type 2): page 0 (0x0-0x1000): hash mismatch)" \
  "$SCRATCH/last.err"
check "says what to do" grep -q "pkgtool macho sign.*--no-sign" "$SCRATCH/last.err"
check "untouched" cmp -s stale.dylib stale2.dylib
expect_status 0 "--no-sign still edits" "$PKGTOOL" macho edit --no-sign -add_rpath /y stale2.dylib
cp stale.dylib stale3.dylib
expect_status 0 "macho sign rehashes every page" "$PKGTOOL" macho sign stale3.dylib
expect_status 0 "then the signed edit works" "$PKGTOOL" macho edit -add_rpath /y stale3.dylib
check "and verifies (independent verifier)" "${VERIFY[@]}" stale3.dylib
# The last page (__LINKEDIT's string table) is in the sample too.
cp signed.dylib tail.dylib
patch_signed tail.dylib last-byte
expect_status 2 "stale last page" "$PKGTOOL" macho edit -add_rpath /y tail.dylib
check "names the last page" grep -q "does not verify before the edit.*page [1-9][0-9]* (0x" "$SCRATCH/last.err"

case_begin "unsigned arm64: edit signs it ad hoc"
cp unsigned.dylib u.dylib
expect_status 0 "edit" "$PKGTOOL" macho edit --json -id @rpath/libu.dylib u.dylib
check "reported" grep -q '"signing": "adhoc_signed"' "$SCRATCH/last.out"
check "pkgtool macho verify" "$PKGTOOL" macho verify u.dylib
check "independent verifier" "${VERIFY[@]}" u.dylib
check "ad-hoc, named after the file" grep -q "identifier u.dylib, ad-hoc" <("$PKGTOOL" macho verify u.dylib)
mkdir two && cp unsigned.dylib two/u.dylib
"$PKGTOOL" macho edit --no-sign -id @rpath/libu.dylib two/u.dylib && "$PKGTOOL" macho sign two/u.dylib >/dev/null
check "identical to a --no-sign edit then macho sign" cmp -s u.dylib two/u.dylib
if out=$("$LIBPKG_PYTHON" "$ORACLES" macholib u.dylib); then pass; else fail "macholib: $out"; fi

case_begin "--no-sign: an unsigned arm64 stays unsigned, without a warning"
cp unsigned.dylib n.dylib
expect_status 0 "edit --no-sign" "$PKGTOOL" macho edit --no-sign -id @rpath/libn.dylib n.dylib
check "no warning" test ! -s "$SCRATCH/last.err"
expect_status 2 "still unsigned" "$PKGTOOL" macho verify n.dylib
check "says not signed" grep -q "n.dylib (arm64): not signed" "$SCRATCH/last.err"
check "same size" test "$(stat -c %s n.dylib)" = "$(stat -c %s unsigned.dylib)"

case_begin "unsigned arm64 without room for LC_CODE_SIGNATURE: preflight fails, file untouched"
cp tight.dylib t.dylib
# lld's 32 bytes of padding: a 24-byte LC_RPATH leaves 8, LC_CODE_SIGNATURE needs 16.
expect_status 2 "edit" "$PKGTOOL" macho edit -add_rpath /abcdefghij t.dylib
check "names the file" grep -q "^error: .*t.dylib.*" "$SCRATCH/last.err"
check "untouched" cmp -s t.dylib tight.dylib
expect_status 0 "--no-sign fits" "$PKGTOOL" macho edit --no-sign -add_rpath /abcdefghij t.dylib

case_begin "fat: arm64 re-signed, x86_64 edited and still unsigned"
cp fat.dylib f.dylib
expect_status 0 "edit" "$PKGTOOL" macho edit -id @rpath/libf.dylib -add_rpath /fat f.dylib
check "same size" test "$(stat -c %s f.dylib)" = "$(stat -c %s fat.dylib)"
llvm-lipo-14 -thin arm64 f.dylib -output f.arm64
llvm-lipo-14 -thin x86_64 f.dylib -output f.x86_64
check "arm64 verifies" "$PKGTOOL" macho verify f.arm64
check "arm64: independent verifier" "${VERIFY[@]}" f.arm64
pages=$(changed_pages fat.dylib f.dylib arm64)
check "arm64: only page 0 rehashed (got '$pages')" test "$pages" = 0
check "x86_64 edited" grep -qx /fat <(llvm-objdump-14 --macho --rpaths f.x86_64 | tail -n +2)
hdrs=$(llvm-objdump-14 --macho --private-headers f.x86_64)
check "x86_64 unsigned" test "${hdrs/LC_CODE_SIGNATURE/}" = "$hdrs"
cp fat.dylib fa.dylib
expect_status 0 "-arch arm64" "$PKGTOOL" macho edit -arch arm64 -add_rpath /a fa.dylib
llvm-lipo-14 -thin x86_64 fa.dylib -output fa.x86_64
check "-arch arm64: x86_64 byte-identical" cmp -s fa.x86_64 x86.dylib
llvm-lipo-14 -thin arm64 fa.dylib -output fa.arm64
check "-arch arm64: arm64 verifies" "${VERIFY[@]}" fa.arm64

case_begin "fat with an unsigned arm64: refused before writing, --no-sign works"
cp fatu.dylib fu.dylib
expect_status 2 "edit" "$PKGTOOL" macho edit -add_rpath /x fu.dylib
check "says why" grep -q "fu.dylib (arm64): cannot add a signature to an unsigned arm64 slice of a fat file" "$SCRATCH/last.err"
check "untouched" cmp -s fu.dylib fatu.dylib
expect_status 0 "--no-sign" "$PKGTOOL" macho edit --no-sign -add_rpath /x fu.dylib

case_begin "a corrupt signature fails the edit before writing, naming the slice"
cp signed.dylib bad.dylib
patch_signed bad.dylib hash-offset
cp bad.dylib bad.orig
expect_status 2 "edit" "$PKGTOOL" macho edit -add_rpath /x bad.dylib
check "names file and slice" grep -q "^error: bad.dylib (arm64): CodeDirectory 0: hashOffset" "$SCRATCH/last.err"
check "untouched" cmp -s bad.dylib bad.orig

case_begin "no-op edit of a signed file writes nothing"
cp signed.dylib noop.dylib
touch -d 2001-01-01 noop.dylib
expect_status 0 "no-op" "$PKGTOOL" macho edit -id @rpath/liba.dylib noop.dylib
check "byte-identical" cmp -s noop.dylib signed.dylib
check "not rewritten" test "$(stat -c %Y noop.dylib)" = "$(date -d 2001-01-01 +%s)"

finish
