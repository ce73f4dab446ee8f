// SPDX-License-Identifier: BSD-3-Clause
// Analysis of a wheel for repair: which members are ELF files, what each
// needs (resolved with the dynamic loader's rules), which of those libraries
// live outside the wheel, and which platform tag the wheel satisfies as it
// is and after bundling — with, for every more compatible tag, what blocks
// it (deps::evaluate).
//
// ELF members are sniffed by their first bytes and read in place from the
// archive, inflated only as far as the analysis reads them (headers,
// dynamic section, strings, version tables, dynamic symbols: the first
// pages of a library; archive/member_view.hpp). A private scratch directory
// mirrors the wheel's layout with an empty placeholder per ELF member, so
// $ORIGIN-relative search paths resolve the way they will once the wheel is
// installed. The scratch directory lives as long as the analysis; the
// repair unpacks there the members it edits (apply_repair).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libpkg/archive/member_view.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::bundle {

/// How analyze_wheel resolves, evaluates and reads the wheel.
struct AnalyzeOptions {
  deps::SearchConfig search;
  // Policies to evaluate against; nullptr = deps::PolicySet::builtin().
  const deps::PolicySet* policies = nullptr;
  // Libraries that are provided by the environment and must be neither
  // grafted nor counted: fnmatch globs matched against the soname and
  // against the resolved path (and its realpath). Their subtree is pruned.
  std::vector<std::string> exclude;
  // Libraries loaded with dlopen (not in any DT_NEEDED) to bundle as well:
  // a path, or a soname resolved through the search configuration. Their
  // closure is analysed like any dependency.
  std::vector<std::string> include;
  // The C library when the binaries don't say (no interpreter, no libc
  // NEEDED) and neither do the extension suffixes nor the wheel's tag
  // (--libc). Contradicting what the binaries say is Errc::usage.
  std::optional<deps::Libc> libc;
  // auditwheel's ISA extension check: a binary needing x86-64-v2/v3/v4
  // blocks every policy (deps::EvaluateOptions::isa_ext_check). False =
  // --disable-isa-ext-check.
  bool isa_ext_check = true;
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Parent of the scratch directory; empty = the system temp directory.
  std::filesystem::path scratch_parent;
  // Read ELF members through their restart-point indexes (archive/
  // member_view.hpp): `pkgtool show` does; a repair does not, so nothing
  // it writes depends on an index the file could forge (docs/archives.md).
  bool restart_points = false;
};

/// One ELF member of the wheel.
struct PackageBinary {
  std::string member;  // name in the wheel
  // Where it would be unpacked in the scratch directory: an empty
  // placeholder (its content is read from the archive).
  std::filesystem::path file;
  bool extension = false;  // defines PyInit_<module> (a Python module)
  bool imports_dlopen = false;
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath;
  deps::LddTree tree;
  deps::BinaryFacts facts;
  // The member as the analysis read it in place (what it inflated stays
  // filled): the repair plans its edit over it without inflating again.
  // Null when the analysis read through restart points (then the repair
  // reads the member again, sequentially).
  std::shared_ptr<const archive::MemberView> view;
};

/// A library resolved outside the wheel (system or build tree).
struct ExternalLibrary {
  std::string soname;
  std::filesystem::path path, realpath;
  std::set<std::string> needed_by;  // members or sonames that need it
  std::vector<std::string> needed;  // its own DT_NEEDED
  bool included = false;            // asked for with AnalyzeOptions::include
  // Whether some policy of the wheel's libc family allows it (then it
  // is not bundled for policies that allow it).
  bool system = false;
  deps::BinaryFacts facts;  // grafted = true; path = soname
};

/// What analyze_wheel found: the wheel's ELF members, the libraries outside it,
/// the libc family and the tags it reaches as is and after repair; it keeps the
/// open wheel and the scratch directory.
struct WheelAnalysis {
  std::filesystem::path wheel;
  wheel::WheelName name;
  std::string dist_info;  // "pkg-1.0.dist-info"
  std::string arch;       // policy arch of the ELF files
  deps::Libc libc = deps::Libc::glibc;
  // How libc was decided: "<member> (interpreter/NEEDED)", "extension
  // suffix of <member>", "wheel tag <tag>", "--libc".
  std::string libc_source;
  std::vector<PackageBinary> binaries;
  std::vector<ExternalLibrary> externals;  // load order, one per soname
  std::vector<std::string> excluded;       // sonames pruned by `exclude`
  // Sonames that could not be found → the binaries that need them.
  std::map<std::string, std::set<std::string>> missing;
  deps::Evaluation as_is;         // libraries outside the policy block
  deps::Evaluation after_repair;  // libraries outside the policy grafted
  std::shared_ptr<const deps::PolicySet> owned_policies;
  const deps::PolicySet* policies = nullptr;

  // The open wheel and the scratch directory (kept for the repair).
  std::shared_ptr<archive::ZipReader> zip;
  std::shared_ptr<ScratchDir> scratch;
  std::filesystem::path tree;  // root of the unpacked members (canonical)

  /// The external library named \p soname, or nullptr.
  const ExternalLibrary* external(std::string_view soname) const;
  /// The ELF member named \p member, or nullptr.
  const PackageBinary* binary(std::string_view member) const;
  /// Whether repairing to the best reachable tag bundles `lib` (for
  /// "linux": whatever no policy of the family allows).
  bool would_graft(const ExternalLibrary& lib) const;
};

/// Analyses `wheel` (see above) with `options`.
/// Throws libpkg::Error: Errc::format for a wheel that does not parse or has
/// hostile member names, Errc::unsupported for ELF files of several
/// architectures (naming two), of a machine or ARM float ABI no policy
/// covers (saying why) or an ELF file under .data/purelib, Errc::usage for a
/// wheel without ELF files (a pure-Python wheel needs no repair) and for a
/// wheel whose libc cannot be decided (naming --libc).
///
/// The libc family, in order: what the binaries say (deps::libc_of; two
/// families is Errc::unsupported), the extension suffixes
/// (deps::libc_from_extension_suffix), the wheel's platform tags
/// (manylinux_/musllinux_/android_), AnalyzeOptions::libc.
WheelAnalysis analyze_wheel(const std::filesystem::path& wheel,
                            const AnalyzeOptions& options = {});

/// True when `wheel` has no ELF member: a pure-Python wheel, which
/// analyze_wheel refuses; `show`/`repair --allow-pure-python-wheel`
/// (auditwheel's) ask this first to accept it as it is. Throws
/// ZipReader::open's errors.
bool is_pure_wheel(const std::filesystem::path& wheel);

/// The `pkgtool show --json` document (schema "libpkg-show/1", documented in
/// docs/repair.md).
std::string show_json(const WheelAnalysis& analysis, int indent = 2);
/// The human report of `pkgtool show`.
std::string show_text(const WheelAnalysis& analysis);

}  // namespace libpkg::bundle
