# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the zip writer integration scripts (sourced, not run).
#
# Environment (set by ctest): WRITER_PACK_TOOL (the test driver built from
# writer_pack_tool.cpp), LIBPKG_PYTHON. TEST_KEEP=1 keeps the scratch
# directory.
# log/fail/pass/case_begin/finish/make_scratch/require_tools and the
# expect_* checks come from the shared harness.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACK=${WRITER_PACK_TOOL:-}
CHECK=("$LIBPKG_PYTHON" "$HERE/writer_check.py")

[[ -x $PACK ]] || missing "WRITER_PACK_TOOL not built"
require_tools unzip bsdtar

make_scratch

# crosscheck ZIP DIR: Python zipfile (contents, modes, symlinks vs DIR),
# `unzip -t` and `bsdtar -tf` all accept ZIP.
crosscheck() {
  local zip=$1 dir=$2
  expect_ok "zipfile: $zip matches $dir" "${CHECK[@]}" tree "$zip" "$dir"
  expect_ok "unzip -t $zip" unzip -tqq "$zip"
  expect_ok "bsdtar -tf $zip" bsdtar -tf "$zip"
  # bsdtar must also extract it to the same bytes.
  local out=$SCRATCH/bsdtar-out
  rm -rf "$out" && mkdir -p "$out"
  expect_ok "bsdtar -xf $zip" bsdtar -xf "$zip" -C "$out"
  expect_ok "bsdtar extraction of $zip equals $dir" diff -r --no-dereference "$dir" "$out"
}
