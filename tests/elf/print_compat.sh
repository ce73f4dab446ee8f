#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# patchelf output compatibility: --print-rpath, --print-needed, --print-soname,
# --print-interpreter (alone, all four together, and on two files at once) give
# exactly Debian patchelf's stdout on every fixture of every target in
# $ELF_TARGETS, plus a few system files. Where Debian's patchelf fails (e.g.
# --print-interpreter on a library), ours must fail too, with "error: ".
# Always compares against /usr/bin/patchelf ($REF_PATCHELF).
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools
[[ -x $REF_PATCHELF ]] || missing "reference patchelf not installed: $REF_PATCHELF"
make_scratch

OPTION_SETS=(
  "--print-rpath"
  "--print-needed"
  "--print-soname"
  "--print-interpreter"
  "--print-interpreter --print-soname --print-rpath --print-needed"
  # patchelf prints in its own fixed order whatever the option order.
  "--print-needed --print-rpath --print-soname"
)

# compare WHAT FILE...: every option set, ours vs the reference.
compare() {
  local what=$1
  shift
  compare_as "$what" "$*" "$@"
}

# compare_as WHAT "REF_FILES" OUR_FILES...: the reference runs on REF_FILES
# (space-separated), ours on OUR_FILES; used where 0.14.3 cannot read the file
# itself (no section headers) but an equivalent one.
compare_as() {
  local what=$1 ref_files=$2 opts rc_ref rc_ours
  shift 2
  for opts in "${OPTION_SETS[@]}"; do
    rc_ref=0 rc_ours=0
    # shellcheck disable=SC2086  # option sets and file lists are split on purpose
    "$REF_PATCHELF" $opts $ref_files >"$SCRATCH/ref.out" 2>"$SCRATCH/ref.err" || rc_ref=$?
    # shellcheck disable=SC2086
    "$TOOL" $opts "$@" >"$SCRATCH/ours.out" 2>"$SCRATCH/ours.err" || rc_ours=$?
    if ((rc_ref == 0)); then
      if ((rc_ours != 0)); then
        fail "$what: $opts: reference exits 0, ours exits $rc_ours: $(head -c 300 "$SCRATCH/ours.err")"
      elif cmp -s "$SCRATCH/ref.out" "$SCRATCH/ours.out"; then
        pass
      else
        fail "$what: $opts: stdout differs from $REF_PATCHELF:"$'\n'"$(diff "$SCRATCH/ref.out" "$SCRATCH/ours.out" | head -20)"
      fi
    elif ((rc_ours == 0)); then
      # Debian's 0.14.3 has bugs; not ours to copy.
      log "note: $what: $opts: reference fails ($(head -c 200 "$SCRATCH/ref.err")), ours succeeds"
    elif ! is_ours || [[ $(head -c 7 "$SCRATCH/ours.err") == "error: " ]]; then
      pass
    else
      fail "$what: $opts: ours fails (exit $rc_ours) without an 'error: ' message: $(head -c 300 "$SCRATCH/ours.err")"
    fi
  done
}

per_target() {
  FXD=$SCRATCH/fx-$FX_T
  fx_build "$FXD"
  local f v
  for f in "$FXD/bin/exe-pie" "$FXD/bin/exe-nopie" "$FXD/bin/dlopen_driver" "$FXD/lib/"*; do
    compare "$FX_T ${f##*/}" "$f"
  done
  for v in $FX_VARIANT_NAMES; do
    [[ $v == noshdr ]] && continue
    compare "$FX_T variant $v" "$(fx_variant "$FXD" "$v")"
  done
  # 0.14.3 refuses files without section headers; the same library with them
  # must print the same.
  compare_as "$FX_T variant noshdr" "$FXD/lib/libfixture.so.1" "$(fx_variant "$FXD" noshdr)"
  # An rpath with every kind of entry ($ORIGIN, ${ORIGIN}, $LIB, empty, duplicates).
  local odd='$ORIGIN/../lib:${ORIGIN}/x::$LIB/y:/opt/a:/opt/a'
  fx_lib "$FXD" "$FXD/var/odd.so" --rpath="$odd" --no-soname
  compare "$FX_T odd rpath" "$FXD/var/odd.so"
  compare "$FX_T two files" "$FXD/bin/exe-pie" "$FXD/lib/libfixture.so.1"
}

system_files() {
  local f
  for f in /bin/ls /bin/true /usr/bin/patchelf /lib/x86_64-linux-gnu/libc.so.6 \
    /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libstdc++.so.6 /lib64/ld-linux-x86-64.so.2; do
    [[ -e $f ]] || continue
    compare "system ${f}" "$(realpath "$f")"
  done
}

fx_for_each_target per_target
[[ " ${ELF_TARGETS:-x86_64} " == *" x86_64 "* ]] && system_files
finish
