#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build tree into a temporary prefix, then configures, builds and
# runs tests/package/consumer against it with find_package(libpkg).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
require_tools cmake ninja c++ pkg-config

: "${LIBPKG_BINARY_DIR:?}" "${LIBPKG_SOURCE_DIR:?}"
make_scratch
tmp=$SCRATCH
prefix=$tmp/prefix

cmake --install "$LIBPKG_BINARY_DIR" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; abort "cmake --install"; }

# The package config and the public headers are installed; the private
# headers under libpkg/src are not.
config=$(find "$prefix" -name libpkgConfig.cmake -print -quit)
[[ -n $config ]] || abort "no libpkgConfig.cmake under $prefix"
[[ -f $prefix/include/libpkg/elf/view.hpp ]] || abort "public headers not installed"
[[ ! -e $prefix/include/libpkg/elf/reader.hpp ]] || abort "private reader.hpp installed"

# The patchelf entry point is a symlink to pkgtool and answers --version.
[[ -L $prefix/bin/patchelf ]] || abort "bin/patchelf is not a symlink"
[[ $(readlink "$prefix/bin/patchelf") == pkgtool ]] ||
  abort "bin/patchelf points to $(readlink "$prefix/bin/patchelf")"
version=$("$prefix/bin/patchelf" --version) || abort "patchelf --version exited $?"
[[ $version == *patchelf* ]] || abort "unexpected version line: $version"

# Configure against the prefix only: CMAKE_PREFIX_PATH, no source tree.
cmake -S "$LIBPKG_SOURCE_DIR/tests/package/consumer" -B "$tmp/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; abort "configuring the consumer"; }
grep -q "libpkg_DIR:PATH=$prefix" "$tmp/build/CMakeCache.txt" ||
  abort "libpkg was not found in the temporary prefix"
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; abort "building the consumer"; }

out=$("$tmp/build/app" /bin/ls) || abort "app /bin/ls exited $?"
echo "$out"
grep -q "^/bin/ls: libc.so.6$" <<<"$out" || abort "libc.so.6 not among the needed libraries"

# The same program built without CMake, through the installed libpkg.pc.
pc_dir=$(dirname "$(find "$prefix" -name libpkg.pc -print -quit)")
[[ -f $pc_dir/libpkg.pc ]] || abort "no libpkg.pc under $prefix"
pkg_flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs libpkg) ||
  abort "pkg-config libpkg"
# The .pc finds its prefix relative to itself (${pcfiledir}), so the -I
# directory is the temporary prefix's include directory.
inc=$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=includedir libpkg)
[[ $(realpath "$inc") == "$(realpath "$prefix/include")" ]] ||
  abort "pkg-config includedir $inc is not $prefix/include"
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 -o "$tmp/app-pc" "$LIBPKG_SOURCE_DIR/tests/package/consumer/main.cpp" $pkg_flags \
  2>"$tmp/pc-build.log" || { cat "$tmp/pc-build.log"; abort "linking through pkg-config"; }
out_pc=$("$tmp/app-pc" /bin/ls) || abort "app-pc /bin/ls exited $?"
[[ $out_pc == "$out" ]] || abort "the pkg-config build prints something else: $out_pc"

# The license is installed with the library.
[[ -f $prefix/share/doc/libpkg/LICENSE ]] || abort "LICENSE not installed"

# Errors come back as libpkg::Error with the documented exit status.
set +e
"$tmp/build/app" "$tmp/build/CMakeCache.txt" 2>"$tmp/err.txt"
status=$?
set -e
[[ $status == 2 ]] || abort "a non-ELF input exited $status, expected 2"
grep -q "CMakeCache.txt" "$tmp/err.txt" || abort "error message does not name the file"
pass
finish
