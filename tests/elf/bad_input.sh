#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bad input: truncated ELF files (several lengths), corrupt e_phoff /
# e_phentsize / e_phnum, wrong EI_DATA (endianness) and EI_CLASS bytes, a
# non-ELF file, a missing file, a directory, a static executable, and
# --set-interpreter on a library without PT_INTERP. Every print and edit
# (in place, growing, --output) must exit 2 with "error: FILE: ..." on stderr,
# name an offset for format problems, leave the input byte-identical, and
# leave no output or temporary file behind. For each target in $ELF_TARGETS.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools
make_scratch

LONG="/opt/libpkg/$(printf 'long-runpath-entry-%.0s' {1..20})"

# expect_error WHAT FILE KIND ARGS...: run ARGS (which name FILE); KIND is
# "format" (an offset must be named) or "other".
expect_error() {
  local what=$1 file=$2 kind=$3 rc=0 listing_before listing_after dir
  shift 3
  dir=$(dirname "$file")
  [[ -f $file ]] && cp -p "$file" "$SCRATCH/saved"
  listing_before=$(ls -A "$dir")
  "$TOOL" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  local err
  err=$(head -c 600 "$SCRATCH/err")
  if is_ours; then
    expect_eq "$what: exit status" 2 "$rc"
    if [[ $err == "error: $file: "* ]]; then
      pass
    else
      fail "$what: stderr must start with 'error: $file: ', got [$err]"
    fi
    if [[ $kind == format ]]; then
      if [[ $err =~ offset\ 0x[0-9a-fA-F]+ ]]; then
        pass
      else
        fail "$what: a format error must name the offset ('offset 0x...'), got [$err]"
      fi
    fi
  else
    # Other implementations: only the outcome is checked, the wording is theirs.
    if ((rc == 0)); then
      fail "$what: expected a non-zero exit status, got 0"
    else
      pass
    fi
  fi
  if [[ -f $file ]]; then
    chk_unchanged "$what: input" "$SCRATCH/saved" "$file"
  fi
  listing_after=$(ls -A "$dir")
  expect_eq "$what: files in ${dir##*/}/ (no output or temporary file left)" \
    "$listing_before" "$listing_after"
}

# expect_error_or_same WHAT FILE ORIGINAL KIND OPTION: a print on a truncated
# file. Printing reads only the headers and strings it needs, so it may
# succeed when those survived the cut, but then it must print exactly what it
# prints for the intact ORIGINAL; otherwise the error rules apply.
expect_error_or_same() {
  local what=$1 file=$2 original=$3 kind=$4 opt=$5 rc=0
  "$TOOL" "$opt" "$file" >"$SCRATCH/out" 2>/dev/null || rc=$?
  if ((rc == 0)); then
    "$TOOL" "$opt" "$original" >"$SCRATCH/out.orig"
    if cmp -s "$SCRATCH/out" "$SCRATCH/out.orig"; then
      pass
    else
      fail "$what: succeeded on the truncated file but printed [$(head -c 200 "$SCRATCH/out")] instead of [$(head -c 200 "$SCRATCH/out.orig")]"
    fi
    return 0
  fi
  expect_error "$what" "$file" "$kind" "$opt" "$file"
}

# all_ops WHAT FILE KIND [ORIGINAL]: prints, in-place and growing edits,
# --output, --in-place-atomic (ours), each on its own. With ORIGINAL (the
# intact file of a truncated copy) prints may succeed if they print the same.
all_ops() {
  local what=$1 file=$2 kind=$3 original=${4:-} opt
  for opt in --print-rpath --print-needed; do
    if [[ -n $original ]]; then
      expect_error_or_same "$what, $opt" "$file" "$original" "$kind" "$opt"
    else
      expect_error "$what, $opt" "$file" "$kind" "$opt" "$file"
    fi
  done
  expect_error "$what, --set-rpath (short)" "$file" "$kind" --set-rpath /x "$file"
  expect_error "$what, --set-rpath (long)" "$file" "$kind" --set-rpath "$LONG" "$file"
  expect_error "$what, --add-needed" "$file" "$kind" --add-needed libz.so.1 "$file"
  expect_error "$what, --replace-needed" "$file" "$kind" --replace-needed libc.so.6 libd.so.6 "$file"
  expect_error "$what, --output" "$file" "$kind" --set-rpath "$LONG" --output "$(dirname "$file")/out" "$file"
  if is_ours; then
    expect_error "$what, --in-place-atomic" "$file" "$kind" --in-place-atomic --set-rpath /x "$file"
  fi
}

# truncated SRC: copies of SRC cut at lengths that break the ELF header, the
# program header table, the segments and the section header table (an editor
# must refuse them all: it cannot write a complete file from a partial one).
truncated() {
  local src=$1 name=${1##*/} size n phend dir
  size=$(fsize "$src")
  phend=$(readelf -hW "$src" | awk -F: '/Start of program headers/ {s=$2+0}
    /Size of program headers/ {e=$2+0} /Number of program headers/ {n=$2+0} END {print s + e * n}')
  for n in 0 3 16 52 63 64 $((phend - 1)) $((phend + 8)) $((size / 4)) $((size / 2)) $((size - 1)); do
    dir=$SCRATCH/bad/$FX_T-trunc-$name-$n
    mkdir -p "$dir"
    head -c "$n" "$src" >"$dir/$name"
    case_begin "$FX_T $name truncated to $n of $size bytes"
    if ((n == 0)); then
      all_ops "$CURRENT_CASE" "$dir/$name" other "$src"
    else
      all_ops "$CURRENT_CASE" "$dir/$name" format "$src"
    fi
  done
}

# poked SRC LABEL FIELD=VALUE...: a copy with header fields overwritten.
poked() {
  local src=$1 label=$2 dir
  shift 2
  dir=$SCRATCH/bad/$FX_T-poke-$label-${src##*/}
  mkdir -p "$dir"
  cp "$src" "$dir/"
  "${ELFCHECK[@]}" poke "$dir/${src##*/}" "$@"
  case_begin "$FX_T ${src##*/} with $label"
  all_ops "$CURRENT_CASE" "$dir/${src##*/}" format
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  local f size
  for f in "$FXD/bin/exe-pie" "$FXD/lib/libfixture.so.1"; do
    truncated "$f"
    size=$(fsize "$f")
    poked "$f" "e_phoff past the end" e_phoff=$((size + 4096))
    poked "$f" "e_phoff near the end" e_phoff=$((size - 16))
    poked "$f" "e_phentsize 7" e_phentsize=7
    poked "$f" "e_phentsize doubled" e_phentsize=$((2 * $(readelf -hW "$f" | awk -F: '/Size of program headers/ {print $2+0}')))
    # (0xffff is PN_XNUM, "count in section 0", so a large ordinary value.)
    poked "$f" "e_phnum 0x7fff" e_phnum=0x7fff
    poked "$f" "EI_DATA swapped" ei_data=swap
    poked "$f" "EI_DATA invalid" ei_data=7
    poked "$f" "EI_CLASS invalid" ei_class=9
  done

  # --set-interpreter on a library: it has no PT_INTERP to point elsewhere.
  local dir=$SCRATCH/bad/$FX_T-interp-lib
  mkdir -p "$dir"
  cp "$FXD/lib/libfixture.so.1" "$dir/"
  case_begin "$FX_T --set-interpreter on a library"
  expect_error "$CURRENT_CASE" "$dir/libfixture.so.1" other --set-interpreter /lib/ld-other.so.1 "$dir/libfixture.so.1"
  if is_ours && ! grep -qiE 'interp' "$SCRATCH/err"; then
    fail "$CURRENT_CASE: the message should say the file has no interpreter (PT_INTERP): $(head -c 300 "$SCRATCH/err")"
  fi

  # A static executable has no dynamic section to edit.
  dir=$SCRATCH/bad/$FX_T-static
  mkdir -p "$dir"
  printf 'int main(void) { return 0; }\n' >"$dir/s.c"
  if "$FX_CC" -static "$dir/s.c" -o "$dir/static" 2>/dev/null; then
    rm "$dir/s.c"
    case_begin "$FX_T static executable"
    all_ops "$CURRENT_CASE" "$dir/static" other
  else
    fail "$FX_T: cannot link a static executable (the libc6-dev cross package from scripts/setup.sh provides libc.a)"
  fi
}

not_elf_cases() {
  local dir=$SCRATCH/bad/plain
  mkdir -p "$dir"
  printf 'this is a text file, not an ELF object\n' >"$dir/text.so"
  printf '#!/bin/sh\necho hello\n' >"$dir/script"
  head -c 65536 /dev/urandom >"$dir/random.bin"
  printf '\177ELF' >"$dir/magic-only"
  local f
  for f in text.so script random.bin; do
    case_begin "not an ELF file: $f"
    all_ops "$CURRENT_CASE" "$dir/$f" other
  done
  case_begin "ELF magic only"
  all_ops "$CURRENT_CASE" "$dir/magic-only" other
  case_begin "missing file"
  all_ops "$CURRENT_CASE" "$dir/does-not-exist.so" other
  case_begin "a directory"
  mkdir -p "$dir/a-directory.so"
  all_ops "$CURRENT_CASE" "$dir/a-directory.so" other
}

fx_for_each_target per_target
not_elf_cases
finish
