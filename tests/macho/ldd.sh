#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool ldd` on Mach-O files linked at test time, with dyld's rules: a
# chain exe -> @rpath/liba.dylib -> @loader_path/../lib/libb.dylib, where
# liba's @rpath/libc.dylib is found only through the executable's LC_RPATH
# (the run-path stack of the loading chain); /usr/lib names are system; a
# missing dependency and a wrong-arch one are errors (exit 1); a fat
# executable is resolved per slice; --dyld-library-path comes first;
# @executable_path comes from --executable-path for a dylib.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14
make_scratch
D=$SCRATCH/app
mkdir -p "$D/bin" "$D/lib" "$D/other" "$D/dlp"
echo 'int f(void) { return 1; }' >"$D/f.c"
echo 'int main(void) { return 0; }' >"$D/main.c"
A=arm64-apple-macos11 X=x86_64-apple-macos10.15
lib() { # TARGET OUT INSTALL_NAME [LINK ARGS...]
  local t=$1 out=$2 id=$3
  shift 3
  mcc "$t" -dynamiclib -o "$out" "$D/f.c" -install_name "$id" "$@"
}
lib $A "$D/other/libSystem.B.dylib" /usr/lib/libSystem.B.dylib
lib $A "$D/lib/libb.dylib" @loader_path/../lib/libb.dylib
lib $A "$D/lib/libc.dylib" @rpath/libc.dylib
lib $A "$D/lib/liba.dylib" @rpath/liba.dylib "$D/lib/libb.dylib" "$D/lib/libc.dylib" -Wl,-rpath,/nowhere
lib $X "$D/lib/libx.dylib" @rpath/libx.dylib
lib $A "$D/lib/libm.dylib" @rpath/libmissing.dylib
exe() { # TARGET OUT LINK ARGS...
  local t=$1 out=$2
  shift 2
  mcc "$t" -o "$out" "$D/main.c" -Wl,-e,_main "$@"
}
exe $A "$D/bin/exe" "$D/lib/liba.dylib" "$D/other/libSystem.B.dylib" -Wl,-rpath,/nowhere/either \
  -Wl,-rpath,@executable_path/../lib
exe $A "$D/bin/exe-missing" "$D/lib/libm.dylib" -Wl,-rpath,@executable_path/../lib
rm "$D/lib/libm.dylib"
# libx is x86_64-only in lib/; the arm64 stub in other/ is only linked against.
lib $A "$D/other/libx.dylib" @rpath/libx.dylib
exe $A "$D/bin/exe-wrong" "$D/other/libx.dylib" -Wl,-rpath,@executable_path/../lib
exe $X "$D/bin/exe.x86_64" "$D/other/libx.dylib" -Wl,-rpath,@executable_path/../lib
# a dylib needing @executable_path/../lib/libc.dylib
lib $A "$D/other/libc2.dylib" @executable_path/../lib/libc.dylib
lib $A "$D/lib/libneedsexec.dylib" @rpath/libneedsexec.dylib "$D/other/libc2.dylib"

case_begin "chain: @rpath over the loading chain's run paths, @loader_path, system"
out=$("$PKGTOOL" ldd "$D/bin/exe") || fail "ldd exe: exit $?"
expected="$D/bin/exe (arm64)
    @rpath/liba.dylib => $D/lib/liba.dylib (via @rpath $D/lib)
        @loader_path/../lib/libb.dylib => $D/lib/libb.dylib (via @loader_path)
        @rpath/libc.dylib => $D/lib/libc.dylib (via @rpath $D/lib)
    /usr/lib/libSystem.B.dylib => system"
check "text tree" test "$out" = "$expected"
[[ $out == "$expected" ]] || log "got:
$out"
j=$("$PKGTOOL" ldd --json "$D/bin/exe")
check "json" "$LIBPKG_PYTHON" - "$j" "$D" <<'PY'
import json, sys
j, d = json.loads(sys.argv[1]), sys.argv[2]
[s] = j["slices"]
assert s["arch"] == "arm64" and s["executable_path"] == d + "/bin" and s["errors"] == [], s
libs = {l["name"]: l for l in s["libs"]}
assert libs["@rpath/libc.dylib"]["needed_by"] == d + "/lib/liba.dylib", libs
assert libs["@rpath/libc.dylib"]["depth"] == 2 and libs["@rpath/libc.dylib"]["status"] == "found"
assert libs["/usr/lib/libSystem.B.dylib"]["status"] == "system"
PY

case_begin "missing and wrong-arch dependencies: exit 1"
rc=0; out=$("$PKGTOOL" ldd "$D/bin/exe-missing" 2>"$SCRATCH/err") || rc=$?
check "missing: exit 1" test "$rc" = 1
check "missing: shown" grep -qx "    @rpath/libmissing.dylib => not found" <<<"$out"
check "missing: stderr names it" grep -q "exe-missing (arm64): not loadable: @rpath/libmissing.dylib" "$SCRATCH/err"
rc=0; out=$("$PKGTOOL" ldd "$D/bin/exe-wrong" 2>"$SCRATCH/err") || rc=$?
check "wrong arch: exit 1" test "$rc" = 1
check "wrong arch: shown" grep -qx "    @rpath/libx.dylib => wrong architecture" <<<"$out"
check "wrong arch: candidate named" grep -q "rejected $D/lib/libx.dylib: x86_64 only" <<<"$out"
rc=0; out=$("$PKGTOOL" ldd "$D/bin/exe.x86_64") || rc=$?
check "x86_64 exe finds the x86_64 libx: exit 0" test "$rc" = 0

case_begin "fat executable: per slice"
llvm-lipo-14 -create "$D/bin/exe-wrong" "$D/bin/exe.x86_64" -output "$D/bin/exe-fat"
rc=0; j=$("$PKGTOOL" ldd --json "$D/bin/exe-fat") || rc=$?
check "fat: exit 1 (arm64 slice)" test "$rc" = 1
check "fat json" "$LIBPKG_PYTHON" - "$j" <<'PY'
import json, sys
s = {x["arch"]: x for x in json.loads(sys.argv[1])["slices"]}
assert s["x86_64"]["errors"] == [] and s["x86_64"]["libs"][0]["status"] == "found", s
assert s["arm64"]["errors"] == ["@rpath/libx.dylib"] and s["arm64"]["libs"][0]["status"] == "wrong_arch", s
PY

case_begin "--dyld-library-path first; --executable-path for a dylib"
cp "$D/lib/libc.dylib" "$D/dlp/libc.dylib"
out=$("$PKGTOOL" ldd --dyld-library-path "$D/dlp" "$D/bin/exe")
check "DYLD_LIBRARY_PATH wins" grep -qx "        @rpath/libc.dylib => $D/dlp/libc.dylib (via DYLD_LIBRARY_PATH)" <<<"$out"
rc=0; out=$("$PKGTOOL" ldd "$D/lib/libneedsexec.dylib" 2>/dev/null) || rc=$?
check "no executable path: exit 1" test "$rc" = 1
check "no executable path: not found" grep -qx "    @executable_path/../lib/libc.dylib => not found" <<<"$out"
out=$("$PKGTOOL" ldd --executable-path "$D/bin" "$D/lib/libneedsexec.dylib")
check "--executable-path" grep -qx "    @executable_path/../lib/libc.dylib => $D/lib/libc.dylib (via @executable_path)" <<<"$out"

case_begin "bad input"
expect_status 2 "missing file" "$PKGTOOL" ldd "$D/nope.dylib" --executable-path /x

finish
