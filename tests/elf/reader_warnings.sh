#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Recoverable oddities the ELF reader works around are reported by
# `pkgtool inspect` and `pkgtool symbols` as "warning: FILE: ..." on stderr
# (exit 0, the rest of the output intact): a library compiled here is
# patched by a few bytes so that (1) without section headers, its DT_GNU_HASH
# (and DT_HASH, when the linker wrote one) points outside every loadable
# segment: the symbol count is unknown, which used to yield 0 symbols
# silently; (2) symbol 1's .gnu.version entry names a version index that no
# version need or definition defines; (3) a library with only a SysV hash
# table and no section headers lists the same symbols as with them (64-bit
# hash words on s390x). For each target in $ELF_TARGETS (32-bit and
# big-endian use other structs).
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools
make_scratch

# corrupt IN OUT KIND: copy IN to OUT with one oddity (see above); the
# structures are found with lib/elfcheck.py's independent parser.
corrupt() {
  "$LIBPKG_PYTHON" - "$ELFTEST_DIR/lib" "$@" <<'PY'
import os, struct, sys
sys.path.insert(0, sys.argv[1])
from elfcheck import Elf, PT_DYNAMIC, cmd_strip_shdrs
src, dst, kind = sys.argv[2:5]
elf = Elf(src)
d = bytearray(elf.data)
if kind == "hash":
    dyn = next(p for p in elf.phdrs if p["type"] == PT_DYNAMIC)
    fmt = elf.end + ("qQ" if elf.bits == 64 else "iI")
    size, hashes = struct.calcsize(fmt), 0
    for pos in range(dyn["offset"], dyn["offset"] + dyn["filesz"], size):
        tag, _ = struct.unpack_from(fmt, d, pos)
        if tag in (4, 0x6ffffef5):  # DT_HASH, DT_GNU_HASH
            struct.pack_into(fmt, d, pos, tag, 0x7fff0000)
            hashes += 1
    assert hashes > 0, "no hash table to break"
elif kind == "versym":
    versym = next(s for s in elf.shdrs if s["type"] == 0x6fffffff)
    struct.pack_into(elf.end + "H", d, versym["offset"] + 2, 0x7ff)
if kind == "hash":
    # No section headers: the symbol count must come from a hash table.
    open(dst + ".tmp", "wb").write(d)
    cmd_strip_shdrs([dst + ".tmp", dst])
    os.remove(dst + ".tmp")
else:
    open(dst, "wb").write(d)
PY
}

# warned WHAT FILE PATTERN ARGS...: pkgtool ARGS must exit 0 and print
# "warning: FILE: " with a message matching PATTERN (grep -E) on stderr.
warned() {
  local what=$1 file=$2 pattern=$3 rc=0
  shift 3
  "$PKGTOOL" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  expect_eq "$what: exit status" 0 "$rc"
  if grep -q "^warning: $file: " "$SCRATCH/err" && grep -Eq "$pattern" "$SCRATCH/err"; then
    pass
  else
    fail "$what: stderr must have 'warning: $file: ...' matching /$pattern/, got [$(head -c 600 "$SCRATCH/err")]"
  fi
}

per_target() {
  local fxd=$SCRATCH/fx-$FX_T dir=$SCRATCH/odd-$FX_T f
  fx_build "$fxd"
  mkdir -p "$dir"

  case_begin "$FX_T intact library: no warning"
  "$PKGTOOL" symbols "$fxd/lib/libfixture.so.1" >"$SCRATCH/out" 2>"$SCRATCH/err"
  expect_eq "$CURRENT_CASE: stderr" "" "$(cat "$SCRATCH/err")"

  case_begin "$FX_T unmappable hash tables"
  f="$dir/hash.so"
  corrupt "$fxd/lib/libfixture.so.1" "$f" hash
  warned "$CURRENT_CASE: symbols" "$f" \
    "DT_GNU_HASH 0x7fff0000 is not inside any loadable segment: the symbol count is unknown" \
    symbols "$f"
  expect_eq "$CURRENT_CASE: no symbols listed" "" "$(cat "$SCRATCH/out")"
  warned "$CURRENT_CASE: inspect" "$f" "DT_GNU_HASH 0x7fff0000" inspect "$f"
  grep -q "libfixture.so.1" "$SCRATCH/out" && pass ||
    fail "$CURRENT_CASE: inspect output lost the soname: [$(cat "$SCRATCH/out")]"

  # Without section headers the symbol count comes from the SysV hash
  # table's nchain, a 64-bit word on s390x (it was read as 32-bit, which on
  # big-endian s390x is nbucket's low half: the wrong count). The library
  # with section headers is the oracle (its .dynsym size gives the count).
  case_begin "$FX_T symbols counted from .hash without section headers"
  fx_lib "$fxd" "$dir/sysv-full.so" --ld=--hash-style=sysv
  "$LIBPKG_PYTHON" "$ELFTEST_DIR/lib/elfcheck.py" strip-shdrs "$dir/sysv-full.so" "$dir/sysv.so"
  check "$CURRENT_CASE: only DT_HASH" grep -q '(HASH)' <(readelf -dW "$dir/sysv.so")
  "$PKGTOOL" symbols "$dir/sysv-full.so" >"$SCRATCH/want" 2>"$SCRATCH/err"
  expect_eq "$CURRENT_CASE: reference has no warning" "" "$(cat "$SCRATCH/err")"
  expect_ok "$CURRENT_CASE: symbols" "$PKGTOOL" symbols "$dir/sysv.so"
  "$PKGTOOL" symbols "$dir/sysv.so" >"$SCRATCH/got" 2>"$SCRATCH/err" || true
  expect_eq "$CURRENT_CASE: no warning" "" "$(cat "$SCRATCH/err")"
  expect_same_file "$CURRENT_CASE: the same symbols as with section headers" \
    "$SCRATCH/want" "$SCRATCH/got"
  check "$CURRENT_CASE: some symbols" test -s "$SCRATCH/got"

  case_begin "$FX_T undefined version index"
  f="$dir/versym.so"
  corrupt "$fxd/lib/libfixture.so.1" "$f" versym
  warned "$CURRENT_CASE: symbols" "$f" \
    "1 dynamic symbol\\(s\\) have a version index that no version need or definition defines \\(the first: symbol 1, index 2047\\)" \
    symbols "$f"
  [[ -s $SCRATCH/out ]] && pass || fail "$CURRENT_CASE: no symbols listed"
}

fx_for_each_target per_target
finish
