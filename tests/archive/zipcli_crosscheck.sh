# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool zip list/test/extract` against independent tools: archives made by
# Python's zipfile (mixed methods and modes, symlinks, ZIP64 extra fields,
# 70 000 entries, a data-descriptor archive written to a pipe), Info-ZIP
# `zip -y` and `bsdtar --format zip`. The listing must match zipfile's view,
# `zip test` must pass, and extraction must give the same tree, modes and
# symlinks as `unzip`.
source "$(dirname "$0")/zipcli_lib.sh"
require_tools unzip zip bsdtar

A=$SCRATCH/archives
"${TOOL[@]}" make "$A"
"${TOOL[@]}" stream | cat >"$A/stream.zip"
check "the streamed archive uses data descriptors" "$LIBPKG_PYTHON" -c '
import sys, zipfile
assert all(i.flag_bits & 8 for i in zipfile.ZipFile(sys.argv[1]).infolist())' "$A/stream.zip"

# A tree with symlinks, modes and an empty directory for zip -y and bsdtar.
T=$SCRATCH/tree
mkdir -p "$T/bin" "$T/lib/empty" "$T/share/doc"
printf 'binary\n' >"$T/bin/tool"
chmod 755 "$T/bin/tool"
head -c 200000 /dev/urandom >"$T/lib/libx.so.1.2"
ln -s libx.so.1.2 "$T/lib/libx.so.1"
ln -s ../lib "$T/share/lib"
printf 'doc\n' >"$T/share/doc/README"
chmod 600 "$T/share/doc/README"
(cd "$T" && zip -qry "$A/infozip.zip" bin lib share)
(cd "$T" && bsdtar --format zip -cf "$A/bsdtar.zip" bin lib share)

for zip in "$A"/*.zip; do
  name=$(basename "$zip" .zip)
  log "== $name"
  "$PKGTOOL" zip list --json "$zip" >"$SCRATCH/$name.json"
  check "$name: list --json matches zipfile" "${TOOL[@]}" compare "$zip" "$SCRATCH/$name.json"
  expect_status 0 "$name: zip test" "$PKGTOOL" zip test "$zip"
  expect_in "$SCRATCH/last.out" "OK (" "$name: zip test output"
  check "$name: unzip -t agrees" unzip -tqq "$zip"
  "$PKGTOOL" zip list "$zip" >/dev/null

  expect_status 0 "$name: extract" "$PKGTOOL" zip extract "$zip" -d "$SCRATCH/ours-$name" -j 2
  "${TOOL[@]}" tree "$SCRATCH/ours-$name" >"$SCRATCH/ours-$name.tree"
  # 70 000 files: the count below is enough, and saves a minute.
  [[ $name == many ]] && continue
  mkdir "$SCRATCH/ref-$name"
  unzip -qq "$zip" -d "$SCRATCH/ref-$name"
  "${TOOL[@]}" tree "$SCRATCH/ref-$name" >"$SCRATCH/ref-$name.tree"
  if diff -u "$SCRATCH/ref-$name.tree" "$SCRATCH/ours-$name.tree" >"$SCRATCH/$name.diff"; then
    pass
  else
    fail "$name: extracted tree differs from unzip's"
    head -40 "$SCRATCH/$name.diff" >&2
  fi
done

# The tree from zip -y round-trips to the original (symlinks kept).
"${TOOL[@]}" tree "$T" >"$SCRATCH/orig.tree"
check "zip -y archive extracts to the original tree" diff -u "$SCRATCH/orig.tree" "$SCRATCH/ours-infozip.tree"
expect_in "$SCRATCH/ours-mixed.tree" "F pkg/suid 755 4" "setuid bit dropped"
expect_in "$SCRATCH/ours-mixed.tree" "L pkg/link -> __init__.py" "symlink from external_attr"
expect_in "$SCRATCH/ours-mixed.tree" "D pkg/ro 555" "directory mode applied last"
check "70000 entries extracted" test "$(grep -c '^F' "$SCRATCH/ours-many.tree")" -eq 70000

# -j 1 gives the same tree as -j 2.
expect_status 0 "mixed: extract -j 1" "$PKGTOOL" zip extract "$A/mixed.zip" -d "$SCRATCH/j1" -j 1
"${TOOL[@]}" tree "$SCRATCH/j1" >"$SCRATCH/j1.tree"
check "-j 1 and -j 2 agree" diff -u "$SCRATCH/ours-mixed.tree" "$SCRATCH/j1.tree"
finish
