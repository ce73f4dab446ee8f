#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# No-op edits leave a file byte-identical (set-rpath/soname/interpreter to the
# current value, replace/remove-needed of an absent name, remove-rpath without
# rpath, shrink-rpath with nothing to drop, also on an already grown file and
# with --in-place-atomic), and repeated growth edits do not keep growing the
# file (patchelf grew a 9.6 MB library by 1.3 MB per --replace-needed,
# NixOS/patchelf#370): after the first growth, each further edit may add at
# most 4 KiB + the longest string. For each target in $ELF_TARGETS.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

# noop WHAT PRISTINE ARGS...: the edit succeeds and changes no byte.
noop() {
  local what="$FX_T no-op: $1" pristine=$2 f
  shift 2
  case_begin "$what"
  f=$SCRATCH/noop/$FX_T/edited/${pristine##*/}
  mkdir -p "${f%/*}"
  cp -p "$pristine" "$f"
  pe_ok "$what" "$@" "$f" >/dev/null || return 0
  chk_unchanged "$what" "$pristine" "$f"
}

noops() {
  local exe=$FXD/bin/exe-pie nopie=$FXD/bin/exe-nopie lib=$FXD/lib/libfixture.so.1
  local interp
  interp=$(fx_interp_of "$exe")
  noop "set-rpath to the current runpath" "$exe" --set-rpath '$ORIGIN/../lib'
  noop "--force-rpath --set-rpath to the current DT_RPATH" "$nopie" --force-rpath --set-rpath '$ORIGIN/../lib'
  noop "set-rpath to the current value (library)" "$lib" --set-rpath "$FX_DEFAULT_LIB_RPATH"
  noop "replace-needed of an absent name" "$exe" --replace-needed libabsent.so.1 libother.so.1
  noop "remove-needed of an absent name" "$exe" --remove-needed libabsent.so.1
  noop "set-soname to the current soname" "$lib" --set-soname libfixture.so.1
  noop "set-interpreter to the current interpreter" "$exe" --set-interpreter "$interp"
  noop "set-interpreter to the current interpreter (ET_EXEC)" "$nopie" --set-interpreter "$interp"
  noop "remove-rpath without any rpath" "$(fx_variant "$FXD" norpath)" --remove-rpath
  noop "shrink-rpath keeping every entry" "$exe" --shrink-rpath
  noop "print-only options" "$lib" --print-rpath --print-needed --print-soname
  if is_ours; then
    noop "add-rpath of an entry already present" "$exe" --add-rpath '$ORIGIN/../lib'
    noop "set-rpath to the current value with --in-place-atomic" "$exe" --in-place-atomic \
      --set-rpath '$ORIGIN/../lib'
  fi

  # An already grown file: setting the same value again changes nothing either.
  local grown=$SCRATCH/noop/$FX_T/grown.so long
  long="/opt/libpkg/$(printf 'grown%.0s' {1..60})"
  cp "$lib" "$grown"
  case_begin "$FX_T no-op on a grown file"
  pe_ok "$FX_T grow before the no-op" --set-rpath "$long" "$grown" || return 0
  noop "set-rpath to the value of a grown file" "$grown" --set-rpath "$long"
}

# long_string I: a distinct ~300-character value for round I.
long_string() {
  printf '/opt/libpkg/round-%02d/%s' "$1" "$(printf 'segment%02d-' $(seq 1 30) | head -c 280)"
}

# growth WHAT FILE EDITFN: call EDITFN FILE ROUND for rounds 1..10; after round 1
# the size may grow by at most 4 KiB + the longest string in total. (A bound,
# not patchelf's byte count: we append .dynstr (old contents + new strings)
# in our own segment and rebuild that segment on later edits, where patchelf
# rewrites .dynstr and overwrites old strings; the sizes differ by design.)
growth() {
  local what="$FX_T repeated growth: $1" file=$2 fn=$3 round first="" size longest=320
  case_begin "$what"
  for round in $(seq 1 10); do
    "$fn" "$file" "$round" || return 1
    size=$(fsize "$file")
    if [[ -z $first ]]; then
      first=$size
      continue
    fi
    if ((size > first + 4096 + longest)); then
      fail "$what: after round $round the file is $size bytes; after round 1 it was $first (bound: +$((4096 + longest)))"
      return 1
    fi
  done
  pass
}

_grow_rpath() {
  local rp
  rp=$(long_string "$2"):\$ORIGIN/../lib
  pe_ok "$FX_T set-rpath round $2" --set-rpath "$rp" "$1" || return 1
  expect_eq "$FX_T set-rpath round $2: runpath" "$rp" "$(state_of "$1" runpath)"
}

_grow_soname() {
  local name
  name="libfixture-round$2-$(printf 'x%.0s' $(seq 1 $((100 + 10 * $2)))).so.1"
  pe_ok "$FX_T set-soname round $2" --set-soname "$name" "$1" || return 1
  expect_eq "$FX_T set-soname round $2: soname" "$name" "$(state_of "$1" soname)"
}

# Alternate: odd rounds add a long-named library, even rounds remove it.
_grow_add_remove() {
  if (($2 % 2)); then
    pe_ok "$FX_T add-needed round $2" --add-needed libextra.so.1 "$1" || return 1
  else
    pe_ok "$FX_T remove-needed round $2" --remove-needed libextra.so.1 "$1" || return 1
  fi
}

# Alternate the needed name between two long names (replace back and forth).
REPL_A=libfixture-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.so.1
REPL_B=libfixture-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.so.1
_grow_replace() {
  local from=libfixture.so.1 to=$REPL_A
  if (($2 > 1)); then
    if (($2 % 2)); then from=$REPL_B to=$REPL_A; else from=$REPL_A to=$REPL_B; fi
  fi
  pe_ok "$FX_T replace-needed round $2" --replace-needed "$from" "$to" "$1" || return 1
}

growths() {
  local s
  s=$(fx_scene "$FXD" growth)
  if growth "set-rpath x10 (library)" "$s/lib/libfixture.so.1" _grow_rpath; then
    verify_edit "$CURRENT_CASE" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
      chk_dlopen "$CURRENT_CASE" {} "$FX_OUT"
  fi
  local exe
  for exe in exe-pie exe-nopie; do
    if growth "set-rpath x10 ($exe)" "$s/bin/$exe" _grow_rpath; then
      verify_edit "$CURRENT_CASE" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$CURRENT_CASE" "$FX_OUT" {}
    fi
  done
  s=$(fx_scene "$FXD" growth-soname)
  if growth "set-soname x10 (library)" "$s/lib/libfixture.so.1" _grow_soname; then
    verify_edit "$CURRENT_CASE" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
      chk_dlopen "$CURRENT_CASE" {} "$FX_OUT"
  fi
  s=$(fx_scene "$FXD" growth-needed)
  if growth "add-needed/remove-needed x10 (exe-pie)" "$s/bin/exe-pie" _grow_add_remove; then
    chk_state "$CURRENT_CASE" "$s/bin/exe-pie" needed="libfixture.so.1 libdep.so.1 libc.so.6"
    verify_edit "$CURRENT_CASE" "$FXD/bin/exe-pie" "$s/bin/exe-pie" -- \
      chk_run "$CURRENT_CASE" "$FX_OUT"$'\n'"extra_value=missing" {} extra_value
  fi
  if growth "replace-needed back and forth x10 (exe-nopie)" "$s/bin/exe-nopie" _grow_replace; then
    chk_state "$CURRENT_CASE" "$s/bin/exe-nopie" needed="$REPL_B libdep.so.1 libc.so.6" \
      verneed="$REPL_B libc.so.6"
    cp "$s/lib/libfixture.so.1" "$s/lib/$REPL_B"
    # The copy keeps soname libfixture.so.1; ld.so matches vn_file by file name here.
    verify_edit "$CURRENT_CASE" "$FXD/bin/exe-nopie" "$s/bin/exe-nopie" -- \
      chk_run "$CURRENT_CASE" "$FX_OUT" {}
  fi
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  noops
  growths
}

fx_for_each_target per_target
finish
