// SPDX-License-Identifier: BSD-3-Clause
// Private helpers shared by pack, transmute and verify: walking a staged
// tree, the info/ split, softlink resolution, writing both formats.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/conda/package.hpp"

namespace libpkg::conda::detail {

struct StagedEntry {
  std::string path;  // relative, '/'-separated
  archive::TarKind kind = archive::TarKind::file;
  unsigned mode = 0644;
  std::filesystem::path source;  // absolute path on disk
  std::string link_target;       // symlinks
};

// Files, symlinks and empty directories under `root`, sorted by path (byte
// order). Throws Errc::usage for device nodes, FIFOs and sockets.
std::vector<StagedEntry> walk_tree(const std::filesystem::path& root);

// CEP 35: `info` and `info/...` go to the info part.
bool is_info_path(const std::string& path);

// The member a softlink finally points to when that is a regular file of the
// package: targets are resolved lexically from the link's directory,
// chains followed (up to 40 links), anything leaving the package or ending
// elsewhere gives nullopt. `kind_of` returns the kind and link target of a
// member path, or nullopt when absent.
struct MemberKind {
  archive::TarKind kind;
  std::string link_target;
};
std::optional<std::string> resolve_softlink(
    const std::string& path, const std::string& target,
    const std::function<std::optional<MemberKind>(const std::string&)>&
        kind_of);

archive::TarEntry to_tar_entry(const StagedEntry& e);

// Writes `<stem>.conda` / `<stem>.tar.bz2` into `out_dir` from the two
// parts (each already sorted). Returns outputs in `formats` order.
struct WriteSettings {
  std::vector<PackageFormat> formats;
  int zstd_level = 19;
  int bzip2_level = 9;
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // frames and blocks; null: own `threads`
  std::shared_ptr<archive::ChunkCache> cache;  // large files' frames, blocks
  i64 mtime = 0;
  ProgressFn progress;  // the .conda pkg part
};
// `sizes`, when given, receives the bytes written per output.
std::vector<std::filesystem::path> write_package_files(
    const std::filesystem::path& out_dir, const std::string& stem,
    const std::vector<archive::TarEntry>& info,
    const std::vector<archive::TarEntry>& pkg, const WriteSettings& settings,
    std::vector<u64>* sizes = nullptr);

// The conda layer's scratch directories: ".libpkg-conda-XXXXXX" siblings of
// the output, so the final renames stay on one file system.
class ScratchDir : public libpkg::ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& parent)
      : libpkg::ScratchDir(parent, ".libpkg-conda-") {}
};

// Calls `fn` with a reader for each tar component of a package: for a
// .conda the pkg and info members (found by their `pkg-`/`info-` prefix and
// `.tar.zst` suffix), for a .tar.bz2 the file itself. `fn`'s second
// argument is the component's member name ("" for .tar.bz2).
void for_each_component(
    const std::filesystem::path& package,
    const std::function<void(archive::TarReader&, const std::string&)>& fn);

}  // namespace libpkg::conda::detail
