# pkgtool conda extract refuses hostile packages (built with Python's
# tarfile/zipfile) with exit 2, and nothing is created outside the target.
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
  if grep -q "^error: .*$name" "$SCRATCH/last.err"; then CHECKS=$((CHECKS + 1)); else
    fail "$name: error does not name the package"
    cat "$SCRATCH/last.err" >&2
  fi
  extra=$(ls -A "$box" | grep -v '^dest$' || true)
  [[ -z $extra ]] && CHECKS=$((CHECKS + 1)) || fail "$name: created $extra next to the target"
  escaped=$(find "$SCRATCH" -name escaped -o -name through -o -name abs | grep -v "^$box/dest/" || true)
  [[ -z $escaped ]] && CHECKS=$((CHECKS + 1)) || fail "$name: wrote $escaped outside the target"
  [[ $(ls -A "$OUTSIDE") == victim && $(cat "$OUTSIDE/victim") == victim ]] \
    && CHECKS=$((CHECKS + 1)) || fail "$name: touched $OUTSIDE"
  [[ $(stat -c %h "$OUTSIDE/victim") == 1 ]] && CHECKS=$((CHECKS + 1)) \
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

finish
