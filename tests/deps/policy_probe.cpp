// SPDX-License-Identifier: BSD-3-Clause
// Test driver exposing the policy evaluation, version requirements and the
// C++ ABI census as JSON, so scripts can cross-check them against readelf,
// nm + c++filt and their own reading of the policy JSON:
//   policy_probe evaluate [--policy-file F] [--repairable] [--max-symbols N]
//                         FILE...
//   policy_probe requirements [--max N] FILE
//   policy_probe census [--defined-only] FILE
//   policy_probe classify            (demangled names on stdin, one a line)
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/abi/census.hpp"
#include "libpkg/abi/requirements.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/elf/view.hpp"

namespace {

using nlohmann::json;
namespace deps = libpkg::deps;

json blocker_json(const deps::Blocker& b) {
  return {{"kind", deps::blocker_kind_name(b.kind)},
          {"file", b.file},
          {"detail", b.detail},
          {"from", b.from},
          {"symbols", b.symbols},
          {"symbol_count", b.symbol_count},
          {"message", b.message()}};
}

int evaluate(const std::vector<std::string>& args) {
  std::optional<deps::PolicySet> user;
  deps::EvaluateOptions options;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--policy-file" && i + 1 < args.size())
      user = deps::PolicySet::load(args[++i]);
    else if (args[i] == "--repairable")
      options.libraries_block = false;
    else if (args[i] == "--max-symbols" && i + 1 < args.size())
      options.max_symbols = std::stoul(args[++i]);
    else
      files.push_back(args[i]);
  }
  const deps::PolicySet& policies = user ? *user : deps::PolicySet::builtin();
  std::vector<deps::BinaryFacts> facts;
  for (const auto& file : files)
    facts.push_back(deps::binary_facts(libpkg::elf::ElfFile::open(file), file));
  auto e = deps::evaluate(facts, policies, options);
  json out = {{"arch", e.arch},
              {"libc", e.libc == deps::Libc::musl ? "musl" : "glibc"},
              {"best", e.best->name},
              {"best_tags", e.best->tags(e.arch)}};
  json verdicts = json::array();
  for (const auto& v : e.verdicts) {
    json blockers = json::array();
    for (const auto& b : v.blockers) blockers.push_back(blocker_json(b));
    verdicts.push_back({{"policy", v.policy->name},
                        {"satisfied", v.satisfied},
                        {"blockers", blockers}});
  }
  out["verdicts"] = verdicts;
  json max = json::object();
  for (const auto& [prefix, m] : e.max_versions)
    max[prefix] = {{"version", m.tag.str()},
                   {"file", m.file},
                   {"library", m.library},
                   {"symbols", m.symbols}};
  out["max_versions"] = max;
  std::cout << out.dump(1) << "\n";
  return 0;
}

int requirements(const std::vector<std::string>& args) {
  std::size_t max = 3;
  std::string file;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--max" && i + 1 < args.size())
      max = std::stoul(args[++i]);
    else
      file = args[i];
  }
  json out = json::array();
  auto elf = libpkg::elf::ElfFile::open(file);
  for (const auto& r : libpkg::abi::version_requirements(elf, max))
    out.push_back({{"library", r.library},
                   {"version", r.version},
                   {"symbols", r.symbols},
                   {"symbol_count", r.symbol_count}});
  std::cout << out.dump(1) << "\n";
  return 0;
}

int census(const std::vector<std::string>& args) {
  libpkg::abi::CensusOptions options;
  options.max_examples = 1000000;
  std::string file;
  for (const auto& arg : args) {
    if (arg == "--defined-only")
      options.defined_only = true;
    else
      file = arg;
  }
  auto c =
      libpkg::abi::cxx_abi_census(libpkg::elf::ElfFile::open(file), options);
  std::cout << json{{"cxx11", c.cxx11},
                    {"pre_cxx11", c.pre_cxx11},
                    {"cxx11_examples", c.cxx11_examples},
                    {"pre_cxx11_examples", c.pre_cxx11_examples},
                    {"verdict", libpkg::abi::cxx_abi_name(c.verdict)}}
                   .dump(1)
            << "\n";
  return 0;
}

int classify() {
  libpkg::abi::CensusOptions options;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::cout << json{{"name", line},
                      {"cxx11", libpkg::abi::counts_as_cxx11(line, options)},
                      {"pre_cxx11",
                       libpkg::abi::counts_as_pre_cxx11(line, options)}}
                     .dump()
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  try {
    if (cmd == "evaluate") return evaluate(args);
    if (cmd == "requirements") return requirements(args);
    if (cmd == "census") return census(args);
    if (cmd == "classify") return classify();
  } catch (const libpkg::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::fprintf(
      stderr,
      "usage: policy_probe evaluate|requirements|census|classify ...\n");
  return 2;
}
