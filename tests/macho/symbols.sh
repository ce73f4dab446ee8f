#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool symbols` on Mach-O against llvm-nm-14: -g by default,
# --defined-only = -gU, --undefined-only = -u (names only, as Darwin nm).
# C and C++ dylibs (namespaces, templates, vtable, data, bss, weak, hidden)
# linked at test time for arm64 and x86_64 (ld64.lld-14, LC_DYLD_INFO) and
# arm64 with chained fixups (ld64.lld-19, LC_DYLD_EXPORTS_TRIE), plain and
# demangled (-C), thin, fat (--arch=all and --arch); undefined symbols of
# a dylib, an executable and bundles (-undefined dynamic_lookup, a weak
# import, -bundle_loader, a flat-namespace image), whose --json lookup and
# library agree with `llvm-nm-14 -m` and the ordinal with llvm-objdump's
# dylib order; the exports trie alone (symbol table emptied) equals
# `llvm-nm-14 -gU --add-dyldinfo` for LC_DYLD_INFO and the full symbol
# table's listing for LC_DYLD_EXPORTS_TRIE (which llvm-nm-14 cannot read);
# --json; malformed tables exit 2 naming the file; the cxx11 census says
# it does not apply to Mach-O (libc++).
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

case_begin "nm -g, -gU, -u: same as llvm-nm-14, plain and demangled"
for f in cxx.arm64.dylib cxx.x86_64.dylib cxx.chained.dylib fx/small.arm64.dylib \
  fx/exe.x86_64 fx/bundle.arm64.so fx/chained.arm64.dylib; do
  check "$f" diff <("$PKGTOOL" symbols "$D/$f") <(llvm-nm-14 -g "$D/$f")
  check "$f -C" diff <("$PKGTOOL" symbols -C "$D/$f") <(llvm-nm-14 -g -C "$D/$f")
  check "$f --defined-only" diff <("$PKGTOOL" symbols --defined-only "$D/$f") <(llvm-nm-14 -gU "$D/$f")
  check "$f --undefined-only" diff <("$PKGTOOL" symbols --undefined-only "$D/$f") <(llvm-nm-14 -u "$D/$f")
done
check "C++ names demangled" grep -q '^0.* T int c10::twice<int>(int)$' <("$PKGTOOL" symbols -C "$D/cxx.arm64.dylib")
check "hidden symbols left out" test -z "$("$PKGTOOL" symbols "$D/cxx.arm64.dylib" | grep hidden)"

case_begin "fat: every slice (--arch=all), or one with --arch"
check "fat, all" diff <("$PKGTOOL" symbols "$D/cxx.fat.dylib") <(llvm-nm-14 -g --arch=all "$D/cxx.fat.dylib")
check "fat, all, defined" diff <("$PKGTOOL" symbols --defined-only "$D/cxx.fat.dylib") \
  <(llvm-nm-14 -gU --arch=all "$D/cxx.fat.dylib")
for a in arm64 x86_64; do
  check "fat --arch $a" diff <("$PKGTOOL" symbols --arch $a -C "$D/cxx.fat.dylib") \
    <(llvm-nm-14 -g -C --arch=$a "$D/cxx.fat.dylib")
done

# Undefined symbols: where dyld looks each one up. libu.dylib imports
# from libb (two-level, one weakly), leaves some to -undefined
# dynamic_lookup and references C++ names; the executable exports what the
# bundle linked with -bundle_loader takes from it (EXECUTABLE_ORDINAL); the
# flat-namespace dylib has no ordinals.
U=$D/undef
mkdir -p "$U"
cat >"$U/b.c" <<'C'
int b_value(void) { return 2; }
int b_other(void) { return 3; }
C
cat >"$U/u.cpp" <<'CPP'
extern "C" int b_value(void);
extern "C" int b_other(void) __attribute__((weak_import));
extern "C" int dyn_thing(void);
extern "C" int shared_counter;
namespace ext { int ext_fn(int); extern int ext_var; }
extern "C" int use(void) {
  return b_value() + (b_other ? b_other() : 0) + dyn_thing() + shared_counter +
         ext::ext_fn(1) + ext::ext_var;
}
CPP
cat >"$U/main.c" <<'C'
int shared_counter = 4;
int dyn_thing(void) { return 1; }
extern int use(void);
int main(void) { return use(); }
C
for t in arm64-apple-macos11 x86_64-apple-macos10.15; do
  a=${t%%-*}
  mcc "$t" -dynamiclib -o "$U/libb.$a.dylib" "$U/b.c" -install_name @rpath/libb.dylib
  cxx "$t" -dynamiclib -o "$U/libu.$a.dylib" "$U/u.cpp" -install_name @rpath/libu.dylib "$U/libb.$a.dylib"
  mcc "$t" -o "$U/exe.$a" "$U/main.c" -Wl,-e,_main "$U/libu.$a.dylib" -Wl,-export_dynamic
  # No -undefined dynamic_lookup: what the bundle lacks comes from the
  # executable (or, for lld's stub binder, is left undefined).
  clang-14 -target "$t" -fuse-ld=lld -nostdlib -fno-exceptions -fno-rtti \
    -Wno-stdlibcxx-not-found -bundle -o "$U/loader.$a.so" "$U/u.cpp" "$U/libb.$a.dylib" \
    -Wl,-bundle_loader,"$U/exe.$a" -Wl,-U,dyld_stub_binder -Wl,-U,__ZN3ext6ext_fnEi \
    -Wl,-U,__ZN3ext7ext_varE
done
clang-14 -target arm64-apple-macos13 --ld-path=/usr/bin/ld64.lld-19 -nostdlib \
  -Wl,-undefined,dynamic_lookup -Wl,-platform_version,macos,13.0,13.0 \
  -fno-exceptions -fno-rtti -Wno-stdlibcxx-not-found -dynamiclib \
  -o "$U/libu.chained.dylib" "$U/u.cpp" "$U/libb.arm64.dylib"
mcc x86_64-apple-macos10.15 -dynamiclib -Wl,-flat_namespace -o "$U/libu.flat.dylib" \
  -fno-exceptions -fno-rtti -Wno-stdlibcxx-not-found "$U/u.cpp" "$U/libb.x86_64.dylib"
llvm-lipo-14 -create "$U/libu.x86_64.dylib" "$U/libu.arm64.dylib" -output "$U/libu.fat.dylib"

case_begin "undefined symbols: nm -g, -u, -u -C, -gU"
UNDEF_FILES="libu.arm64.dylib libu.x86_64.dylib libu.chained.dylib libu.flat.dylib exe.arm64 exe.x86_64 loader.arm64.so loader.x86_64.so"
for f in $UNDEF_FILES; do
  check "$f -g" diff <("$PKGTOOL" symbols "$U/$f") <(llvm-nm-14 -g "$U/$f")
  check "$f -u" diff <("$PKGTOOL" symbols --undefined-only "$U/$f") <(llvm-nm-14 -u "$U/$f")
  check "$f -u -C" diff <("$PKGTOOL" symbols -u -C "$U/$f") <(llvm-nm-14 -u -C "$U/$f")
  check "$f -gU" diff <("$PKGTOOL" symbols --defined-only "$U/$f") <(llvm-nm-14 -gU "$U/$f")
done
check "fat -u" diff <("$PKGTOOL" symbols -u "$U/libu.fat.dylib") <(llvm-nm-14 -u --arch=all "$U/libu.fat.dylib")
check "fat -g -C" diff <("$PKGTOOL" symbols -C "$U/libu.fat.dylib") <(llvm-nm-14 -g -C --arch=all "$U/libu.fat.dylib")
check "some undefined C++ names" grep -qx 'ext::ext_fn(int)' <("$PKGTOOL" symbols -u -C "$U/libu.arm64.dylib")

case_begin "undefined symbols --json: lookup and library as llvm-nm -m, ordinal as llvm-objdump"
for f in $UNDEF_FILES; do
  "$PKGTOOL" symbols --json "$U/$f" >"$U/$f.json"
  check "$f" "$LIBPKG_PYTHON" - "$U/$f" "$U/$f.json" <<'PY'
import json, re, subprocess, sys
path, doc = sys.argv[1], json.load(open(sys.argv[2]))
[f] = doc
[s] = f["slices"]
ours = {x["name"]: x for x in s["symbols"] if not x["defined"]}
# llvm-nm -m: "(undefined) [weak ]external NAME [(from LIB)|(dynamically looked up)|(from executable)]"
nm = {}
for line in subprocess.run(["llvm-nm-14", "-m", "-u", path], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    m = re.match(r"\s*\(undefined\) (weak )?external (\S+)(?: \((.*)\))?$", line)
    if m:
        nm[m.group(2)] = (bool(m.group(1)), m.group(3))
assert set(nm) == set(ours), (sorted(nm), sorted(ours))
# The dependent-dylib load commands in order (ordinal N is the Nth); not
# --dylibs-used, which lists a dylib's own id first.
dylibs, kind = [], None
for line in subprocess.run(["llvm-objdump-14", "--macho", "--private-headers", path],
                           capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if f[:1] == ["cmd"]:
        kind = f[1]
    elif f[:1] == ["name"] and kind in ("LC_LOAD_DYLIB", "LC_LOAD_WEAK_DYLIB", "LC_REEXPORT_DYLIB",
                                         "LC_LOAD_UPWARD_DYLIB", "LC_LAZY_LOAD_DYLIB"):
        dylibs.append(f[1])
def short(name):  # llvm's guessLibraryShortName for plain dylib names
    leaf = name.rsplit("/", 1)[-1]
    return leaf[:-len(".dylib")].split(".")[0] if leaf.endswith(".dylib") else leaf
for name, (weak, where) in nm.items():
    x = ours[name]
    assert x["type"] == "U" and x["weak_import"] == weak, (name, x, weak)
    if where is None:
        assert x["lookup"] in ("flat", "self") and x["library"] is None, (name, x)
    elif where == "dynamically looked up":
        assert x["lookup"] == "dynamic" and x["library_ordinal"] == 0xfe, (name, x)
    elif where == "from executable":
        assert x["lookup"] == "executable" and x["library_ordinal"] == 0xff, (name, x)
    else:
        lib = where[len("from "):]
        assert x["lookup"] == "two_level" and short(x["library"]) == lib, (name, x, lib)
        assert dylibs[x["library_ordinal"] - 1] == x["library"], (name, x, dylibs)
PY
done
check "weak import from libb, two-level" "$LIBPKG_PYTHON" -c '
import json, sys
[f] = json.load(open(sys.argv[1]))
by = {x["name"]: x for x in f["slices"][0]["symbols"]}
o = by["_b_other"]
assert o["weak_import"] and o["lookup"] == "two_level" and o["library"] == "@rpath/libb.dylib", o
assert by["_dyn_thing"]["lookup"] == "dynamic", by["_dyn_thing"]
assert by["__ZN3ext6ext_fnEi"]["demangled"] == "ext::ext_fn(int)", by["__ZN3ext6ext_fnEi"]
' "$U/libu.arm64.dylib.json"
check "executable ordinal in the bundle" "$LIBPKG_PYTHON" -c '
import json, sys
[f] = json.load(open(sys.argv[1]))
by = {x["name"]: x for x in f["slices"][0]["symbols"]}
assert by["_shared_counter"]["lookup"] == "executable", by["_shared_counter"]
' "$U/loader.arm64.so.json"
check "flat namespace: no library" "$LIBPKG_PYTHON" -c '
import json, sys
[f] = json.load(open(sys.argv[1]))
und = [x for x in f["slices"][0]["symbols"] if not x["defined"]]
assert und and all(x["lookup"] == "flat" and x["library"] is None for x in und), und
' "$U/libu.flat.dylib.json"

case_begin "exports trie alone"
for a in arm64 x86_64; do
  nosym "$D/cxx.$a.dylib" "$D/cxx.$a.nosym.dylib"
  check "LC_DYLD_INFO trie ($a) = llvm-nm --add-dyldinfo" \
    diff <("$PKGTOOL" symbols --defined-only "$D/cxx.$a.nosym.dylib") <(llvm-nm-14 -gU --add-dyldinfo "$D/cxx.$a.nosym.dylib")
done
nosym "$D/cxx.chained.dylib" "$D/cxx.chained.nosym.dylib"
check "LC_DYLD_EXPORTS_TRIE = the symbol table's listing" \
  diff <("$PKGTOOL" symbols --defined-only "$D/cxx.chained.nosym.dylib") <(llvm-nm-14 -gU "$D/cxx.chained.dylib")
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
