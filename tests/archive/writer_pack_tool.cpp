// SPDX-License-Identifier: BSD-3-Clause
// Test driver for the zip writer: packs a directory tree into a zip.
//
//   writer_pack_tool [options] OUT.zip DIR
//     -j N               worker threads (default: one per core)
//     -z LEVEL           compression level 0..12 (default 6)
//     --chunk-size N     bytes per deflate chunk (default 8 MiB)
//     --force-zip64      ZIP64 records everywhere
//     --no-store-fallback  keep deflated data even when it did not shrink
//     --timestamp SECS   one timestamp for every member (default:
//                        $SOURCE_DATE_EPOCH, else each file's mtime)
//     --raw ARCHIVE MEMBER NAME   also copy MEMBER of ARCHIVE as NAME (raw)
//     --record           print "name sha256hex size crc32 method" per member
//
// Members are the tree's directories, regular files and symlinks, sorted by
// name, with their permission bits and mtimes. Errors print
// "error: FILE: message" and exit 2, like pkgtool.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace fs = std::filesystem;
using namespace libpkg;
using namespace libpkg::archive;

namespace {

struct RawCopy {
  std::string archive, member, name;
};

[[noreturn]] void usage(const std::string& why) {
  throw Error(Errc::usage, "writer_pack_tool", why);
}

u64 parse_u64(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    usage("not a number: " + s);
  return std::stoull(s);
}

int run(int argc, char** argv) {
  ZipWriterOptions options;
  options.timestamp = source_date_epoch();  // --timestamp overrides
  std::vector<std::string> positional;
  std::vector<RawCopy> raws;
  bool record = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "-j") {
      options.threads = static_cast<unsigned>(parse_u64(value()));
    } else if (a == "-z") {
      options.level = static_cast<int>(parse_u64(value()));
    } else if (a == "--chunk-size") {
      options.chunk_size = parse_u64(value());
    } else if (a == "--force-zip64") {
      options.force_zip64 = true;
    } else if (a == "--no-store-fallback") {
      options.store_if_not_smaller = false;
    } else if (a == "--timestamp") {
      options.timestamp = static_cast<i64>(parse_u64(value()));
    } else if (a == "--raw") {
      RawCopy r;
      r.archive = value();
      r.member = value();
      r.name = value();
      raws.push_back(r);
    } else if (a == "--record") {
      record = true;
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) usage("expected OUT.zip DIR");
  const fs::path root = positional[1];

  // Member names (directories with their trailing '/') in sorted order,
  // with only what the members need: a tree of many small files is held
  // once here, and the writer's own per-member state is what
  // writer_peak_rss measures.
  struct Item {
    std::string name;  // relative to root
    unsigned mode;     // st_mode
    i64 mtime;
  };
  std::vector<Item> items;
  for (auto it = fs::recursive_directory_iterator(root);
       it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0)
      throw_errno(it->path().string(), "cannot stat");
    Item item{it->path().lexically_relative(root).generic_string(),
              st.st_mode, static_cast<i64>(st.st_mtime)};
    if (S_ISDIR(st.st_mode)) item.name += '/';
    items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.name < b.name; });

  ZipWriter writer(positional[0], options);
  for (const Item& item : items) {
    ZipMemberAttrs attrs;
    attrs.mode = item.mode & 07777;
    attrs.mtime = item.mtime;
    const fs::path path = root / item.name;
    if (S_ISDIR(item.mode)) {
      writer.add_directory(item.name, attrs);
    } else if (S_ISLNK(item.mode)) {
      writer.add_symlink(item.name, fs::read_symlink(path).string(), attrs);
    } else if (S_ISREG(item.mode)) {
      writer.add_file(item.name, path, attrs);
    }
  }
  std::vector<ZipReader> readers;
  readers.reserve(raws.size());
  for (const RawCopy& r : raws) {
    readers.push_back(ZipReader::open(r.archive));
    const ZipEntry* e = readers.back().find(r.member);
    if (e == nullptr)
      throw Error(Errc::not_found, r.archive, "no member " + r.member);
    ZipMemberAttrs attrs;
    attrs.mtime = e->mtime();
    writer.add_raw(r.name, readers.back(), *e, attrs);
  }
  const auto& results = writer.commit();
  if (record) {
    for (const ZipMemberResult& r : results)
      fmt::print("{} {} {} {:08x} {}\n", r.name,
                 r.sha256 ? Sha256::hex(*r.sha256) : std::string("-"), r.size,
                 r.crc32, r.method);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
