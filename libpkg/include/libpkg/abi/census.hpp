// SPDX-License-Identifier: BSD-3-Clause
// C++ ABI census: which std::string/std::list ABI a library's own C++ API
// uses, as PyTorch's check_binary_symbols.py decides it — count demangled
// dynamic symbols inside chosen namespaces (c10:: at:: caffe2:: torch:: by
// default) that use `std::__cxx11::basic_string`/`list` (the new ABI,
// _GLIBCXX_USE_CXX11_ABI=1) versus `std::basic_string<`/`std::list` (the old
// ABI), plus forbidden-symbol patterns. Reads .dynsym only (what a stripped
// release library has).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libpkg/elf/view.hpp"

namespace libpkg::abi {

/// The C++ standard library ABI a binary's symbols show: the new
/// (_GLIBCXX_USE_CXX11_ABI=1) one, the old one, both, or neither.
enum class CxxAbi { cxx11, pre_cxx11, mixed, none };
/// "cxx11", "pre_cxx11", "mixed" or "none".
const char* cxx_abi_name(CxxAbi abi);

/// What cxx_abi_census counts and how it decides; the defaults follow pytorch's
/// check_binary_symbols.py.
struct CensusOptions {
  // A symbol counts when its demangled name starts with one of these
  // namespaces and contains one of the patterns after it — the rule of
  // pytorch's check_binary_symbols.py (re.match(f"{ns}.*{pattern}")).
  std::vector<std::string> namespaces = {
      "c10::", "at::", "caffe2::", "torch::"};
  std::vector<std::string> cxx11_patterns = {"std::__cxx11::basic_string",
                                             "std::__cxx11::list"};
  // The '<' keeps std::basic_string_view from matching.
  std::vector<std::string> pre_cxx11_patterns = {"std::basic_string<",
                                                 "std::list"};
  // nm lists defined and undefined symbols; so do we by default.
  bool defined_only = false;
  // Verdict: ABI X when count(X) >= min_count and the other count is 0;
  // "mixed" when both are non-zero; "none" otherwise. (check_binary uses
  // min_count 100 for cxx11 and 1000 for pre-cxx11 on libtorch.)
  std::size_t min_count = 1;
  // Substrings of demangled names that must not appear among the defined
  // symbols (e.g. "std::filesystem::recursive_directory_iterator" exported
  // by a pre-cxx11 build that linked libstdc++ statically).
  std::vector<std::string> forbidden;
  std::size_t max_examples = 5;
};

/// The counts, examples and verdict of cxx_abi_census for one file.
struct Census {
  std::string file;
  std::size_t cxx11 = 0;      // new-ABI symbols in the namespaces
  std::size_t pre_cxx11 = 0;  // old-ABI symbols in the namespaces
  std::vector<std::string> cxx11_examples, pre_cxx11_examples;
  // Forbidden patterns found: pattern → example symbols.
  std::vector<std::pair<std::string, std::vector<std::string>>> forbidden;
  CxxAbi verdict = CxxAbi::none;
};

/// Counts the .dynsym symbols of `elf` (demangled) that use the new or the old
/// string/list ABI and gives the verdict; throws Errc::format as ElfFile's
/// symbol readers do.
Census cxx_abi_census(const elf::ElfFile& elf,
                      const CensusOptions& options = {});

/// Whether one demangled name counts as new / old ABI under `options`
/// (exposed for tests: "c10::f(std::basic_string_view<char>)" is neither).
bool counts_as_cxx11(std::string_view demangled, const CensusOptions& options);
/// Whether `demangled` counts as an old-ABI symbol under `options`.
bool counts_as_pre_cxx11(std::string_view demangled,
                         const CensusOptions& options);

}  // namespace libpkg::abi
