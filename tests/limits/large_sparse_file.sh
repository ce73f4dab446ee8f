#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Files larger than 4 GiB: a shared library extended with a 4.4 GiB hole is
# edited so its tables must grow; the new segment then lies past the 4 GiB
# mark (64-bit offsets everywhere), the file stays sparse (only data extents
# are copied), and the library still loads and passes eu-elflint.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
require_tools gcc readelf eu-elflint du truncate
make_scratch
cd "$SCRATCH"

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
expect_eq "the fixture runs" "answer 42" "$(./main)"

truncate -s 4700000000 libans.so
before=$(du -k libans.so | cut -f1)
long_rpath="/opt/a/path/long/enough/that/it/cannot/fit/in/the/old/dynstr/$(printf 'x%.0s' {1..80})"
"$PATCHELF_OURS" --set-rpath "$long_rpath" libans.so

size=$(stat -c %s libans.so)
check "the file grew past the hole (size $size)" test "$size" -gt 4700000000
after=$(du -k libans.so | cut -f1)
check "the file stays sparse: ${before} KiB -> ${after} KiB on disk" test "$after" -lt $((before + 1024))

# The appended PT_LOAD must sit beyond 4 GiB.
last_load_off=$(readelf -lW libans.so | awk '$1=="LOAD"{o=$2} END{print o}')
check "the last PT_LOAD offset $last_load_off lies past 4 GiB" test $((last_load_off)) -gt $((0xffffffff))
expect_eq "readelf sees the new RUNPATH" "$long_rpath" \
  "$(dynamic_values libans.so RUNPATH)"
expect_eq "pkgtool inspect sees the new RUNPATH" "$long_rpath" \
  "$("$PKGTOOL" inspect --json libans.so | "$LIBPKG_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["runpath"])')"
expect_eq "the edited library still loads" "answer 42" "$(./main)"
check "eu-elflint accepts the edited file" eu-elflint --gnu-ld libans.so
log "4.7 GB sparse library edited past 4 GiB, ${after} KiB on disk"
finish
