// SPDX-License-Identifier: BSD-3-Clause
// Platform policies (manylinux_2_5 ... 2_41 with their legacy aliases,
// musllinux_1_1/1_2) loaded from JSON data in auditwheel's policy format,
// and the evaluation that says which platform tag a set of binaries
// satisfies — and, for every more compatible tag, exactly what blocks it.
//
// The built-in data (data/policy/*.json) is embedded at build time; a user
// file in the same format replaces it (PolicySet::load).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/abi/requirements.hpp"
#include "libpkg/deps/resolve.hpp"

namespace libpkg::deps {

/// One platform policy (manylinux_2_17, musllinux_1_2, ...): its symbol
/// versions per arch, allowed libraries and forbidden symbols, as in
/// auditwheel's policy JSON.
struct Policy {
  std::string name;  // "manylinux_2_17", "musllinux_1_2", "linux"
  std::vector<std::string> aliases;  // "manylinux2014"
  int priority = 0;                  // higher = more compatible; "linux" = 0
  Libc libc = Libc::glibc;
  // arch → symbol-version prefix (GLIBC, GLIBCXX, ...) → allowed versions.
  std::map<std::string, std::map<std::string, std::set<std::string>>>
      symbol_versions;
  std::set<std::string> lib_whitelist;  // allowed sonames
  // soname → symbols of that library that must not be referenced.
  std::map<std::string, std::set<std::string>> blacklist;

  /// "manylinux_2_17_x86_64" (and the alias tags, "manylinux2014_x86_64").
  std::string tag(std::string_view arch) const;
  /// tag() followed by one tag per alias (the alias tags only for an arch the
  /// policy lists).
  std::vector<std::string> tags(std::string_view arch) const;
  /// Whether `soname` is allowed: in the whitelist, or the dynamic loader /
  /// libc of this libc family (ld-linux*, ld-musl-*, libc.musl-*).
  bool allows_library(std::string_view soname) const;
};

/// The policies a package is evaluated against, most compatible first.
class PolicySet {
 public:
  /// The embedded manylinux and musllinux policies.
  static const PolicySet& builtin();
  /// Policies from a JSON file in auditwheel's format (a list of objects);
  /// Errc::format naming the file and the bad field.
  static PolicySet load(const std::filesystem::path& file);
  /// Policies from JSON text in auditwheel's format, for the libc family
  /// `libc`; throws Errc::format naming `name` (as the file) on invalid JSON or
  /// a bad field.
  static PolicySet parse(std::string_view json, std::string name, Libc libc);

  /// Sorted by priority, most compatible first.
  const std::vector<Policy>& policies() const { return policies_; }
  /// Policies of one libc family, most compatible first (without "linux").
  std::vector<const Policy*> family(Libc libc) const;
  /// By name or alias, with or without the arch suffix: "manylinux2014",
  /// "manylinux_2_17_x86_64", "musllinux_1_2_aarch64". nullptr if unknown.
  const Policy* find(std::string_view name) const;

 private:
  std::vector<Policy> policies_;
};

/// What the evaluation needs to know about one ELF file.
struct BinaryFacts {
  std::string path;  // member name in the package (or file path)
  std::string arch;  // policy arch (deps::policy_arch)
  // Versioned symbol requirements with example symbols
  // (abi::version_requirements).
  std::vector<abi::VersionRequirement> versions;
  // Undefined, non-weak dynamic symbols: name → library it's versioned
  // from ("" when unversioned). For blacklist checks.
  std::map<std::string, std::string> undefined;
  // Direct and indirect dependencies resolved outside the package (or not
  // found), as sonames with the path they resolved to ("" if missing).
  std::map<std::string, std::string> external;
  bool grafted = false;  // an external library that repair would bundle
  // Added for the evaluation:
  // The libc family (deps::libc_of); nullopt when the file doesn't say
  // (e.g. a library needing only libm) — compatible with either.
  std::optional<Libc> libc;
  // The soname a grafted library is needed as ("libz.so.1"): which policies
  // would graft it is decided by this name (Policy::allows_library). Empty
  // = the file name of `path`.
  std::string soname;
  // Direct DT_NEEDED entries: an unversioned undefined symbol is checked
  // against the blacklists of these libraries.
  std::vector<std::string> needed;
  // For indirect entries of `external`: soname → soname of the library that
  // needs it (LibraryNode::needed_by). Absent = needed by this binary. Like
  // auditwheel's lddtree walk, a library reached only through libraries a
  // policy allows is the system's business and doesn't count for it.
  std::map<std::string, std::string> external_parent;
  // The x86-64 micro-architecture level the GNU property note requires
  // (GNU_PROPERTY_X86_ISA_1_NEEDED) when above the baseline: "x86-64-v2",
  // "x86-64-v3" or "x86-64-v4"; empty otherwise (no note, baseline, or not
  // an x86-64 file).
  std::string isa_level;
};

/// The kinds of reason a policy is not satisfied.
enum class BlockerKind {
  symbol_version,      // needs a version the policy doesn't allow
  library,             // links a library outside the whitelist
  blacklisted_symbol,  // references a symbol the policy forbids
  missing_library,     // a dependency could not be found
  python_abi,  // imports PyFPE_* (fpectl) or PyUnicodeUCS2_* (narrow unicode)
  libpython,   // NEEDs libpythonX.Y.so (the interpreter provides it)
  isa_extension,  // requires an x86-64 level above the baseline (x86-64-v3)
};
/// "symbol_version", "library", ... for `kind`.
const char* blocker_kind_name(BlockerKind kind);

/// One reason a file does not satisfy a policy.
struct Blocker {
  BlockerKind kind;
  std::string file;  // the binary concerned (member name)
  std::string
      detail;  // "GLIBCXX_3.4.29", "libz.so.1", "__cxa_thread_atexit_impl"
  std::string from;  // library the version/symbol comes from, or the path a
                     // library resolved to
  // Example symbols needing that version, demangled ("std::__cxx11::...").
  std::vector<std::string> symbols;
  std::size_t symbol_count = 0;  // all symbols needing it (symbol_version)
  /// The blocker as one line for reports.
  std::string message() const;  // one line, for reports
};

/// Whether a policy is satisfied, and the blockers when not.
struct PolicyVerdict {
  const Policy* policy = nullptr;
  bool satisfied = false;
  std::vector<Blocker> blockers;
};

/// The verdicts of every policy of one libc family for a package, the best one,
/// and the highest versions required.
struct Evaluation {
  std::string arch;
  Libc libc = Libc::glibc;
  // One verdict per policy of the family, most compatible first, then
  // "linux" (always satisfied).
  std::vector<PolicyVerdict> verdicts;
  // The most compatible satisfied policy ("linux" when none is).
  const Policy* best = nullptr;
  // Highest version required per prefix over all binaries, with the file.
  std::map<std::string, abi::RequiredVersionExample> max_versions;
};

/// How a package is evaluated against the policies.
struct EvaluateOptions {
  // Count `library` blockers (a wheel as it is). When false, libraries the
  // policy doesn't allow are assumed grafted: their own facts (grafted =
  // true entries) are evaluated instead — the tag repair can reach.
  bool libraries_block = true;
  // Examples kept per blocker.
  std::size_t max_symbols = 3;
  // The libc family when no binary says (BinaryFacts::libc unset for all):
  // decided from the extension suffix, the wheel's tag or --libc. Unset:
  // glibc.
  std::optional<Libc> libc;
  // Block every policy for a file whose property note requires an x86-64
  // level above the baseline (auditwheel's ISA extension check; its
  // --disable-isa-ext-check turns this off).
  bool isa_ext_check = true;
};

/// libpython is provided by the interpreter that loads the extension: a
/// NEEDED entry on it makes a wheel incompatible as it is (repair drops it).
inline bool is_libpython(std::string_view soname) {
  return soname.starts_with("libpython");
}

/// The architecture as platform tags spell it: the machine name, except for
/// Android tags, which name the NDK ABI (aarch64 → arm64_v8a, PEP 738).
std::string_view policy_tag_arch(Libc libc, std::string_view arch);

/// Evaluates `binaries` (all of one arch and libc family; Errc::unsupported
/// otherwise, naming two files that disagree) against `policies`.
/// The rules (auditwheel's, where they differ and why) are spelled out at the
/// top of libpkg/src/deps/evaluate.cpp; in short: a requirement's prefix is
/// the text before its first '_' and its version must be listed verbatim
/// (GLIBC_PRIVATE never is, CXXABI_TM_1 is); loader requirements are
/// skipped; weak references never hit the blacklist; grafted facts count
/// for the policies that don't allow their soname.
Evaluation evaluate(const std::vector<BinaryFacts>& binaries,
                    const PolicySet& policies,
                    const EvaluateOptions& options = {});

/// Facts of one ELF file: arch, version requirements, undefined symbols.
/// `external` is left for the caller (it depends on the package).
BinaryFacts binary_facts(const elf::ElfFile& elf, std::string path);

}  // namespace libpkg::deps
