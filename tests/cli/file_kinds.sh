#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Inputs and outputs that are not regular files, and write protection
# (issue 21):
#  - a FIFO named like the input is refused at once (exit 2, "error: FILE:
#    not a regular file (a FIFO)") by inspect, patchelf, wheel verify and
#    conda verify; every call runs under `timeout` so a reader that blocks in
#    open(2) fails the test instead of hanging it;
#  - an output path that is an existing character device or FIFO is written
#    into, never replaced by a regular file: /dev/null stays a character
#    device after `patchelf --output /dev/null`, `wheel update -o /dev/null`
#    and `conda pack -o` (a symlink to /dev/null at the output's name) and
#    the conda driver (FIFO + /dev/null outputs); a FIFO with a reader
#    receives the bytes; a FIFO without one is refused;
#  - a file the caller cannot write is not replaced by patchelf (as a
#    non-root user in a world-writable directory: "Permission denied",
#    exit 2, file untouched, owner kept), and a growing edit of a hard-linked
#    file keeps the link (both names see the edit, one inode); with
#    --in-place-atomic the link is broken and a note says so;
#  - probes never block or swallow errors: `patchelf --shrink-rpath` passes a
#    FIFO named like a NEEDED library in an RPATH directory, and `check` of
#    a tree holding a library nobody may read fails naming it (exit 2,
#    "Permission denied") instead of passing it over as "not ELF".
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
require_tools gcc timeout mkfifo setpriv
make_scratch
tmp=$SCRATCH
cd "$tmp"

# refused WHAT FILE CMD...: CMD must exit 2 within 10 s with "error: FILE: ..."
# mentioning "not a regular file".
refused() {
  local what=$1 file=$2 rc=0
  shift 2
  timeout 10 "$@" >out 2>err </dev/null || rc=$?
  if ((rc == 124)); then
    fail "$what: hung (killed after 10 s)"
    return
  fi
  expect_eq "$what: exit status" 2 "$rc"
  if grep -q "^error: $file: .*not a regular file" err; then pass; else
    fail "$what: stderr [$(head -c 300 err)]"
  fi
}

P=$PKGTOOL
printf 'int main(void) { return 0; }\n' >prog.c
gcc -o prog prog.c

# A tiny wheel and a conda package to have real inputs next to the FIFOs.
mkdir -p tree/demo tree/demo-1.0.dist-info
printf 'x = 1\n' >tree/demo/__init__.py
printf 'Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n' >tree/demo-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n' \
  >tree/demo-1.0.dist-info/WHEEL
mkdir whl
"$P" wheel pack tree -d whl >/dev/null
W=whl/demo-1.0-py3-none-any.whl
[[ -f $W ]] || abort "wheel pack did not produce $W"

echo "--- FIFO inputs"
mkfifo in.fifo demo-1.0-py3-none-any.whl pkg-1.0-0.conda
refused "inspect FIFO" in.fifo "$P" inspect in.fifo
refused "patchelf --print-needed FIFO" in.fifo "$P" patchelf --print-needed in.fifo
refused "patchelf --set-rpath FIFO" in.fifo "$P" patchelf --set-rpath /x in.fifo
refused "ldd FIFO" in.fifo "$P" ldd in.fifo
refused "wheel verify FIFO" demo-1.0-py3-none-any.whl "$P" wheel verify demo-1.0-py3-none-any.whl
refused "conda verify FIFO" pkg-1.0-0.conda "$P" conda verify pkg-1.0-0.conda
refused "conda extract FIFO" pkg-1.0-0.conda "$P" conda extract pkg-1.0-0.conda -d x1
mkfifo pkg-1.0-0.tar.bz2
refused "conda verify .tar.bz2 FIFO" pkg-1.0-0.tar.bz2 "$P" conda verify pkg-1.0-0.tar.bz2
refused "conda extract .tar.bz2 FIFO" pkg-1.0-0.tar.bz2 "$P" conda extract pkg-1.0-0.tar.bz2 -d x2
[[ ! -e x1 && ! -e x2 ]] && pass || fail "a refused extract left its target directory"
[[ -p in.fifo ]] && pass || fail "the input FIFO was replaced"
# --shrink-rpath looks for each NEEDED in every RPATH directory: a FIFO named
# like one (libc.so.6) is no library there, and opening it must not block.
mkdir fifodir
mkfifo fifodir/libc.so.6
cp prog shrink
"$P" patchelf --set-rpath "$PWD/fifodir" shrink
rc=0
timeout 10 "$P" patchelf --shrink-rpath shrink 2>err || rc=$?
if ((rc == 124)); then fail "patchelf --shrink-rpath: hung on a FIFO in the RPATH"; else
  expect_eq "patchelf --shrink-rpath past a FIFO: exit status" 0 "$rc"
  expect_eq "patchelf --shrink-rpath drops the FIFO's directory" "" "$("$P" patchelf --print-rpath shrink)"
fi

echo "--- outputs that are devices or FIFOs"
dev_null_intact() {
  if [[ -c /dev/null ]] && [[ $(stat -c '%t:%T' /dev/null) == "1:3" ]]; then pass; else
    fail "$1: /dev/null is no longer the null character device: $(ls -l /dev/null)"
  fi
}
timeout 10 "$P" patchelf --set-rpath /x --output /dev/null prog && pass || fail "patchelf --output /dev/null failed"
dev_null_intact "patchelf --output /dev/null"
timeout 10 "$P" wheel update "$W" -o /dev/null --set demo/__init__.py=prog.c >/dev/null &&
  pass || fail "wheel update -o /dev/null failed"
dev_null_intact "wheel update -o /dev/null"
mkdir -p prefix/lib condaout
cp prog prefix/lib/
ln -s /dev/null condaout/pkg-1.0-0.conda
timeout 30 "$P" conda pack prefix --name pkg --version 1.0 -o condaout >/dev/null &&
  pass || fail "conda pack into a symlink to /dev/null failed"
dev_null_intact "conda pack -o (symlink to /dev/null)"
[[ -L condaout/pkg-1.0-0.conda ]] && pass || fail "conda pack replaced the symlink to /dev/null"

# A driver (drivers/conda) writing its two packages: the .conda into a FIFO
# with a reader, the .tar.bz2 into a symlink to /dev/null.
DRIVER=${LIBPKG_BINARY_DIR:?}/drivers/conda/conda
mkdir -p drvout
mkfifo drvout/demo-1.0-py3.11_cpu_0.conda
ln -s /dev/null drvout/demo-1.0-py3.11_cpu_0.tar.bz2
timeout 30 cat drvout/demo-1.0-py3.11_cpu_0.conda >driver.streamed &
reader=$!
sleep 0.2
timeout 60 "$DRIVER" --no-env --prefix prefix --name demo --version 1.0 -o drvout --no-check \
  --build-env "conda 3.11 cpu" >/dev/null && pass || fail "the conda driver failed on FIFO/device outputs"
wait "$reader" || true
"${LIBPKG_PYTHON:-python3}" -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); sys.exit("metadata.json" not in n)' \
  driver.streamed && pass || fail "the .conda the driver streamed through the FIFO is not a package"
[[ -p drvout/demo-1.0-py3.11_cpu_0.conda ]] && pass || fail "the driver replaced its output FIFO"
[[ -L drvout/demo-1.0-py3.11_cpu_0.tar.bz2 ]] && pass || fail "the driver replaced the symlink to /dev/null"
dev_null_intact "conda driver output"

mkfifo out.fifo
# A FIFO with a reader gets the edited file as a stream.
timeout 10 cat out.fifo >streamed &
reader=$!
sleep 0.2
timeout 10 "$P" patchelf --set-rpath /streamed --output out.fifo prog && pass || fail "patchelf --output FIFO failed"
wait "$reader" || true
expect_eq "FIFO output: RUNPATH of the streamed bytes" "/streamed" "$("$P" patchelf --print-rpath streamed)"
[[ -p out.fifo ]] && pass || fail "the output FIFO was replaced by $(stat -c %F out.fifo)"
timeout 10 cat out.fifo >wheel.streamed &
reader=$!
sleep 0.2
timeout 10 "$P" wheel update "$W" -o out.fifo --set demo/__init__.py=prog.c >/dev/null && pass ||
  fail "wheel update -o FIFO failed"
wait "$reader" || true
"${LIBPKG_PYTHON:-python3}" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).testzip()' wheel.streamed &&
  pass || fail "the wheel streamed through the FIFO is not a valid zip"
# Without a reader: refused at once, not waited on.
rc=0
timeout 10 "$P" patchelf --set-rpath /x --output out.fifo prog 2>err || rc=$?
expect_eq "FIFO without reader: exit status" 2 "$rc"
grep -q "^error: out.fifo: .*FIFO with no reader" err && pass || fail "FIFO without reader: stderr [$(cat err)]"
[[ -p out.fifo ]] && pass || fail "the reader-less FIFO was replaced"
# A directory at the output path is refused, not renamed over.
mkdir outdir
rc=0
"$P" patchelf --set-rpath /x --output outdir prog 2>err || rc=$?
expect_eq "directory output: exit status" 2 "$rc"
[[ -d outdir ]] && pass || fail "the output directory was replaced"

echo "--- write protection and hard links"
# Root ignores permission bits: run as nobody in a world-writable directory
# (the directory would allow a rename over the file; patchelf must not).
mkdir shared
chmod 1777 shared
cp prog shared/ro
chmod 0444 shared/ro
sum=$(sha256sum shared/ro | cut -d' ' -f1)
long=/opt/$(printf 'long-entry-%.0s' {1..40})
# (Run as a non-root user already, the caller itself lacks the permission.)
as_nobody() {
  if ((EUID == 0)); then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi
}
owner=$(id -u)
for rpath in /x "$long"; do
  rc=0
  as_nobody "$P" patchelf --set-rpath "$rpath" shared/ro 2>err || rc=$?
  expect_eq "read-only file (rpath ${#rpath} bytes): exit status" 2 "$rc"
  grep -q "^error: .*shared/ro: .*Permission denied" err && pass ||
    fail "read-only file: stderr must say Permission denied: [$(cat err)]"
  expect_eq "read-only file untouched" "$sum" "$(sha256sum shared/ro | cut -d' ' -f1)"
  expect_eq "read-only file owner" "$owner" "$(stat -c %u shared/ro)"
done
# --output over a read-only file the caller does not own: refused too.
cp prog shared/mine
chmod 0666 shared/mine
rc=0
as_nobody "$P" patchelf --set-rpath /x --output shared/ro shared/mine 2>err || rc=$?
expect_eq "--output over a read-only file: exit status" 2 "$rc"
expect_eq "--output over a read-only file untouched" "$sum" "$(sha256sum shared/ro | cut -d' ' -f1)"

# An unreadable library in a tree is an error naming it, not "not ELF"
# (check_binary used to pass such a tree with "no ELF files").
printf 'int f(void) { return 1; }\n' >f.c
gcc -shared -fPIC -o libf.so f.c
mkdir -p shared/torch/lib shared/torch/include
echo 2.0.0 >shared/torch/build-version
cp libf.so shared/torch/lib/
chmod -R a+rX shared/torch
chmod 000 shared/torch/lib/libf.so
chmod 0711 "$tmp"  # nobody must reach the tree: only the library is denied
rc=0
as_nobody "$P" check shared/torch >out 2>err || rc=$?
expect_eq "check of a tree with an unreadable library: exit status" 2 "$rc"
grep -q "^error: .*shared/torch/lib/libf.so: cannot open: Permission denied" err && pass ||
  fail "unreadable library in a checked tree: stderr [$(head -c 300 err)]"

cp prog linked
ln linked linked2
"$P" patchelf --set-rpath "$long" linked
expect_eq "hard link: same inode after a growing edit" "$(stat -c %i linked)" "$(stat -c %i linked2)"
expect_eq "hard link: the other name sees the edit" "$long" "$("$P" patchelf --print-rpath linked2)"
./linked && pass || fail "the edited hard-linked program does not run"
# --in-place-atomic replaces the name (a new inode) and says the link broke.
cp prog alinked
ln alinked alinked2
"$P" patchelf --in-place-atomic --set-rpath /atomic alinked 2>err
grep -q "^note: alinked: had 2 hard links; --in-place-atomic" err && pass ||
  fail "--in-place-atomic on a hard-linked file must say the link broke: [$(cat err)]"
expect_eq "--in-place-atomic: this name edited" /atomic "$("$P" patchelf --print-rpath alinked)"
expect_eq "--in-place-atomic: the other link keeps the old file" "" "$("$P" patchelf --print-rpath alinked2)"

finish
