# SPDX-License-Identifier: BSD-3-Clause
# Checks run after an edit (sourced after common.sh and fixtures.sh).
# Every chk_* records pass/fail and never aborts the script.

# chk_run WHAT EXPECTED [fx_run options] PROG ARGS...: the program exits 0 and
# prints exactly EXPECTED (stdout and stderr together).
chk_run() {
  local what=$1 want=$2 out rc=0
  shift 2
  out=$(fx_run "$@" 2>&1) || rc=$?
  if ((rc == 0)) && [[ $out == "$want" ]]; then
    pass
  else
    fail "$what: running $*: expected exit 0 and [${want//$'\n'/\\n}], got exit $rc and [$(head -c 600 <<<"${out//$'\n'/\\n}")]"
  fi
}

# chk_run_fails WHAT [fx_run options] PROG ARGS...: the program must NOT run
# (e.g. its library is no longer found after --remove-rpath).
chk_run_fails() {
  local what=$1 out rc=0
  shift
  out=$(fx_run "$@" 2>&1) || rc=$?
  if ((rc != 0)); then
    pass
  else
    fail "$what: running $* was expected to fail, but exited 0 with [${out//$'\n'/\\n}]"
  fi
}

# chk_dlopen WHAT LIB EXPECTED [--ld-path=DIRS] [SYMBOL...]: the dlopen driver
# of the current fixture set ($FXD) loads LIB and prints EXPECTED.
chk_dlopen() {
  local what=$1 lib=$2 want=$3
  shift 3
  local opts=()
  while [[ ${1:-} == --* ]]; do
    opts+=("$1")
    shift
  done
  chk_run "$what (dlopen)" "$want" "${opts[@]}" "$FXD/bin/dlopen_driver" "$(realpath "$lib")" "$@"
}

# state_of FILE KEY: one key of `elfcheck.py state` (readelf's view).
state_of() {
  "${ELFCHECK[@]}" state "$1" | sed -n "s/^$2=//p"
}

# chk_state WHAT FILE KEY=VALUE...: readelf shows the expected values (keys:
# interp soname rpath runpath needed verneed; "<none>" = absent), no dynamic
# tag appears twice, and `pkgtool inspect --json` agrees with readelf.
chk_state() {
  local what=$1 file=$2 kv key want got st
  shift 2
  st=$("${ELFCHECK[@]}" state "$file")
  for kv in "$@"; do
    key=${kv%%=*}
    want=${kv#*=}
    got=$(sed -n "s/^$key=//p" <<<"$st")
    expect_eq "$what: readelf $key of ${file##*/}" "$want" "$got"
  done
  if grep -q '^dup_' <<<"$st"; then
    fail "$what: ${file##*/} has duplicate dynamic tags: $(grep '^dup_' <<<"$st" | tr '\n' ' ')"
  fi
  chk_inspect_agrees "$what" "$file" "$st"
}

# chk_inspect_agrees WHAT FILE READELF_STATE: our reader and readelf agree.
chk_inspect_agrees() {
  local what=$1 file=$2 st=$3 json=$SCRATCH/inspect.json ist key
  if [[ -z $PKGTOOL || ! -x $PKGTOOL ]]; then
    return 0
  fi
  if ! "$PKGTOOL" inspect --json "$file" >"$json" 2>"$SCRATCH/inspect.err"; then
    fail "$what: pkgtool inspect --json ${file##*/} failed: $(head -c 300 "$SCRATCH/inspect.err")"
    return 0
  fi
  ist=$("${ELFCHECK[@]}" inspect-state "$json")
  local keys="interp soname rpath runpath needed"
  # readelf -V needs section headers; inspect reads DT_VERNEED, so compare
  # version needs only where readelf can see them.
  [[ $("${ELFCHECK[@]}" header "$file" | sed -n 's/^shnum=//p') != 0 ]] && keys+=" verneed"
  for key in $keys; do
    expect_eq "$what: pkgtool inspect vs readelf, $key of ${file##*/}" \
      "$(sed -n "s/^$key=//p" <<<"$st")" "$(sed -n "s/^$key=//p" <<<"$ist")"
  done
}

# chk_segments WHAT FILE: program header invariants (elfcheck.py segments).
chk_segments() {
  local what=$1 file=$2 out
  if out=$("${ELFCHECK[@]}" segments "$file" --min-align "$FX_MIN_ALIGN"); then
    pass
  else
    fail "$what: segment invariants broken in ${file##*/}:"$'\n'"$out"
  fi
}

_lint() {
  # Messages name the file; drop it so pristine and edited compare.
  eu-elflint --gnu-ld "$1" 2>&1 | sed "s|$1|FILE|g" | grep -v '^No errors$' | sort -u || true
}

# chk_elflint WHAT PRISTINE EDITED: eu-elflint reports nothing the pristine
# file did not already have.
chk_elflint() {
  local what=$1 new
  new=$(comm -13 <(_lint "$2") <(_lint "$3"))
  if [[ -z $new ]]; then
    pass
  else
    fail "$what: eu-elflint --gnu-ld reports new problems in ${3##*/}:"$'\n'"$new"
  fi
}

# verify_edit WHAT PRISTINE EDITED -- CHECK...: the common post-edit checks:
# segment invariants, no new eu-elflint messages, the CHECK command passes with
# {} replaced by EDITED, and again on a copy stripped with the target's strip
# (strip is what broke patchelf'd files in the past).
verify_edit() {
  local what=$1 pristine=$2 edited=$3
  shift 4 # WHAT PRISTINE EDITED --
  chk_segments "$what" "$edited"
  chk_elflint "$what" "$pristine" "$edited"
  _verify_run "$what" "$edited" "$@"
  if [[ $("${ELFCHECK[@]}" header "$edited" | sed -n 's/^shnum=//p') == 0 ]]; then
    return 0 # strip needs section headers
  fi
  local stripped=$edited.stripped err
  if ! err=$("$FX_STRIP" -o "$stripped" "$edited" 2>&1); then
    fail "$what: $FX_STRIP ${edited##*/} failed: $err"
    return 0
  fi
  if [[ -n $err ]]; then
    fail "$what: $FX_STRIP ${edited##*/} warned: $err"
  fi
  _verify_run "$what (after strip)" "$stripped" "$@"
  rm -f "$stripped"
}

_verify_run() {
  local what=$1 file=$2 a cmd=()
  shift 2
  for a in "$@"; do
    [[ $a == "{}" ]] && a=$file
    cmd+=("$a")
  done
  # The check's own WHAT (first argument after the function name) gets the context.
  cmd[1]="$what: ${cmd[1]}"
  "${cmd[@]}"
}

# chk_unchanged WHAT ORIGINAL FILE: FILE is byte-identical to ORIGINAL.
chk_unchanged() {
  expect_same_file "$1: ${3##*/} must be byte-identical" "$2" "$3"
}

# chk_size WHAT FILE OP BYTES: compare the file size (OP: -eq -le -gt).
chk_size() {
  local what=$1 file=$2 op=$3 n=$4 size ok=0
  size=$(fsize "$file")
  case $op in
    -eq) ((size == n)) && ok=1 ;;
    -le) ((size <= n)) && ok=1 ;;
    -gt) ((size > n)) && ok=1 ;;
  esac
  if ((ok)); then
    pass
  else
    fail "$what: size of ${file##*/} is $size, expected $op $n"
  fi
}
