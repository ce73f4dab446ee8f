#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --rename-dynamic-symbols MAP (patchelf 0.18; Debian's patchelf 0.14 lacks
# it, so the checks are independent): a library with many functions (some
# versioned, one variable) and a program using them are built for the
# target; every defined symbol of the library and the matching undefined
# references of the program are renamed, then
#  - the program runs (LD_BIND_NOW, so every reference is looked up) and
#    dlsym finds the new names but no longer the old ones: the hash tables
#    (.gnu.hash, .hash, or both) were rebuilt for the new names;
#  - readelf --dyn-syms shows the new names with the same versions, and
#    readelf -r the same relocations by name (the table was reordered for
#    .gnu.hash, so symbol indices in relocations were rewritten);
#  - eu-elflint --gnu-ld reports nothing new (it checks the hash tables
#    against .dynsym);
#  - renaming back gives the original symbol list;
#  - a map that matches nothing still lets other edits of the same call
#    happen; malformed maps are errors naming the map file and line;
#  - a prelinked file (DT_GNU_CONFLICT, DT_GNU_LIBLIST, DT_GNU_PRELINKED,
#    DT_CHECKSUM) is refused: prelink's tables bind the old names.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/fixtures.sh"
source "$(dirname "$0")/lib/checks.sh"
require_elf_tools readelf eu-elflint
make_scratch
cd "$SCRATCH"

N=120 # functions: enough for several buckets and a real reordering

gen_sources() {
  local d=$1 i
  {
    for ((i = 0; i < N; i++)); do
      printf 'int fn_%d(int x) { return x + %d; }\n' "$i" "$i"
    done
    # Calls through the PLT inside the library: its own relocations name
    # its own (renamed, reordered) symbols.
    printf 'int total(void) { int s = 0;\n'
    for ((i = 0; i < N; i++)); do printf '  s = fn_%d(s);\n' "$i"; done
    printf '  return s; }\n'
    printf 'int counter = 5;\n'
    printf 'int vold(void) { return 1; }\nint vnew(void) { return 2; }\n'
  } >"$d/lib.c"
  printf 'V1 { global: *; }; V2 { global: vnew; } V1;\n' >"$d/lib.map"
  {
    printf '#include <dlfcn.h>\n#include <stdio.h>\n'
    for ((i = 0; i < N; i++)); do printf 'int fn_%d(int);\n' "$i"; done
    printf 'int total(void); int vnew(void); extern int counter;\n'
    printf 'int main(int argc, char **argv) {\n  int s = 0;\n'
    for ((i = 0; i < N; i += 7)); do printf '  s += fn_%d(1);\n' "$i"; done
    printf '  void *h = dlopen(argv[1], RTLD_NOW);\n'
    printf '  if (!h) { printf("dlopen: %%s\\n", dlerror()); return 1; }\n'
    printf '  printf("%%d %%d %%d %%d %%s %%s\\n", s, total(), vnew(), counter,\n'
    printf '         dlsym(h, argv[2]) ? "new-found" : "new-missing",\n'
    printf '         dlsym(h, argv[3]) ? "old-found" : "old-missing");\n'
    printf '  return 0;\n}\n'
  } >"$d/main.c"
}

# The printed line, computed here independently of the binaries.
expected_line() {
  local s=0 i
  for ((i = 0; i < N; i += 7)); do s=$((s + 1 + i)); done
  printf '%d %d 2 5 %s %s' "$s" $((N * (N - 1) / 2)) "$1" "$2"
}

dynsyms() { # NAME@VERSION of every defined/undefined symbol, sorted
  readelf --dyn-syms -W "$1" | awk '$1 ~ /^[0-9]+:$/ && NF >= 8 {print $8}' | sort
}
relocs() { # symbol names of the relocations, in table order
  readelf -rW "$1" | awk '/^[0-9a-f]+ +[0-9a-f]+ +R_/ && NF >= 5 {print $5}' | cut -d@ -f1
}

run_target() {
  local d=$SCRATCH/$FX_T style
  for style in gnu sysv both; do
    local w=$d/$style
    mkdir -p "$w"
    gen_sources "$w"
    if ! "$FX_CC" -shared -fPIC -O1 -Wl,--hash-style=$style -Wl,--version-script,"$w/lib.map" \
      -Wl,-soname,libmany.so -o "$w/libmany.so" "$w/lib.c" 2>"$w/err" ||
      ! "$FX_CC" -O1 -Wl,--hash-style=$style -o "$w/main" "$w/main.c" -L"$w" -lmany -ldl 2>>"$w/err"; then
      fail "$FX_T/$style: cannot build the fixture: $(head -c 400 "$w/err")"
      continue
    fi
    case_begin "$FX_T $style-hash"
    chk_run "pristine" "$(expected_line new-missing old-found)" --ld-path="$w" \
      --env=LD_BIND_NOW=1 "$w/main" "$w/libmany.so" fn_3_renamed fn_3

    # Every defined symbol of the library (the program's undefined ones are
    # a subset): "old new" lines, one name per version-less symbol.
    readelf --dyn-syms -W "$w/libmany.so" |
      awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && NF >= 8 {print $8}' | cut -d@ -f1 |
      grep -v '^V[12]$' | sort -u | awk '{print $1, $1 "_renamed"}' >"$w/map"
    awk '{print $2, $1}' "$w/map" >"$w/rmap"
    mkdir -p "$w/new"
    pe_ok "$style: rename in the library" --rename-dynamic-symbols "$w/map" \
      --output "$w/new/libmany.so" "$w/libmany.so"
    pe_ok "$style: rename in the program" --rename-dynamic-symbols "$w/map" \
      --output "$w/new/main" "$w/main"
    chk_run "renamed" "$(expected_line new-found old-missing)" --ld-path="$w/new" \
      --env=LD_BIND_NOW=1 "$w/new/main" "$w/new/libmany.so" fn_3_renamed fn_3
    chk_run "renamed, lazy binding" "$(expected_line new-found old-missing)" --ld-path="$w/new" \
      "$w/new/main" "$w/new/libmany.so" fn_77_renamed fn_77
    local f
    for f in libmany.so main; do
      chk_elflint "$style $f" "$w/$f" "$w/new/$f"
      expect_eq "$style $f: symbols renamed, versions kept" \
        "$(dynsyms "$w/$f" | sed -E 's/^(fn_[0-9]+|total|counter|vold|vnew)(@|$)/\1_renamed\2/')" \
        "$(dynsyms "$w/new/$f" | sed -E 's/^(V[12])_renamed(@)/\1\2/')"
      expect_eq "$style $f: relocations name the same symbols" \
        "$(relocs "$w/$f" | sed -E 's/^(fn_[0-9]+|total|counter|vold|vnew)$/\1_renamed/')" \
        "$(relocs "$w/new/$f")"
    done
    pe_ok "$style: rename back" --rename-dynamic-symbols "$w/rmap" \
      --output "$w/back.so" "$w/new/libmany.so"
    expect_eq "$style: renamed back" "$(dynsyms "$w/libmany.so")" "$(dynsyms "$w/back.so")"
    chk_elflint "$style renamed back" "$w/libmany.so" "$w/back.so"
  done
}

fx_for_each_target run_target

# Map parsing and combinations: once, in the native variant (the cross
# variants built only their own target's fixtures).
if [[ " ${ELF_TARGETS:-x86_64} " == *" x86_64 "* ]] && fx_target x86_64; then
  case_begin "maps"
  # refused WHAT FILE PATTERN ARGS...: `$TOOL ARGS FILE` exits 2 with a
  # message matching PATTERN and leaves FILE as it was.
  refused() {
    local what=$1 file=$2 pattern=$3 rc=0
    shift 3
    cp "$file" "$file.orig"
    "$TOOL" "$@" "$file" 2>err || rc=$?
    expect_eq "$what: exit status" 2 "$rc"
    grep -q -- "$pattern" err && pass || fail "$what: message: $(cat err)"
    expect_same_file "$what: file unchanged" "$file.orig" "$file"
  }
  w=$SCRATCH/x86_64/gnu
  printf 'SYMBOL_THAT_DOES_NOT_EXIST ANOTHER\n' >nomatch
  pe_ok "no match + set-rpath" --rename-dynamic-symbols nomatch --set-rpath changed_rpath \
    --output rp.so "$w/libmany.so"
  expect_eq "other edits still happen" changed_rpath "$("$TOOL" --print-rpath rp.so)"
  expect_eq "no symbol changed" "$(dynsyms "$w/libmany.so")" "$(dynsyms rp.so)"
  printf 'fn_1 x\n\n  fn_2\tfn_2b  \n' >spaced
  pe_ok "blank lines and tabs" --rename-dynamic-symbols spaced --output sp.so "$w/libmany.so"
  expect_eq "both renamed" "fn_2b@@V1 x@@V1" "$(dynsyms sp.so | grep -E '^(x|fn_2b)@' | tr '\n' ' ' | sed 's/ $//')"
  # Combined with edits indexed by symbol: the version of a symbol follows
  # it when .dynsym is reordered (--clear-symbol-version, and the versions
  # --remove-needed drops).
  printf 'fn_0 fn_0_with_a_new_bucket_zz\n' >one
  pe_ok "rename + clear-symbol-version" --rename-dynamic-symbols one \
    --clear-symbol-version fn_5 --output cv.so "$w/libmany.so"
  expect_eq "fn_5 unversioned, the renamed one keeps V1" "fn_0_with_a_new_bucket_zz@@V1 fn_5" \
    "$(dynsyms cv.so | grep -E '^(fn_5|fn_0_with_a_new_bucket_zz)(@|$)' | tr '\n' ' ' | sed 's/ $//')"
  chk_elflint "rename + clear-symbol-version" "$w/libmany.so" cv.so
  pe_ok "rename + remove-needed" --rename-dynamic-symbols one --remove-needed libc.so.6 \
    --output rn.so "$w/libmany.so"
  expect_eq "libc's versions dropped from the reordered symbols" 0 \
    "$(dynsyms rn.so | grep -c '@GLIBC' || true)"
  expect_eq "the library's own versions kept" "$(dynsyms "$w/libmany.so" | grep -c '@@V[12]')" \
    "$(dynsyms rn.so | grep -c '@@V[12]')"
  chk_elflint "rename + remove-needed" "$w/libmany.so" rn.so
  # A corrupt .gnu.hash (symbol offset 0 would move the null symbol) is
  # refused, naming the table, and the file is left as it was.
  cp "$w/libmany.so" badhash.so
  gh=$(readelf -SW badhash.so | sed -n 's/.* \.gnu\.hash  *GNU_HASH  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
  printf '\0\0\0\0' | dd of=badhash.so bs=1 seek=$((0x$gh + 4)) conv=notrunc status=none
  refused "corrupt .gnu.hash" badhash.so \
    "badhash.so: .gnu.hash header is invalid (buckets [0-9]*, symbol offset 0" \
    --rename-dynamic-symbols one
  # A prelinked library (prelink's tables bind the old names; ld.so would
  # apply them after a rename): refused, naming the tag, file unchanged.
  # The tags are planted by retagging a DT_DEBUG entry.
  "$TOOL" --add-debug-tag --output dbg.so "$w/libmany.so"
  for tag in DT_GNU_CONFLICT:0x6ffffef8 DT_GNU_LIBLIST:0x6ffffef9 \
    DT_GNU_PRELINKED:0x6ffffdf5 DT_CHECKSUM:0x6ffffdf8; do
    "$LIBPKG_PYTHON" - "$ELFTEST_DIR/lib" dbg.so prelinked.so "${tag#*:}" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from elfcheck import Elf, PT_DYNAMIC
elf = Elf(sys.argv[2])
d = bytearray(elf.data)
dyn = next(p for p in elf.phdrs if p["type"] == PT_DYNAMIC)
fmt = elf.end + ("qQ" if elf.bits == 64 else "iI")
for pos in range(dyn["offset"], dyn["offset"] + dyn["filesz"], struct.calcsize(fmt)):
    t, v = struct.unpack_from(fmt, d, pos)
    if t == 21:  # DT_DEBUG
        struct.pack_into(fmt, d, pos, int(sys.argv[4], 16), v)
        break
else:
    raise SystemExit("no DT_DEBUG entry to retag")
open(sys.argv[3], "wb").write(d)
PY
    name=${tag%%:*}
    check "$name planted (readelf)" grep -q "(${name#DT_})" <(readelf -dW prelinked.so)
    refused "$name" prelinked.so \
      "prelinked.so: --rename-dynamic-symbols: the file is prelinked ($name)" \
      --rename-dynamic-symbols one
  done
  for bad in 'onlyone' 'a b c' $'fn_1 x\nfn_1 y'; do
    printf '%s\n' "$bad" >badmap
    cp "$w/libmany.so" victim.so
    refused "map '${bad//$'\n'/|}'" victim.so "badmap: line [12]" --rename-dynamic-symbols badmap
  done
fi

finish
