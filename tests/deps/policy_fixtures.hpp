// SPDX-License-Identifier: BSD-3-Clause
// A small policy file for the unit tests: two glibc policies, one of them
// only for x86_64, with an alias each, a blacklist and a "linux" fallback.
#pragma once

#include <string>

namespace libpkg::testing {

inline std::string small_policy_json() {
  return R"([
  {"name": "linux", "aliases": [], "priority": 0, "symbol_versions": {},
   "lib_whitelist": [], "blacklist": {}},
  {"name": "manylinux_2_17", "aliases": ["manylinux2014"], "priority": 80,
   "symbol_versions": {
     "x86_64": {"GLIBC": ["2.2.5", "2.3", "2.17"],
                "CXXABI": ["1.3", "TM_1", "1.3.7"]},
     "aarch64": {"GLIBC": ["2.17"]}},
   "lib_whitelist": ["libc.so.6", "libm.so.6", "libz.so.1"],
   "blacklist": {}},
  {"name": "manylinux_2_5", "aliases": ["manylinux1"], "priority": 100,
   "symbol_versions": {
     "x86_64": {"GLIBC": ["2.2.5", "2.3"], "CXXABI": ["1.3", "TM_1"]}},
   "lib_whitelist": ["libc.so.6", "libm.so.6"],
   "blacklist": {"libc.so.6": ["bad_sym"]}}
])";
}

}  // namespace libpkg::testing
