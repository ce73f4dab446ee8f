#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool symbols` on Mach-O against llvm-nm-14 -gU: C and C++ dylibs
# (namespaces, templates, vtable, data, bss, weak, hidden) linked at test
# time for arm64 and x86_64 (ld64.lld-14, LC_DYLD_INFO) and arm64 with
# chained fixups (ld64.lld-19, LC_DYLD_EXPORTS_TRIE), plain and demangled
# (-C), thin, fat (--arch=all and --arch); the exports trie alone (symbol
# table emptied) equals `llvm-nm-14 -gU --add-dyldinfo` for LC_DYLD_INFO and
# the full symbol table's listing for LC_DYLD_EXPORTS_TRIE (which
# llvm-nm-14 cannot read); --json; malformed tables exit 2 naming the file;
# the cxx11 census says it does not apply to Mach-O (libc++).
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 ld64.lld-19 llvm-lipo-14 llvm-nm-14
make_scratch
D=$SCRATCH
cat >"$D/cxx.cpp" <<'CPP'
namespace c10 {
struct Str { const char* p; unsigned long n; };
int counter = 3;
int zeroed;
const int table[4] = {1, 2, 3, 4};
int size_of(const Str& s) { return (int)s.n + counter + zeroed + table[1]; }
template <class T> T twice(T t) { return t + t; }
template int twice<int>(int);
template long twice<long>(long);
struct Widget { virtual ~Widget(); int get() const; static int made; };
int Widget::made = 1;
Widget::~Widget() {}
int Widget::get() const { return made; }
}
extern "C" int plain_c(void) { return 1; }
__attribute__((weak)) int weak_fn(void) { return 2; }
static int hidden_static(void) { return 3; }
__attribute__((visibility("hidden"))) int hidden_fn(void) { return hidden_static(); }
CPP
cxx() { mcc "$@" -x c++ -fno-exceptions -fno-rtti -Wno-stdlibcxx-not-found; }
for t in arm64-apple-macos11 x86_64-apple-macos10.15; do
  cxx "$t" -dynamiclib -o "$D/cxx.${t%%-*}.dylib" "$D/cxx.cpp" -install_name @rpath/libcxx.dylib
done
clang-14 -target arm64-apple-macos13 --ld-path=/usr/bin/ld64.lld-19 -nostdlib \
  -Wl,-undefined,dynamic_lookup -Wl,-platform_version,macos,13.0,13.0 -x c++ \
  -fno-exceptions -fno-rtti -Wno-stdlibcxx-not-found -dynamiclib \
  -o "$D/cxx.chained.dylib" "$D/cxx.cpp"
llvm-lipo-14 -create "$D/cxx.x86_64.dylib" "$D/cxx.arm64.dylib" -output "$D/cxx.fat.dylib"
build_fixtures "$D/fx"

# lc_patch SRC DST EDIT...: SRC with its load commands patched, each EDIT
# being CMD:OFFSET:VALUE (the 32-bit field at OFFSET in the first command
# CMD), "nosym" (LC_SYMTAB's nsyms and LC_DYSYMTAB's ranges zeroed, so only
# the exports trie names symbols) or "trie-cycle" (LC_DYLD_INFO's trie
# root gets one child, "_", pointing back at the root).
lc_patch() {
  "$LIBPKG_PYTHON" - "$@" <<'PY'
import struct, sys
src, dst, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
b = bytearray(open(src, "rb").read())
cmds, off = {}, 32
for _ in range(struct.unpack_from("<I", b, 16)[0]):
    cmd, size = struct.unpack_from("<II", b, off)
    cmds.setdefault(cmd, off)
    off += size
for e in edits:
    if e == "nosym":
        struct.pack_into("<I", b, cmds[0x2] + 12, 0)
        struct.pack_into("<6I", b, cmds[0xB] + 8, 0, 0, 0, 0, 0, 0)
    elif e == "trie-cycle":
        export_off = struct.unpack_from("<I", b, cmds[0x80000022] + 40)[0]
        b[export_off:export_off + 5] = bytes([0, 1, ord("_"), 0, 0])
    else:
        cmd, field, value = (int(x, 0) for x in e.split(":"))
        struct.pack_into("<I", b, cmds[cmd] + field, value)
open(dst, "wb").write(b)
PY
}
nosym() { lc_patch "$1" "$2" nosym; }

case_begin "nm -gU: same as llvm-nm-14, plain and demangled"
for f in cxx.arm64.dylib cxx.x86_64.dylib cxx.chained.dylib fx/small.arm64.dylib \
  fx/exe.x86_64 fx/bundle.arm64.so fx/chained.arm64.dylib; do
  check "$f" diff <("$PKGTOOL" symbols "$D/$f") <(llvm-nm-14 -gU "$D/$f")
  check "$f -C" diff <("$PKGTOOL" symbols -C "$D/$f") <(llvm-nm-14 -gU -C "$D/$f")
done
check "C++ names demangled" grep -q '^0.* T int c10::twice<int>(int)$' <("$PKGTOOL" symbols -C "$D/cxx.arm64.dylib")
check "hidden symbols left out" test -z "$("$PKGTOOL" symbols "$D/cxx.arm64.dylib" | grep hidden)"

case_begin "fat: every slice (--arch=all), or one with --arch"
check "fat, all" diff <("$PKGTOOL" symbols "$D/cxx.fat.dylib") <(llvm-nm-14 -gU --arch=all "$D/cxx.fat.dylib")
for a in arm64 x86_64; do
  check "fat --arch $a" diff <("$PKGTOOL" symbols --arch $a -C "$D/cxx.fat.dylib") \
    <(llvm-nm-14 -gU -C --arch=$a "$D/cxx.fat.dylib")
done

case_begin "exports trie alone"
for a in arm64 x86_64; do
  nosym "$D/cxx.$a.dylib" "$D/cxx.$a.nosym.dylib"
  check "LC_DYLD_INFO trie ($a) = llvm-nm --add-dyldinfo" \
    diff <("$PKGTOOL" symbols "$D/cxx.$a.nosym.dylib") <(llvm-nm-14 -gU --add-dyldinfo "$D/cxx.$a.nosym.dylib")
done
nosym "$D/cxx.chained.dylib" "$D/cxx.chained.nosym.dylib"
check "LC_DYLD_EXPORTS_TRIE = the symbol table's listing" \
  diff <("$PKGTOOL" symbols "$D/cxx.chained.nosym.dylib") <(llvm-nm-14 -gU "$D/cxx.chained.dylib")
"$PKGTOOL" symbols --json "$D/cxx.chained.nosym.dylib" >"$D/trie.json"
check "--json: trie-only flag, demangled, type" "$LIBPKG_PYTHON" - "$D/trie.json" <<'PY'
import json, sys
[f] = json.load(open(sys.argv[1]))
[s] = f["slices"]
assert s["arch"] == "arm64", s["arch"]
by = {x["name"]: x for x in s["symbols"]}
w = by["__Z7weak_fnv"]
assert w["exports_trie_only"] and w["type"] == "T" and w["weak"], w
assert by["__ZN3c107counterE"]["demangled"] == "c10::counter", by["__ZN3c107counterE"]
assert by["__ZN3c107counterE"]["type"] == "D"
assert len(s["symbols"]) == 13, len(s["symbols"])
PY

case_begin "malformed tables: exit 2 naming the file"
corrupt() { lc_patch "$1" "$2" "$3:$4:$5"; }
bad() {
  local what=$1 file=$2 pattern=$3
  expect_exit "$what" 2 "^error: .*$(basename "$file") \(arm64\): .*$pattern" "$PKGTOOL" symbols "$file"
}
S=$D/cxx.arm64.dylib
corrupt "$S" "$D/b1" 0x2 8 0x7fffff00
bad "symoff past the end" "$D/b1" "LC_SYMTAB symoff"
corrupt "$S" "$D/b2" 0x2 12 0x10000000
bad "nsyms past the end" "$D/b2" "LC_SYMTAB symoff"
corrupt "$S" "$D/b3" 0x2 20 1
bad "string index past the string table" "$D/b3" "string index 0x[0-9a-f]+ past the string table"
corrupt "$D/cxx.arm64.nosym.dylib" "$D/b4" 0x80000022 44 0x7fffff00
bad "export_size past the end" "$D/b4" "LC_DYLD_INFO_ONLY export_off"
# A trie whose root's child points back at the root: a cycle, not a hang.
lc_patch "$D/cxx.arm64.nosym.dylib" "$D/b5" trie-cycle
bad "trie cycle" "$D/b5" "exports trie: node 0x0 reached twice"
printf 'not mach-o' >"$D/text"
expect_exit "--arch on ELF/other input" 2 "error: .*" "$PKGTOOL" symbols --arch arm64 "$D/text"
expect_exit "--arch the file lacks" 2 "cxx.arm64.dylib: no x86_64 slice" "$PKGTOOL" symbols --arch x86_64 "$D/cxx.arm64.dylib"

case_begin "cxx11 census does not apply to Mach-O"
expect_exit "census" 0 "does not apply" "$PKGTOOL" census "$D/cxx.arm64.dylib"

finish
