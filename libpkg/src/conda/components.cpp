// SPDX-License-Identifier: BSD-3-Clause
// Reading packages: format detection, components, extract, transmute.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "libpkg/archive/staged_target.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/conda/package.hpp"
#include "tree.hpp"

namespace libpkg::conda {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// libarchive reads anything without a known compression magic as a raw
// tar, and a block of zeros as an empty one: a component of zeros would
// pass as an empty package. The names promise zstd / bzip2, so require it.
constexpr std::array<u8, 4> kZstdMagic{0x28, 0xb5, 0x2f, 0xfd};
constexpr std::array<u8, 3> kBzip2Magic{'B', 'Z', 'h'};

template <std::size_t N>
void require_magic(const std::string& name, const std::vector<u8>& head,
                   const std::array<u8, N>& magic, const char* what) {
  if (head.size() < N || !std::equal(magic.begin(), magic.end(), head.begin()))
    throw Error(Errc::format, name,
                std::string("not ") + what +
                    "-compressed (the file name promises it; no " + what +
                    " magic at its start)");
}

// A deflated component (the zip format allows it, though conda tools store
// them) is inflated into an unnamed temporary file rather than memory: its
// declared size is only bounded by the zip limits, gigabytes from a
// megabyte-sized package. The file vanishes when closed, also on a signal.
Fd inflate_to_temp_file(const archive::ZipReader& zip,
                        const archive::ZipEntry& entry) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  Fd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd)
    throw_errno(zip.name(), "create a temporary file in " + dir.string() +
                                " for " + entry.name);
  const std::string shown = zip.name() + ":" + entry.name +
                            " (temporary file in " + dir.string() + ")";
  zip.read(entry, [&](std::span<const u8> piece) {
    write_all(fd.get(), piece, shown);
  });
  return fd;
}

}  // namespace

const char* package_extension(PackageFormat format) {
  return format == PackageFormat::conda ? ".conda" : ".tar.bz2";
}

PackageFormat format_of(const fs::path& package) {
  std::string name = package.filename().string();
  if (ends_with(name, ".conda")) return PackageFormat::conda;
  if (ends_with(name, ".tar.bz2")) return PackageFormat::tar_bz2;
  throw Error(Errc::usage, package.string(),
              "not a conda package name (expected .conda or .tar.bz2)");
}

std::string stem_of(const fs::path& package) {
  std::string name = package.filename().string();
  std::string ext = package_extension(format_of(package));
  return name.substr(0, name.size() - ext.size());
}

namespace detail {

void for_each_component(
    const fs::path& package,
    const std::function<void(archive::TarReader&, const std::string&)>& fn) {
  if (format_of(package) == PackageFormat::tar_bz2) {
    // read_prefix opens through open_regular: a FIFO named like the
    // package is refused at once instead of blocking this read.
    const std::vector<u8> head = read_prefix(package, 3);
    require_magic(package.string(), head, kBzip2Magic, "bzip2");
    archive::TarReader reader = archive::TarReader::open_file(package);
    fn(reader, "");
    return;
  }
  archive::ZipReader zip = archive::ZipReader::open(package);
  bool found = false;
  for (const archive::ZipEntry& entry : zip.entries()) {
    bool component =
        ends_with(entry.name, ".tar.zst") &&
        (starts_with(entry.name, "pkg-") || starts_with(entry.name, "info-"));
    if (!component) continue;
    found = true;
    std::string name = package.string() + ":" + entry.name;
    require_magic(name, zip.read_prefix(entry, 4), kZstdMagic, "zstd");
    if (entry.method == static_cast<u16>(archive::ZipMethod::stored)) {
      archive::TarReader reader =
          archive::TarReader::open_memory(zip.raw(entry), name);
      fn(reader, entry.name);
    } else {
      archive::TarReader reader = archive::TarReader::open_fd(
          inflate_to_temp_file(zip, entry).release(), name);
      fn(reader, entry.name);
    }
  }
  if (!found) {
    throw Error(Errc::format, package.string(),
                "no pkg-*.tar.zst or info-*.tar.zst member");
  }
}

}  // namespace detail

void for_each_component(
    const fs::path& package,
    const std::function<void(archive::TarReader&, const std::string&)>& fn) {
  detail::for_each_component(package, fn);
}

void extract(const fs::path& package, const fs::path& dest) {
  // Both components go into one staging directory that appears at `dest`
  // only when everything was extracted: a refusal or a signal half way
  // leaves `dest` as it was, so a retry starts clean.
  archive::StagedTarget staged(dest, false, package.string());
  detail::for_each_component(
      package, [&](archive::TarReader& reader, const std::string&) {
        archive::extract_tar(reader, staged.path());
      });
  staged.install();
}

fs::path transmute(const fs::path& package, const fs::path& out_dir,
                   PackageFormat to, const TransmuteOptions& options) {
  if (format_of(package) == to) {
    throw Error(Errc::usage, package.string(),
                std::string("already a ") + package_extension(to) + " package");
  }
  create_output_directory(out_dir);
  detail::ScratchDir scratch(out_dir);
  fs::path tree = scratch.path() / "tree";
  extract(package, tree);

  // Members get the package's own timestamp, so transmuting is
  // deterministic too.
  i64 mtime = 0;
  {
    fs::path index = tree / "info" / "index.json";
    if (fs::is_regular_file(fs::symlink_status(index))) {
      nlohmann::json j =
          nlohmann::json::parse(read_regular_file(index), nullptr, false);
      if (j.is_object() && j.contains("timestamp") &&
          j["timestamp"].is_number_integer()) {
        mtime = j["timestamp"].get<i64>() / 1000;
      }
    }
  }
  std::vector<archive::TarEntry> info;
  std::vector<archive::TarEntry> pkg;
  for (const detail::StagedEntry& e : detail::walk_tree(tree)) {
    (detail::is_info_path(e.path) ? info : pkg)
        .push_back(detail::to_tar_entry(e));
  }
  detail::WriteSettings settings;
  settings.formats = {to};
  settings.zstd_level = options.zstd_level;
  settings.bzip2_level = options.bzip2_level;
  settings.threads = options.threads;
  settings.mtime = mtime;
  return detail::write_package_files(out_dir, stem_of(package), info, pkg,
                                     settings)
      .front();
}

}  // namespace libpkg::conda
