// SPDX-License-Identifier: BSD-3-Clause
// cxx-abi: check_binary.sh's GCC ABI check (builder-scripts.md §1.2),
// steps A and B, without its fragility: TorchConfig.cmake's
// _GLIBCXX_USE_CXX11_ABI is parsed as a value (1/ON/0/OFF), not one
// character before a quote; the census counts each symbol once with the
// Python rule and thresholds (100 new-ABI / 1000 old-ABI symbols); old-ABI
// builds must not export std::filesystem::recursive_directory_iterator
// (a statically linked new-ABI libstdc++, pytorch#133437).
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "base/glob.hpp"
#include "check/package.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/elf/view.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

constexpr const char* kRecursiveDirIterator =
    "std::filesystem::recursive_directory_iterator";

struct ConfigAbi {
  std::string member;
  std::string value;               // as written
  std::optional<abi::CxxAbi> abi;  // nullopt: empty value (not set)
};

std::optional<ConfigAbi> config_abi(const Package& pkg,
                                    const CheckOptions& options) {
  for (const auto& name : options.abi_configs) {
    for (const auto& member : pkg.files_named(name)) {
      // The first assignment outside a CMake comment (a comment may quote
      // the old script's sed expression).
      std::istringstream lines(read_regular_file(pkg.root / member));
      std::string line;
      std::optional<ConfigAbi> found;
      while (!found && std::getline(lines, line)) {
        auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        const std::string key = "_GLIBCXX_USE_CXX11_ABI=";
        auto at = line.find(key);
        if (at == std::string::npos) continue;
        at += key.size();
        auto end = line.find_first_of("\" \t;)'", at);
        ConfigAbi c;
        c.member = member;
        c.value = line.substr(
            at, end == std::string::npos ? std::string::npos : end - at);
        if (c.value == "1" || c.value == "ON")
          c.abi = abi::CxxAbi::cxx11;
        else if (c.value == "0" || c.value == "OFF")
          c.abi = abi::CxxAbi::pre_cxx11;
        found = std::move(c);
      }
      if (!found) continue;
      ConfigAbi c = std::move(*found);
      return c;
    }
  }
  return std::nullopt;
}

const ElfEntry* census_library(const Package& pkg,
                               const CheckOptions& options) {
  for (const auto& glob : options.abi_libraries)
    for (const auto& e : pkg.elfs) {
      auto name = e.file.filename().string();
      if (glob_match(glob, name)) return &e;
    }
  return nullptr;
}

std::string abi_label(abi::CxxAbi a) {
  return a == abi::CxxAbi::cxx11 ? "cxx11 (_GLIBCXX_USE_CXX11_ABI=1)"
                                 : "pre-cxx11 (_GLIBCXX_USE_CXX11_ABI=0)";
}

std::string examples(const std::vector<std::string>& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < 2; ++i)
    out += (i ? "; " : "") + list[i];
  return out;
}

// The census of `lib`, counted once per package. The forbidden
// recursive_directory_iterator is always looked for; only a pre-cxx11 build
// is judged on it (check_cxx_abi).
const abi::Census& run_census(const Package& pkg, const ElfEntry& lib,
                              const CheckOptions& options) {
  auto& cache = *pkg.census_cache;
  std::lock_guard lock(cache.mutex);
  auto it = cache.by_member.find(lib.member);
  if (it != cache.by_member.end()) return it->second;
  abi::CensusOptions census = options.census;
  if (std::find(census.forbidden.begin(), census.forbidden.end(),
                kRecursiveDirIterator) == census.forbidden.end())
    census.forbidden.push_back(kRecursiveDirIterator);
  elf::ElfFile elf = elf::ElfFile::open(lib.file);
  return cache.by_member.emplace(lib.member, abi::cxx_abi_census(elf, census))
      .first->second;
}

}  // namespace

std::optional<abi::CxxAbi> declared_abi(const Package& pkg,
                                        const CheckOptions& options) {
  if (options.expect.cxx_abi) return options.expect.cxx_abi;
  if (auto c = config_abi(pkg, options); c && c->abi) return c->abi;
  if (const ElfEntry* lib = census_library(pkg, options)) {
    const abi::Census& census = run_census(pkg, *lib, options);
    if (census.verdict == abi::CxxAbi::cxx11 ||
        census.verdict == abi::CxxAbi::pre_cxx11)
      return census.verdict;
  }
  return std::nullopt;
}

void check_cxx_abi(const Package& pkg, const CheckOptions& options,
                   CheckResult& result) {
  const auto config = config_abi(pkg, options);
  const ElfEntry* lib = census_library(pkg, options);
  if (!config && !lib) {
    result.status = Status::skip;
    result.summary =
        fmt::format("no census library ({}) and no {} in the package",
                    fmt::join(options.abi_libraries, ", "),
                    fmt::join(options.abi_configs, ", "));
    return;
  }
  const auto expected = options.expect.cxx_abi;
  if (expected && *expected != abi::CxxAbi::cxx11 &&
      *expected != abi::CxxAbi::pre_cxx11)
    throw Error(Errc::usage, "",
                "the expected C++ ABI must be cxx11 or "
                "pre-cxx11");
  std::optional<abi::CxxAbi> target = expected;
  std::vector<std::string> parts;

  if (config) {
    parts.push_back(
        fmt::format("{} sets _GLIBCXX_USE_CXX11_ABI={}",
                    fs::path(config->member).filename().string(),
                    config->value.empty() ? "(empty)" : config->value));
    if (expected && config->abi && *config->abi != *expected)
      result.problems.push_back(
          {config->member,
           fmt::format("declares _GLIBCXX_USE_CXX11_ABI={} but the build is "
                       "expected to be {}",
                       config->value, abi_label(*expected))});
    else if (expected && !config->abi && *expected == abi::CxxAbi::cxx11)
      result.problems.push_back(
          {config->member,
           fmt::format("_GLIBCXX_USE_CXX11_ABI has no value, expected 1")});
    if (!target) target = config->abi;
  }

  if (lib) {
    const abi::Census& census = run_census(pkg, *lib, options);
    const std::string ns =
        fmt::format("{}", fmt::join(options.census.namespaces, " "));
    parts.push_back(fmt::format("{}: {} cxx11 and {} pre-cxx11 symbols in {}",
                                lib->file.filename().string(), census.cxx11,
                                census.pre_cxx11, ns));
    // The target ABI's symbols must be there in number, the other's not
    // at all.
    auto judge = [&](std::size_t own, std::size_t min_own, std::size_t other,
                     const std::vector<std::string>& other_examples,
                     const char* own_name, const char* other_name) {
      if (other > 0)
        result.problems.push_back(
            {lib->member, fmt::format("{} {} symbols in a {} build, e.g. {}",
                                      other, other_name, abi_label(*target),
                                      examples(other_examples))});
      if (own < min_own)
        result.problems.push_back(
            {lib->member, fmt::format("only {} {} symbols in {} (at least {} "
                                      "expected from a {} build)",
                                      own, own_name, ns, min_own, own_name)});
    };
    if (target == abi::CxxAbi::cxx11) {
      judge(census.cxx11, options.min_cxx11_symbols, census.pre_cxx11,
            census.pre_cxx11_examples, "cxx11", "pre-cxx11");
    } else if (target == abi::CxxAbi::pre_cxx11) {
      judge(census.pre_cxx11, options.min_pre_cxx11_symbols, census.cxx11,
            census.cxx11_examples, "pre-cxx11", "cxx11");
    } else if (census.verdict == abi::CxxAbi::mixed) {
      result.problems.push_back(
          {lib->member,
           fmt::format("both ABIs in its API: {} cxx11 (e.g. {}) and {} "
                       "pre-cxx11 (e.g. {})",
                       census.cxx11, examples(census.cxx11_examples),
                       census.pre_cxx11, examples(census.pre_cxx11_examples))});
    }
    for (const auto& [pattern, ex] : census.forbidden) {
      if (pattern == kRecursiveDirIterator &&
          target != abi::CxxAbi::pre_cxx11 &&
          std::find(options.census.forbidden.begin(),
                    options.census.forbidden.end(),
                    pattern) == options.census.forbidden.end())
        continue;
      result.problems.push_back(
          {lib->member, fmt::format("exports forbidden {} symbols (a "
                                    "statically linked new-ABI libstdc++), "
                                    "e.g. {}",
                                    pattern, examples(ex))});
    }
  }
  if (target) parts.push_back("expected " + abi_label(*target));
  result.summary = fmt::format("{}", fmt::join(parts, "; "));
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
