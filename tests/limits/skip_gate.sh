# SPDX-License-Identifier: BSD-3-Clause
# The CI skip gate (scripts/check_skips.sh, run by scripts/test.sh): every
# skipped test is listed, an allow-listed skip passes, any other skip fails
# the run, and the checked-in allow-list parses and names real tests.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
root=${LIBPKG_SOURCE_DIR:?}
source "$root/scripts/check_skips.sh"
make_scratch
scratch=$SCRATCH

cat >"$scratch/ctest.log" <<'LOG'
100% tests passed, 0 tests failed out of 3

The following tests did not run:
	 12 - gpu_probe (Skipped)
	 40 - elf_edit_rpath_s390x (Skipped)
LOG
printf '# reviewed skips\n\ngpu_*   no GPU on this machine\n' >"$scratch/allow.txt"

rc=0
out=$(check_skips "$scratch/ctest.log" "$scratch/allow.txt") || rc=$?
expect_eq "an unlisted skip fails the run" 1 "$rc"
check "allowed skip listed: $out" grep -q "skipped (allowed): gpu_probe: no GPU on this machine" <<<"$out"
check "unlisted skip named: $out" grep -q "skipped (NOT ALLOWED): elf_edit_rpath_s390x" <<<"$out"
check "count listed: $out" grep -q "skipped tests: 2" <<<"$out"

echo "elf_edit_*_s390x  no s390x cross compiler (example)" >>"$scratch/allow.txt"
rc=0
out=$(check_skips "$scratch/ctest.log" "$scratch/allow.txt") || rc=$?
expect_eq "all skips allowed pass ($out)" 0 "$rc"

printf 'No tests were found!!!\n' >"$scratch/none.log"
rc=0
out=$(check_skips "$scratch/none.log" "$scratch/allow.txt") || rc=$?
expect_eq "no skips" "0 skipped tests: 0" "$rc $out"

# The real allow-list: every entry has a reason and matches a registered
# test (a stale entry would hide a future skip of another test).
registered=$(ctest --test-dir "${LIBPKG_BINARY_DIR:?}" -N | sed -n 's/^ *Test *#[0-9]*: //p')
while read -r pattern reason; do
  [[ -z $pattern || $pattern == \#* ]] && continue
  check "allow-list entry '$pattern' has a reason" test -n "$reason"
  found=0
  while read -r name; do
    # shellcheck disable=SC2053
    if [[ $name == $pattern ]]; then
      found=1
      break
    fi
  done <<<"$registered"
  check "allow-list entry '$pattern' matches a registered test" test "$found" = 1
done <"$root/tests/skip-allowlist.txt"

finish
