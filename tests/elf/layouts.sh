#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Growth edits across linker layouts: libraries with DT_RPATH / DT_RUNPATH /
# no rpath, with / without soname, unversioned, 3000 exported symbols (long
# .dynstr), -z max-page-size=0x10000, -z separate-code on/off, -z norelro,
# -z relro -z now, and with the section headers removed; executables with
# 64 KiB pages, no section headers, no RELRO. Each gets edits that must grow
# the file; then the segment invariants (p_offset = p_vaddr mod p_align,
# >= 64 KiB alignment on aarch64, sorted PT_LOADs, PT_PHDR/PT_DYNAMIC/PT_INTERP
# inside a PT_LOAD, allocated sections inside their segment), readelf vs
# `pkgtool inspect`, eu-elflint, dlopen / run, and strip are checked.
# For each target in $ELF_TARGETS.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

LONG="/opt/libpkg/$(printf 'layout-test-runpath-entry-%.0s' {1..10})"
LONG_SONAME="libfixture-$(printf '0123456789abcdef%.0s' {1..4}).so.1"

lib_variant() {
  local v=$1 pristine lib w
  pristine=$(fx_variant "$FXD" "$v")
  mkdir -p "$SCRATCH/edited/$FX_T"

  w="$FX_T $v library: set-rpath (grows)"
  case_begin "$w"
  lib=$SCRATCH/edited/$FX_T/$v-rpath.so
  cp "$pristine" "$lib"
  if pe_ok "$w" --set-rpath "$LONG" "$lib"; then
    chk_state "$w" "$lib" runpath="$LONG" rpath='<none>' soname="$(state_of "$pristine" soname)" \
      needed=libc.so.6
    verify_edit "$w" "$pristine" "$lib" -- chk_dlopen "$w" {} "$FX_OUT"
  fi

  # One operation per call (several ops in one call are multi_ops.sh's
  # subject): this also edits files an earlier call already grew.
  w="$FX_T $v library: set-soname, then add-needed, then force-rpath (grows)"
  case_begin "$w"
  lib=$SCRATCH/edited/$FX_T/$v-multi.so
  cp "$pristine" "$lib"
  if pe_ok "$w" --set-soname "$LONG_SONAME" "$lib" &&
    pe_ok "$w" --add-needed libdep.so.1 "$lib" &&
    pe_ok "$w" --force-rpath --set-rpath "$LONG:\$ORIGIN" "$lib"; then
    chk_state "$w" "$lib" soname="$LONG_SONAME" rpath="$LONG:\$ORIGIN" runpath='<none>'
    # libdep.so.1 is not next to the edited copy: found via LD_LIBRARY_PATH.
    verify_edit "$w" "$pristine" "$lib" -- \
      chk_dlopen "$w" {} "$FX_OUT"$'\n'"dep_value=777" --ld-path="$FXD/lib" dep_value
  fi
}

exe_variant() {
  local name=$1 w s
  shift
  w="$FX_T $name: set-rpath, then add-needed (grows)"
  case_begin "$w"
  s=$SCRATCH/edited/$FX_T/$name
  mkdir -p "$s/bin" "$s/libs-in-a-new-place"
  cp "$FXD/lib/"* "$s/libs-in-a-new-place/"
  fx_exe "$FXD" "$s/pristine" "$@"
  if [[ $name == *noshdr* ]]; then
    "${ELFCHECK[@]}" strip-shdrs "$s/pristine" "$s/pristine.tmp"
    mv "$s/pristine.tmp" "$s/pristine"
  fi
  cp "$s/pristine" "$s/bin/exe"
  local rp="$LONG:\$ORIGIN/../libs-in-a-new-place"
  pe_ok "$w" --set-rpath "$rp" "$s/bin/exe" || return 0
  pe_ok "$w" --add-needed libextra.so.1 "$s/bin/exe" || return 0
  chk_state "$w" "$s/bin/exe" runpath="$rp" rpath='<none>'
  verify_edit "$w" "$s/pristine" "$s/bin/exe" -- \
    chk_run "$w" "$FX_OUT"$'\n'"extra_value=555" {} extra_value
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  local v
  for v in $FX_VARIANT_NAMES; do
    lib_variant "$v"
  done
  exe_variant "pie-page64k" --pie --ld=-zmax-page-size=0x10000 --rpath='$ORIGIN/../lib'
  exe_variant "nopie-page64k" --no-pie --ld=-zmax-page-size=0x10000 --dtag=rpath --rpath='$ORIGIN/../lib'
  exe_variant "pie-noshdr" --pie --rpath='$ORIGIN/../lib'
  exe_variant "nopie-noshdr" --no-pie --rpath='$ORIGIN/../lib'
  exe_variant "pie-norelro-nosepcode" --pie --ld=-znorelro --ld=-znoseparate-code
  exe_variant "nopie-relronow" --no-pie --ld=-zrelro --ld=-znow
}

fx_for_each_target per_target
finish
