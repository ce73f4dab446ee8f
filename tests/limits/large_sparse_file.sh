#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Files larger than 4 GiB: a shared library extended with a 4.4 GiB hole is
# edited so its tables must grow; the new segment then lies past the 4 GiB
# mark (64-bit offsets everywhere), the file stays sparse (only data extents
# are copied), and the library still loads and passes eu-elflint.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }

cat > lib.c <<'C'
int answer(void) { return 42; }
C
cat > main.c <<'C'
#include <stdio.h>
int answer(void);
int main(void) { printf("answer %d\n", answer()); return 0; }
C
gcc -shared -fPIC -o libans.so lib.c -Wl,-soname,libans.so
gcc -o main main.c -L. -lans -Wl,-rpath,'$ORIGIN'
[[ "$(./main)" == "answer 42" ]] || fail "fixture does not run"

truncate -s 4700000000 libans.so
before=$(du -k libans.so | cut -f1)
long_rpath="/opt/a/path/long/enough/that/it/cannot/fit/in/the/old/dynstr/$(printf 'x%.0s' {1..80})"
"$PATCHELF_OURS" --set-rpath "$long_rpath" libans.so

size=$(stat -c %s libans.so)
(( size > 4700000000 )) || fail "expected growth past the hole, size $size"
after=$(du -k libans.so | cut -f1)
(( after < before + 1024 )) || fail "file lost its sparseness: ${before} KiB -> ${after} KiB on disk"

# The appended PT_LOAD must sit beyond 4 GiB.
last_load_off=$(readelf -lW libans.so | awk '$1=="LOAD"{o=$2} END{print o}')
(( last_load_off > 0xffffffff )) || fail "last PT_LOAD offset $last_load_off is below 4 GiB"
[[ "$(readelf -d libans.so | sed -n 's/.*Library runpath: \[\(.*\)\]/\1/p')" == "$long_rpath" ]] ||
  fail "readelf does not see the new RUNPATH"
[[ "$("$PKGTOOL" inspect --json libans.so | "$LIBPKG_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["runpath"])')" == "$long_rpath" ]] ||
  fail "pkgtool inspect does not see the new RUNPATH"
[[ "$(./main)" == "answer 42" ]] || fail "the edited library no longer loads"
eu-elflint --gnu-ld libans.so >/dev/null || fail "eu-elflint rejects the edited file"
echo "PASS: 4.7 GB sparse library edited past 4 GiB, ${after} KiB on disk"
