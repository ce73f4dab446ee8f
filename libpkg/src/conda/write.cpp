// SPDX-License-Identifier: BSD-3-Clause
// Writing the package files of both formats from the two member lists.
#include <future>

#include "libpkg/archive/tar.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "tree.hpp"

namespace libpkg::conda::detail {
namespace fs = std::filesystem;

namespace {

// The zstd overlap for the pkg part when it is one multithreaded frame
// (levels above 19): each job re-indexes only 1/64 of a window of the
// previous job's input instead of zstd's default 1/4 at levels 13-15. On
// the 1.3 GB CUDA-library benchmark tree at level 15 that is 8 % less CPU
// for 0.2 % more output (bench/RESULTS.md).
constexpr int kPkgOverlapLog = 3;

u64 write_conda(const fs::path& target, const std::string& stem,
                const std::vector<archive::TarEntry>& info,
                const std::vector<archive::TarEntry>& pkg,
                const WriteSettings& s, unsigned threads) {
  ScratchDir scratch(target.parent_path());
  const std::string pkg_name = "pkg-" + stem + ".tar.zst";
  const std::string info_name = "info-" + stem + ".tar.zst";
  const fs::path info_tmp = scratch.path() / info_name;
  archive::TarWriteOptions tar{s.mtime};
  // info is small: compress it on its own thread, to a scratch file, while
  // pkg uses the zstd workers.
  auto info_done = std::async(std::launch::async, [&] {
    archive::write_tar_zst(info_tmp, info, tar, {s.zstd_level, 1, true});
  });
  try {
    archive::ZipWriterOptions zip;
    zip.threads = 1;
    zip.level = 0;  // the .conda zip is STORED: its members are zstd streams
    zip.timestamp = s.mtime;
    archive::ZipWriter writer(target, zip);
    writer.add_bytes("metadata.json", R"({"conda_pkg_format_version": 2})");
    // pkg is compressed straight into its place in the zip: a GB-sized
    // package is written once, not to a scratch file and copied.
    const u64 tar_bytes = archive::tar_size(pkg, tar);
    const std::string pkg_label = target.string() + ": " + pkg_name;
    archive::ZstdOptions zstd{s.zstd_level, threads, true, kPkgOverlapLog};
    zstd.progress = s.progress;
    // Independent frames (levels up to 19): the frames of large files can
    // come from the chunk cache, for 0.2 % more bytes than one stream at
    // level 19 on CUDA libraries (docs/archives.md).
    zstd.independent_frames = archive::zstd_frames_supported(s.zstd_level);
    zstd.pool = s.pool;
    zstd.cache = s.cache;
    const u64 bound =
        zstd.independent_frames
            ? archive::zstd_frames_bound(tar_bytes, pkg.size(), s.zstd_level)
            : archive::zstd_bound(tar_bytes);
    writer.add_stream(pkg_name, bound, [&](const archive::TarSink& sink) {
      archive::write_tar_zst(pkg, tar, zstd, tar_bytes, sink, pkg_label);
    });
    info_done.get();
    writer.add_file(info_name, info_tmp);
    writer.commit();
    return writer.size();
  } catch (...) {
    if (info_done.valid()) info_done.wait();
    throw;
  }
}

}  // namespace

std::vector<fs::path> write_package_files(
    const fs::path& out_dir, const std::string& stem,
    const std::vector<archive::TarEntry>& info,
    const std::vector<archive::TarEntry>& pkg, const WriteSettings& s,
    std::vector<u64>* sizes) {
  if (s.formats.empty()) {
    throw Error(Errc::usage, out_dir.string(), "no package format requested");
  }
  create_output_directory(out_dir);
  unsigned threads = s.threads == 0 ? ThreadPool::default_threads() : s.threads;
  std::vector<fs::path> outputs;
  std::vector<u64> written(s.formats.size(), 0);
  std::future<u64> bz2_done;
  std::size_t bz2_index = 0;
  for (PackageFormat format : s.formats) {
    fs::path target = out_dir / (stem + package_extension(format));
    outputs.push_back(target);
    if (format == PackageFormat::tar_bz2) {
      // Its blocks compress on the pool while the .conda's zstd workers
      // run: this thread only cuts and joins them.
      bz2_index = outputs.size() - 1;
      bz2_done =
          std::async(std::launch::async, [&info, &pkg, &s, target, threads] {
            std::vector<archive::TarEntry> all = info;
            all.insert(all.end(), pkg.begin(), pkg.end());
            archive::Bzip2Options bzip2;
            bzip2.level = s.bzip2_level;
            bzip2.threads = threads;
            bzip2.pool = s.pool;
            bzip2.cache = s.cache;
            return archive::write_tar_bz2(target, all, {s.mtime}, bzip2);
          });
    }
  }
  try {
    for (std::size_t i = 0; i < s.formats.size(); ++i) {
      if (s.formats[i] == PackageFormat::conda) {
        written[i] = write_conda(outputs[i], stem, info, pkg, s, threads);
      }
    }
  } catch (...) {
    if (bz2_done.valid()) bz2_done.wait();
    throw;
  }
  if (bz2_done.valid()) written[bz2_index] = bz2_done.get();
  // Keep the cache within its cap, as the zip writers do after commit.
  if (s.cache) s.cache->prune_if_stored();
  if (sizes) *sizes = std::move(written);
  return outputs;
}

}  // namespace libpkg::conda::detail
