#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool macho edit` (and the install_name_tool entry point) on real
# arm64/x86_64 dylibs, executables, bundles, LC_VERSION_MIN and chained-fixup
# files and universal2 files linked at test time. After every edit:
# llvm-objdump shows exactly what llvm-install-name-tool-14 produces,
# `llvm-otool-14 -l` equals its output except offsets into __LINKEDIT (which
# it rewrites and we never move), and macholib reads what `pkgtool inspect`
# reports. Also: per-arch edits of fat files leave the other slice
# byte-identical, a no-op edit writes nothing, the padding preflight fails
# before writing, and the signature hook reports signed slices and the
# changed ranges.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 ld64.lld-19 llvm-lipo-14 llvm-objdump-14 llvm-otool-14 llvm-install-name-tool-14
make_scratch
F=$SCRATCH/fx
build_fixtures "$F"
INT="$(dirname "$PKGTOOL")/install_name_tool"

case_begin "reader agrees with macholib on every fixture"
for f in "$F"/{small,pad,reexp}.{arm64,x86_64}.dylib "$F"/exe.* "$F"/bundle.* "$F"/old.x86_64.dylib \
  "$F"/chained.arm64.dylib "$F"/*.fat.dylib; do
  if out=$("$LIBPKG_PYTHON" "$ORACLES" macholib "$f"); then pass; else fail "$(basename "$f"): $out"; fi
done

case_begin "inspect facts"
j=$("$PKGTOOL" inspect --json "$F/pad.fat.dylib" "$F/old.x86_64.dylib" "$F/chained.arm64.dylib")
check "inspect json" "$LIBPKG_PYTHON" - "$j" <<'PY'
import json, sys
fat, old, ch = json.loads(sys.argv[1])
assert fat["fat"] and [s["arch"] for s in fat["slices"]] == ["x86_64", "arm64"], fat
arm = fat["slices"][1]
assert arm["minos"] == "11.0" and arm["type"] == "dylib", arm
assert arm["id"] == "/opt/x/lib/libpad.dylib", arm
kinds = {d["name"]: d["kind"] for d in arm["dylibs"]}
assert kinds == {"@rpath/libb.dylib": "load", "@rpath/libr.dylib": "weak"}, kinds
assert arm["rpaths"] == ["/build/lib", "/opt/x", "@loader_path"], arm
assert arm["code_signature"]["present"], arm
assert arm["free_padding"] > 1000 and arm["fixups"] == "dyld_info", arm
assert fat["slices"][0]["minos"] == "10.15", fat["slices"][0]
assert old["slices"][0]["version_command"] == "LC_VERSION_MIN_MACOSX", old
assert old["slices"][0]["minos"] == "10.9", old
assert ch["slices"][0]["fixups"] == "chained_fixups" and ch["slices"][0]["minos"] == "13.0", ch
PY
small=$("$PKGTOOL" inspect --json "$F/small.arm64.dylib")
check "lld's default padding is small" "$LIBPKG_PYTHON" -c \
  'import json,sys; p=json.loads(sys.argv[1])[0]["slices"][0]["free_padding"]; sys.exit(0 if p < 64 else 1)' "$small"

# compare NAME FILE OPTIONS...: ours vs llvm-install-name-tool-14.
compare() {
  local name=$1 f=$2
  shift 2
  local ours=$SCRATCH/$name.ours theirs=$SCRATCH/$name.llvm
  cp "$f" "$ours"
  cp "$f" "$theirs"
  expect_status 0 "$name: pkgtool macho edit" "$PKGTOOL" macho edit "$@" "$ours"
  llvm-install-name-tool-14 "$@" "$theirs"
  # (A fat slice's size in the fat table follows __LINKEDIT, which llvm
  # rewrites: compared without it; our fat tables are checked unchanged below.)
  if diff <(objdump_view "$ours" | grep -Ev '^ +size [0-9]+$') \
    <(objdump_view "$theirs" | grep -Ev '^ +size [0-9]+$') >"$SCRATCH/d"; then pass; else
    fail "$name: llvm-objdump differs from llvm-install-name-tool's"
    cat "$SCRATCH/d" >&2
  fi
  if out=$("$LIBPKG_PYTHON" "$ORACLES" otool-same "$ours" "$theirs"); then pass; else
    fail "$name: otool -l differs beyond __LINKEDIT offsets"
    echo "$out" | head -40 >&2
  fi
  if out=$("$LIBPKG_PYTHON" "$ORACLES" macholib "$ours"); then pass; else fail "$name: macholib: $out"; fi
  # Everything from the first section to the signature is untouched.
  check "$name: sections unmoved" "$LIBPKG_PYTHON" - "$f" "$ours" <<'PY'
import sys
from macholib import MachO
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
assert len(a) == len(b)
for h in MachO.MachO(sys.argv[1]).headers:
    first = min(s.offset for _, c, d in h.commands if c.__class__.__name__ == "segment_command_64"
                for s in d if s.size and s.offset and (s.flags & 0xFF) not in (1, 0xC, 0x12))
    off = h.offset
    # up to the code signature, which the edit re-signs (edit_sign.sh)
    sig = [c.dataoff for lc, c, d in h.commands if lc.cmd == 0x1D]
    end = off + (sig[0] if sig else h.size)
    assert a[off + first:end] == b[off + first:end], "bytes after the load commands changed"
PY
}

OPS=(
  "-id @rpath/libnew.dylib"
  "-change @rpath/libb.dylib @loader_path/../lib/libb.dylib"
  "-add_rpath @loader_path/../lib"
  "-prepend_rpath @executable_path/x"
  "-delete_rpath /build/lib"
  "-rpath /opt/x @loader_path/up"
  "-delete_all_rpaths"
  "-id @rpath/libpad.dylib -change @rpath/libr.dylib /usr/lib/libr.dylib -rpath /build/lib @loader_path/.. -delete_rpath /opt/x -add_rpath @loader_path/lib -prepend_rpath /first"
)
i=0
for f in pad.arm64.dylib pad.x86_64.dylib pad.fat.dylib exe.arm64 exe.x86_64 bundle.arm64.so \
  bundle.x86_64.so old.x86_64.dylib chained.arm64.dylib; do
  for op in "${OPS[@]}"; do
    i=$((i + 1))
    case_begin "$f: $op"
    # shellcheck disable=SC2086
    compare "e$i" "$F/$f" $op
  done
done

case_begin "LC_REEXPORT_DYLIB keeps its kind and place"
# ld64.lld-14 writes -reexport-lb as an LC_LOAD_DYLIB and an
# LC_REEXPORT_DYLIB of the same name; -change renames both.
for a in arm64 x86_64; do
  cp "$F/reexp.$a.dylib" "$SCRATCH/re"
  expect_status 0 "$a: change" "$PKGTOOL" macho edit -change @rpath/libb.dylib @loader_path/libb.dylib "$SCRATCH/re"
  check "$a: reexport kept" diff <(llvm-objdump-14 --macho --dylibs-used "$SCRATCH/re" | tail -n +2) - <<'T'
	@rpath/libreexp.dylib (compatibility version 0.0.0, current version 0.0.0)
	@loader_path/libb.dylib (compatibility version 0.0.0, current version 0.0.0)
	@loader_path/libb.dylib (compatibility version 0.0.0, current version 0.0.0, reexport)
	@rpath/libr.dylib (compatibility version 0.0.0, current version 0.0.0)
T
  if out=$("$LIBPKG_PYTHON" "$ORACLES" macholib "$SCRATCH/re"); then pass; else fail "$a: $out"; fi
done

case_begin "edit shrinking then growing stays consistent (repeated edits)"
cp "$F/pad.arm64.dylib" "$SCRATCH/rep"
for n in 1 2 3 4 5; do
  "$PKGTOOL" macho edit -add_rpath "/r$n/$(printf 'x%.0s' $(seq 1 $((n * 13))))" -delete_rpath /opt/x "$SCRATCH/rep" 2>/dev/null ||
    fail "repeat $n"
  "$PKGTOOL" macho edit -add_rpath /opt/x "$SCRATCH/rep" 2>/dev/null || fail "re-add $n"
done
if out=$("$LIBPKG_PYTHON" "$ORACLES" macholib "$SCRATCH/rep"); then pass; else fail "repeated: $out"; fi
check "repeated: no duplicate rpath" test "$(llvm-objdump-14 --macho --rpaths "$SCRATCH/rep" | sort | uniq -d | wc -l)" = 0

case_begin "duplicate rpaths refused, file untouched"
cp "$F/pad.arm64.dylib" "$SCRATCH/dup"
expect_status 2 "add existing rpath" "$PKGTOOL" macho edit -add_rpath /opt/x "$SCRATCH/dup"
check "message" grep -q "dup (arm64): rpath '/opt/x' would create a duplicate load command" "$SCRATCH/last.err"
expect_status 2 "rename onto existing rpath" "$PKGTOOL" macho edit -rpath /build/lib /opt/x "$SCRATCH/dup"
expect_status 2 "delete missing rpath" "$PKGTOOL" macho edit -delete_rpath /nope "$SCRATCH/dup"
check "message" grep -q "no LC_RPATH load command with path: /nope" "$SCRATCH/last.err"
check "untouched" cmp -s "$SCRATCH/dup" "$F/pad.arm64.dylib"

case_begin "padding preflight: nothing written, both numbers named"
for f in small.arm64.dylib small.fat.dylib; do
  cp "$F/$f" "$SCRATCH/pf"
  expect_status 2 "$f: too long" "$PKGTOOL" macho edit -id @rpath/libsmall.dylib \
    -add_rpath "@loader_path/a/path/long/enough/to/overflow/the/padding" "$SCRATCH/pf"
  check "$f: names file, slice, needed, free" grep -Eq \
    "^error: .*/pf \((x86_64|arm64)\): the edited load commands need 0x[0-9a-f]+ bytes, 0x[0-9a-f]+ more .* only 0x[0-9a-f]+ bytes of header padding are free" \
    "$SCRATCH/last.err"
  check "$f: untouched" cmp -s "$SCRATCH/pf" "$F/$f"
  # llvm-install-name-tool-14 accepts this edit and writes load commands
  # over the first section (logged, not asserted: it is their behaviour).
  cp "$F/$f" "$SCRATCH/pf.llvm"
  if llvm-install-name-tool-14 -add_rpath "@loader_path/a/path/long/enough/to/overflow/the/padding" \
    "$SCRATCH/pf.llvm" 2>/dev/null && ! "$LIBPKG_PYTHON" "$ORACLES" header-room "$SCRATCH/pf.llvm" >/dev/null; then
    log "note: llvm-install-name-tool-14 exited 0 with load commands overlapping __text on $f"
  fi
done
cp "$F/small.arm64.dylib" "$SCRATCH/fits"
expect_status 0 "a short rpath fits the 32 bytes" "$PKGTOOL" macho edit -add_rpath /a "$SCRATCH/fits"

case_begin "no-op edit writes nothing"
cp "$F/pad.fat.dylib" "$SCRATCH/noop"
ino=$(stat -c %i "$SCRATCH/noop")
touch -d '2001-01-01' "$SCRATCH/noop"
expect_status 0 "no-op" "$PKGTOOL" macho edit -change /not/linked.dylib /x -id /opt/x/lib/libpad.dylib "$SCRATCH/noop"
check "byte-identical" cmp -s "$SCRATCH/noop" "$F/pad.fat.dylib"
check "same inode" test "$(stat -c %i "$SCRATCH/noop")" = "$ino"
check "not rewritten" test "$(stat -c %Y "$SCRATCH/noop")" = "$(date -d 2001-01-01 +%s)"

case_begin "fat: -arch edits one slice, the other stays byte-identical"
cp "$F/pad.fat.dylib" "$SCRATCH/arch"
expect_status 0 "-arch arm64" "$PKGTOOL" macho edit -arch arm64 -add_rpath /only/arm "$SCRATCH/arch"
llvm-lipo-14 -thin x86_64 "$SCRATCH/arch" -output "$SCRATCH/arch.x86"
check "x86_64 slice untouched" cmp -s "$SCRATCH/arch.x86" "$F/pad.x86_64.dylib"
check "arm64 slice edited" grep -qx /only/arm <(llvm-objdump-14 --macho --arch=arm64 --rpaths "$SCRATCH/arch")
check "universal headers unchanged" diff <(llvm-objdump-14 --macho --universal-headers "$SCRATCH/arch" | tail -n +2) \
  <(llvm-objdump-14 --macho --universal-headers "$F/pad.fat.dylib" | tail -n +2)
expect_status 2 "-arch of a missing slice" "$PKGTOOL" macho edit -arch i386 -add_rpath /x "$SCRATCH/arch"

case_begin "signature hook: signed slices and changed ranges reported"
cp "$F/pad.fat.dylib" "$SCRATCH/sig"
"$PKGTOOL" macho edit --json -add_rpath /signed "$SCRATCH/sig" >"$SCRATCH/sig.json"
check "report" "$LIBPKG_PYTHON" - "$SCRATCH/sig.json" "$SCRATCH/sig" <<'PY'
import json, sys
from macholib import MachO
rep = json.load(open(sys.argv[1]))[0]
assert rep["changed"], rep
heads = {h.header.cputype: h for h in MachO.MachO(sys.argv[2]).headers}
for s in rep["slices"]:
    h = heads[0x0100000C if s["arch"] == "arm64" else 0x01000007]
    sig = [c for lc, c, d in h.commands if lc.cmd == 0x1D]
    # lld signs arm64 (ad hoc) and leaves x86_64 unsigned.
    assert (s["code_signature"] is not None) == bool(sig), s
    if sig:
        assert s["code_signature"] == {"dataoff": sig[0].dataoff, "datasize": sig[0].datasize}, s
    assert s["changed"] and s["changed_ranges"], s
    for r in s["changed_ranges"]:
        assert s["offset"] <= r["offset"] and r["offset"] + r["size"] <= s["offset"] + 32 + s["sizeofcmds_after"], (r, s)
assert any(s["code_signature"] for s in rep["slices"]), rep
PY
check "signature kept in structure" "$LIBPKG_PYTHON" - "$F/pad.fat.dylib" "$SCRATCH/sig" <<'PY'
import struct, sys
from macholib import MachO
def sigs(path):
    data = open(path, "rb").read()
    out = {}
    for h in MachO.MachO(path).headers:
        sig = [c for lc, c, d in h.commands if lc.cmd == 0x1D]
        if not sig:
            continue
        le = [s for lc, c, d in h.commands if lc.cmd == 0x19 for s in [c] if c.segname.rstrip(b"\0") == b"__LINKEDIT"][0]
        off, size = sig[0].dataoff, sig[0].datasize
        # the signature stays the last thing in __LINKEDIT and keeps its
        # SuperBlob (magic 0xfade0cc0) and bytes
        assert off + size == le.fileoff + le.filesize, (off, size, le.fileoff, le.filesize)
        blob = data[h.offset + off:h.offset + off + size]
        assert struct.unpack(">I", blob[:4])[0] == 0xFADE0CC0
        out[h.header.cputype] = (off, size, len(blob))
    return out
# (its bytes are re-signed: tests/macho/edit_sign.sh checks which)
before, after = sigs(sys.argv[1]), sigs(sys.argv[2])
assert before and before == after, "signature moved or resized"
PY
cp "$F/pad.arm64.dylib" "$SCRATCH/warn"
"$PKGTOOL" macho edit --no-sign -add_rpath /w "$SCRATCH/warn" 2>"$SCRATCH/warn.err"
check "signed slice edited with --no-sign: warning" grep -q "warn (arm64): the code signature no longer matches" "$SCRATCH/warn.err"

case_begin "in place: only the header bytes, same inode, hard links kept"
# The default in-place edit patches the changed header bytes into the file;
# its result equals the --in-place-atomic (temp + rename) result byte for byte.
for f in pad.fat.dylib pad.arm64.dylib exe.x86_64; do
  ip=$SCRATCH/ip.$f at=$SCRATCH/at.$f
  cp "$F/$f" "$ip"
  cp "$F/$f" "$at"
  ln "$ip" "$ip.link"
  ino=$(stat -c %i "$ip")
  ops=(-add_rpath /ip/lib -rpath /build/lib /ip/build -change @rpath/libb.dylib @rpath/libipb.dylib)
  [[ $f == exe.* ]] && ops=(-add_rpath /ip/lib)
  j=$("$PKGTOOL" macho edit --json "${ops[@]}" "$ip") || fail "$f: in-place edit failed"
  expect_status 0 "$f: atomic edit" "$PKGTOOL" macho edit --in-place-atomic "${ops[@]}" "$at"
  check "$f: in place == atomic" cmp "$ip" "$at"
  check "$f: reported in place" "$LIBPKG_PYTHON" -c 'import json,sys; r=json.loads(sys.argv[1])[0]; sys.exit(0 if r["in_place"] and r["changed"] else 1)' "$j"
  check "$f: same inode" test "$(stat -c %i "$ip")" = "$ino"
  check "$f: hard link sees the edit" cmp "$ip" "$ip.link"
  check "$f: edited" grep -qx /ip/lib <(llvm-objdump-14 --macho --rpaths "$ip")
done
cp "$F/pad.arm64.dylib" "$SCRATCH/atl"
ln "$SCRATCH/atl" "$SCRATCH/atl.link"
"$PKGTOOL" macho edit --in-place-atomic -add_rpath /at "$SCRATCH/atl" 2>"$SCRATCH/atl.err"
check "--in-place-atomic: new inode, link keeps the old bytes" cmp -s "$SCRATCH/atl.link" "$F/pad.arm64.dylib"
check "--in-place-atomic: note about the broken link" grep -q "note: .*atl: had 2 hard links" "$SCRATCH/atl.err"

case_begin "read-only file refused, untouched"
# As the ELF side: write protection is honoured even where the directory
# would allow a rename (run as nobody when the test runs as root).
as_nobody() {
  if ((EUID == 0)); then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi
}
shared=$SCRATCH/shared
mkdir "$shared"
chmod 1777 "$shared"
chmod o+x "$SCRATCH"
cp "$F/pad.arm64.dylib" "$shared/ro"
chmod 0444 "$shared/ro"
for mode in "" --in-place-atomic; do
  rc=0
  as_nobody "$PKGTOOL" macho edit $mode -id /ro "$shared/ro" 2>"$SCRATCH/ro.err" || rc=$?
  check "read-only ${mode:-in place}: exit 2" test "$rc" = 2
  check "read-only ${mode:-in place}: Permission denied" grep -q "^error: .*shared/ro: .*Permission denied" "$SCRATCH/ro.err"
  check "read-only ${mode:-in place}: untouched" cmp -s "$shared/ro" "$F/pad.arm64.dylib"
done

case_begin "install_name_tool entry point"
cp "$F/pad.x86_64.dylib" "$SCRATCH/int"
expect_status 0 "install_name_tool -id" "$INT" -id @rpath/viaint.dylib "$SCRATCH/int"
check "id set" grep -qx @rpath/viaint.dylib <(llvm-objdump-14 --macho --dylib-id "$SCRATCH/int" | tail -n +2)
expect_status 2 "unknown option" "$INT" -bogus "$SCRATCH/int"

finish
