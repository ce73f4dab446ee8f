#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Inputs and outputs that are not regular files, and write protection
# (issue 21):
#  - a FIFO named like the input is refused at once (exit 2, "error: FILE:
#    not a regular file (a FIFO)") by inspect, patchelf, wheel verify and
#    conda verify, and so is one named like a configuration or metadata
#    file (--cuda-table, --policy-file, --meta, matrix --file); every call runs under `timeout` so a reader that blocks in
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
#    "Permission denied") instead of passing it over as "not ELF"; a FIFO
#    where a conda package (info/paths.json) or prefix (conda-meta) lists a
#    file is an integrity finding (exit 1).
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
# Configuration and metadata files are read through the same regular-file
# open (they used to be read with std::ifstream, which blocks on a FIFO):
# a CUDA table, a policy file, conda metadata, a matrix, and the conda
# driver's --meta.
mkfifo table.json policy.json meta.json matrix.json
refused "config --cuda-table FIFO" table.json "$P" config "manywheel 3.11 cu126" --cuda-table table.json
refused "check --cuda-table FIFO" table.json "$P" check "$W" --no-runtime --cuda-table table.json
refused "repair --policy-file FIFO" policy.json "$P" repair "$W" --policy-file policy.json -w x3
refused "check --policy-file FIFO" policy.json "$P" check "$W" --no-runtime --policy-file policy.json
mkdir -p fifoprefix/lib
cp prog fifoprefix/lib/
refused "conda pack --meta FIFO" meta.json "$P" conda pack fifoprefix --name p --version 1 --meta meta.json -o x4
refused "conda driver --meta FIFO" meta.json "${LIBPKG_BINARY_DIR:?}/drivers/conda/conda" --no-env \
  --prefix fifoprefix --meta meta.json --version 1.0 -o x5 --no-check --build-env "conda 3.11 cpu"
refused "matrix --file FIFO" matrix.json "$P" matrix --file matrix.json
[[ ! -e x3 && ! -e x4 && ! -e x5 ]] && pass || fail "a refused command left an output behind"
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

# The drivers size their artifacts by the writer's own count, not by the
# file found at the path afterwards: into a symlink to /dev/null the
# libtorch driver reports the same size as into a regular file (it
# reported 0, and another writer's file would have been measured instead).
mkdir -p lt/lib lt/include
printf 'int lt_value(void) { return 7; }\n' >lt.c
gcc -shared -fPIC -o lt/lib/liblt.so lt.c
echo '#define LT 1' >lt/include/lt.h
LTDRIVER=${LIBPKG_BINARY_DIR:?}/drivers/libtorch/libtorch
lt_run() {
  timeout 60 "$LTDRIVER" --no-env --tree lt --build-env "libtorch cpu shared-without-deps" --abi cxx11 \
    --build-version 1.0.0 --build-hash 0123abcd --no-latest --no-check --json -o "$1"
}
lt_size() {
  "${LIBPKG_PYTHON:-python3}" -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(*[a["size"] for a in d["artifacts"] if a["role"] == "libtorch"])' "$1"
}
if lt_run ltout >lt1.json; then
  pass
  ltzip=$(basename "$(ls ltout/*.zip)")
  expect_eq "libtorch: size of a regular output" "$(stat -c %s "ltout/$ltzip")" "$(lt_size lt1.json)"
  mkdir ltnull
  ln -s /dev/null "ltnull/$ltzip"
  if lt_run ltnull >lt2.json; then pass; else fail "the libtorch driver failed writing into /dev/null"; fi
  expect_eq "libtorch: size written into /dev/null" "$(stat -c %s "ltout/$ltzip")" "$(lt_size lt2.json)"
  dev_null_intact "libtorch driver output"
else
  fail "the libtorch driver failed on a regular output"
fi

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

# A FIFO where a conda package lists a file: the integrity check reports
# it (exit 1, naming it) instead of passing it over. In an extracted
# package every "hardlink" row of info/paths.json must be a regular file
# (it had a hash and size, but anything not a regular file was skipped); in
# an installed prefix every conda-meta file is a file or a symlink (it was
# only checked to exist).
mkdir -p cprefix/lib
cp prog cprefix/lib/tool
"$P" conda pack cprefix --name fk --version 1 --format tar.bz2 -o cpk >/dev/null
"$P" conda extract cpk/fk-1-0.tar.bz2 -d cx >/dev/null
rm cx/lib/tool && mkfifo cx/lib/tool
rc=0
timeout 30 "$P" check cx --only integrity >out 2>err || rc=$?
expect_eq "extracted conda package with a FIFO for a file: exit status" 1 "$rc"
grep -q "lib/tool.*not a regular file (a FIFO)" out && pass ||
  fail "paths.json hardlink row that is a FIFO: [$(head -c 600 out) $(head -c 300 err)]"
mkdir -p cmeta/conda-meta cmeta/lib
printf '{"name": "fk", "version": "1", "files": ["lib/tool", "lib/link"]}\n' >cmeta/conda-meta/fk-1-0.json
mkfifo cmeta/lib/tool
ln -s tool cmeta/lib/link
rc=0
timeout 30 "$P" check cmeta --only integrity >out 2>err || rc=$?
expect_eq "conda prefix with a FIFO for a listed file: exit status" 1 "$rc"
grep -q "lib/tool: listed as a file but is a FIFO" out && pass ||
  fail "conda-meta file that is a FIFO: [$(head -c 600 out) $(head -c 300 err)]"
grep -q "lib/link" out && fail "a listed symlink is a finding: $(cat out)" || pass

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
