#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Several operations in one call (the auditwheel pattern: replace + add +
# remove needed + rpath + interpreter; patchelf 0.14.3 corrupted add+replace,
# NixOS/patchelf#359), several files in one call, and --output (input
# untouched by sha256, output complete, executable and correct; also with no
# edit and onto an existing file), for each target in $ELF_TARGETS.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

LONG_DIR="libs-with-a-long-directory-name-so-that-the-runpath-has-to-grow-0123456789abcdef0123456789"
NEW_NAME=libfixture-1a2b3c4d.so.1

# sorted "WORDS": the words sorted, space-separated (DT_NEEDED order after
# an --add-needed is the implementation's choice).
sorted() { tr ' ' '\n' <<<"$1" | sort | xargs; }

lib_many_ops() {
  local w s lib
  w="$FX_T lib: soname + force-rpath + add-needed + remove-needed(absent) in one call"
  case_begin "$w"
  s=$(fx_scene "$FXD" lib-multi)
  lib=$s/lib/libfixture.so.1
  pe_ok "$w" --set-soname "$NEW_NAME" --force-rpath --set-rpath "\$ORIGIN:/opt/$LONG_DIR" \
    --add-needed libextra.so.1 --remove-needed libnot-there.so.9 "$lib" || return 0
  chk_state "$w" "$lib" soname="$NEW_NAME" rpath="\$ORIGIN:/opt/$LONG_DIR" runpath='<none>'
  expect_eq "$w: DT_NEEDED set" "libc.so.6 libextra.so.1" "$(sorted "$(state_of "$lib" needed)")"
  # libextra.so.1 sits next to the library: found through the new $ORIGIN rpath.
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$lib" -- \
    chk_dlopen "$w" {} "$FX_OUT"$'\n'"extra_value=555" extra_value
}

exe_many_ops() {
  local exe=$1 w s interp
  w="$FX_T $exe: replace+add+remove-needed, set-rpath, set-interpreter in one call"
  case_begin "$w"
  s=$(fx_scene "$FXD" "exe-multi-$exe")
  mkdir -p "$s/$LONG_DIR" "$s/ld"
  fx_lib "$FXD" "$s/$LONG_DIR/$NEW_NAME" --soname="$NEW_NAME"
  mv "$s/lib/libextra.so.1" "$s/lib/libdep.so.1" "$s/$LONG_DIR/"
  rm -r "${s:?}/lib"
  interp="$s/ld/a-copied-loader-with-a-longer-name-${FX_LDSO##*/}"
  cp "$FX_LDSO" "$interp"
  pe_ok "$w" --replace-needed libfixture.so.1 "$NEW_NAME" --add-needed libextra.so.1 \
    --remove-needed libdep.so.1 --set-rpath "\$ORIGIN/../$LONG_DIR" \
    --set-interpreter "$interp" "$s/bin/$exe" || return 0
  chk_state "$w" "$s/bin/$exe" interp="$interp" runpath="\$ORIGIN/../$LONG_DIR" rpath='<none>' \
    verneed="$NEW_NAME libc.so.6"
  expect_eq "$w: DT_NEEDED set" "$(sorted "$NEW_NAME libc.so.6 libextra.so.1")" \
    "$(sorted "$(state_of "$s/bin/$exe" needed)")"
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- \
    chk_run "$w" "$FX_OUT"$'\n'"extra_value=555"$'\n'"dep_value=missing" {} extra_value dep_value
}

several_files() {
  local w s
  w="$FX_T --set-rpath on three files in one call"
  case_begin "$w"
  s=$(fx_scene "$FXD" several)
  mkdir -p "$s/$LONG_DIR"
  mv "$s/lib/"* "$s/$LONG_DIR/"
  pe_ok "$w" --set-rpath "\$ORIGIN/../$LONG_DIR" "$s/bin/exe-pie" "$s/bin/exe-nopie" \
    "$s/$LONG_DIR/libfixture.so.1" || return 0
  local exe
  for exe in exe-pie exe-nopie; do
    chk_state "$w" "$s/bin/$exe" runpath="\$ORIGIN/../$LONG_DIR" rpath='<none>'
    verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
  done
  chk_state "$w" "$s/$LONG_DIR/libfixture.so.1" runpath="\$ORIGIN/../$LONG_DIR" soname=libfixture.so.1
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/$LONG_DIR/libfixture.so.1" -- \
    chk_dlopen "$w" {} "$FX_OUT"

  # Prints for several files: one block per file, in order.
  w="$FX_T --print-soname --print-needed on two files"
  case_begin "$w"
  if pe --print-soname --print-needed "$FXD/lib/libfixture.so.1" "$FXD/lib/libdep.so.1" >"$s/print.out"; then
    expect_eq "$w: output" "libfixture.so.1"$'\n'"libc.so.6"$'\n'"libdep.so.1" "$(cat "$s/print.out")"
  else
    fail "$w: exited non-zero: $(head -c 300 "$SCRATCH/pe.err")"
  fi
}

output_option() {
  local w s before out
  for mode in grows fits; do
    w="$FX_T --output ($mode) exe-pie"
    case_begin "$w"
    s=$(fx_scene "$FXD" "output-$mode")
    before=$(sha "$s/bin/exe-pie")
    out=$s/bin/exe-out
    local rp='$ORIGIN/../l'
    [[ $mode == grows ]] && rp="\$ORIGIN/../$LONG_DIR"
    mkdir -p "$s/${rp#\$ORIGIN/../}"
    cp "$s/lib/"* "$s/${rp#\$ORIGIN/../}/"
    rm -r "${s:?}/lib"
    pe_ok "$w" --set-rpath "$rp" --output "$out" "$s/bin/exe-pie" || continue
    expect_eq "$w: sha256 of the input" "$before" "$(sha "$s/bin/exe-pie")"
    chk_state "$w" "$out" runpath="$rp" rpath='<none>'
    expect_eq "$w: output file mode" "$(stat -c %a "$FXD/bin/exe-pie")" "$(stat -c %a "$out")"
    verify_edit "$w" "$FXD/bin/exe-pie" "$out" -- chk_run "$w" "$FX_OUT" {}
  done

  w="$FX_T --output onto an existing file"
  case_begin "$w"
  s=$(fx_scene "$FXD" output-existing)
  echo "old content that must be replaced" >"$s/bin/existing"
  pe_ok "$w" --add-rpath /opt/libpkg/extra --output "$s/bin/existing" "$s/bin/exe-pie" || return 0
  chk_unchanged "$w: input" "$FXD/bin/exe-pie" "$s/bin/exe-pie"
  chk_state "$w" "$s/bin/existing" runpath='$ORIGIN/../lib:/opt/libpkg/extra'
  # The result replaces the old file: it must carry the input's mode, not the old file's.
  expect_eq "$w: output file mode" "$(stat -c %a "$FXD/bin/exe-pie")" "$(stat -c %a "$s/bin/existing")"
  chk_run "$w" "$FX_OUT" "$s/bin/existing"

  # No edit at all: the output is a byte-identical copy.
  w="$FX_T --output without edits"
  case_begin "$w"
  pe_ok "$w" --output "$s/bin/copy" "$s/bin/exe-pie" || return 0
  chk_unchanged "$w: input" "$FXD/bin/exe-pie" "$s/bin/exe-pie"
  if [[ -e $s/bin/copy ]]; then
    chk_unchanged "$w: output" "$FXD/bin/exe-pie" "$s/bin/copy"
  else
    fail "$w: no output file written"
  fi
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  lib_many_ops
  exe_many_ops exe-pie
  exe_many_ops exe-nopie
  several_files
  output_option
}

fx_for_each_target per_target
finish
