#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool symbols` is a drop-in for `nm -D` (and `nm -DC` with --demangle):
# same order, type letters and @/@@ version suffixes, on a sample of the
# machine's libraries and on cross-compiled (32-bit, big-endian) fixtures.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
# The header promises these targets: a missing cross compiler (installed by
# scripts/setup.sh) is a failure, not a silently dropped target.
require_tools nm i686-linux-gnu-g++ s390x-linux-gnu-g++ aarch64-linux-gnu-g++
make_scratch
tmp=$SCRATCH

compare() {  # compare FILE [nm flags...]
  local f=$1; shift
  if diff <(LC_ALL=C nm -D "$@" "$f" 2>/dev/null) <("$PKGTOOL" symbols "$@" "$f") > "$tmp/diff"; then
    pass
  else
    fail "$f ($*): pkgtool symbols differs from nm -D:"
    head -5 "$tmp/diff" >&2
  fi
}

mapfile -t libs < <(find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so.*' -type f | sort | awk 'NR % 25 == 1')
for f in "${libs[@]}" /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6; do
  [[ -f "$f" ]] || continue
  compare "$f"
done
compare /usr/lib/x86_64-linux-gnu/libstdc++.so.6 --demangle
compare /usr/lib/x86_64-linux-gnu/libstdc++.so.6 --defined-only

cat > "$tmp/lib.cpp" <<'C'
#include <list>
#include <string>
namespace torch { std::string name(const std::list<int>& l) { return std::to_string(l.size()); } }
extern "C" int plain(int x) { return x + 1; }
int counter = 3;
C
for cc in i686-linux-gnu-g++ s390x-linux-gnu-g++ aarch64-linux-gnu-g++; do
  out="$tmp/lib-${cc%%-*}.so"
  "$cc" -shared -fPIC -O1 -o "$out" "$tmp/lib.cpp"
  compare "$out"
  compare "$out" --demangle
done

log "checked ${#libs[@]} system libraries and the cross fixtures"
finish
