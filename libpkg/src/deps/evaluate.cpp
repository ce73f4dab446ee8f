// SPDX-License-Identifier: BSD-3-Clause
// evaluate(): which platform policies a set of binaries satisfies, and for
// every policy it doesn't, the blockers. binary_facts(): the per-file input.
//
// Semantics (auditwheel's, prior-art §1.1, with explanations added):
//  - Symbol versions: a requirement "PREFIX_VERSION" is split at its first
//    '_' (auditwheel's `partition("_")`): "CXXABI_TM_1" has prefix CXXABI
//    and version "TM_1". Only prefixes tracked by the policy for the arch
//    (the keys of symbol_versions[arch]: GLIBC, GLIBCXX, CXXABI, GCC,
//    LIBATOMIC, ZLIB) are checked, and the version must be listed verbatim:
//    non-numeric versions (GLIBC_PRIVATE) are not allowed unless listed (the
//    data lists CXXABI "TM_1"), exactly as auditwheel's set inclusion.
//    Requirements on the dynamic loader (ld-linux*, ld64.so.1/2) are skipped,
//    as auditwheel's elf_find_versioned_symbols does. Blockers are grouped
//    per (file, version), with the libraries and example symbols merged.
//  - Libraries (EvaluateOptions::libraries_block): every external library
//    the policy doesn't allow blocks, naming the soname, where it resolved
//    and the package binary whose closure holds it. Libraries below an
//    allowed library (BinaryFacts::external_parent) don't count, as
//    auditwheel stops its walk at whitelisted libraries. A library that
//    could not be found blocks (missing_library) every policy that does
//    not allow it, under the same pruning; the policies that allow it
//    leave it to the target system (foreign-architecture wheels are
//    analysed without their sysroot).
//  - Blacklist: an undefined, non-weak symbol versioned from library L
//    blocks when the policy's blacklist[L] lists it; an unversioned one is
//    checked against the blacklists of the binary's direct DT_NEEDED
//    libraries. (auditwheel also counts weak references; a weak reference
//    resolves to null when absent instead of failing to load, so we don't.)
//  - With libraries_block = false, a BinaryFacts with grafted = true (an
//    external library repair would bundle) is evaluated like a package
//    binary, for each policy P that does not allow its soname: a library P
//    whitelists would not be grafted for P. Grafted facts are ignored when
//    libraries_block is true (the library itself blocks then).
//  - Python ABI (auditwheel's ucs_policy and pyfpe_policy): an undefined
//    PyUnicodeUCS2_* symbol (a narrow-unicode CPython 2 build) or PyFPE_*
//    (PyFPE_jbuf, PyFPE_dummy: an --with-fpectl build) blocks every
//    policy, naming the symbol: PEP 513 interpreters provide neither.
//  - libpython: with libraries_block, a DT_NEEDED libpythonX.Y.so blocks
//    every policy (the extension would load a second interpreter library
//    or fail where it is static); repair drops the entry, so it does not
//    block after repair.
//  - ISA level (auditwheel 6's machine check): an x86-64 file whose GNU
//    property note requires x86-64-v2, -v3 or -v4 blocks every policy
//    (manylinux and musllinux promise only the x86-64 baseline), naming the
//    file and the level, unless EvaluateOptions::isa_ext_check is off
//    (--disable-isa-ext-check). Grafted libraries count like package
//    binaries, for the policies that would graft them; auditwheel likewise
//    checks the external libraries it would bundle.
//  - The libc family is the one the binaries state (BinaryFacts::libc);
//    when none does, EvaluateOptions::libc (the analysis decides it from
//    extension suffixes, the wheel tag or --libc), else glibc.
//  - The "linux" policy is always satisfied; `best` is the most compatible
//    satisfied policy. Policies without data for the arch are not evaluated
//    (manylinux_2_5 on aarch64 doesn't exist).
//  - max_versions: the highest numeric version per prefix
//    (abi::parse_version_tag, so CXXABI_TM is its own prefix) over the
//    package binaries and, with libraries_block = false, the grafted
//    libraries `best` does not allow — what the best tag's wheel needs.
//  - No binaries: only the "linux" verdict, arch "".
#include <fmt/format.h>

#include "libpkg/abi/versions.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/elf/format.hpp"

namespace libpkg::deps {

namespace {

// Example symbols kept per requirement by binary_facts: evaluate shows at
// most EvaluateOptions::max_symbols of them.
constexpr std::size_t kFactsExamples = 8;

bool is_dynamic_loader(std::string_view library) {
  return library.starts_with("ld-linux") || library == "ld64.so.1" ||
         library == "ld64.so.2";
}

// "GLIBCXX_3.4.29" → {"GLIBCXX", "3.4.29"}; "CXXABI_TM_1" → {"CXXABI", "TM_1"}.
std::pair<std::string_view, std::string_view> split_version(
    std::string_view version) {
  auto underscore = version.find('_');
  if (underscore == std::string_view::npos) return {version, {}};
  return {version.substr(0, underscore), version.substr(underscore + 1)};
}

std::string soname_of(const BinaryFacts& binary) {
  if (!binary.soname.empty()) return binary.soname;
  return std::filesystem::path(binary.path).filename().string();
}

// Whether `binary` counts for `policy` (grafted ones only when repair would
// bundle them for that policy).
bool counts_for(const BinaryFacts& binary, const Policy& policy,
                const EvaluateOptions& options) {
  if (!binary.grafted) return true;
  return !options.libraries_block && !policy.allows_library(soname_of(binary));
}

void add_version_blockers(
    const BinaryFacts& binary,
    const std::map<std::string, std::set<std::string>>& allowed,
    const EvaluateOptions& options, std::vector<Blocker>& out) {
  std::map<std::string, std::size_t> by_version;  // version → index in out
  std::map<std::size_t, std::set<std::string>> symbols;
  for (const auto& req : binary.versions) {
    if (is_dynamic_loader(req.library)) continue;
    auto [prefix, version] = split_version(req.version);
    auto tracked = allowed.find(std::string(prefix));
    if (tracked == allowed.end() ||
        tracked->second.contains(std::string(version)))
      continue;
    auto [it, fresh] = by_version.emplace(req.version, out.size());
    if (fresh) {
      out.push_back({BlockerKind::symbol_version,
                     binary.path,
                     req.version,
                     req.library,
                     {},
                     0});
    } else {
      out[it->second].from += ", " + req.library;
    }
    out[it->second].symbol_count += req.symbol_count;
    symbols[it->second].insert(req.symbols.begin(), req.symbols.end());
  }
  for (auto& [index, names] : symbols) {
    auto& list = out[index].symbols;
    for (const auto& name : names) {
      if (list.size() == options.max_symbols) break;
      list.push_back(name);
    }
  }
}

// Whether the external library `soname` of `binary` is reached only through
// libraries `policy` allows (then it is not the wheel's to bundle).
bool below_allowed(const BinaryFacts& binary, const std::string& soname,
                   const Policy& policy) {
  std::set<std::string> seen{soname};
  std::string current = soname;
  for (;;) {
    auto parent = binary.external_parent.find(current);
    if (parent == binary.external_parent.end() || parent->second.empty())
      return false;
    current = parent->second;
    if (!seen.insert(current).second) return false;  // a cycle in bad input
    if (policy.allows_library(current)) return true;
  }
}

void add_library_blockers(const BinaryFacts& binary, const Policy& policy,
                          const EvaluateOptions& options,
                          std::vector<Blocker>& out) {
  for (const auto& [soname, path] : binary.external) {
    bool missing = path.empty();
    // A library the policy allows is the target system's business, found
    // or not (a foreign-architecture wheel analysed without its sysroot).
    if (policy.allows_library(soname)) continue;
    if (!missing && !options.libraries_block) continue;
    if (below_allowed(binary, soname, policy)) continue;
    out.push_back(
        {missing ? BlockerKind::missing_library : BlockerKind::library,
         binary.path,
         soname,
         path,
         {},
         0});
  }
}

void add_python_abi_blockers(const BinaryFacts& binary,
                             std::vector<Blocker>& out) {
  for (const auto& [symbol, library] : binary.undefined) {
    const char* why = symbol.starts_with("PyUnicodeUCS2_")
                          ? "a narrow-unicode (UCS2) Python build"
                      : symbol.starts_with("PyFPE_")
                          ? "a Python built --with-fpectl"
                          : nullptr;
    if (why)
      out.push_back({BlockerKind::python_abi, binary.path, symbol, why, {}, 0});
  }
}

void add_libpython_blockers(const BinaryFacts& binary,
                            const EvaluateOptions& options,
                            std::vector<Blocker>& out) {
  if (!options.libraries_block) return;
  for (const auto& needed : binary.needed)
    if (is_libpython(needed))
      out.push_back({BlockerKind::libpython, binary.path, needed, "", {}, 0});
}

void add_isa_blockers(const BinaryFacts& binary, const EvaluateOptions& options,
                      std::vector<Blocker>& out) {
  if (!options.isa_ext_check || binary.isa_level.empty()) return;
  out.push_back(
      {BlockerKind::isa_extension, binary.path, binary.isa_level, "", {}, 0});
}

void add_blacklist_blockers(const BinaryFacts& binary, const Policy& policy,
                            std::vector<Blocker>& out) {
  if (policy.blacklist.empty()) return;
  auto listed = [&](const std::string& library, const std::string& symbol) {
    auto it = policy.blacklist.find(library);
    return it != policy.blacklist.end() && it->second.contains(symbol);
  };
  for (const auto& [symbol, library] : binary.undefined) {
    if (!library.empty()) {
      if (listed(library, symbol))
        out.push_back({BlockerKind::blacklisted_symbol,
                       binary.path,
                       symbol,
                       library,
                       {},
                       0});
      continue;
    }
    for (const auto& needed : binary.needed) {
      if (listed(needed, symbol)) {
        out.push_back({BlockerKind::blacklisted_symbol,
                       binary.path,
                       symbol,
                       needed,
                       {},
                       0});
        break;
      }
    }
  }
}

void add_max_versions(const BinaryFacts& binary, const EvaluateOptions& options,
                      std::map<std::string, abi::RequiredVersionExample>& out) {
  for (const auto& req : binary.versions) {
    if (is_dynamic_loader(req.library)) continue;
    auto tag = abi::parse_version_tag(req.version);
    if (!tag) continue;
    auto it = out.find(tag->prefix);
    if (it != out.end() && !(it->second.tag < *tag)) continue;
    abi::RequiredVersionExample example{*tag, binary.path, req.library, {}};
    for (const auto& name : req.symbols) {
      if (example.symbols.size() == options.max_symbols) break;
      example.symbols.push_back(name);
    }
    out.insert_or_assign(tag->prefix, std::move(example));
  }
}

// The common arch and libc of `binaries`; Errc::unsupported naming two files
// that disagree.
void check_consistent(const std::vector<BinaryFacts>& binaries,
                      const EvaluateOptions& options, Evaluation& evaluation) {
  evaluation.libc = options.libc.value_or(Libc::glibc);
  const BinaryFacts* arch_source = nullptr;
  const BinaryFacts* libc_source = nullptr;
  for (const auto& binary : binaries) {
    if (binary.arch.empty())
      throw Error(Errc::unsupported, binary.path,
                  "unknown machine: no platform policy covers it");
    if (!arch_source) {
      arch_source = &binary;
      evaluation.arch = binary.arch;
    } else if (binary.arch != evaluation.arch) {
      throw Error(Errc::unsupported, binary.path,
                  fmt::format("architecture {} differs from {} of {}",
                              binary.arch, evaluation.arch, arch_source->path));
    }
    if (!binary.libc) continue;
    if (!libc_source) {
      libc_source = &binary;
      evaluation.libc = *binary.libc;
    } else if (*binary.libc != evaluation.libc) {
      throw Error(Errc::unsupported, binary.path,
                  fmt::format("built for {}, but {} is built for {}",
                              libc_name(*binary.libc), libc_source->path,
                              libc_name(evaluation.libc)));
    }
  }
}

}  // namespace

Evaluation evaluate(const std::vector<BinaryFacts>& binaries,
                    const PolicySet& policies, const EvaluateOptions& options) {
  Evaluation evaluation;
  check_consistent(binaries, options, evaluation);
  const Policy* linux = policies.find("linux");
  if (!binaries.empty()) {
    for (const Policy* policy : policies.family(evaluation.libc)) {
      auto arch = policy->symbol_versions.find(evaluation.arch);
      if (arch == policy->symbol_versions.end()) continue;
      PolicyVerdict verdict{policy, false, {}};
      for (const auto& binary : binaries) {
        if (!counts_for(binary, *policy, options)) continue;
        add_version_blockers(binary, arch->second, options, verdict.blockers);
        add_library_blockers(binary, *policy, options, verdict.blockers);
        add_blacklist_blockers(binary, *policy, verdict.blockers);
        add_python_abi_blockers(binary, verdict.blockers);
        add_libpython_blockers(binary, options, verdict.blockers);
        add_isa_blockers(binary, options, verdict.blockers);
      }
      verdict.satisfied = verdict.blockers.empty();
      evaluation.verdicts.push_back(std::move(verdict));
    }
  }
  evaluation.verdicts.push_back({linux, true, {}});
  for (const auto& verdict : evaluation.verdicts) {
    if (verdict.satisfied) {
      evaluation.best = verdict.policy;
      break;
    }
  }
  for (const auto& binary : binaries) {
    if (binary.grafted && (options.libraries_block || !evaluation.best ||
                           evaluation.best->allows_library(soname_of(binary))))
      continue;
    add_max_versions(binary, options, evaluation.max_versions);
  }
  return evaluation;
}

BinaryFacts binary_facts(const elf::ElfFile& elf, std::string path) {
  BinaryFacts facts;
  facts.path = std::move(path);
  facts.arch = policy_arch(elf);
  facts.libc = libc_of(elf);
  facts.versions = abi::version_requirements(elf, kFactsExamples);
  for (auto needed : elf.needed()) facts.needed.emplace_back(needed);
  // Only x86-64 has micro-architecture levels; "x86-64-baseline" is what
  // every policy promises.
  if (auto isa = elf.x86_isa_needed(); isa && facts.arch == "x86_64") {
    std::string level = elf::x86_isa_level_name(*isa);
    if (level != "x86-64-baseline") facts.isa_level = std::move(level);
  }
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.is_defined() || sym.name.empty() || sym.bind == elf::STB_WEAK)
      return;
    facts.undefined.emplace(std::string(sym.name),
                            std::string(sym.version_file));
  });
  return facts;
}

}  // namespace libpkg::deps
