#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Kill mid-write: a large (~300 MB, $ELFTEST_BIG_MB) shared library is edited
# and the editor is killed with SIGKILL after various short delays, for three
# write paths: a growing in-place edit, an --in-place-atomic edit (ours only)
# and an --output edit. Afterwards the edited path must hold either the
# original bytes or the complete result of an uninterrupted run (never a
# truncated or half-patched file), the input of --output must be untouched, and
# the output path must not exist or be complete. Leftover temporary files are
# reported (SIGKILL leaves no chance to clean up) but do not fail the test.
# x86_64 only: the property is about file I/O, not the target.
source "$(dirname "$0")/lib/common.sh"
source "$ELFTEST_DIR/lib/fixtures.sh"
source "$ELFTEST_DIR/lib/checks.sh"

require_elf_tools objcopy
make_scratch

BIG_MB=${ELFTEST_BIG_MB:-300}
# Kill points as fractions of an uninterrupted run of the same edit, so they
# land in the read, compute and write phases on any machine and tool.
FRACTIONS=${ELFTEST_KILL_FRACTIONS:-"0 0.05 0.15 0.3 0.45 0.6 0.75 0.9 1.0"}
LONG="\$ORIGIN:/opt/libpkg/$(printf 'a-long-runpath-entry-%.0s' {1..12})"

# matches FILE LABEL=PATH...: FILE is byte-identical to one of the paths;
# prints that one's label.
matches() {
  local file=$1 c
  shift
  for c in "$@"; do
    if cmp -s "$file" "${c#*=}"; then
      printf '%s\n' "${c%%=*}"
      return 0
    fi
  done
  return 1
}

# leftovers DIR EXPECTED...: note files other than the expected ones.
leftovers() {
  local dir=$1 f name extra=()
  shift
  for f in "$dir"/* "$dir"/.[!.]*; do
    name=${f##*/}
    [[ " $* " == *" $name "* ]] || extra+=("$name ($(fsize "$f") bytes)")
  done
  ((${#extra[@]} == 0)) || log "note: leftover files in ${dir##*/}/: ${extra[*]}"
}

now() { date +%s.%N; }

# timed VAR ARGS...: pe_ok ARGS, storing the wall time in seconds in VAR.
timed() {
  local var=$1 t0 t1
  shift
  t0=$(now)
  pe_ok "$@" || return 1
  t1=$(now)
  printf -v "$var" '%s' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
}

# kill_after DELAY ARGS...: start the tool, SIGKILL it after DELAY seconds;
# prints "killed" or "finished (exit N)".
kill_after() {
  local delay=$1 pid rc=0
  shift
  "$TOOL" "$@" >/dev/null 2>"$SCRATCH/kill.err" &
  pid=$!
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    echo killed
  else
    wait "$pid" || rc=$?
    echo "finished (exit $rc)"
  fi
}

main() {
  fx_target x86_64 || missing "x86_64 target unavailable: $FX_MISSING"
  FXD=$SCRATCH/fx-$FX_T
  mkdir -p "$FXD/obj" "$FXD/bin"
  log "building a ${BIG_MB} MB shared library"
  fx_big_lib "$FXD" "$SCRATCH/pristine.so" "$BIG_MB"
  _fx_cc -O1 -fPIE -c "$ELFTEST_DIR/src/dlopen_driver.c" -o "$FXD/obj/driver.o"
  _fx_cc -pie "$FXD/obj/driver.o" -ldl -o "$FXD/bin/dlopen_driver"
  local pristine=$SCRATCH/pristine.so w d pristine_sha
  chmod 0755 "$pristine"
  pristine_sha=$(sha "$pristine")

  # Uninterrupted reference results.
  local modes="grow output"
  is_ours && modes+=" atomic"
  mkdir -p "$SCRATCH/ref"
  case_begin "reference results"
  local t_grow t_output t_atomic
  cp "$pristine" "$SCRATCH/ref/grow.so"
  timed t_grow "reference growth edit" --set-rpath "$LONG" "$SCRATCH/ref/grow.so" || return 0
  timed t_output "reference --output edit" --set-rpath "$LONG" --output "$SCRATCH/ref/output.so" "$pristine" || return 0
  expect_eq "reference --output edit: sha256 of the input" "$pristine_sha" "$(sha "$pristine")"
  # The same edit written elsewhere gives the same bytes.
  expect_same_file "reference --output edit: same bytes as the in-place edit" \
    "$SCRATCH/ref/grow.so" "$SCRATCH/ref/output.so"
  if is_ours; then
    cp "$pristine" "$SCRATCH/ref/atomic.so"
    timed t_atomic "reference --in-place-atomic edit" --in-place-atomic --set-rpath '$ORIGIN' "$SCRATCH/ref/atomic.so" || return 0
    chk_state "reference --in-place-atomic edit" "$SCRATCH/ref/atomic.so" runpath='$ORIGIN'
  fi
  log "uninterrupted: growth ${t_grow}s, --output ${t_output}s${t_atomic:+, --in-place-atomic ${t_atomic}s}"
  chk_state "reference growth edit" "$SCRATCH/ref/grow.so" runpath="$LONG" soname=libbig.so.1
  chk_segments "reference growth edit" "$SCRATCH/ref/grow.so"
  chk_dlopen "reference growth edit" "$SCRATCH/ref/grow.so" "$FX_OUT"

  local delay mode outcome which fraction total
  for mode in $modes; do
    total=t_$mode
    for fraction in $FRACTIONS; do
      delay=$(awk -v f="$fraction" -v t="${!total}" 'BEGIN { printf "%.3f", f * t }')
      w="kill -9 after ${delay}s (${fraction} of a run): $mode edit"
      case_begin "$w"
      d=$SCRATCH/run-$mode
      rm -rf "$d"
      mkdir -p "$d"
      cp "$pristine" "$d/lib.so"
      case $mode in
        grow) outcome=$(kill_after "$delay" --set-rpath "$LONG" "$d/lib.so") ;;
        atomic) outcome=$(kill_after "$delay" --in-place-atomic --set-rpath '$ORIGIN' "$d/lib.so") ;;
        output) outcome=$(kill_after "$delay" --set-rpath "$LONG" --output "$d/out.so" "$d/lib.so") ;;
      esac
      if [[ $outcome == "finished (exit "[1-9]* ]]; then
        fail "$w: the edit failed on its own: $outcome: $(head -c 300 "$SCRATCH/kill.err")"
      fi
      if [[ $mode == output ]]; then
        chk_unchanged "$w: input of --output" "$pristine" "$d/lib.so"
        local state=absent
        if [[ -e $d/out.so ]]; then
          if which=$(matches "$d/out.so" "result=$SCRATCH/ref/output.so"); then
            pass
            state=complete
          else
            fail "$w ($outcome): $d/out.so exists but is not the complete result (size $(fsize "$d/out.so"), complete: $(fsize "$SCRATCH/ref/output.so"))"
            state=INCOMPLETE
          fi
        else
          pass
        fi
        log "  $outcome; output $state"
        leftovers "$d" lib.so out.so
      else
        if which=$(matches "$d/lib.so" "original=$pristine" "result=$SCRATCH/ref/$mode.so"); then
          pass
          log "  $outcome; file is the $which"
        else
          fail "$w ($outcome): $d/lib.so is neither the original nor the complete result (size $(fsize "$d/lib.so"), original $(fsize "$pristine"), result $(fsize "$SCRATCH/ref/$mode.so"))"
        fi
        leftovers "$d" lib.so
      fi
    done
  done
}

main
finish
