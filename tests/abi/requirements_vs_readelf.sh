#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# abi::version_requirements on real libraries equals readelf: the
# (library, version) pairs of .gnu.version_r in file order, and per pair the
# undefined .dynsym symbols bound to it (readelf --dyn-syms shows the
# version index, readelf -V maps it to the pair), demangled by c++filt
# --no-verbose (the __cxa_demangle spelling), sorted; --max truncates.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../deps/fixtures.sh"
require_tools g++ gcc readelf c++filt
[[ -n "${POLICY_PROBE:-}" ]] || missing "POLICY_PROBE not set (build the policy_probe target, run through ctest)"
make_scratch
cd "$SCRATCH"
check "compile fixtures" build_policy_fixtures

compare() {  # LIB MAX
  local lib=$1 max=$2
  "$POLICY_PROBE" requirements --max "$max" "$lib" >"$lib.ours.json" || return 1
  readelf -V --wide "$lib" >"$lib.V"
  readelf --dyn-syms --wide "$lib" >"$lib.syms"
  "$LIBPKG_PYTHON" - "$lib" "$max" <<'PY'
import json, re, subprocess, sys
lib, max_examples = sys.argv[1], int(sys.argv[2])
ours = json.load(open(lib + ".ours.json"))
# .gnu.version_r: "File: X" lines, then "Name: V ... Version: N".
pairs, by_index, current, in_r = [], {}, None, False
for line in open(lib + ".V"):
    if "Version needs section" in line:
        in_r = True
        continue
    if in_r and "Version definition section" in line:
        in_r = False
    if not in_r:
        continue
    m = re.search(r"File: (\S+)", line)
    if m:
        current = m.group(1)
        continue
    m = re.search(r"Name: (\S+)\s+Flags: .*Version: (\d+)", line)
    if m:
        pairs.append((current, m.group(1)))
        by_index[int(m.group(2))] = (current, m.group(1))
names = {p: [] for p in pairs}
for line in open(lib + ".syms"):
    f = line.split()
    if len(f) >= 8 and f[6] == "UND":
        m = re.match(r"(\S+?)@(\S+) \((\d+)\)", " ".join(f[7:]))
        if m and int(m.group(3)) in by_index:
            names[by_index[int(m.group(3))]].append(m.group(1))
ok = True
got_pairs = [(r["library"], r["version"]) for r in ours]
if got_pairs != pairs:
    print("pairs differ:", got_pairs, pairs); ok = False
for r in ours:
    mangled = names.get((r["library"], r["version"]), [])
    if r["symbol_count"] != len(mangled):
        print("count differs", r, len(mangled)); ok = False
    demangled = subprocess.run(["c++filt", "--no-verbose"], input="\n".join(mangled),
                               capture_output=True, text=True).stdout.split("\n")
    want = sorted(d for d in demangled if d)[:max_examples]
    if r["symbols"] != want:
        print("examples differ", r["symbols"], want); ok = False
if not pairs:
    print("fixture has no version requirements"); ok = False
sys.exit(0 if ok else 1)
PY
}

for lib in $POLICY_FIXTURES; do
  case_begin "$lib"
  check "all symbols" compare $lib 1000
  check "first 2 per version" compare $lib 2
done

case_begin "a library without .gnu.version_r"
printf 'int f(void) { return 1; }\n' >nov.c
check "compile" gcc -shared -fPIC -nostdlib -o libnov.so nov.c
expect_eq "no requirements" "[]" "$("$POLICY_PROBE" requirements libnov.so | tr -d ' \n')"
finish
