#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool ldd` against the real loader on fixtures compiled at test time:
# RPATH vs RUNPATH vs LD_LIBRARY_PATH, RPATH inheritance through the loader
# chain (and its suppression by a requester's RUNPATH), RUNPATH not
# inherited, $ORIGIN / ${ORIGIN} (also through a symlinked executable), a
# 32-bit library of the same name skipped, cycles, a soname needed twice,
# missing libraries (exit 1), bad input (exit 2), --lib-path, --ldpaths, and
# ld.so.conf includes under --root (checked against `ldconfig -r ROOT -p`).
#
# The loader's answer is `LD_TRACE_LOADED_OBJECTS=1 ./prog` (the program is
# exec'd, so $ORIGIN of the executable is its realpath, as for a real run);
# tests/deps/compare_ldd.py compares it with `pkgtool ldd --json`.
source "$LIBPKG_SOURCE_DIR/tests/lib/harness.sh"
require_tools gcc readelf
make_scratch
S=$SCRATCH
COMPARE="$LIBPKG_SOURCE_DIR/tests/deps/compare_ldd.py"
LDSO=/lib64/ld-linux-x86-64.so.2
[[ -x $LDSO ]] || missing "no x86_64 loader at $LDSO (libc6)"

# lib OUT SONAME [gcc args...]: a shared library exporting one function.
lib() {
  local out=$1 soname=$2
  shift 2
  mkdir -p "$(dirname "$out")"
  local fn
  fn=f_$(basename "$out" | tr -c 'a-zA-Z0-9\n' _)
  printf 'int %s(void) { return 1; }\n' "$fn" >"$S/src_$fn.c"
  gcc -shared -fPIC -o "$out" "$S/src_$fn.c" -Wl,-soname,"$soname" \
    -Wl,--no-as-needed "$@"
}
# prog OUT [gcc args...]
prog() {
  local out=$1
  shift
  mkdir -p "$(dirname "$out")"
  printf 'int main(void) { return 0; }\n' >"$S/main.c"
  gcc -o "$out" "$S/main.c" -Wl,--no-as-needed "$@" 2>"$S/link.err" ||
    { cat "$S/link.err" >&2; return 1; }
}
RPATH=(-Wl,--disable-new-dtags)
RUNPATH=(-Wl,--enable-new-dtags)

# crosscheck NAME PROG [ENV...]: pkgtool ldd --json vs the loader's trace,
# both under the same environment.
crosscheck() {
  local name=$1 p=$2
  shift 2
  env "$@" LD_TRACE_LOADED_OBJECTS=1 "$p" >"$S/$name.trace" 2>&1 || true
  env "$@" "$PKGTOOL" ldd --json "$p" >"$S/$name.json" 2>"$S/$name.err" || true
  if "$LIBPKG_PYTHON" "$COMPARE" "$S/$name.json" "$S/$name.trace" >"$S/$name.cmp"; then
    pass
  else
    fail "$name: pkgtool ldd differs from ld.so"
    sed 's/^/  | /' "$S/$name.cmp" "$S/$name.trace" >&2
  fi
}
# via FILE.json SONAME -> "via realpath"
via() {
  "$LIBPKG_PYTHON" -c '
import json, sys
t = json.load(open(sys.argv[1]))
l = t["libs"].get(sys.argv[2])
print("absent" if l is None else "%s %s" % (l["via"], l["realpath"]))' "$1" "$2"
}

case_begin "RPATH, LD_LIBRARY_PATH, RUNPATH order"
lib "$S/o/d1/libv.so" libv.so
lib "$S/o/d2/libv.so" libv.so
prog "$S/o/prog_rpath" -L"$S/o/d1" -lv "${RPATH[@]}" -Wl,-rpath,"$S/o/d1"
prog "$S/o/prog_runpath" -L"$S/o/d1" -lv "${RUNPATH[@]}" -Wl,-rpath,"$S/o/d1"
check "prog_rpath has DT_RPATH" grep -q '(RPATH)' <(readelf -d "$S/o/prog_rpath")
check "prog_runpath has DT_RUNPATH" grep -q '(RUNPATH)' <(readelf -d "$S/o/prog_runpath")
crosscheck rpath "$S/o/prog_rpath"
crosscheck rpath_llp "$S/o/prog_rpath" LD_LIBRARY_PATH="$S/o/d2"
expect_eq "RPATH wins over LD_LIBRARY_PATH" "rpath $S/o/d1/libv.so" "$(via "$S/rpath_llp.json" libv.so)"
crosscheck runpath "$S/o/prog_runpath"
crosscheck runpath_llp "$S/o/prog_runpath" LD_LIBRARY_PATH="$S/o/d2"
expect_eq "LD_LIBRARY_PATH wins over RUNPATH" "ld_library_path $S/o/d2/libv.so" "$(via "$S/runpath_llp.json" libv.so)"
# --lib-path comes right after LD_LIBRARY_PATH: before RUNPATH.
expect_status 0 "ldd --lib-path" "$PKGTOOL" ldd --json --lib-path "$S/o/d2" "$S/o/prog_runpath"
expect_eq "--lib-path wins over RUNPATH" "extra_path $S/o/d2/libv.so" "$(via "$S/last.out" libv.so)"
expect_status 0 "ldd --lib-path vs RPATH" "$PKGTOOL" ldd --json --lib-path "$S/o/d2" "$S/o/prog_rpath"
expect_eq "RPATH wins over --lib-path" "rpath $S/o/d1/libv.so" "$(via "$S/last.out" libv.so)"

case_begin "RPATH inheritance and RUNPATH"
I=$S/inh
lib "$I/rp/libb.so" libb.so
lib "$I/rp/liba.so" liba.so -L"$I/rp" -lb
lib "$I/rp/libx.so" libx.so
lib "$I/rp/libw.so" libw.so
lib "$I/rn/libv.so" libv.so
lib "$I/rn/libz.so" libz.so -L"$I/rp" -lw -L"$I/rn" -lv
lib "$I/rp/libr.so" libr.so -L"$I/rp" -lx -L"$I/rn" -lz \
  "${RUNPATH[@]}" -Wl,-rpath,'$ORIGIN/../rn'
prog "$I/bin/prog" -L"$I/rp" -la -lr "${RPATH[@]}" -Wl,-rpath,'$ORIGIN/../rp' \
  -Wl,-rpath-link,"$I/rp:$I/rn"
# liba has no paths: libb through prog's RPATH. libr has RUNPATH: libx
# (only in prog's RPATH dir) is not found. libz (no paths, loaded by libr)
# inherits prog's RPATH for libw, but not libr's RUNPATH for libv.
crosscheck inherit "$I/bin/prog"
expect_eq "libb via inherited RPATH" "inherited_rpath $I/rp/libb.so" "$(via "$S/inherit.json" libb.so)"
expect_eq "libx not found (requester has RUNPATH)" "not_found None" "$(via "$S/inherit.json" libx.so)"
expect_eq "libz via RUNPATH" "runpath $I/rn/libz.so" "$(via "$S/inherit.json" libz.so)"
expect_eq "libw inherited through a RUNPATH object" "inherited_rpath $I/rp/libw.so" "$(via "$S/inherit.json" libw.so)"
expect_eq "libv: RUNPATH not inherited" "not_found None" "$(via "$S/inherit.json" libv.so)"
expect_exit "missing libraries: exit 1, named" 1 'not found: .*libx\.so' "$PKGTOOL" ldd "$I/bin/prog"
check "text output says not found" grep -q 'libv.so => not found' "$S/out.log"
# With libx on LD_LIBRARY_PATH the loader finds it there.
mkdir -p "$I/llp" && cp "$I/rp/libx.so" "$I/llp/"
crosscheck inherit_llp "$I/bin/prog" LD_LIBRARY_PATH="$I/llp"
expect_eq "libx via LD_LIBRARY_PATH" "ld_library_path $I/llp/libx.so" "$(via "$S/inherit_llp.json" libx.so)"

case_begin "\$ORIGIN, \${ORIGIN} and a symlinked executable"
O=$S/origin
lib "$O/lib/sub/libs.so" libs.so
lib "$O/lib/libo.so" libo.so -L"$O/lib/sub" -ls "${RPATH[@]}" -Wl,-rpath,'${ORIGIN}/sub'
prog "$O/bin/prog" -L"$O/lib" -lo "${RUNPATH[@]}" -Wl,-rpath,'$ORIGIN/../lib' \
  -Wl,-rpath-link,"$O/lib/sub"
mkdir -p "$O/elsewhere" && ln -s ../bin/prog "$O/elsewhere/prog-link"
crosscheck origin "$O/bin/prog"
crosscheck origin_symlink "$O/elsewhere/prog-link"
expect_eq "\$ORIGIN of a symlinked executable is its realpath's" \
  "runpath $O/lib/libo.so" "$(via "$S/origin_symlink.json" libo.so)"
expect_eq "\${ORIGIN} in a library's RPATH" "rpath $O/lib/sub/libs.so" "$(via "$S/origin.json" libs.so)"
# A relative invocation: $ORIGIN is still absolute.
(cd "$O/bin" && "$PKGTOOL" ldd --json prog >"$S/origin_rel.json") && pass || fail "relative path"
expect_eq "relative invocation" "runpath $O/lib/libo.so" "$(via "$S/origin_rel.json" libo.so)"

case_begin "32-bit library of the same name is skipped"
if command -v i686-linux-gnu-gcc >/dev/null &&
  printf 'int f(void){return 0;}\n' >"$S/f32.c" &&
  i686-linux-gnu-gcc -shared -fPIC -o "$S/probe32.so" "$S/f32.c" 2>/dev/null; then
  M=$S/m32
  mkdir -p "$M/d32"
  i686-linux-gnu-gcc -shared -fPIC -o "$M/d32/libv.so" "$S/f32.c" -Wl,-soname,libv.so
  lib "$M/d64/libv.so" libv.so
  prog "$M/prog" -L"$M/d64" -lv "${RUNPATH[@]}" -Wl,-rpath,"$M/d32:$M/d64"
  crosscheck m32 "$M/prog"
  expect_eq "64-bit libv chosen" "runpath $M/d64/libv.so" "$(via "$S/m32.json" libv.so)"
  check "skipped candidate recorded" grep -q 'ELFCLASS32, need ELFCLASS64' "$S/m32.json"
  "$PKGTOOL" ldd "$M/prog" >"$S/m32.txt"
  check "text output shows the skipped candidate" grep -q "skipped $M/d32/libv.so" "$S/m32.txt"
else
  log "SKIP (case): i686-linux-gnu-gcc cannot build a shared library here" \
    "(gcc -m32 has no 32-bit crt/libgcc on this machine)"
fi

case_begin "cycles and a soname needed twice"
C=$S/cyc
lib "$C/libc1.so" libc1.so
lib "$C/libc2.so" libc2.so -L"$C" -lc1
lib "$C/libc1.so" libc1.so -L"$C" -lc2   # now libc1 <-> libc2
lib "$C/libcommon.so" libcommon.so
lib "$C/liba.so" liba.so -L"$C" -lcommon -lc1
lib "$C/libb.so" libb.so -L"$C" -lcommon
prog "$C/prog" -L"$C" -la -lb "${RPATH[@]}" -Wl,-rpath,"$C" -Wl,-rpath-link,"$C"
check "cycle really there" grep -q 'libc1.so' <(readelf -d "$C/libc2.so")
crosscheck cycle "$C/prog"
n=$("$LIBPKG_PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["libs"]))' "$S/cycle.json")
# liba libb libcommon libc1 libc2 libc.so.6 ld-linux-x86-64.so.2
expect_eq "one entry per soname" 7 "$n"
"$PKGTOOL" ldd "$C/prog" >"$S/cycle.txt"
expect_eq "libcommon printed once in full" 1 "$(grep -c 'libcommon.so => .*(via' "$S/cycle.txt")"
expect_eq "libcommon repeat marked" 1 "$(grep -c 'libcommon.so => .*(already loaded)' "$S/cycle.txt")"

case_begin "ld.so.conf under --root (vs ldconfig -r ROOT -p)"
R=$S/root
mkdir -p "$R/etc/ld.so.conf.d/nested"
printf '# test root\ninclude ld.so.conf.d/*.conf\n/opt/top\n' >"$R/etc/ld.so.conf"
printf '/opt/a  # comment\ninclude nested/*.conf\n' >"$R/etc/ld.so.conf.d/a.conf"
printf 'hwcap 1 nosegneg\n/opt/n/\n' >"$R/etc/ld.so.conf.d/nested/n.conf"
# -nostdlib: nothing outside the root is needed.
lib "$R/opt/a/libra.so.1" libra.so.1 -nostdlib
lib "$R/opt/n/librn.so.1" librn.so.1 -nostdlib
lib "$R/opt/top/librt.so.1" librt.so.1 -nostdlib
prog "$R/usr/bin/prog" -L"$R/opt/a" -l:libra.so.1 -L"$R/opt/n" -l:librn.so.1 \
  -L"$R/opt/top" -l:librt.so.1 -nostdlib -Wl,-e,0
expect_status 0 "ldd --root" "$PKGTOOL" ldd --json --root "$R" "$R/usr/bin/prog"
cp "$S/last.out" "$S/root.json"
if LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig) && [[ -x $LDCONFIG ]] &&
  "$LDCONFIG" -r "$R" 2>/dev/null && "$LDCONFIG" -r "$R" -p >"$S/ldconfig.txt"; then
  for so in libra.so.1 librn.so.1 librt.so.1; do
    want=$(sed -n "s|^\t$so (.*) => ||p" "$S/ldconfig.txt")
    expect_eq "ldconfig agrees on $so" "ld_so_conf $R$want" "$(via "$S/root.json" "$so")"
  done
else
  log "note: ldconfig -r unavailable; checking against the expected paths only"
  expect_eq "libra" "ld_so_conf $R/opt/a/libra.so.1" "$(via "$S/root.json" libra.so.1)"
  expect_eq "librn" "ld_so_conf $R/opt/n/librn.so.1" "$(via "$S/root.json" librn.so.1)"
fi
# Without --root the system's ld.so.conf is used: not found.
expect_exit "without --root: missing" 1 'libra\.so\.1' "$PKGTOOL" ldd "$R/usr/bin/prog"
# --ldpaths replaces ld.so.conf and the default directories.
expect_status 0 "ldd --ldpaths" "$PKGTOOL" ldd --json --root "$R" \
  --ldpaths "$R/opt/top:$R/opt/n:$R/opt/a" "$R/usr/bin/prog"
expect_eq "--ldpaths" "default_dir $R/opt/a/libra.so.1" "$(via "$S/last.out" libra.so.1)"

case_begin "symlinks inside --root stay inside it (as ldconfig -r ROOT)"
# Absolute links in the tree name paths of the tree, as for a chrooted
# loader: an ld.so.conf.d file linked to /etc/..., a directory linked to
# /opt/..., a library linked to /opt/.... The same absolute paths also
# exist on the host ($S/...) with other contents; a lexical join followed
# the links out to them.
R2=$S/root2
H=$S/host  # a host directory, named by absolute links inside the root
mkdir -p "$R2/etc/ld.so.conf.d" "$R2/usr/bin" "$H/conf" "$H/lib" "$R2$H/conf" "$R2$H/lib"
printf 'include /etc/ld.so.conf.d/*.conf\n/opt/linked\n' >"$R2/etc/ld.so.conf"
ln -s "$H/conf/x.conf" "$R2/etc/ld.so.conf.d/x.conf"
printf '/opt/escaped\n' >"$H/conf/x.conf"      # on the host: must not be read
printf '/opt/inroot\n' >"$R2$H/conf/x.conf"    # what the chrooted loader reads
mkdir -p "$R2/opt"
ln -s "$H/lib" "$R2/opt/linked"
lib "$H/lib/libx.so.1" libx.so.1 -nostdlib      # host copy: must not be found
lib "$R2$H/lib/libx.so.1" libx.so.1 -nostdlib   # the root's copy
lib "$R2/opt/escaped/liby.so.1" liby.so.1 -nostdlib  # only the host conf lists it
lib "$R2/opt/inroot/liby.so.1" liby.so.1 -nostdlib
lib "$R2/opt/real/libz.so.1" libz.so.1 -nostdlib
ln -s /opt/real/libz.so.1 "$R2/opt/inroot/libz.so.1"  # absolute, inside the root
prog "$R2/usr/bin/prog" -L"$R2$H/lib" -l:libx.so.1 -L"$R2/opt/inroot" -l:liby.so.1 \
  -L"$R2/opt/real" -l:libz.so.1 -nostdlib -Wl,-e,0
expect_status 0 "ldd --root" "$PKGTOOL" ldd --json --root "$R2" "$R2/usr/bin/prog"
cp "$S/last.out" "$S/root2.json"
expect_eq "libx: the root's copy through /opt/linked" "ld_so_conf $R2$H/lib/libx.so.1" \
  "$(via "$S/root2.json" libx.so.1)"
expect_eq "liby: from the conf file the link reaches inside the root" \
  "ld_so_conf $R2/opt/inroot/liby.so.1" "$(via "$S/root2.json" liby.so.1)"
expect_eq "libz: its absolute link followed inside the root" \
  "ld_so_conf $R2/opt/real/libz.so.1" "$(via "$S/root2.json" libz.so.1)"
path_of() {
  "$LIBPKG_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["libs"][sys.argv[2]]["path"])' "$@"
}
expect_eq "libx is printed by its path in the root" "$R2/opt/linked/libx.so.1" "$(path_of "$S/root2.json" libx.so.1)"
# The oracle: ldconfig -r chroots, so its cache lists what a loader in
# the root finds.
require_tools ldconfig
check "ldconfig -r builds the root's cache" ldconfig -r "$R2"
ldconfig -r "$R2" -p >"$S/ldconfig2.txt"
for so in libx.so.1 liby.so.1 libz.so.1; do
  want=$(sed -n "s|^\t$so (.*) => ||p" "$S/ldconfig2.txt")
  check "ldconfig -r finds $so" test -n "$want"
  expect_eq "ldconfig agrees on the directory of $so" "$(dirname "$want")" \
    "$(dirname "$(path_of "$S/root2.json" "$so")" | sed "s|^$R2||")"
done

case_begin "ldd reads each input once"
# deps::ldd opens a file once: its libc and its closure come from the same
# mapping, and $ORIGIN from its real path without opening that too. It used
# to open it for the libc, then by its name, then by its real path. The
# command adds one open of its own: the Mach-O sniff of the first file.
require_tools strace
ln -sf prog "$C/prog-link"
# LeakSanitizer cannot run under ptrace: the sanitizer build's leak check
# is off for this one traced run (the rest of the script keeps it).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  strace -f -qq -e trace=open,openat -o "$S/ldd.strace" "$PKGTOOL" ldd "$C/prog-link" >/dev/null
expect_eq "opens of the input (the sniff, then the ELF reader)" 2 \
  "$(grep -cE "\"$C/prog(-link)?\"" "$S/ldd.strace" || true)"

case_begin "bad input"
printf 'not an ELF file\n' >"$S/text"
expect_exit "not ELF" 2 "error: .*text" "$PKGTOOL" ldd "$S/text"
expect_exit "missing file" 2 "error: .*absent" "$PKGTOOL" ldd "$S/absent"
expect_exit "no files" 2 "no input files" "$PKGTOOL" ldd
expect_exit "unknown option" 2 "unknown option" "$PKGTOOL" ldd --bogus "$C/prog"
expect_exit "--root without value" 2 "needs a value" "$PKGTOOL" ldd "$C/prog" --root
printf 'x' >"$S/short"
expect_exit "truncated" 2 "error:" "$PKGTOOL" ldd "$S/short"

finish
