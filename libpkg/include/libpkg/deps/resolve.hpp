// SPDX-License-Identifier: BSD-3-Clause
// Shared-library resolution with the dynamic loader's rules.
//
// glibc ld.so, for a DT_NEEDED name without a slash, searches in this order:
//   1. DT_RPATH of the object that needs it — only if that object has no
//      DT_RUNPATH — then the DT_RPATH of the object that loaded it, and so on
//      up the chain to the root (the executable / analysed file);
//   2. LD_LIBRARY_PATH (here: SearchConfig::ld_library_path, then
//      SearchConfig::extra_paths);
//   3. DT_RUNPATH of the object that needs it (not inherited);
//   4. the ld.so.conf directories (include globs followed, relative to the
//      including file's directory; `hwcap` lines ignored);
//   5. the default directories (/lib64, /usr/lib64, /lib, /usr/lib, ...).
// Names with a slash are used as paths (relative to the current directory).
// A candidate is accepted only when its ELF class, byte order, machine and
// OSABI (SYSV and GNU are interchangeable) match the requesting object;
// others are skipped (and reported) as ld.so does. Like ld.so, a soname is
// loaded once per process: the tree is built breadth first and a soname
// already resolved is not searched again (this also ends cycles).
// $ORIGIN/${ORIGIN} expand to the directory of the object whose path list it
// is; $LIB/${LIB} and $PLATFORM/${PLATFORM} to SearchConfig::lib/platform.
// Empty entries mean the current directory (as ld.so).
//
// Choices where ld.so's behaviour depends on the running process:
//  - $ORIGIN of the analysed file is the directory of its realpath (ld.so
//    takes the executable's from /proc/self/exe); for libraries it is the
//    directory of the path the library was found at, symlinks not resolved
//    (ld.so uses the name it opened).
//  - The default directories are /lib64, /usr/lib64, /lib, /usr/lib for
//    ELFCLASS64 requesters and /lib, /usr/lib for ELFCLASS32 (upstream
//    glibc; Debian's ld.so uses /lib/<triplet> instead of /lib64, but those
//    are in ld.so.conf, which comes first). Directories that do not exist
//    are left out of the system list.
//  - ld.so.cache is not read: the ld.so.conf directories are searched in
//    file order, which is what the cache built from them answers except for
//    glibc-hwcaps / legacy hwcap subdirectories, which are not searched.
//  - A candidate that is not an ELF file is skipped with a reason (ld.so
//    would stop with "invalid ELF header").
//  - A NEEDED name is matched against earlier NEEDED names only, not
//    against the DT_SONAME of libraries loaded under another name, nor
//    against the interpreter (ld.so reports libc's NEEDED
//    ld-linux-x86-64.so.2 as the PT_INTERP file; here it is searched for
//    like any library and resolves to the same realpath).
//
// musl (SearchConfig::libc == musl): LD_LIBRARY_PATH first, then DT_RUNPATH
// or DT_RPATH (musl treats them alike) of the needing object and of each
// object up the loader chain, then /etc/ld-musl-<arch>.path (entries split
// on ':' and newlines) or, without it, /lib:/usr/local/lib:/usr/lib.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/elf/view.hpp"

namespace libpkg::deps {

/// The C library a binary is built for. Bionic is Android's: its binaries
/// need the unversioned "libc.so" like musl's, and are told apart by the
/// loader (/system/bin/linker64), the .note.android.ident section or the
/// LIBC* symbol versions bionic's libc.so defines.
enum class Libc { glibc, musl, bionic };
/// "glibc", "musl", "bionic".
const char* libc_name(Libc libc);
/// The inverse of libc_name; nullopt for anything else.
std::optional<Libc> parse_libc(std::string_view name);

/// How the resolver searches for libraries, as the dynamic loader of `libc`
/// would.
struct SearchConfig {
  Libc libc = Libc::glibc;
  // Prefix for the system locations (ld.so.conf, default dirs, musl path
  // file): "/" or a sysroot / test root. DT_RPATH/DT_RUNPATH entries,
  // LD_LIBRARY_PATH, extra_paths and system_dirs are used as written: they
  // are real paths of the package or build being analysed.
  std::filesystem::path root = "/";
  // LD_LIBRARY_PATH entries (the frontend passes the environment's value;
  // the library never reads the environment itself).
  std::vector<std::string> ld_library_path;
  // Extra directories from the command line, searched right after
  // LD_LIBRARY_PATH.
  std::vector<std::string> extra_paths;
  // Replaces the ld.so.conf + default directories when set (auditwheel's
  // --ldpaths).
  std::optional<std::vector<std::string>> system_dirs;
  // Expansions of $LIB and $PLATFORM; empty = derived from the requesting
  // object ("lib64"/"lib" by class; the machine name such as "x86_64").
  std::string lib;
  std::string platform;
  // Opens each ELF file the search reaches (the root and every candidate);
  // empty = elf::ElfFile::open. The wheel analysis lays out empty
  // placeholders where its members would be unpacked (so $ORIGIN, paths and
  // realpaths are those of the unpacked wheel) and serves their contents
  // from the archive, inflated only as far as they are read.
  std::function<elf::ElfFile(const std::filesystem::path&)> open_elf;
};

/// Where a library was found.
enum class FoundVia {
  path,             // the NEEDED name contains '/'
  rpath,            // DT_RPATH of the needing object
  inherited_rpath,  // DT_RPATH of an object further up the loader chain
  ld_library_path,
  extra_path,
  runpath,
  ld_so_conf,
  default_dir,
  not_found,
};
/// "rpath", "ld_library_path", ... for `via`.
const char* found_via_name(FoundVia via);

/// A file with the wanted name the loader would skip (wrong class or machine),
/// and why.
struct SkippedCandidate {
  std::filesystem::path path;
  std::string reason;  // "ELFCLASS32, need ELFCLASS64", "machine i386 ..."
};

/// One library in the dependency closure: how it was asked for, where it was
/// found (if at all) and its own dynamic entries.
struct LibraryNode {
  std::string soname;  // the DT_NEEDED string that asked for it
  std::optional<std::filesystem::path> path;      // as found (search dir/name)
  std::optional<std::filesystem::path> realpath;  // symlinks resolved
  FoundVia via = FoundVia::not_found;
  std::string search_dir;  // the search-list entry that matched (unexpanded)
  std::string needed_by;   // soname (or root path) of the first requester
  // Filled for found libraries:
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath;
  std::vector<SkippedCandidate> skipped;
};

/// The dependency closure of one ELF file, as `ldd` shows it.
struct LddTree {
  std::filesystem::path path;  // the analysed file
  std::optional<std::string> interpreter;
  std::vector<std::string> needed;  // the root's DT_NEEDED
  std::optional<std::string> rpath, runpath;
  // Every library in the closure, in load (breadth-first) order, one per
  // soname.
  std::vector<LibraryNode> libraries;

  /// The library with this soname, or nullptr.
  const LibraryNode* find(std::string_view soname) const;
  /// Sonames that could not be found.
  std::vector<std::string> missing() const;
};

/// Resolves DT_NEEDED libraries as the glibc or musl dynamic loader does, under
/// SearchConfig::root.
class Resolver {
 public:
  /// Reads the system directories (ld.so.conf with its includes, or musl's path
  /// file) under `config.root` once.
  explicit Resolver(SearchConfig config = {});

  /// Resolves the closure of `file`. Libraries for which `prune(node)`
  /// returns true are listed but not descended into (e.g. a policy's
  /// allowed system libraries, or --exclude patterns).
  LddTree tree(const std::filesystem::path& file,
               const std::function<bool(const LibraryNode&)>& prune = {}) const;
  /// tree(file, prune) for a file the caller already opened (`root`, read
  /// from `file`), so it is not read again.
  LddTree tree(const elf::ElfFile& root, const std::filesystem::path& file,
               const std::function<bool(const LibraryNode&)>& prune = {}) const;

  /// One directory of a search list, expanded and as written, with the
  /// reason it is searched.
  struct SearchEntry {
    std::string dir;  // expanded
    FoundVia via;
    std::string raw;  // as written (with $ORIGIN...)
  };
  /// The directories searched for a NEEDED of `requester` (expanded), in
  /// order, with the reason of each; `chain` is the loader chain above it
  /// (root first) for RPATH inheritance.
  std::vector<SearchEntry> search_list(
      const elf::ElfFile& requester,
      const std::vector<const elf::ElfFile*>& chain) const;

  /// The system directories (ld.so.conf with includes, then the defaults;
  /// or the musl path file / defaults), expanded under `root`. Read once, in
  /// the constructor, so that a Resolver can be shared between threads.
  /// For glibc this lists the 64-bit defaults (a 32-bit requester searches
  /// only /lib and /usr/lib); for musl, the one <root>/etc/ld-musl-*.path
  /// present (the requester's architecture picks among several), else the
  /// defaults.
  const std::vector<std::string>& system_dirs() const;

  /// The configuration the resolver was made with.
  const SearchConfig& config() const { return config_; }

 private:
  std::vector<SearchEntry> system_entries(const elf::ElfFile& requester) const;

  SearchConfig config_;
  std::vector<std::string> system_dirs_;
  std::vector<std::string> conf_dirs_;       // ld.so.conf, under root
  std::vector<std::string> default_dirs64_;  // existing, not in conf_dirs_
  std::vector<std::string> default_dirs32_;
  std::map<std::string, std::vector<std::string>> musl_paths_;  // by arch
};

/// Parses an ld.so.conf file (`conf` is its real path, already under
/// `root`): directories in order, `include` globs expanded
/// (sorted, relative to the conf file's directory), comments and `hwcap`
/// lines dropped, paths interpreted under `root`. Missing include targets
/// are ignored (as ldconfig does); include cycles are broken.
std::vector<std::string> parse_ld_so_conf(const std::filesystem::path& conf,
                                          const std::filesystem::path& root);

/// Expands $ORIGIN/${ORIGIN}, $LIB/${LIB}, $PLATFORM/${PLATFORM} in one
/// search-path entry.
std::string expand_dst(std::string_view entry, std::string_view origin,
                       std::string_view lib, std::string_view platform);

/// Splits a ':'-separated path list (empty entries kept as "").
std::vector<std::string> split_path_list(std::string_view list);

/// Splits an LD_LIBRARY_PATH value as glibc's loader does: entries end at
/// ':' or ';', and an empty entry is kept as "" (the current directory for
/// glibc; musl's rules, which drop it, are applied when searching).
std::vector<std::string> split_ld_library_path(std::string_view value);

/// True when a library at `candidate` can satisfy `requester` (class, byte
/// order, machine, OSABI); otherwise sets `why`.
bool compatible(const elf::ElfFile& requester, const elf::ElfFile& candidate,
                std::string* why = nullptr);

/// The policy architecture name of an ELF file: x86_64, i686, aarch64,
/// ppc64le, ppc64, s390x, armv7l, riscv64, loongarch64; "" when no policy
/// covers it (unsupported_machine says why). ARM is armv7l only for an
/// EABI5 hard-float file (e_flags EF_ARM_ABI_FLOAT_HARD, EABI version 5)
/// whose .ARM.attributes, when present, say ARMv7 or later: soft-float
/// (armel) and ARMv5/ARMv6 binaries do not run on every armv7l system.
std::string policy_arch(const elf::ElfFile& elf);

/// Why policy_arch(elf) is "": "machine SPARC v9: no platform policy covers
/// it", "ARM soft-float (EABI5 without EF_ARM_ABI_FLOAT_HARD): armv7l
/// wheels are hard-float, no policy applies".
std::string unsupported_machine(const elf::ElfFile& elf);

/// The C library, from what the file itself says: PT_INTERP (ld-musl-*,
/// ld-linux*, /system/bin/linker*), the .note.android.ident section, the
/// NEEDED libc name (libc.so.6 glibc; libc.so bionic when versioned LIBC*,
/// else musl). nullopt when it says nothing (no interpreter, no libc).
std::optional<Libc> libc_of(const elf::ElfFile& elf);

/// The libc implied by an extension module's file name: "-linux-musl.so"
/// → musl, "-linux-android.so" → bionic, "-linux-gnu.so" → glibc for
/// CPython 3.11 and later only (older musl builds of CPython used the gnu
/// suffix too, so there it proves nothing). nullopt otherwise.
std::optional<Libc> libc_from_extension_suffix(std::string_view member);

}  // namespace libpkg::deps
