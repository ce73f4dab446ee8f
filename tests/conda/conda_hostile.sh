# SPDX-License-Identifier: BSD-3-Clause
# pkgtool conda extract refuses hostile packages (built with Python's
# tarfile/zipfile) with exit 2, nothing is created outside the target, and
# nothing partial is left at the target (the good members before the hostile
# one are not there either), so a retry into the same target works.
source "$(dirname "${BASH_SOURCE[0]}")/conda_lib.sh"

OUTSIDE=$SCRATCH/outside
mkdir -p "$OUTSIDE" "$SCRATCH/evil"
echo victim >"$OUTSIDE/victim"
check "build hostile packages" "${CHECK[@]}" hostile "$SCRATCH/evil" "$OUTSIDE"
for pkg in "$SCRATCH"/evil/*; do
  name=$(basename "$pkg")
  box=$SCRATCH/box-$name
  mkdir -p "$box"
  expect_status 2 "$name: extract refused" "$PKGTOOL" conda extract "$pkg" -d "$box/dest"
  if grep -q "^error: .*$name" "$SCRATCH/last.err"; then pass; else
    fail "$name: error does not name the package"
    cat "$SCRATCH/last.err" >&2
  fi
  [[ ! -e $box/dest ]] && pass \
    || fail "$name: left a partial target: $(cd "$box/dest" && find . | head -5)"
  extra=$(ls -A "$box" | grep -v '^dest$' || true)
  [[ -z $extra ]] && pass || fail "$name: created $extra next to the target"
  escaped=$(find "$SCRATCH" -name escaped -o -name through -o -name abs | grep -v "^$box/dest/" || true)
  [[ -z $escaped ]] && pass || fail "$name: wrote $escaped outside the target"
  [[ $(ls -A "$OUTSIDE") == victim && $(cat "$OUTSIDE/victim") == victim ]] \
    && pass || fail "$name: touched $OUTSIDE"
  [[ $(stat -c %h "$OUTSIDE/victim") == 1 ]] && pass \
    || fail "$name: hardlinked $OUTSIDE/victim"
done

# Hardlinks to an already extracted file inside the target are fine (Python's
# tarfile writes them for hardlinked inputs, e.g. cph create).
"$LIBPKG_PYTHON" - "$SCRATCH/good-hardlink-1-0.tar.bz2" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:bz2") as t:
    data = b"shared content\n"
    ti = tarfile.TarInfo("lib/a.txt"); ti.size = len(data); ti.mode = 0o644
    t.addfile(ti, io.BytesIO(data))
    hl = tarfile.TarInfo("lib/sub/b.txt"); hl.type = tarfile.LNKTYPE
    hl.linkname = "lib/a.txt"
    t.addfile(hl)
PY
check "extract a package with an inside hardlink" "$PKGTOOL" conda extract \
  "$SCRATCH/good-hardlink-1-0.tar.bz2" -d "$SCRATCH/good"
check "hardlink shares the inode" test "$SCRATCH/good/lib/a.txt" -ef "$SCRATCH/good/lib/sub/b.txt"
check "hardlink content" grep -q "shared content" "$SCRATCH/good/lib/sub/b.txt"

# A retry into the target of a refused extraction starts clean.
check "retry into a refused target" "$PKGTOOL" conda extract \
  "$SCRATCH/good-hardlink-1-0.tar.bz2" -d "$SCRATCH/box-evil-conda-0.conda/dest"
# An existing non-empty target is refused (nothing is merged into it).
expect_status 2 "extract into a non-empty target refused" "$PKGTOOL" conda \
  extract "$SCRATCH/good-hardlink-1-0.tar.bz2" -d "$SCRATCH/good"

# Components that are not compressed tars: all zeros (libarchive would read
# them as an empty tar) and a .tar.bz2 that is not bzip2. Both are refused
# by extract and by verify, naming the package.
"$LIBPKG_PYTHON" - "$SCRATCH/zeros-1-0.conda" "$SCRATCH/zeros-2-0.tar.bz2" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
    z.writestr("pkg-zeros-1-0.tar.zst", bytes(4096))
    z.writestr("info-zeros-1-0.tar.zst", bytes(4096))
open(sys.argv[2], "wb").write(bytes(10240))
PY
for z in zeros-1-0.conda zeros-2-0.tar.bz2; do
  expect_status 2 "$z: verify refuses an all-zero component" "$PKGTOOL" conda \
    verify "$SCRATCH/$z"
  check "$z: verify names the package" grep -q "^error: .*$z" "$SCRATCH/last.err"
  expect_status 2 "$z: extract refuses an all-zero component" "$PKGTOOL" conda \
    extract "$SCRATCH/$z" -d "$SCRATCH/zeros-out"
  check "$z: nothing extracted" test ! -e "$SCRATCH/zeros-out"
done

finish
