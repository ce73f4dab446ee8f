#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Malformed headers and strings that used to be edited with exit 0 (issue 15):
# e_shstrndx out of range or naming a non-string-table section, a section
# name offset past the name table, a .dynamic section header whose offset,
# address or alignment disagrees with PT_DYNAMIC, a .dynstr whose last byte is
# not NUL, and --set-interpreter "". Each fixture is a library or program
# compiled here and patched by a few bytes (lib/elfcheck.py-style struct
# edits below). Every edit (in place, growing, --output) must exit 2 with
# "error: FILE: ..." naming the structure, the index and both values where
# there are two, leave the input byte-identical and write no output.
# For each target in $ELF_TARGETS (32-bit and big-endian use other structs).
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools
make_scratch

LONG="/opt/libpkg/$(printf 'long-runpath-entry-%.0s' {1..20})"

# corrupt IN OUT KIND: copy IN to OUT with one structure broken (see above).
corrupt() {
  "$LIBPKG_PYTHON" - "$@" <<'PY'
import struct, sys
src, dst, kind = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
is64 = d[4] == 2
e = "<" if d[5] == 1 else ">"
if is64:
    phoff, shoff = struct.unpack_from(e + "QQ", d, 32)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(e + "HHHHH", d, 54)
    shstrndx_at = 62
    sh_fmt, ph_fmt = e + "IIQQQQIIQQ", e + "IIQQQQQQ"
else:
    phoff, shoff = struct.unpack_from(e + "II", d, 28)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(e + "HHHHH", d, 42)
    shstrndx_at = 50
    sh_fmt, ph_fmt = e + "IIIIIIIIII", e + "IIIIIIII"
def sh(i):
    return list(struct.unpack_from(sh_fmt, d, shoff + i * shentsize))
def put_sh(i, f):
    struct.pack_into(sh_fmt, d, shoff + i * shentsize, *f)
# fields: name type flags addr offset size link info addralign entsize
dyn = next(i for i in range(shnum) if sh(i)[1] == 6)
if kind == "shstrndx-range":
    struct.pack_into(e + "H", d, shstrndx_at, shnum + 5)
elif kind == "shstrndx-type":
    struct.pack_into(e + "H", d, shstrndx_at, dyn)
elif kind == "name-range":
    f = sh(1); f[0] = 0x7ffff0; put_sh(1, f)
elif kind == "dynamic-offset":
    f = sh(dyn); f[4] += 8; put_sh(dyn, f)
elif kind == "dynamic-align":
    f = sh(dyn); f[8] = 64; put_sh(dyn, f)
elif kind == "dynstr-nul":
    # The last byte of .dynstr (its final NUL) becomes 'X'.
    s = next(f for f in (sh(i) for i in range(shnum))
             if f[1] == 3 and f[2] & 2)  # SHT_STRTAB, SHF_ALLOC: .dynstr
    d[s[4] + s[5] - 1] = ord("X")
open(dst, "wb").write(d)
PY
}

# refused WHAT FILE PATTERN ARGS...: an edit that must fail with exit 2,
# "error: FILE: " and a message matching PATTERN (grep -E), input unchanged,
# no file left behind.
refused() {
  local what=$1 file=$2 pattern=$3 rc=0 before
  shift 3
  cp -p "$file" "$SCRATCH/saved"
  before=$(ls -A "$(dirname "$file")")
  "$TOOL" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  expect_eq "$what: exit status" 2 "$rc"
  local err
  err=$(head -c 600 "$SCRATCH/err")
  if [[ $err == "error: $file: "* ]] && grep -Eq "$pattern" "$SCRATCH/err"; then
    pass
  else
    fail "$what: stderr must be 'error: $file: ...' matching /$pattern/, got [$err]"
  fi
  chk_unchanged "$what: input" "$SCRATCH/saved" "$file"
  expect_eq "$what: no output or temporary file" "$before" "$(ls -A "$(dirname "$file")")"
}

declare -A PATTERN=(
  [shstrndx-range]="e_shstrndx is [0-9]+ but the file has [0-9]+ section headers"
  [shstrndx-type]="e_shstrndx [0-9]+ names section header [0-9]+ of type 6, not a string table"
  [name-range]="section header 1: name offset 0x7ffff0 is outside the section name table"
  [dynamic-offset]="section header [0-9]+ \\(SHT_DYNAMIC\\): sh_offset 0x[0-9a-f]+ disagrees with PT_DYNAMIC p_offset 0x[0-9a-f]+"
  [dynamic-align]="section header [0-9]+ \\(SHT_DYNAMIC\\): sh_addralign 0x40 disagrees with PT_DYNAMIC p_align 0x[48]"
  [dynstr-nul]="dynamic string table .* does not end with a NUL byte"
)

per_target() {
  local fxd=$SCRATCH/fx-$FX_T dir=$SCRATCH/bad-$FX_T kind f rc
  fx_build "$fxd"
  mkdir -p "$dir"
  for kind in shstrndx-range shstrndx-type name-range dynamic-offset dynamic-align dynstr-nul; do
    case_begin "$FX_T $kind"
    f="$dir/$kind.so"
    corrupt "$fxd/lib/libfixture.so.1" "$f" "$kind"
    refused "$CURRENT_CASE: set-rpath in place" "$f" "${PATTERN[$kind]}" --set-rpath /x "$f"
    refused "$CURRENT_CASE: growing set-rpath" "$f" "${PATTERN[$kind]}" --set-rpath "$LONG" "$f"
    refused "$CURRENT_CASE: --output" "$f" "${PATTERN[$kind]}" \
      --add-needed libextra.so.1 --output "$dir/out.so" "$f"
  done
  # The unterminated .dynstr is refused by readers too.
  case_begin "$FX_T dynstr-nul: inspect"
  rc=0
  "$PKGTOOL" inspect "$dir/dynstr-nul.so" >/dev/null 2>"$SCRATCH/err" || rc=$?
  expect_eq "$CURRENT_CASE: exit status" 2 "$rc"
  grep -q "does not end with a NUL byte" "$SCRATCH/err" && pass ||
    fail "$CURRENT_CASE: stderr [$(cat "$SCRATCH/err")]"

  # An empty interpreter would make the program unexecutable (ENOEXEC).
  case_begin "$FX_T --set-interpreter ''"
  cp "$fxd/bin/exe-pie" "$dir/prog"
  refused "$CURRENT_CASE" "$dir/prog" "cannot set an empty interpreter" \
    --set-interpreter "" "$dir/prog"
}

fx_for_each_target per_target
finish
