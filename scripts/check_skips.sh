# SPDX-License-Identifier: BSD-3-Clause
# check_skips LOG ALLOWLIST (sourced by scripts/test.sh; tested by
# tests/limits/skip_gate.sh): lists the tests that ctest's output in LOG
# reports as skipped (exit 77) and returns 1 when one of them is not in
# ALLOWLIST. ALLOWLIST lines are "PATTERN  reason" (a bash glob on the test
# name, then why that skip is acceptable); blank lines and '#' comments are
# ignored. A skip is not a pass: only reviewed reasons (no GPU here) may
# stand in for a test that did not run.
check_skips() {
  local log=$1 allowlist=$2 name pattern reason allowed_by bad=0 count=0
  local -a patterns=() reasons=()
  while read -r pattern reason; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    patterns+=("$pattern")
    reasons+=("$reason")
  done <"$allowlist"
  while read -r name; do
    [[ -z $name ]] && continue
    ((count += 1))
    allowed_by=""
    for i in "${!patterns[@]}"; do
      # shellcheck disable=SC2053  # the pattern is a glob on purpose
      if [[ $name == ${patterns[$i]} ]]; then
        allowed_by=${reasons[$i]}
        break
      fi
    done
    if [[ -n $allowed_by ]]; then
      echo "  skipped (allowed): $name: $allowed_by"
    else
      echo "  skipped (NOT ALLOWED): $name: see its log; fix the cause or add it to tests/skip-allowlist.txt with a reason"
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (Skipped)$/\1/p' "$log")
  echo "skipped tests: $count"
  return "$bad"
}
