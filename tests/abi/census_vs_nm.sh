#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The C++ ABI census on real libraries: the same c10::/at:: API compiled
# with -D_GLIBCXX_USE_CXX11_ABI=1 and =0 gives the verdicts cxx11 and
# pre_cxx11, and the counts, the counted symbols and the per-name
# classification equal what Python computes from `nm -D | c++filt` with
# PyTorch's rule (re.match(ns + ".*" + pattern)).
source "$(dirname "$0")/../lib/harness.sh"
require_tools g++ nm c++filt
[[ -n "${POLICY_PROBE:-}" ]] || missing "POLICY_PROBE not set (build the policy_probe target, run through ctest)"
make_scratch
cd "$SCRATCH"

cat >api.cpp <<'CPP'
#include <list>
#include <ostream>
#include <string>
#include <string_view>
namespace c10 {
std::string name(int i) { return std::to_string(i); }
void take(const std::string& s, std::list<int>& l) { l.push_back(int(s.size())); }
std::list<std::string> split(const std::string& s) { return {s, s}; }
std::size_t view_only(std::string_view v) { return v.size(); }
struct Holder {
  std::string s;
  std::string get() const;
  void set(std::string v);
};
std::string Holder::get() const { return s; }
void Holder::set(std::string v) { s = std::move(v); }
// A template function: its demangled name starts with the return type,
// so the anchored rule does not count it.
template <typename T> std::string str(const T& t) { return std::to_string(t); }
template std::string str<int>(const int&);
// std::ostream is the abbreviation So in the old ABI: c++filt spells it out.
void log(const std::string& message, std::ostream* to);
void log(const std::string& message, std::ostream* to) { *to << message; }
}  // namespace c10
namespace at {
std::string backend() { return "cpu"; }
int device(const std::string& spec) { return int(spec.size()); }
}  // namespace at
namespace torch::jit {
int load(const std::list<std::string>& files) { return int(files.size()); }
std::list<int> shapes(int n) { return std::list<int>(n); }
}  // namespace torch::jit
namespace other { std::string not_counted() { return "x"; } }
CPP

# count_with_python LIB [--defined-only]: {"cxx11": n, "pre_cxx11": n,
# "cxx11_names": [...], "pre_cxx11_names": [...]} from nm + c++filt.
count_with_python() {
  local lib=$1 defined=${2:-}
  nm -D --without-symbol-versions $defined "$lib" | c++filt >"$lib.nm"
  "$LIBPKG_PYTHON" - "$lib.nm" <<'PY'
import json, re, sys
namespaces = ["c10::", "at::", "caffe2::", "torch::"]
cxx11 = ["std::__cxx11::basic_string", "std::__cxx11::list"]
pre = ["std::basic_string<", "std::list"]
def counts(name, patterns):
    return any(re.match(re.escape(ns) + ".*" + re.escape(p), name)
               for ns in namespaces for p in patterns)
out = {"cxx11_names": [], "pre_cxx11_names": []}
for line in open(sys.argv[1]):
    m = re.match(r"^\s*[0-9a-f]*\s+\S\s+(.*)$", line.rstrip("\n"))
    if not m:
        continue
    name = m.group(1)
    if counts(name, cxx11): out["cxx11_names"].append(name)
    if counts(name, pre): out["pre_cxx11_names"].append(name)
out["cxx11"] = len(out["cxx11_names"])
out["pre_cxx11"] = len(out["pre_cxx11_names"])
print(json.dumps(out))
PY
}

# compare LIB PROBE_JSON PYTHON_JSON: counts and counted names agree.
compare() {
  "$LIBPKG_PYTHON" - "$1" "$2" "$3" <<'PY'
import json, sys
lib, ours, theirs = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ok = True
for fam in ("cxx11", "pre_cxx11"):
    if ours[fam] != theirs[fam]:
        print(f"{lib}: {fam} count {ours[fam]} != nm's {theirs[fam]}"); ok = False
    if sorted(ours[fam + "_examples"]) != sorted(theirs[fam + "_names"]):
        print(f"{lib}: {fam} symbols differ:\n ours {sorted(ours[fam + '_examples'])}\n nm   {sorted(theirs[fam + '_names'])}")
        ok = False
sys.exit(0 if ok else 1)
PY
}

for abi in 1 0; do
  case_begin "_GLIBCXX_USE_CXX11_ABI=$abi"
  lib=libapi$abi.so
  check "compile" g++ -O1 -shared -fPIC -D_GLIBCXX_USE_CXX11_ABI=$abi -o $lib api.cpp
  "$POLICY_PROBE" census $lib >ours$abi.json || fail "census $lib"
  count_with_python $lib >nm$abi.json || fail "nm count $lib"
  check "census equals nm + c++filt" compare $lib ours$abi.json nm$abi.json
  "$POLICY_PROBE" census --defined-only $lib >ours_def$abi.json || fail "census --defined-only"
  count_with_python $lib --defined-only >nm_def$abi.json
  check "defined-only census equals nm --defined-only" compare $lib ours_def$abi.json nm_def$abi.json
  want=$([[ $abi == 1 ]] && echo cxx11 || echo pre_cxx11)
  verdict=$("$LIBPKG_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' ours$abi.json)
  expect_eq "verdict" "$want" "$verdict"
  # Sanity of the fixture: each family found several symbols (so the
  # comparison above is not between two empty lists).
  n=$("$LIBPKG_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])' nm$abi.json $want)
  check "nm finds $want symbols ($n)" test "$n" -ge 5
  # Per-name classification of every demangled name nm lists.
  sed -E 's/^ *[0-9a-f]* +\S +//' $lib.nm >names$abi.txt
  "$POLICY_PROBE" classify <names$abi.txt >classified$abi.jsonl
  check "classification of each name equals the Python rule" "$LIBPKG_PYTHON" - classified$abi.jsonl <<'PY'
import json, re, sys
ns = ["c10::", "at::", "caffe2::", "torch::"]
rule = lambda n, ps: any(re.match(re.escape(a) + ".*" + re.escape(p), n) for a in ns for p in ps)
bad = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    want = (rule(d["name"], ["std::__cxx11::basic_string", "std::__cxx11::list"]),
            rule(d["name"], ["std::basic_string<", "std::list"]))
    if (d["cxx11"], d["pre_cxx11"]) != want:
        print("differs:", d, want); bad += 1
sys.exit(1 if bad else 0)
PY
done

case_begin "string_view and other namespaces are not counted"
check "c10::view_only is listed by nm" grep -q 'c10::view_only' libapi1.so.nm
check "but not counted" "$LIBPKG_PYTHON" -c '
import json, sys
d = json.load(open("ours1.json"))
names = d["cxx11_examples"] + d["pre_cxx11_examples"]
sys.exit(any("view_only" in n or "not_counted" in n or " c10::str<" in n for n in names))'
check "the template instance is exported" grep -q 'c10::str<int>' libapi1.so.nm

case_begin "a C library has no C++ API"
printf 'int f(void) { return 1; }\n' >c.c
check "compile" gcc -shared -fPIC -o libc_only.so c.c
"$POLICY_PROBE" census libc_only.so >c.json
expect_eq "verdict" none "$("$LIBPKG_PYTHON" -c 'import json; print(json.load(open("c.json"))["verdict"])')"
finish
