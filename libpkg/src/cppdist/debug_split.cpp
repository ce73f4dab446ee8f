// SPDX-License-Identifier: BSD-3-Clause
// split_debug_info / file_crc32 / write_debug_zip: see cppdist/debug_split.hpp.
#include "libpkg/cppdist/debug_split.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <set>

#include "base/glob.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/cppdist/naming.hpp"

namespace fs = std::filesystem;

namespace libpkg::cppdist {
namespace {

void run_objcopy(const DebugSplitOptions& o,
                 const std::vector<std::string>& args, const fs::path& file) {
  std::vector<std::string> argv = {o.objcopy};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run_process(argv, {.timeout_seconds = 3600});
  if (r.not_found)
    throw Error(Errc::not_found, o.objcopy,
                "objcopy (binutils) not found; it is needed for the debug "
                "split (install binutils or leave out --debug-split)");
  if (!r.ok())
    throw Error(Errc::format, file.string(),
                fmt::format("objcopy {} failed ({}): {}", args.front(),
                            r.describe(), r.output));
}

// Regular files under `lib_dir` matching each glob, in glob order, each
// once.
std::vector<fs::path> matching(const fs::path& lib_dir,
                               const std::vector<std::string>& globs,
                               bool& first_glob_matched) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(lib_dir);
       it != fs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file() && !it->is_symlink()) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  std::set<fs::path> seen;
  first_glob_matched = false;
  for (std::size_t i = 0; i < globs.size(); ++i)
    for (const auto& f : files)
      if (glob_match(globs[i], f.filename().string()) &&
          seen.insert(f).second) {
        out.push_back(f);
        if (i == 0) first_glob_matched = true;
      }
  return out;
}

}  // namespace

u32 file_crc32(const fs::path& file) {
  Fd fd = open_regular(file);
  uLong crc = ::crc32(0L, Z_NULL, 0);
  read_chunks(fd.get(), file.string(), std::size_t{1} << 20,
              [&](std::span<const u8> piece) {
                crc =
                    ::crc32(crc, piece.data(), static_cast<uInt>(piece.size()));
              });
  return static_cast<u32>(crc);
}

DebugSplitResult split_debug_info(const fs::path& lib_dir,
                                  const fs::path& debug_dir,
                                  const DebugSplitOptions& options) {
  if (options.libraries.empty())
    throw Error(Errc::usage, lib_dir.string(),
                "debug split: no library globs given");
  bool main_found = false;
  std::vector<fs::path> libs = matching(lib_dir, options.libraries, main_found);
  if (!main_found)
    throw Error(Errc::not_found, lib_dir.string(),
                fmt::format("debug split: no library matches '{}' (its "
                            "debuglink CRC names the debug zip)",
                            options.libraries.front()));
  fs::create_directories(debug_dir);
  DebugSplitResult result;
  for (const fs::path& lib : libs) {
    DebugFile d;
    d.library = lib;
    d.debug = debug_dir / (lib.filename().string() + options.suffix);
    if (fs::exists(d.debug))
      throw Error(Errc::usage, d.debug.string(),
                  "two libraries of the same name to split");
    run_objcopy(options, {"--only-keep-debug", lib.string(), d.debug.string()},
                lib);
    // A new file renamed over the library: never written through a hard
    // link to the input tree.
    fs::path tmp =
        lib.parent_path() / ("." + lib.filename().string() + ".libpkg-strip");
    struct stat st;
    if (::stat(lib.c_str(), &st) != 0) throw_errno(lib.string(), "stat");
    try {
      run_objcopy(options,
                  {"--strip-debug", "--remove-section=.gnu_debuglink",
                   "--add-gnu-debuglink=" + d.debug.string(), lib.string(),
                   tmp.string()},
                  lib);
      if (::chmod(tmp.c_str(), st.st_mode & 07777) != 0)
        throw_errno(tmp.string(), "chmod");
      fs::rename(tmp, lib);
    } catch (...) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    d.crc = file_crc32(d.debug);
    std::optional<u32> stored = debuglink_crc(lib);
    if (!stored || *stored != d.crc)
      throw Error(Errc::format, lib.string(),
                  fmt::format(".gnu_debuglink CRC is {}, but {} has CRC "
                              "{:08x}",
                              stored ? fmt::format("{:08x}", *stored)
                                     : std::string("missing"),
                              d.debug.filename().string(), d.crc));
    if (!result.main_crc) result.main_crc = d.crc;
    result.files.push_back(std::move(d));
  }
  return result;
}

u64 write_debug_zip(const DebugSplitResult& split, const fs::path& zip,
                    int level, unsigned threads, std::optional<i64> timestamp,
                    ThreadPool* pool) {
  archive::ZipWriterOptions zo;
  zo.level = level;
  zo.threads = threads;
  zo.pool = pool;
  zo.timestamp = timestamp;
  archive::ZipWriter writer(zip, zo);
  std::vector<const DebugFile*> files;
  for (const auto& f : split.files) files.push_back(&f);
  std::sort(files.begin(), files.end(), [](auto* a, auto* b) {
    return a->debug.filename() < b->debug.filename();
  });
  struct stat st;
  if (!files.empty() && ::stat(files.front()->debug.c_str(), &st) == 0)
    writer.add_directory("debug/", {.mode = 0755, .mtime = st.st_mtim.tv_sec});
  for (const DebugFile* f : files) {
    if (::stat(f->debug.c_str(), &st) != 0)
      throw_errno(f->debug.string(), "stat");
    writer.add_file("debug/" + f->debug.filename().string(), f->debug,
                    {.mode = 0644, .mtime = st.st_mtim.tv_sec});
  }
  writer.commit();
  return writer.size();
}

}  // namespace libpkg::cppdist
