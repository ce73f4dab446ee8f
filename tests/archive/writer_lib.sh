# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the zip writer integration scripts (sourced, not run).
#
# Environment (set by ctest): WRITER_PACK_TOOL (the test driver built from
# writer_pack_tool.cpp), LIBPKG_PYTHON. TEST_KEEP=1 keeps the scratch
# directory.
# log/fail/pass/skip/case_begin/finish/make_scratch/require_tools come from
# the shared harness.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACK=${WRITER_PACK_TOOL:-}
CHECK=("$LIBPKG_PYTHON" "$HERE/writer_check.py")

# check DESCRIPTION CMD...: runs CMD, a failure (output shown) is a FAIL.
check() {
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then pass; else fail "$what"; printf '%s\n' "$out" | tail -20 >&2; fi
}

[[ -x $PACK ]] || skip "WRITER_PACK_TOOL not built"
for t in unzip bsdtar; do
  command -v $t >/dev/null || skip "$t not installed"
done

make_scratch

# crosscheck ZIP DIR: Python zipfile (contents, modes, symlinks vs DIR),
# `unzip -t` and `bsdtar -tf` all accept ZIP.
crosscheck() {
  local zip=$1 dir=$2
  check "zipfile: $zip matches $dir" "${CHECK[@]}" tree "$zip" "$dir"
  check "unzip -t $zip" unzip -tqq "$zip"
  check "bsdtar -tf $zip" bsdtar -tf "$zip"
  # bsdtar must also extract it to the same bytes.
  local out=$SCRATCH/bsdtar-out
  rm -rf "$out" && mkdir -p "$out"
  check "bsdtar -xf $zip" bsdtar -xf "$zip" -C "$out"
  check "bsdtar extraction of $zip equals $dir" diff -r --no-dereference "$dir" "$out"
}
