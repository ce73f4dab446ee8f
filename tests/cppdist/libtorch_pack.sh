#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libtorch-style zips: layout, names, -latest copies, debug CRC names,
# determinism, and that the unzipped distribution builds and runs a client.
source "$(dirname "$0")/../lib/harness.sh"
require_tools gcc g++ unzip bsdtar objcopy
make_scratch
cd "$SCRATCH"

# --- fixture: an install tree like libtorch's (lib/include/share, a symlink
# chain for the library, an empty bin/ that must survive zipping).
mkdir -p tree/lib tree/include/mini tree/share/cmake/Mini tree/bin
cat >tree/include/mini/mini.h <<'C'
#include <string>
namespace mini { std::string greet(const std::string& who); }
C
cat >mini.cpp <<'C'
#include "mini/mini.h"
namespace mini { std::string greet(const std::string& who) { return "hello " + who; } }
C
g++ -shared -fPIC -g -Itree/include -Wl,-soname,libmini.so.1 -o tree/lib/libmini.so.1.0 mini.cpp
ln -s libmini.so.1.0 tree/lib/libmini.so.1
ln -s libmini.so.1 tree/lib/libmini.so
echo 'set(MINI_FOUND TRUE)' >tree/share/cmake/Mini/MiniConfig.cmake
HASH=0123456789abcdef0123456789abcdef01234567
export SOURCE_DATE_EPOCH=1700000000

case_begin "pack"
expect_ok "pack" "$PKGTOOL" libtorch pack tree --version 2.5.0+cu124 --build-hash $HASH -o out1 -j1
ZIP=out1/libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124.zip
LATEST=out1/libtorch-cxx11-abi-shared-with-deps-latest.zip
[[ -f $ZIP ]] && pass || fail "no $ZIP"
expect_same_file "-latest is a byte copy" "$ZIP" "$LATEST"
expect_ok "unzip -t" unzip -tq "$ZIP"
expect_ok "bsdtar -t" bsdtar -tf "$ZIP"
expect_ok "verify" "$PKGTOOL" libtorch verify "$ZIP"

case_begin "layout read back by Python's zipfile"
"$LIBPKG_PYTHON" - "$ZIP" <<'PY' >layout.txt
import stat, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None
    for i in z.infolist():
        mode = i.external_attr >> 16
        kind = "l" if stat.S_ISLNK(mode) else "d" if i.is_dir() else "f"
        extra = z.read(i).decode() if kind == "l" or i.filename.endswith(("build-hash", "build-version")) else ""
        print(kind, oct(mode & 0o777), i.filename, extra.strip(), i.date_time)
PY
grep -q "^d .* libtorch/bin/ " layout.txt && pass || fail "empty bin/ lost: $(cat layout.txt)"
grep -q "^f 0o644 libtorch/build-version 2.5.0+cu124 " layout.txt && pass || fail "build-version: $(grep build-version layout.txt)"
grep -q "^f 0o644 libtorch/build-hash $HASH " layout.txt && pass || fail "build-hash: $(grep build-hash layout.txt)"
grep -q "^l .* libtorch/lib/libmini.so libmini.so.1 " layout.txt && pass || fail "symlink kept: $(grep 'libmini.so ' layout.txt)"
grep -q "^f 0o755 libtorch/lib/libmini.so.1.0 " layout.txt && pass || fail "mode kept: $(grep so.1.0 layout.txt)"
# SOURCE_DATE_EPOCH 1700000000 = 2023-11-14 22:13:20 UTC (DOS time: even seconds)
[[ $(grep -c "(2023, 11, 14, 22, 13, 20)" layout.txt) == $(wc -l <layout.txt) ]] && pass || fail "timestamps: $(head -3 layout.txt)"
[[ $(awk '{print $3}' layout.txt | head -1) == libtorch/ ]] && pass || fail "root dir entry first"

case_begin "deterministic for any thread count"
expect_ok "pack -j2" "$PKGTOOL" libtorch pack tree --version 2.5.0+cu124 --build-hash $HASH -o out2 -j2 --no-latest
expect_same_file "-j1 vs -j2" "$ZIP" "out2/${ZIP##*/}"
[[ ! -e out2/${LATEST##*/} ]] && pass || fail "--no-latest wrote a latest copy"

case_begin "-latest copies the bytes written, not what the zip's path holds"
# The zip's name is a symlink to /dev/null: the writer writes into the
# device (as every output does), and the -latest copy must still be the
# whole archive, copied from the writer's own descriptor; reopening the
# path would read the device, not the zip.
mkdir out3 && ln -s /dev/null "out3/${ZIP##*/}"
expect_ok "pack into /dev/null" "$PKGTOOL" libtorch pack tree --version 2.5.0+cu124 --build-hash $HASH -o out3 -j1
[[ -L out3/${ZIP##*/} && $(readlink "out3/${ZIP##*/}") == /dev/null ]] && pass || fail "the symlink to /dev/null was replaced"
[[ -c /dev/null ]] && pass || fail "/dev/null is no longer a device"
expect_same_file "-latest is the archive written" "$ZIP" "out3/${LATEST##*/}"
expect_ok "-latest unzip -t" unzip -tq "out3/${LATEST##*/}"

case_begin "unzipped distribution builds and runs a client"
mkdir unz && (cd unz && unzip -q "../$ZIP")
cat >client.cpp <<'C'
#include <mini/mini.h>
#include <iostream>
int main() { std::cout << mini::greet("libtorch") << "\n"; }
C
expect_ok "link client" g++ -Iunz/libtorch/include client.cpp -Lunz/libtorch/lib -lmini -Wl,-rpath,"$SCRATCH/unz/libtorch/lib" -o client
expect_eq "client output" "hello libtorch" "$(./client)"
[[ -d unz/libtorch/bin ]] && pass || fail "bin/ missing after unzip"

case_begin "names"
expect_eq "pre-cxx11 static" "libtorch-static-without-deps-1.0.0.zip" \
  "$("$PKGTOOL" libtorch name --version 1.0.0 --variant static-without-deps --pre-cxx11-abi | head -1)"
expect_eq "url escape" "libtorch-cxx11-abi-shared-with-deps-2.5.0%2Bcu124.zip" \
  "$("$PKGTOOL" libtorch name --version 2.5.0+cu124 --url | head -1)"
expect_eq "macos x86_64 latest copies" "libtorch-macos-x86_64-2.5.0.zip libtorch-macos-x86_64-latest.zip libtorch-macos-latest.zip" \
  "$("$PKGTOOL" libtorch name --version 2.5.0 --macos --arch x86_64 | tr '\n' ' ' | sed 's/ $//')"
# Debug split as the old scripts did it; our CRC must be objcopy's.
cp tree/lib/libmini.so.1.0 libmini.so
objcopy --only-keep-debug libmini.so libmini.so.dbg
objcopy --strip-debug libmini.so
objcopy --add-gnu-debuglink=libmini.so.dbg libmini.so
CRC=$(objcopy --dump-section .gnu_debuglink=/dev/stdout libmini.so | tail -c4 | od -t x4 -An | xargs echo)
expect_eq "debug zip name" "debug-libtorch-cxx11-abi-shared-with-deps-2.5.0-$CRC.zip" \
  "$("$PKGTOOL" libtorch name --version 2.5.0 --debug-from libmini.so | sed -n 3p)"
expect_exit "no debuglink" 2 "no .gnu_debuglink" "$PKGTOOL" libtorch name --version 2.5.0 --debug-from tree/lib/libmini.so.1.0

case_begin "bad trees and options"
mkdir -p bad1/lib bad1/include && ln -s /usr/lib/x86_64-linux-gnu/libc.so.6 bad1/lib/libc.so.6
expect_exit "absolute symlink" 2 "libc.so.6: symlink to absolute path" \
  "$PKGTOOL" libtorch pack bad1 --version 1.0 --build-hash $HASH -o outbad
mkdir -p bad2/lib bad2/include && ln -s ../../../etc/passwd bad2/lib/x
expect_exit "escaping symlink" 2 "points outside" "$PKGTOOL" libtorch pack bad2 --version 1.0 --build-hash $HASH -o outbad
mkdir -p bad3/lib bad3/include bad3/junk
expect_exit "stray top-level dir" 2 "junk: unexpected entry" "$PKGTOOL" libtorch pack bad3 --version 1.0 --build-hash $HASH -o outbad
expect_exit "--skip-other" 0 "skipped .*bad3/junk" "$PKGTOOL" libtorch pack bad3 --skip-other --version 1.0 --build-hash $HASH -o outskip
mkdir -p bad4/lib
expect_exit "no include/" 2 "no include/ directory" "$PKGTOOL" libtorch pack bad4 --version 1.0 --build-hash $HASH -o outbad
expect_exit "bad variant" 2 "unknown variant 'shared'" "$PKGTOOL" libtorch pack tree --version 1.0 --variant shared --build-hash $HASH -o outbad
expect_exit "dash in version" 2 "contains '-'" "$PKGTOOL" libtorch pack tree --version 1.0-rc1 --build-hash $HASH -o outbad
[[ ! -e outbad || -z $(ls -A outbad) ]] && pass || fail "failed packs left files: $(ls -A outbad)"

case_begin "verify finds layout problems"
# A zip without build-hash and with a build-version that disagrees with its name.
mkdir -p badzip/libtorch/lib badzip/libtorch/include badzip/libtorch/share badzip/libtorch/bin
echo x >badzip/libtorch/lib/libx.so
echo 9.9.9 >badzip/libtorch/build-version
(cd badzip && zip -qr ../libtorch-shared-with-deps-1.0.0.zip libtorch)
expect_exit "missing build-hash" 1 "libtorch/build-hash: missing" "$PKGTOOL" libtorch verify libtorch-shared-with-deps-1.0.0.zip
expect_exit "version mismatch" 1 "says '9.9.9' but the file name says '1.0.0'" "$PKGTOOL" libtorch verify libtorch-shared-with-deps-1.0.0.zip
expect_exit "json" 1 '"ok": false' "$PKGTOOL" libtorch verify --json libtorch-shared-with-deps-1.0.0.zip

finish
