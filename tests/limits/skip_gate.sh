# SPDX-License-Identifier: BSD-3-Clause
# The CI skip gate (scripts/check_skips.sh, run by scripts/test.sh): every
# skipped test is listed, an allow-listed skip passes, any other skip fails
# the run, and the checked-in allow-list parses and names real tests.
set -euo pipefail
root=${LIBPKG_SOURCE_DIR:?}
source "$root/scripts/check_skips.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat >"$scratch/ctest.log" <<'LOG'
100% tests passed, 0 tests failed out of 3

The following tests did not run:
	 12 - gpu_probe (Skipped)
	 40 - elf_edit_rpath_s390x (Skipped)
LOG
printf '# reviewed skips\n\ngpu_*   no GPU on this machine\n' >"$scratch/allow.txt"

rc=0
out=$(check_skips "$scratch/ctest.log" "$scratch/allow.txt") || rc=$?
[[ $rc == 1 ]] || fail "an unlisted skip must fail the run (rc $rc)"
grep -q "skipped (allowed): gpu_probe: no GPU on this machine" <<<"$out" || fail "allowed skip not listed: $out"
grep -q "skipped (NOT ALLOWED): elf_edit_rpath_s390x" <<<"$out" || fail "unlisted skip not named: $out"
grep -q "skipped tests: 2" <<<"$out" || fail "count missing: $out"

echo "elf_edit_*_s390x  no s390x cross compiler (example)" >>"$scratch/allow.txt"
rc=0
out=$(check_skips "$scratch/ctest.log" "$scratch/allow.txt") || rc=$?
[[ $rc == 0 ]] || fail "all skips allowed must pass (rc $rc): $out"

printf 'No tests were found!!!\n' >"$scratch/none.log"
rc=0
out=$(check_skips "$scratch/none.log" "$scratch/allow.txt") || rc=$?
[[ $rc == 0 && $out == "skipped tests: 0" ]] || fail "no skips: rc $rc, $out"

# The real allow-list: every entry has a reason and matches a registered
# test (a stale entry would hide a future skip of another test).
registered=$(ctest --test-dir "${LIBPKG_BINARY_DIR:?}" -N | sed -n 's/^ *Test *#[0-9]*: //p')
while read -r pattern reason; do
  [[ -z $pattern || $pattern == \#* ]] && continue
  [[ -n $reason ]] || fail "allow-list entry '$pattern' has no reason"
  found=0
  while read -r name; do
    # shellcheck disable=SC2053
    [[ $name == $pattern ]] && found=1 && break
  done <<<"$registered"
  ((found)) || fail "allow-list entry '$pattern' matches no registered test"
done <"$root/tests/skip-allowlist.txt"

((failures == 0)) || exit 1
echo PASS
