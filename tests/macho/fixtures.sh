# SPDX-License-Identifier: BSD-3-Clause
# Mach-O fixtures linked at test time without an SDK (sourced): clang-14
# with ld64.lld-14 (-fuse-ld=lld), undefined symbols left to dyld
# (-undefined dynamic_lookup), and ld64.lld-19 for chained fixups.
source "$LIBPKG_SOURCE_DIR/tests/lib/harness.sh"

ORACLES="$LIBPKG_SOURCE_DIR/tests/macho/oracles.py"
export PKGTOOL

# Every tool here is installed by scripts/setup.sh, so a missing one is a
# failure, not a skip.
need_tools() {
  require_tools "$@"
  "$LIBPKG_PYTHON" -c 'import macholib' || missing "python3-macholib not installed"
}

# mcc TARGET ARGS...: compile and link one Mach-O.
mcc() {
  local target=$1
  shift
  clang-14 -target "$target" -fuse-ld=lld -nostdlib -Wl,-undefined,dynamic_lookup "$@"
}

# build_fixtures DIR: the fixture set, in DIR.
build_fixtures() {
  local d=$1
  mkdir -p "$d"
  cat >"$d/b.c" <<'C'
int b_value(void) { return 2; }
C
  cat >"$d/a.c" <<'C'
extern int b_value(void);
int a_value(void) { return b_value() + 1; }
C
  cat >"$d/main.c" <<'C'
extern int a_value(void);
int main(void) { return a_value(); }
C
  local t
  for t in arm64-apple-macos11 x86_64-apple-macos10.15; do
    local a=${t%%-*}
    mcc "$t" -dynamiclib -o "$d/libb.$a.dylib" "$d/b.c" -install_name @rpath/libb.dylib 2>/dev/null
    mcc "$t" -dynamiclib -o "$d/libr.$a.dylib" "$d/b.c" -install_name @rpath/libr.dylib 2>/dev/null
    cp "$d/libb.$a.dylib" "$d/libb.dylib"
    cp "$d/libr.$a.dylib" "$d/libr.dylib"
    # lld's default: 32 bytes of header padding.
    mcc "$t" -dynamiclib -o "$d/small.$a.dylib" "$d/a.c" -install_name @rpath/libsmall.dylib \
      -L"$d" -lb -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x 2>/dev/null
    # Room for any edit, weak and re-exported dependencies.
    mcc "$t" -dynamiclib -o "$d/pad.$a.dylib" "$d/a.c" -install_name /opt/x/lib/libpad.dylib \
      -Wl,-headerpad_max_install_names -L"$d" -lb -Wl,-weak-lr \
      -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x -Wl,-rpath,@loader_path 2>/dev/null
    # LC_REEXPORT_DYLIB (which llvm-install-name-tool-14 refuses to edit).
    mcc "$t" -dynamiclib -o "$d/reexp.$a.dylib" "$d/a.c" -install_name @rpath/libreexp.dylib \
      -Wl,-headerpad_max_install_names -L"$d" -Wl,-reexport-lb -lr 2>/dev/null
    mcc "$t" -o "$d/exe.$a" "$d/main.c" -Wl,-e,_main -Wl,-headerpad_max_install_names \
      -L"$d" -Wl,"$d/pad.$a.dylib" -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x 2>/dev/null
    mcc "$t" -bundle -o "$d/bundle.$a.so" "$d/a.c" -Wl,-headerpad_max_install_names \
      -L"$d" -lb -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x 2>/dev/null
  done
  # LC_VERSION_MIN_MACOSX (an old deployment target) instead of LC_BUILD_VERSION.
  mcc x86_64-apple-macos10.9 -dynamiclib -o "$d/old.x86_64.dylib" "$d/a.c" \
    -install_name @rpath/libold.dylib -Wl,-headerpad_max_install_names -L"$d" -lb \
    -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x 2>/dev/null
  # Chained fixups: ld64.lld-19 with macOS 13.
  clang-14 -target arm64-apple-macos13 --ld-path=/usr/bin/ld64.lld-19 -nostdlib \
    -Wl,-undefined,dynamic_lookup -Wl,-platform_version,macos,13.0,13.0 \
    -Wl,-headerpad_max_install_names -dynamiclib -o "$d/chained.arm64.dylib" "$d/a.c" \
    -install_name @rpath/libchained.dylib -L"$d" -lb -Wl,-rpath,/build/lib -Wl,-rpath,/opt/x
  # universal2.
  llvm-lipo-14 -create "$d/pad.x86_64.dylib" "$d/pad.arm64.dylib" -output "$d/pad.fat.dylib"
  llvm-lipo-14 -create "$d/small.x86_64.dylib" "$d/small.arm64.dylib" -output "$d/small.fat.dylib"
}

# objdump_view FILE: what llvm-objdump says about names (no offsets but the
# fat table's).
objdump_view() {
  llvm-objdump-14 --macho --arch=all --dylibs-used --dylib-id --rpaths --universal-headers "$1" |
    sed "s#$1#FILE#g"
}
