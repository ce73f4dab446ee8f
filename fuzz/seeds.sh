#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# seeds.sh TARGET DIR BIN_DIR: writes the seed corpus of fuzz target TARGET
# into DIR. Used by the seed-replay tests (CMakeLists.txt) and by run.sh.
# Seeds come from a generator binary BIN_DIR/TARGET_seeds (built from the
# unit tests' image builders), a script make_TARGET_seeds.py, the committed
# corpus seeds/TARGET/ and the project's data files; ELF targets without
# their own seeds share elf_view's. Crashers found by run.sh are committed in
# crashers/TARGET/ once fixed and are part of the corpus from then on.
set -euo pipefail
name=$1 dir=$2 bin_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
python=${LIBPKG_PYTHON:-/usr/bin/python3}
mkdir -p "$dir"
found=0
if [[ -x "$bin_dir/${name}_seeds" ]]; then
  "$bin_dir/${name}_seeds" "$dir" >/dev/null
  found=1
elif [[ -f "$here/make_${name}_seeds.py" ]]; then
  "$python" "$here/make_${name}_seeds.py" "$dir"
  found=1
fi
if [[ -d "$here/seeds/$name" ]]; then
  cp "$here/seeds/$name"/* "$dir/"
  found=1
fi
case $name in
  policy_json) cp "$here"/../data/policy/*.json "$dir/"; found=1 ;;
  cuda_table_json) cp "$here"/../data/cuda/*.json "$dir/"; found=1 ;;
esac
if ((!found)); then
  "$bin_dir/elf_view_seeds" "$dir" >/dev/null
fi
shopt -s nullglob
crashers=("$here/crashers/$name"/*)
((${#crashers[@]} == 0)) || cp "${crashers[@]}" "$dir/"
