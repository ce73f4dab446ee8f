#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# RPATH/RUNPATH edits: --set-rpath (fits in place / must grow), --add-rpath,
# --remove-rpath, --shrink-rpath (+ --allowed-rpath-prefixes), --force-rpath,
# on PIE and non-PIE executables and on a shared library, for each target in
# $ELF_TARGETS. After each edit: readelf and `pkgtool inspect` show the
# intended tags, the program runs (its libraries found through the new path
# only), the library still dlopens, eu-elflint finds nothing new, segment
# invariants hold, and a stripped copy still works.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools eu-elflint
make_scratch

# Long enough that no implementation can fit it into the old string.
LONG_DIRS="a-rather-long-directory-name-so-the-new-runpath-cannot-fit-in-place-0123456789/a-second-level-of-nesting-to-push-the-string-well-past-any-slack-abcdefghij/lib"

# move_libs SCENE NEWDIR: move the scene's libraries so only a new path finds them.
move_libs() {
  mkdir -p "$1/$2"
  mv "$1/lib/"* "$1/$2/"
  rmdir "$1/lib"
}

exe_set_rpath_fits() {
  local exe=$1 s w
  w="$FX_T set-rpath $exe (fits in place)"
  case_begin "$w"
  s=$(fx_scene "$FXD" "set-fits-$exe")
  move_libs "$s" l
  pe_ok "$w" --set-rpath '$ORIGIN/../l' "$s/bin/$exe" || return 0
  # Without --force-rpath the result is DT_RUNPATH, also when the input had DT_RPATH.
  chk_state "$w" "$s/bin/$exe" runpath='$ORIGIN/../l' rpath='<none>' \
    needed='libfixture.so.1 libdep.so.1 libc.so.6'
  # Same size with patchelf and ours: the new string fits over the old one.
  # (When .dynstr must grow the sizes differ by design and are not compared:
  # patchelf rewrites .dynstr, we append a PT_LOAD; see README.)
  chk_size "$w" "$s/bin/$exe" -eq "$(fsize "$FXD/bin/$exe")"
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
}

exe_set_rpath_grows() {
  local exe=$1 s w
  w="$FX_T set-rpath $exe (grows)"
  case_begin "$w"
  s=$(fx_scene "$FXD" "set-grow-$exe")
  move_libs "$s" "$LONG_DIRS"
  local rp="/nonexistent/libpkg-test:\$ORIGIN/../$LONG_DIRS"
  pe_ok "$w" --set-rpath "$rp" "$s/bin/$exe" || return 0
  chk_state "$w" "$s/bin/$exe" runpath="$rp" rpath='<none>' \
    needed='libfixture.so.1 libdep.so.1 libc.so.6' verneed='libfixture.so.1 libc.so.6'
  verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
}

lib_set_rpath() {
  local w s rp
  for rp in '$ORIGIN' "\$ORIGIN/$LONG_DIRS:/opt/libpkg-fixture/lib64"; do
    w="$FX_T set-rpath libfixture (${#rp} chars)"
    case_begin "$w"
    s=$(fx_scene "$FXD" lib-set-rpath)
    pe_ok "$w" --set-rpath "$rp" "$s/lib/libfixture.so.1" || continue
    chk_state "$w" "$s/lib/libfixture.so.1" runpath="$rp" rpath='<none>' soname=libfixture.so.1 \
      needed=libc.so.6
    # Only the short value fits in place (same size for patchelf and ours);
    # the long one grows the file by a layout-specific amount, not compared.
    [[ $rp == '$ORIGIN' ]] && chk_size "$w" "$s/lib/libfixture.so.1" -eq "$(fsize "$FXD/lib/libfixture.so.1")"
    verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
      chk_dlopen "$w" {} "$FX_OUT"
  done
}

force_rpath() {
  local w s exe
  for exe in exe-pie exe-nopie; do
    w="$FX_T --force-rpath --set-rpath $exe"
    case_begin "$w"
    s=$(fx_scene "$FXD" "force-$exe")
    move_libs "$s" l
    pe_ok "$w" --force-rpath --set-rpath '$ORIGIN/../l' "$s/bin/$exe" || continue
    # DT_RPATH (unlike DT_RUNPATH) is also searched for the libraries' own
    # dependencies: auditwheel relies on that, so the tag itself is checked.
    chk_state "$w" "$s/bin/$exe" rpath='$ORIGIN/../l' runpath='<none>'
    verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- chk_run "$w" "$FX_OUT" {}
  done
  w="$FX_T --force-rpath --set-rpath libfixture (grows, RUNPATH -> RPATH)"
  case_begin "$w"
  s=$(fx_scene "$FXD" force-lib)
  pe_ok "$w" --force-rpath --set-rpath "/opt/$LONG_DIRS" "$s/lib/libfixture.so.1" || return 0
  chk_state "$w" "$s/lib/libfixture.so.1" rpath="/opt/$LONG_DIRS" runpath='<none>'
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
    chk_dlopen "$w" {} "$FX_OUT"
}

add_rpath() {
  local w s
  w="$FX_T add-rpath exe-pie"
  case_begin "$w"
  s=$(fx_scene "$FXD" add-exe)
  move_libs "$s" l2
  pe_ok "$w" --add-rpath '$ORIGIN/../l2' "$s/bin/exe-pie" || return 0
  chk_state "$w" "$s/bin/exe-pie" runpath='$ORIGIN/../lib:$ORIGIN/../l2' rpath='<none>'
  verify_edit "$w" "$FXD/bin/exe-pie" "$s/bin/exe-pie" -- chk_run "$w" "$FX_OUT" {}

  w="$FX_T add-rpath exe-nopie (DT_RPATH input)"
  case_begin "$w"
  s=$(fx_scene "$FXD" add-exe-nopie)
  move_libs "$s" "$LONG_DIRS"
  pe_ok "$w" --add-rpath "\$ORIGIN/../$LONG_DIRS" "$s/bin/exe-nopie" || return 0
  chk_state "$w" "$s/bin/exe-nopie" runpath="\$ORIGIN/../lib:\$ORIGIN/../$LONG_DIRS" rpath='<none>'
  verify_edit "$w" "$FXD/bin/exe-nopie" "$s/bin/exe-nopie" -- chk_run "$w" "$FX_OUT" {}

  # A library without any rpath: the edit has to add a dynamic tag.
  w="$FX_T add-rpath to a library without rpath"
  case_begin "$w"
  local pristine lib
  pristine=$(fx_variant "$FXD" norpath)
  lib=$SCRATCH/scenes/$FX_T-add-norpath.so
  cp "$pristine" "$lib"
  pe_ok "$w" --add-rpath '$ORIGIN/deps' "$lib" || return 0
  chk_state "$w" "$lib" runpath='$ORIGIN/deps' rpath='<none>' soname=libfixture.so.1
  verify_edit "$w" "$pristine" "$lib" -- chk_dlopen "$w" {} "$FX_OUT"

  # libpkg deduplicates (patchelf 0.14-0.18 append a second copy, NixOS/patchelf#497).
  if is_ours; then
    w="$FX_T add-rpath of an entry already present"
    case_begin "$w"
    s=$(fx_scene "$FXD" add-dup)
    pe_ok "$w" --add-rpath '$ORIGIN/../lib' "$s/bin/exe-pie" || return 0
    chk_unchanged "$w" "$FXD/bin/exe-pie" "$s/bin/exe-pie"
  fi
}

remove_rpath() {
  local w s exe
  for exe in exe-pie exe-nopie; do
    w="$FX_T remove-rpath $exe"
    case_begin "$w"
    s=$(fx_scene "$FXD" "remove-$exe")
    pe_ok "$w" --remove-rpath "$s/bin/$exe" || continue
    chk_state "$w" "$s/bin/$exe" rpath='<none>' runpath='<none>' \
      needed='libfixture.so.1 libdep.so.1 libc.so.6'
    # Proof the path is really gone: without LD_LIBRARY_PATH ld.so must not find the library.
    chk_run_fails "$w: library must no longer be found" "$s/bin/$exe"
    verify_edit "$w" "$FXD/bin/$exe" "$s/bin/$exe" -- \
      chk_run "$w" "$FX_OUT" --ld-path="$s/lib" {}
  done
  w="$FX_T remove-rpath libfixture"
  case_begin "$w"
  s=$(fx_scene "$FXD" remove-lib)
  pe_ok "$w" --remove-rpath "$s/lib/libfixture.so.1" || return 0
  chk_state "$w" "$s/lib/libfixture.so.1" rpath='<none>' runpath='<none>' soname=libfixture.so.1
  # Removing an entry never grows a file (patchelf and ours alike).
  chk_size "$w" "$s/lib/libfixture.so.1" -eq "$(fsize "$FXD/lib/libfixture.so.1")"
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
    chk_dlopen "$w" {} "$FX_OUT"
}

shrink_rpath() {
  local w s d
  w="$FX_T shrink-rpath exe-pie"
  case_begin "$w"
  s=$SCRATCH/scenes/$FX_T-shrink
  rm -rf "$s"
  mkdir -p "$s/bin" "$s/lib" "$s/decoy-text" "$s/decoy-machine" "$s/real" "$s/real2" "$s/empty"
  for d in lib real real2; do cp "$FXD/lib/"* "$s/$d/"; done
  # Entries that must go: a file that is not ELF, an ELF of another machine
  # (patchelf only counts a library whose e_machine matches), an empty dir,
  # a missing dir, and real2 whose libraries real already provides.
  echo "not an ELF file" >"$s/decoy-text/libfixture.so.1"
  cp "$FXD/lib/libdep.so.1" "$s/decoy-machine/"
  "${ELFCHECK[@]}" poke "$s/decoy-machine/libdep.so.1" e_machine=0x99
  local rp="\$ORIGIN/../lib:/nonexistent/libpkg:$s/decoy-text:$s/decoy-machine:$s/empty:$s/real:$s/real2"
  fx_exe "$FXD" "$s/bin/exe" --pie --rpath="$rp"
  cp "$s/bin/exe" "$s/exe.orig"
  pe_ok "$w" --shrink-rpath "$s/bin/exe" || return 0
  chk_state "$w" "$s/bin/exe" runpath="\$ORIGIN/../lib:$s/real" rpath='<none>'
  verify_edit "$w" "$s/exe.orig" "$s/bin/exe" -- chk_run "$w" "$FX_OUT" {}

  w="$FX_T shrink-rpath --allowed-rpath-prefixes"
  case_begin "$w"
  cp "$s/exe.orig" "$s/bin/exe"
  pe_ok "$w" --shrink-rpath --allowed-rpath-prefixes "/nonexistent:$s/real2" "$s/bin/exe" || return 0
  chk_state "$w" "$s/bin/exe" runpath="\$ORIGIN/../lib:$s/real2" rpath='<none>'
  verify_edit "$w" "$s/exe.orig" "$s/bin/exe" -- chk_run "$w" "$FX_OUT" {}

  # The library needs only libc, which is in none of its directories.
  w="$FX_T shrink-rpath libfixture"
  case_begin "$w"
  s=$(fx_scene "$FXD" shrink-lib)
  pe_ok "$w" --shrink-rpath "$s/lib/libfixture.so.1" || return 0
  chk_state "$w" "$s/lib/libfixture.so.1" runpath='$ORIGIN/../deps' rpath='<none>'
  verify_edit "$w" "$FXD/lib/libfixture.so.1" "$s/lib/libfixture.so.1" -- \
    chk_dlopen "$w" {} "$FX_OUT"
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  local exe
  for exe in exe-pie exe-nopie; do
    exe_set_rpath_fits "$exe"
    exe_set_rpath_grows "$exe"
  done
  lib_set_rpath
  force_rpath
  add_rpath
  remove_rpath
  shrink_rpath
}

fx_for_each_target per_target
finish
