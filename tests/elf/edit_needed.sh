#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DT_NEEDED edits: --replace-needed (longer name: grows; shorter: fits), with
# the .gnu.version_r vn_file renamed too, --add-needed (one and several names,
# executable and library), --remove-needed, for each target in $ELF_TARGETS.
# Programs are run so that ld.so proves the edit: the renamed library is the
# only one present (a stale vn_file breaks version checking), an added
# library's symbol becomes visible, a removed one's disappears.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

# chk_needed_set WHAT FILE "NAMES...": DT_NEEDED holds exactly these names, in
# any order (where an added entry goes is the implementation's choice).
chk_needed_set() {
  local got want
  got=$(state_of "$2" needed | tr ' ' '\n' | sort | xargs)
  want=$(tr ' ' '\n' <<<"$3" | sort | xargs)
  expect_eq "$1: DT_NEEDED set of ${2##*/}" "$want" "$got"
}

replace_needed() {
  local exe=$1 new=$2 w s
  w="$FX_T replace-needed $exe libfixture.so.1 -> $new"
  case_begin "$w"
  s=$(fx_scene "$FXD" "replace-$exe-${#new}")
  # Only the renamed library exists, with the matching soname, the way
  # auditwheel grafts libraries (copy, set-soname, replace-needed).
  rm "$s/lib/libfixture.so.1"
  fx_lib "$FXD" "$s/lib/$new" --soname="$new"
  pe_ok "$w" --replace-needed libfixture.so.1 "$new" "$s/bin/$exe" || return 0
  chk_state "$w" "$s/bin/$exe" needed="$new libdep.so.1 libc.so.6" verneed="$new libc.so.6"
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
}

add_needed_exe() {
  local exe=$1 w s
  w="$FX_T add-needed $exe libextra.so.1"
  case_begin "$w"
  s=$(fx_scene "$FXD" "add-$exe")
  pe_ok "$w" --add-needed libextra.so.1 "$s/bin/$exe" || return 0
  chk_needed_set "$w" "$s/bin/$exe" "libextra.so.1 libfixture.so.1 libdep.so.1 libc.so.6"
  chk_state "$w" "$s/bin/$exe" verneed="libfixture.so.1 libc.so.6"
  # libextra is found through the unchanged $ORIGIN/../lib path; extra_value
  # becomes visible in the global scope only if ld.so really loaded it.
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- \
    chk_run "$w" "$FX_OUT"$'\n'"extra_value=555" {} extra_value
}

add_needed_lib() {
  local w s
  w="$FX_T add-needed libfixture libdep.so.1 libextra.so.1"
  case_begin "$w"
  s=$(fx_scene "$FXD" add-lib)
  pe_ok "$w" --add-needed libdep.so.1 --add-needed libextra.so.1 "$s/lib/libfixture.so.1" || return 0
  chk_needed_set "$w" "$s/lib/libfixture.so.1" "libdep.so.1 libextra.so.1 libc.so.6"
  chk_state "$w" "$s/lib/libfixture.so.1" soname=libfixture.so.1 runpath="$FX_DEFAULT_LIB_RPATH"
  # dlsym on the handle searches the library's dependency tree.
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
    chk_dlopen "$w" {} "$FX_OUT"$'\n'"dep_value=777"$'\n'"extra_value=555" \
    --ld-path="$s/lib" dep_value extra_value
}

remove_needed() {
  local exe=$1 w s
  w="$FX_T remove-needed $exe libdep.so.1"
  case_begin "$w"
  s=$(fx_scene "$FXD" "remove-$exe")
  pe_ok "$w" --remove-needed libdep.so.1 "$s/bin/$exe" || return 0
  chk_state "$w" "$s/bin/$exe" needed="libfixture.so.1 libc.so.6" verneed="libfixture.so.1 libc.so.6"
  # Removing an entry never grows a file (patchelf and ours alike).
  chk_size "$w" "$s/bin/$exe" -eq "$(fsize "$FXD/bin/$exe")"
  # With the library still on disk, only a really removed DT_NEEDED makes dep_value missing.
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- \
    chk_run "$w" "$FX_OUT"$'\n'"dep_value=missing" {} dep_value
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  local exe
  for exe in exe-pie exe-nopie; do
    replace_needed "$exe" libfixture-1a2b3c4d5e6f7a8b.so.1
    replace_needed "$exe" libfx.so.1
    add_needed_exe "$exe"
    remove_needed "$exe"
  done
  add_needed_lib
}

fx_for_each_target per_target
finish
