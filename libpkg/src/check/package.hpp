// SPDX-License-Identifier: BSD-3-Clause
// Private to the check module: the package being checked, opened once into
// a directory (archives are extracted into a scratch directory with the
// safe extractor; trees are used where they are), with its ELF files read
// once and their dependencies resolved once, and the check functions that
// run over it (one file per check group).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/abi/census.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/check/check.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::check::detail {

struct ElfEntry {
  std::string member;          // relative to Package::root, '/'-separated
  std::filesystem::path file;  // root / member
  std::string soname;          // "" when the file has none
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath;
  bool executable = false;  // ET_EXEC or a PIE with an interpreter
  bool extension = false;   // defines PyInit_*
  deps::BinaryFacts facts;  // deps::binary_facts (versions, arch, libc)
  // What ld.so substitutes for $LIB and $PLATFORM in this file's search
  // paths ("lib64"/"lib" by ELF class; the machine), unless the search
  // configuration fixes them.
  std::string dst_lib, dst_platform;
};

// Expands $ORIGIN, $LIB and $PLATFORM in one search-path entry of `e` the
// way the loader does for that file.
std::string expand_entry(const ElfEntry& e, std::string_view raw,
                         const deps::SearchConfig& search);

// One DT_NEEDED of one ELF file of the package, resolved with the loader's
// rules (RPATH inherited from every loader chain the file appears in).
struct ResolvedNeed {
  std::string requester;  // member
  std::string soname;
  std::optional<std::filesystem::path> path;  // nullopt = not found
  std::optional<std::filesystem::path> realpath;
  // Inside the package: the member it resolved to.
  std::optional<std::string> member;
  // Not found, but a search entry of the requester names a directory
  // under the package root that the package doesn't have (pypi CUDA
  // libraries: $ORIGIN/../../nvidia/cublas/lib): the directory.
  std::optional<std::string> sibling_dir;
};

// One slice of a Mach-O file of the package, as the checks need it.
struct MachoSlice {
  std::string arch;     // "arm64", "x86_64", "i386", ...
  bool parsed = false;  // 64-bit little-endian: load commands read
  u32 filetype = 0;
  std::optional<u32> minos;  // LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX
  std::optional<std::string> id;
  std::vector<std::pair<std::string, std::string>> dylibs;  // name, kind
  std::vector<std::string> rpaths;
  bool is_signed = false;  // has a non-empty LC_CODE_SIGNATURE
};

struct MachoEntry {
  std::string member;  // relative to Package::root, '/'-separated
  std::filesystem::path file;
  bool fat = false;
  std::vector<MachoSlice> slices;
  // Executables, dylibs and bundles: what dyld loads (objects and dSYMs
  // are only listed).
  bool loadable = false;
};

// One dependent dylib of one slice of a Mach-O file, resolved with dyld's
// rules (the run-path stack of every load chain the file appears in, within
// the package; a found resolution beats a missing one).
struct MachoNeed {
  std::string requester;  // member
  std::string arch;
  std::string install_name;
  std::string kind;                           // "load", "weak", "reexport", ...
  std::string status;                         // deps::dyld_status_name
  std::optional<std::filesystem::path> path;  // found: where
  std::optional<std::string> member;          // found inside the package
  std::vector<std::string> tried;             // rejected candidates
};

struct Package {
  std::filesystem::path artifact;
  ArtifactKind kind = ArtifactKind::wheel;
  // The directory member names are relative to: the wheel's install root
  // (site-packages), the conda prefix, the directory holding libtorch/ —
  // canonical, so realpaths compare with it.
  std::filesystem::path root;
  // Where the package's own files start below `root` ("" for wheels and
  // conda; "libtorch" for libtorch; "torch" for a python_package): RPATH
  // entries may reach anywhere under root, the layout checks look here.
  std::string content_dir;
  std::optional<wheel::WheelName> wheel_name;  // wheels
  // The distribution's .dist-info directory (wheels; a python_package's
  // owner, whose RECORD lists it; "" if none does).
  std::string dist_info;
  // Platform tags the package claims: the wheel file name's, or the Tag
  // lines of an installed package's WHEEL file.
  std::vector<std::string> platform_tags;
  std::vector<std::string> files;  // regular files and symlinks, sorted
  std::vector<ElfEntry> elfs;      // sorted by member
  std::vector<ResolvedNeed> needs;
  std::vector<MachoEntry> machos;  // sorted by member
  std::vector<MachoNeed> macho_needs;
  std::shared_ptr<archive::ZipReader> zip;  // wheel and libtorch zips
  // Wheels: each member's SHA-256 and size as extracted (indexed like
  // zip->entries()), for the RECORD check.
  std::vector<archive::MemberDigest> member_digests;
  std::shared_ptr<ScratchDir> scratch;  // archives: the extraction
  // Census results by member: the cxx-abi and link checks both need the
  // census of a GB-sized libtorch_cpu.so, which takes seconds to count.
  struct CensusCache {
    std::mutex mutex;
    std::map<std::string, abi::Census> by_member;
  };
  std::shared_ptr<CensusCache> census_cache = std::make_shared<CensusCache>();

  const ElfEntry* elf(std::string_view member) const;
  // Files whose name (last component) matches the glob.
  std::vector<std::string> files_named(std::string_view glob) const;
  std::filesystem::path content_path() const {
    return content_dir.empty() ? root : root / content_dir;
  }
};

// Mach-O members: reads every file of `members` (validating every slice's
// load commands and verifying code signatures; a malformed one is bad
// input naming the member) and resolves their dylibs with dyld's rules.
void read_machos(Package& pkg, const std::vector<std::string>& members,
                 const CheckOptions& options);
// Per slice of `entry` (in its order), what the code-signature verifier
// finds wrong (empty: every page hash of every CodeDirectory matches, or
// unsigned). Reads every signed page, so only the code-signature check
// calls it.
std::vector<std::vector<std::string>> verify_signatures(
    const MachoEntry& entry);
// True for a regular file starting with a Mach-O magic (a fat magic with a
// Java class file's version numbers is not).
bool sniff_macho_file(const std::filesystem::path& file);
// The package is Mach-O only: the ELF-specific checks are not applicable.
inline bool macho_only(const Package& pkg) {
  return !pkg.machos.empty() && pkg.elfs.empty();
}

// Opens `artifact`, reads its ELF files and resolves their dependencies.
Package open_package(const std::filesystem::path& artifact,
                     const CheckOptions& options);

// The check groups. Each fills the result(s) it is given (id preset).
void check_integrity(const Package& pkg, const CheckOptions& options,
                     CheckResult& result);
void check_cxx_abi(const Package& pkg, const CheckOptions& options,
                   CheckResult& result);
void check_symbol_versions(const Package& pkg, const CheckOptions& options,
                           CheckResult& result);
void check_dependencies(const Package& pkg, const CheckOptions& options,
                        CheckResult& result);
void check_rpath(const Package& pkg, const CheckOptions& options,
                 CheckResult& result);
void check_runtimes(const Package& pkg, const CheckOptions& options,
                    CheckResult& result);
// The Mach-O halves of dependencies, rpath and runtimes (appending to the
// result's problems and notes; `summary` gets their one-line account), and
// the Mach-O-only checks.
std::string check_macho_dependencies(const Package& pkg, CheckResult& result);
std::string check_macho_rpath(const Package& pkg, CheckResult& result);
std::string check_macho_runtimes(const Package& pkg, CheckResult& result);
void check_deployment_target(const Package& pkg, const CheckOptions& options,
                             CheckResult& result);
void check_code_signature(const Package& pkg, const CheckOptions& options,
                          CheckResult& result);
void check_accelerator(const Package& pkg, const CheckOptions& options,
                       CheckResult& result);
void check_import(const Package& pkg, const CheckOptions& options,
                  CheckResult& result);
void check_link(const Package& pkg, const CheckOptions& options,
                CheckResult& link, CheckResult& wrong_abi);
void check_gpu(const Package& pkg, const CheckOptions& options,
               CheckResult& result);

// The ABI the package declares for its C++ API: the expectation if given,
// else TorchConfig.cmake's _GLIBCXX_USE_CXX11_ABI, else the census verdict
// of the census library; nullopt when none says.
std::optional<abi::CxxAbi> declared_abi(const Package& pkg,
                                        const CheckOptions& options);

// The policy the package claims and the tag that claims it: --platform, or
// the wheel's most compatible platform tag; nullptr with `why` when it
// claims none (conda, libtorch, a linux_* wheel). Errc::usage for an
// unknown --platform.
const deps::Policy* claimed_policy(const Package& pkg,
                                   const CheckOptions& options,
                                   const deps::PolicySet& policies,
                                   std::string* tag, std::string* why);

// The package's CUDA runtime (libcudart), bundled or needed: the path it
// resolves to, if any.
std::optional<std::filesystem::path> cuda_runtime(const Package& pkg);

// A file name without the graft hash: "libgomp-a34b3233.so.1" →
// "libgomp.so.1" (what `pkgtool repair` and auditwheel insert).
std::string unhashed_name(std::string_view name);

}  // namespace libpkg::check::detail
