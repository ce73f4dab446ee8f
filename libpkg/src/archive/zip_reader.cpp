// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/zip_reader.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "archive/reader_central.hpp"
#include "archive/reader_inflate.hpp"
#include "archive/zip_format.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {

unsigned ZipEntry::unix_mode() const {
  if ((version_made_by >> 8) != zipfmt::kHostUnix) return 0;
  return external_attr >> 16;
}

bool ZipEntry::is_directory() const {
  if (!name.empty() && name.back() == '/') return true;
  return S_ISDIR(unix_mode());
}

bool ZipEntry::is_symlink() const { return S_ISLNK(unix_mode()); }

i64 ZipEntry::mtime() const {
  return zipfmt::from_dos_time(dos_time, dos_date);
}

ZipReader ZipReader::open(const std::filesystem::path& path,
                          const ZipLimits& limits) {
  ZipReader zip;
  zip.path_ = path;
  int fd = -1;
  zip.file_ = MappedFile::open(path, &fd);
  zip.fd_ = std::shared_ptr<const int>(new int(fd), [](const int* owned) {
    if (*owned >= 0) ::close(*owned);
    delete owned;
  });
  zip.name_ = zip.file_.name();
  zip.data_ = {zip.file_.data(), zip.file_.size()};
  zip.limits_ = limits;
  zip.load();
  return zip;
}

ZipReader ZipReader::from_bytes(std::vector<u8> bytes, std::string name,
                                const ZipLimits& limits) {
  ZipReader zip;
  zip.path_ = name;
  zip.name_ = std::move(name);
  zip.owned_ = std::move(bytes);
  // A moved vector keeps its buffer, so this span survives moving the reader.
  zip.data_ = zip.owned_;
  zip.limits_ = limits;
  zip.load();
  return zip;
}

void ZipReader::load() {
  const ByteView file(data_, name_);
  const reader::CentralDirectoryLocation where =
      reader::locate_central_directory(file);
  entries_ = reader::parse_central_directory(file, where, limits_);
  reader::resolve_local_headers(file, where.offset, entries_);
  by_name_.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto [it, inserted] = by_name_.emplace(entries_[i].name, i);
    if (!inserted)
      throw Error(Errc::format, name_,
                  fmt::format("{}: duplicate member name (entries {} and {})",
                              reader::printable_name(entries_[i].name),
                              it->second + 1, i + 1),
                  entries_[i].local_header_offset);
  }
}

const ZipEntry* ZipReader::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::span<const u8> ZipReader::raw(const ZipEntry& entry) const {
  // Entries come from load(), which bounds-checked them; a ZipEntry built by
  // the caller is checked again here.
  return ByteView(data_, name_)
      .range(entry.data_offset, entry.compressed_size,
             entry.name + " compressed data");
}

void ZipReader::read(
    const ZipEntry& entry,
    const std::function<void(std::span<const u8>)>& sink) const {
  if (entry.method != 0 && entry.method != 8)
    throw Error(Errc::unsupported, name_,
                fmt::format("{}: compression {} is not supported",
                            reader::printable_name(entry.name),
                            reader::method_name(entry.method)));
  // A reader of a file streams from its mapping: the pages read are dropped
  // again, so reading (extracting, hashing) a GB wheel does not leave the
  // GB resident (check_binary's RSS was the mapped wheel).
  reader::stream_member(name_, entry, raw(entry), sink,
                        /*release_input=*/fd_ != nullptr);
}

std::vector<u8> ZipReader::read_prefix(const ZipEntry& entry,
                                       std::size_t n) const {
  std::span<const u8> data = raw(entry);
  if (entry.method == 0) {
    const std::size_t len = static_cast<std::size_t>(
        std::min<u64>({n, entry.uncompressed_size, data.size()}));
    return std::vector<u8>(data.begin(), data.begin() + len);
  }
  if (entry.method != 8)
    throw Error(Errc::unsupported, name_,
                fmt::format("{}: compression {} is not supported",
                            reader::printable_name(entry.name),
                            reader::method_name(entry.method)));
  return reader::inflate_prefix(name_, entry, data, n);
}

void ZipReader::check_fits_in_memory(const ZipEntry& entry) const {
  if (entry.uncompressed_size > limits_.max_in_memory)
    throw Error(Errc::format, name_,
                fmt::format("{}: declares {} bytes, more than the {} bytes a "
                            "member read into memory may have",
                            reader::printable_name(entry.name),
                            entry.uncompressed_size, limits_.max_in_memory));
}

std::vector<u8> ZipReader::read_all(const ZipEntry& entry) const {
  check_fits_in_memory(entry);
  std::vector<u8> out;
  // The declared size is bounded above; the stream never produces more.
  out.reserve(static_cast<std::size_t>(
      std::min<u64>(entry.uncompressed_size, u64{64} << 20)));
  read(entry, [&](std::span<const u8> piece) {
    out.insert(out.end(), piece.begin(), piece.end());
  });
  return out;
}

std::string ZipReader::read_text(const ZipEntry& entry) const {
  check_fits_in_memory(entry);
  std::string out;
  out.reserve(static_cast<std::size_t>(
      std::min<u64>(entry.uncompressed_size, u64{64} << 20)));
  read(entry, [&](std::span<const u8> piece) {
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  });
  return out;
}

}  // namespace libpkg::archive
