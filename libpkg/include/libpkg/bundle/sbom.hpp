// SPDX-License-Identifier: BSD-3-Clause
// The CycloneDX 1.4 SBOM of what a repair grafted, written into the
// repaired wheel as `<dist-info>/sboms/pkgtool.cdx.json` (PEP 770's
// directory; auditwheel 6.x writes `auditwheel.cdx.json` there), by the
// ELF and the macOS repair alike.
//
// One `library` component per grafted library: its name in the wheel, the
// SHA-256 of the original file, where it was taken from (properties
// `libpkg:source_path`, `libpkg:realpath`, and `libpkg:soname` (ELF) or
// each `libpkg:install_name` it was loaded by (Mach-O)) and, when `dpkg -S` (or
// on rpm systems `rpm -qf`) names the OS package owning it, that package's
// version and a purl `pkg:deb/debian/NAME@VERSION?arch=ARCH` (or
// `pkg:rpm/<distro>/NAME@VERSION-RELEASE?arch=ARCH`). The wheel itself is the
// metadata component (`pkg:pypi/NAME@VERSION?file_name=...`), depending on
// every grafted library. The document is deterministic (no timestamp; the
// serial number is derived from the wheel name and the grafts' hashes), so
// repairing twice gives the same bytes.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/bundle/repair.hpp"

namespace libpkg::bundle {

/// The OS package that owns a file.
struct OsPackage {
  std::string name, version, arch;
  std::string type = "deb";          // purl type: deb, rpm
  std::string vendor = "debian";     // purl namespace (os-release ID for rpm)
  std::string publisher = "Debian";  // the component's publisher
  /// pkg:TYPE/VENDOR/NAME@VERSION?arch=ARCH
  std::string purl() const;
};

/// Asks dpkg which packages own `files`: one `dpkg -S` for all of them
/// (each tried as given, resolved, and without a leading /usr for
/// merged-/usr systems), then one `dpkg-query` for the versions — a lookup
/// per file cost ~0.4 s each. Files no package owns, or all of them when
/// dpkg is absent, are left out of the result.
std::map<std::filesystem::path, OsPackage> dpkg_owners(
    const std::vector<std::filesystem::path>& files);

/// Asks rpm which packages own `files`: one `rpm -qf --queryformat` for all
/// the files that exist (each as given and resolved), NAME, VERSION-RELEASE
/// and ARCH per file; purl pkg:rpm/<os-release ID>/NAME@VERSION-RELEASE.
/// When the answer has not one line per file (a file owned by several
/// packages), each file is asked alone. The database is rpm's own (its
/// macros: %_dbpath).
std::map<std::filesystem::path, OsPackage> rpm_owners(
    const std::vector<std::filesystem::path>& files);

/// The lookup of the build host's package manager, as auditwheel chooses
/// it: dpkg when `dpkg` is on PATH, else rpm when `rpm` is; none otherwise
/// (the SBOM then names no OS package).
std::map<std::filesystem::path, OsPackage> system_owners(
    const std::vector<std::filesystem::path>& files);

/// A lookup of the OS packages that own files (system_owners, or a fake in
/// tests).
using OwnerLookup = std::function<std::map<std::filesystem::path, OsPackage>(
    const std::vector<std::filesystem::path>&)>;

/// `lookup`, its answers memoized in `cache` (archive/file_memo.hpp) under
/// `kind`, the identities of the files asked (as given and resolved) and
/// those of the `database` files the answer depends on: a change to any of
/// them asks `lookup` again. `cache` null: `lookup` itself.
OwnerLookup memoized_owners(OwnerLookup lookup, archive::ChunkCache* cache,
                            std::string kind,
                            std::vector<std::filesystem::path> database);

/// system_owners for a repair with `cache` (may be null): with dpkg, its
/// answers are memoized under dpkg's status and diversions files (every
/// install, removal and diversion rewrites one of them) and the dpkg and
/// dpkg-query programs found on PATH, so the jobs of a nightly ask dpkg
/// once; rpm's answers are not memoized (its database is where rpm's
/// macros put it).
OwnerLookup system_owner_lookup(archive::ChunkCache* cache);

/// The member name: "<dist-info>/sboms/pkgtool.cdx.json".
std::string sbom_member(const std::string& dist_info);

/// One grafted library as the SBOM lists it.
struct SbomLibrary {
  std::string member;            // its path in the wheel (the bom-ref)
  std::string name;              // its file name there
  std::string sha256;            // hex SHA-256 of the original file
  std::filesystem::path source;  // where it was found
  // More `libpkg:<name>` properties ("soname", "install_name").
  std::vector<std::pair<std::string, std::string>> properties;
};

/// The document for `libraries` grafted into the wheel `wheel_file` of
/// `distribution` `version`; owners are looked up for every source at
/// once. Never throws but the lookup's errors.
std::string sbom_document(const std::string& distribution,
                          const std::string& version,
                          const std::string& wheel_file,
                          const std::vector<SbomLibrary>& libraries,
                          const OwnerLookup& owners = system_owners);

/// The document for `plan` (grafts with their source and sha256).
std::string sbom_json(const WheelAnalysis& analysis, const RepairPlan& plan,
                      const OwnerLookup& owners = system_owners);

/// The document for a macOS repair plan (grafts with their source, sha256
/// and install names).
std::string sbom_json(const MacosRepairPlan& plan,
                      const OwnerLookup& owners = system_owners);

}  // namespace libpkg::bundle
