#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --set-soname (shorter: fits; longer: grows; a library without DT_SONAME gets
# one), --set-interpreter (a copy of the target's dynamic loader in a deep
# directory, so the path grows; PIE and non-PIE), and --page-size (the new
# PT_LOAD honours the requested alignment), for each target in $ELF_TARGETS.
# The linker is run against an edited library to prove it reads the new soname,
# and an edited program is run through its new loader.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

# chk_links_as WHAT LIB SONAME: a program linked against LIB records SONAME as
# its DT_NEEDED (ld reads the edited DT_SONAME) and runs with LIB found under it.
chk_links_as() {
  local what=$1 lib=$2 soname=$3 d
  d=$(mktemp -d "$SCRATCH/link.XXXXXX")
  mkdir -p "$d/bin" "$d/lib"
  cp "$lib" "$d/lib/$soname"
  cp "$FXD/lib/libdep.so.1" "$d/lib/"
  if ! fx_exe "$FXD" "$d/bin/exe" --lib="$lib" --rpath='$ORIGIN/../lib' >"$d/log" 2>&1; then
    fail "$what: linking a program against the edited ${lib##*/} failed: $(head -c 400 "$d/log")"
    return 0
  fi
  expect_eq "$what: DT_NEEDED recorded by ld for the edited library" \
    "$soname libdep.so.1 libc.so.6" "$(state_of "$d/bin/exe" needed)"
  chk_run "$what: program linked against the edited library" "$FX_OUT" "$d/bin/exe"
}

set_soname() {
  local name=$1 variant=$2 w lib pristine
  w="$FX_T set-soname $name (${variant} library)"
  case_begin "$w"
  pristine=$(fx_variant "$FXD" "$variant")
  lib=$SCRATCH/scenes/$FX_T-soname-${#name}-$variant.so
  mkdir -p "${lib%/*}"
  cp "$pristine" "$lib"
  pe_ok "$w" --set-soname "$name" "$lib" || return 0
  chk_state "$w" "$lib" soname="$name" runpath="$(state_of "$pristine" runpath)" needed=libc.so.6
  # patchelf always appends a new soname; libpkg rewrites a shorter one in
  # place when nothing else uses the string (in a versioned library the
  # VER_FLG_BASE version definition names the soname too, so not there).
  if is_ours && [[ $variant == unversioned && ${#name} -le 15 ]]; then
    chk_size "$w: a shorter soname fits in place" "$lib" -eq "$(fsize "$pristine")"
  fi
  verify_edit "$w" "$pristine" "$lib" -- chk_dlopen "$w" {} "$FX_OUT"
  chk_links_as "$w" "$lib" "$name"
}

set_interpreter() {
  local exe=$1 w s interp deep
  w="$FX_T set-interpreter $exe (deep path, grows)"
  case_begin "$w"
  s=$(fx_scene "$FXD" "interp-$exe")
  deep="$s/a-deep-directory-for-the-dynamic-loader-copy/and-one-more-level-0123456789abcdef"
  mkdir -p "$deep"
  interp="$deep/ld-copy-${FX_LDSO##*/}"
  cp "$FX_LDSO" "$interp"
  pe_ok "$w" --set-interpreter "$interp" "$s/bin/$exe" || return 0
  chk_state "$w" "$s/bin/$exe" interp="$interp" needed="libfixture.so.1 libdep.so.1 libc.so.6"
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
  # The kernel (or qemu) must load the loader named by the new PT_INTERP:
  # with the copy moved away, the program can no longer start.
  mv "$interp" "$interp.away"
  chk_run_fails "$w: program must need the new loader path" "$s/bin/$exe"
  mv "$interp.away" "$interp"
}

page_size() {
  # Decimal: patchelf 0.14 parses --page-size with atoi (no hex).
  local w s ps=262144
  w="$FX_T --page-size $ps --set-rpath (grows)"
  case_begin "$w"
  s=$(fx_scene "$FXD" pagesize)
  local rp="/opt/libpkg/a-long-runpath-entry-that-cannot-fit-0123456789abcdef0123456789abcdef:/opt/libpkg/and-another-one-0123456789abcdef0123456789abcdef0123456789abcdef"
  pe_ok "$w" --page-size "$ps" --set-rpath "$rp" "$s/lib/libfixture.so.1" || return 0
  chk_state "$w" "$s/lib/libfixture.so.1" runpath="$rp" soname=libfixture.so.1
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- chk_dlopen "$w" {} "$FX_OUT"
  # Every PT_LOAD the edit added must be aligned to the requested page size.
  local before after line n=0
  before=$(readelf -lW "$FXD/lib/libfixture.so.1" | awk '$1 == "LOAD" { $1 = $1; print }')
  after=$(readelf -lW "$s/lib/libfixture.so.1" | awk '$1 == "LOAD" { $1 = $1; print }')
  while read -r line; do
    [[ -z $line ]] && continue
    grep -qxF "$line" <<<"$before" && continue
    n=$((n + 1))
    local align=${line##* }
    if ((align >= ps)); then
      pass
    else
      fail "$w: new or changed PT_LOAD has p_align $align, expected >= $ps: $line"
    fi
  done <<<"$after"
  ((n > 0)) || fail "$w: the edit was expected to add or extend a PT_LOAD (it must grow)"
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  set_soname libfx.so.1 runpath
  set_soname libfx.so.1 unversioned
  set_soname libfixture-0123456789abcdef0123456789abcdef-renamed.so.1 runpath
  set_soname libfixture-0123456789abcdef0123456789abcdef-renamed.so.1 many
  set_soname libfixture.so.1 nosoname
  set_interpreter exe-pie
  set_interpreter exe-nopie
  page_size
}

fx_for_each_target per_target
finish
