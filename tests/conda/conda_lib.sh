# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the conda_*.sh scripts (sourced, not run).
#
# Environment (set by ctest): PKGTOOL, LIBPKG_PYTHON. TEST_KEEP=1 keeps
# the scratch directory. stage_prefix builds a prefix with a shared library,
# an executable linked to it with an RPATH inside the prefix, a script that
# names the prefix, a symlink, nested and empty directories.
# log/fail/pass/skip/case_begin/finish/make_scratch/require_tools come from
# the shared harness.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHECK=("$LIBPKG_PYTHON" "$HERE/conda_check.py")
unset LD_LIBRARY_PATH LD_PRELOAD
export SOURCE_DATE_EPOCH=1700000000
umask 022

make_scratch


# stage_prefix DIR: DIR is also the build prefix embedded in the files.
stage_prefix() {
  local p=$1 src=$SCRATCH/src
  mkdir -p "$p/lib" "$p/bin" "$p/include/nested/deep" "$p/share/empty" "$src"
  printf 'int foo_answer(void) { return 42; }\n' >"$src/foo.c"
  printf 'int foo_answer(void);\nint main(void) { return foo_answer() == 42 ? 0 : 1; }\n' \
    >"$src/main.c"
  (cd "$src" && gcc -O1 -shared -fPIC -Wl,-soname,libfoo.so.1 -o "$p/lib/libfoo.so.1" foo.c)
  ln -s libfoo.so.1 "$p/lib/libfoo.so"
  (cd "$src" && gcc -O1 -o "$p/bin/foo" main.c -L"$p/lib" -lfoo -Wl,-rpath,"$p/lib")
  "$p/bin/foo"
  printf '#!/bin/sh\nexec "%s/bin/foo" "$@"\n' "$p" >"$p/bin/run-foo"
  chmod 755 "$p/bin/run-foo"
  printf '#define FOO_ANSWER 42\n' >"$p/include/nested/deep/foo.h"
  printf 'caf\xc3\xa9 readme without the prefix\n' >"$p/include/README.txt"
  chmod 600 "$p/include/README.txt"
}
