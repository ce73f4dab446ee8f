#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# deps::evaluate on real libraries against an independent reading of the
# policy JSON in Python: the requirements come from `readelf -V --wide`, a
# policy is satisfied when every requirement whose prefix (up to the first
# '_') the policy tracks for the arch is listed (auditwheel's rule, loader
# requirements skipped); the best policy, every verdict, the blocked
# versions per policy, the blacklisted symbols (undefined, non-weak, from a
# NEEDED library whose blacklist lists them), the best policy's tags and the
# highest version per prefix must agree. Blockers name the symbols that need the version
# (std::condition_variable::wait for GLIBCXX_3.4.30). A user policy file
# replaces the built-in one; a non-monotonic one is refused.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/fixtures.sh"
require_tools g++ gcc readelf
[[ -n "${POLICY_PROBE:-}" ]] || missing "POLICY_PROBE not set (build the policy_probe target, run through ctest)"
make_scratch
cd "$SCRATCH"
check "compile fixtures" build_policy_fixtures
for lib in $POLICY_FIXTURES; do
  readelf -V --wide $lib >$lib.V
  readelf --dyn-syms -d --wide $lib >$lib.syms
done
ARCH=$(readelf -h libplain.so | "$LIBPKG_PYTHON" -c '
import sys
text = sys.stdin.read()
print("x86_64" if "X86-64" in text else "aarch64" if "AArch64" in text else "")')
[[ -n "$ARCH" ]] || skip "policy cross-check written for x86_64 and aarch64 hosts"
POLICY_JSON=$LIBPKG_SOURCE_DIR/data/policy/manylinux-policy.json

# crosscheck OURS.json POLICY.json LIB...: compare with the Python reading.
crosscheck() {
  "$LIBPKG_PYTHON" - "$ARCH" "$@" <<'PY'
import json, re, sys
arch, ours_file, policy_file, libs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ours = json.load(open(ours_file))
policies = sorted(json.load(open(policy_file)), key=lambda p: -p["priority"])

def requirements(lib):
    out, current, in_r = [], None, False
    for line in open(lib + ".V"):
        if "Version needs section" in line: in_r = True; continue
        if "Version definition section" in line: in_r = False
        if not in_r: continue
        m = re.search(r"File: (\S+)", line)
        if m: current = m.group(1); continue
        m = re.search(r"Name: (\S+)", line)
        if m and not (current.startswith("ld-linux") or current in ("ld64.so.1", "ld64.so.2")):
            out.append((lib, current, m.group(1)))
    return out

def version_files(lib):  # version index → library, from .gnu.version_r
    out, current, in_r = {}, None, False
    for line in open(lib + ".V"):
        if "Version needs section" in line: in_r = True; continue
        if "Version definition section" in line: in_r = False
        if not in_r: continue
        m = re.search(r"File: (\S+)", line)
        if m: current = m.group(1); continue
        m = re.search(r"Name: \S+\s+Flags: .*Version: (\d+)", line)
        if m: out[int(m.group(1))] = current
    return out

def undefined(lib):  # [(symbol, library or "")] non-weak, and NEEDED
    files, syms, needed = version_files(lib), [], []
    for line in open(lib + ".syms"):
        m = re.search(r"\(NEEDED\)\s+Shared library: \[(.+)\]", line)
        if m: needed.append(m.group(1)); continue
        f = line.split()
        if len(f) >= 8 and f[6] == "UND" and f[4] != "WEAK":
            m = re.match(r"([^@]+)(?:@(\S+) \((\d+)\))?$", " ".join(f[7:]))
            if m: syms.append((m.group(1), files.get(int(m.group(3)), "") if m.group(3) else ""))
    return syms, needed

def blacklisted(policy):
    out = set()
    for lib in libs:
        syms, needed = undefined(lib)
        for sym, library in syms:
            for candidate in ([library] if library else needed):
                if sym in policy.get("blacklist", {}).get(candidate, []):
                    out.add((lib, sym))
    return out

reqs = [r for lib in libs for r in requirements(lib)]
expected, best = [], None
for p in policies:
    if p["name"] == "linux" or arch not in p["symbol_versions"]: continue
    allowed = p["symbol_versions"][arch]
    blocked = set()
    for lib, library, version in reqs:
        prefix, _, ver = version.partition("_")
        if prefix in allowed and ver not in allowed[prefix]:
            blocked.add((lib, version))
    blocked |= blacklisted(p)
    expected.append((p["name"], blocked))
    if not blocked and best is None: best = p
ok = True
def bad(*msg):
    global ok
    print(*msg); ok = False

got = [(v["policy"], {(b["file"], b["detail"]) for b in v["blockers"]
                      if b["kind"] in ("symbol_version", "blacklisted_symbol")})
       for v in ours["verdicts"]]
if [n for n, _ in got] != [n for n, _ in expected] + ["linux"]:
    bad("policies differ:", [n for n, _ in got], [n for n, _ in expected])
for (name, blocked), (gname, gblocked) in zip(expected, got):
    if blocked != gblocked: bad(name, "blocked by", sorted(gblocked), "expected", sorted(blocked))
for v in ours["verdicts"]:
    if v["satisfied"] != (not v["blockers"]): bad("satisfied flag inconsistent", v["policy"])
    for b in v["blockers"]:
        if b["kind"] not in ("symbol_version", "blacklisted_symbol"): bad("unexpected blocker", b)
want_best = best["name"] if best else "linux"
if ours["best"] != want_best: bad("best", ours["best"], "expected", want_best)
want_tags = [f"{want_best}_{arch}"] + [f"{a}_{arch}" for a in (best["aliases"] if best else [])]
if ours["best_tags"] != want_tags: bad("tags", ours["best_tags"], "expected", want_tags)
# Highest numeric version per prefix ("CXXABI_TM_1" has prefix CXXABI_TM).
maxima = {}
for lib, library, version in reqs:
    m = re.match(r"^(.+)_(\d+(?:\.\d+)*)$", version)
    if not m: continue
    key = tuple(int(x) for x in m.group(2).split("."))
    if m.group(1) not in maxima or maxima[m.group(1)][0] < key:
        maxima[m.group(1)] = (key, version)
got_max = {k: v["version"] for k, v in ours["max_versions"].items()}
if got_max != {k: v[1] for k, v in maxima.items()}: bad("max_versions", got_max, maxima)
print(f"best {ours['best']}; checked {len(expected)} policies, {len(reqs)} requirements")
sys.exit(0 if ok else 1)
PY
}

field() {  # FILE PYTHON-EXPRESSION-ON-d
  "$LIBPKG_PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

for lib in $POLICY_FIXTURES; do
  case_begin "$lib"
  "$POLICY_PROBE" evaluate $lib >$lib.json || fail "evaluate $lib"
  check "verdicts equal the Python reading" crosscheck $lib.json "$POLICY_JSON" $lib
  log "  best: $(field $lib.json 'd["best"]')"
done

case_begin "blocker explanations"
v30=$(field libnew30.so.json '[b for v in d["verdicts"] if v["policy"] == "manylinux_2_17" for b in v["blockers"] if b["detail"] == "GLIBCXX_3.4.30"][0]')
log "  $v30"
check "manylinux_2_17 blocked by GLIBCXX_3.4.30 via condition_variable::wait" \
  grep -qF "'std::condition_variable::wait(std::unique_lock<std::mutex>&)'" <<<"$v30"
check "the blocker names libstdc++" grep -qF "'from': 'libstdc++.so.6'" <<<"$v30"
v29=$(field libnew29.so.json '[b["message"] for v in d["verdicts"] if v["policy"] == "manylinux_2_17" for b in v["blockers"] if b["detail"] == "GLIBCXX_3.4.29"][0]')
log "  $v29"
check "GLIBCXX_3.4.29 message names __throw_bad_array_new_length" \
  grep -qF "std::__throw_bad_array_new_length()" <<<"$v29"
tls=$(field libtls.so.json '[(v["policy"], b["kind"], b["detail"]) for v in d["verdicts"] for b in v["blockers"] if "pthread_getattr" in b["detail"] + str(b["symbols"]) or b["kind"] == "blacklisted_symbol"]')
log "  $tls"
check "__cxa_thread_atexit_impl is a blacklisted symbol for manylinux_2_17" \
  grep -qF "('manylinux_2_17', 'blacklisted_symbol', '__cxa_thread_atexit_impl')" <<<"$tls"
check "the weak pthread_getattr_default_np only blocks through its version" \
  grep -qF "('manylinux_2_5', 'symbol_version', 'GLIBC_2.34')" <<<"$tls"
check "... and is not a blacklisted-symbol blocker" \
  test "$(grep -cF "'blacklisted_symbol', 'pthread_getattr_default_np'" <<<"$tls")" = 0
if [[ $ARCH == x86_64 ]]; then
  # prior-art §1.1: GLIBCXX_3.4.29 first in manylinux_2_34, 3.4.30 in 2_35.
  expect_eq "libnew29 best" manylinux_2_34 "$(field libnew29.so.json 'd["best"]')"
  expect_eq "libnew30 best" manylinux_2_35 "$(field libnew30.so.json 'd["best"]')"
  expect_eq "libplain tags" "['manylinux_2_5_x86_64', 'manylinux1_x86_64']" \
    "$(field libplain.so.json 'd["best_tags"]')"
fi

case_begin "several libraries together"
"$POLICY_PROBE" evaluate $POLICY_FIXTURES >all.json || fail "evaluate all"
check "verdicts equal the Python reading" crosscheck all.json "$POLICY_JSON" $POLICY_FIXTURES
expect_eq "GLIBCXX maximum comes from libnew30.so" "libnew30.so GLIBCXX_3.4.30" \
  "$(field all.json 'd["max_versions"]["GLIBCXX"]["file"] + " " + d["max_versions"]["GLIBCXX"]["version"]')"

case_begin "user policy file"
"$LIBPKG_PYTHON" - "$POLICY_JSON" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
keep = [p for p in data if p["name"] in ("linux", "manylinux_2_17", "manylinux_2_35")]
json.dump(keep, open("user.json", "w"))
# Non-monotonic: manylinux_2_35 loses a GLIBC version manylinux_2_17 has.
bad = json.loads(json.dumps(keep))
for p in bad:
    if p["name"] == "manylinux_2_35":
        for arch in p["symbol_versions"].values():
            if "2.17" in arch["GLIBC"]:
                arch["GLIBC"].remove("2.17")
json.dump(bad, open("bad.json", "w"))
PY
"$POLICY_PROBE" evaluate --policy-file user.json libnew30.so libplain.so >user_out.json || fail "evaluate --policy-file"
check "verdicts equal the Python reading of the user file" crosscheck user_out.json user.json libnew30.so libplain.so
expect_eq "only the user's policies, most compatible first" "['manylinux_2_17', 'manylinux_2_35', 'linux']" \
  "$(field user_out.json '[v["policy"] for v in d["verdicts"]]')"
expect_status 2 "non-monotonic user file refused" "$POLICY_PROBE" evaluate --policy-file bad.json libplain.so
check "the error names the file and the policy" \
  grep -qE "bad.json: policy manylinux_2_35: symbol_versions\.[a-z0-9_]+\.GLIBC lacks 2.17" "$SCRATCH/last.err"
finish
