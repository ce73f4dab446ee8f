// SPDX-License-Identifier: BSD-3-Clause
// TarReader: libarchive read side with limits enforced per member.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "archive/reader_central.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::archive {

struct TarReader::Impl {
  struct ReadFree {
    void operator()(struct archive* a) const { archive_read_free(a); }
  };
  std::unique_ptr<struct archive, ReadFree> a;
  std::string name;
  TarLimits limits;
  u64 entries = 0;
  u64 total = 0;
  TarMember current;
  bool data_pending = false;
  Fd owned_fd;  // open_file/open_fd: closed after the archive is freed

  ~Impl() { a.reset(); }  // before owned_fd, a member, is closed

  static std::unique_ptr<Impl> create(std::string name,
                                      const TarLimits& limits);

  // Refusals name the member (1-based, in archive order) and its path:
  // "member 3 (lib/libz.so.1): ...".
  std::string member_label() const {
    return fmt::format("member {} ({})", entries,
                       reader::printable_name(current.path));
  }

  [[noreturn]] void fail(const std::string& what) const {
    const char* message = archive_error_string(a.get());
    throw Error(Errc::format, name,
                what + (message != nullptr ? std::string(": ") + message : ""));
  }
};

std::unique_ptr<TarReader::Impl> TarReader::Impl::create(
    std::string name, const TarLimits& limits) {
  auto impl = std::make_unique<Impl>();
  impl->a.reset(archive_read_new());
  if (!impl->a) throw Error(Errc::io, name, "out of memory");
  impl->name = std::move(name);
  impl->limits = limits;
  struct archive* a = impl->a.get();
  // Only tar formats, only the compressions conda and tools use.
  archive_read_support_format_tar(a);
  archive_read_support_filter_bzip2(a);
  archive_read_support_filter_zstd(a);
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_xz(a);
  return impl;
}

namespace {

TarKind kind_of(struct archive_entry* e) {
  if (archive_entry_hardlink(e) != nullptr) return TarKind::hardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFREG:
      return TarKind::file;
    case AE_IFDIR:
      return TarKind::directory;
    case AE_IFLNK:
      return TarKind::symlink;
    default:
      return TarKind::other;
  }
}

// Prefers the UTF-8 form (pax headers), falls back to the raw bytes.
std::string text_of(const char* utf8, const char* raw) {
  if (utf8 != nullptr) return utf8;
  return raw != nullptr ? raw : "";
}

}  // namespace

TarReader::TarReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TarReader::TarReader(TarReader&&) noexcept = default;
TarReader& TarReader::operator=(TarReader&&) noexcept = default;
TarReader::~TarReader() = default;

TarReader TarReader::open_file(const std::filesystem::path& path,
                               const TarLimits& limits) {
  // A file that cannot be opened is an I/O problem (missing, no permission),
  // not a corrupt tar: say so before libarchive reports it as a read error.
  // open_regular also refuses a FIFO or device at once, where libarchive's
  // own open would block on a FIFO until a writer appears. The descriptor
  // checked is the one read: opening the name again would read whatever
  // sits at it by then.
  Fd fd = open_regular(path);
  return open_fd(fd.release(), path.string(), limits);
}

TarReader TarReader::open_memory(std::span<const u8> data, std::string name,
                                 const TarLimits& limits) {
  auto impl = Impl::create(std::move(name), limits);
  if (archive_read_open_memory(impl->a.get(), data.data(), data.size()) !=
      ARCHIVE_OK) {
    impl->fail("not a readable tar");
  }
  return TarReader(std::move(impl));
}

TarReader TarReader::open_fd(int fd, std::string name,
                             const TarLimits& limits) {
  Fd owned(fd);  // closed on every path, a failing create() included
  auto impl = Impl::create(std::move(name), limits);
  impl->owned_fd = std::move(owned);
  if (::lseek(fd, 0, SEEK_SET) != 0) throw_errno(impl->name, "seek");
  if (archive_read_open_fd(impl->a.get(), fd, 1 << 20) != ARCHIVE_OK)
    impl->fail("not a readable tar");
  return TarReader(std::move(impl));
}

const std::string& TarReader::name() const { return impl_->name; }

bool TarReader::next(TarMember& member) {
  Impl& s = *impl_;
  struct archive_entry* e = nullptr;
  int rc = archive_read_next_header(s.a.get(), &e);
  if (rc == ARCHIVE_EOF) return false;
  if (rc < ARCHIVE_WARN) {
    s.fail(s.entries == 0
               ? std::string("member 1: reading its header")
               : fmt::format("member {}: reading its header (after {})",
                             s.entries + 1, s.member_label()));
  }
  if (++s.entries > s.limits.max_entries) {
    throw Error(Errc::format, s.name,
                fmt::format("member {}: more than the limit of {} members",
                            s.entries, s.limits.max_entries));
  }
  member = {};
  member.path =
      text_of(archive_entry_pathname_utf8(e), archive_entry_pathname(e));
  s.current = member;  // names the member in the refusals below
  if (member.path.size() > s.limits.max_name_length) {
    throw Error(Errc::format, s.name,
                fmt::format("member {} ({}...): name of {} bytes exceeds the "
                            "limit of {}",
                            s.entries,
                            reader::printable_name(member.path.substr(0, 64)),
                            member.path.size(), s.limits.max_name_length));
  }
  member.kind = kind_of(e);
  member.mode = archive_entry_perm(e) & 07777;
  member.mtime = archive_entry_mtime(e);
  la_int64_t size = archive_entry_size(e);
  member.size =
      size > 0 && member.kind == TarKind::file ? static_cast<u64>(size) : 0;
  if (member.kind == TarKind::symlink) {
    member.link_target =
        text_of(archive_entry_symlink_utf8(e), archive_entry_symlink(e));
  } else if (member.kind == TarKind::hardlink) {
    member.link_target =
        text_of(archive_entry_hardlink_utf8(e), archive_entry_hardlink(e));
  }
  if (member.size > s.limits.max_entry_size) {
    throw Error(
        Errc::format, s.name,
        fmt::format("{}: size {} bytes exceeds the per-member limit "
                    "of {} bytes",
                    s.member_label(), member.size, s.limits.max_entry_size));
  }
  s.total += member.size;
  if (s.total > s.limits.max_total_size) {
    throw Error(
        Errc::format, s.name,
        fmt::format("{}: members total {} bytes, more than the limit "
                    "of {} bytes",
                    s.member_label(), s.total, s.limits.max_total_size));
  }
  s.current = member;
  s.data_pending = true;
  return true;
}

void TarReader::read_data(
    const std::function<void(std::span<const u8>)>& sink) {
  Impl& s = *impl_;
  if (!s.data_pending) {
    throw Error(Errc::usage, s.name, "read_data without a current member");
  }
  s.data_pending = false;
  std::vector<u8> buffer(std::size_t{1} << 20);
  u64 got = 0;
  for (;;) {
    la_ssize_t n = archive_read_data(s.a.get(), buffer.data(), buffer.size());
    if (n < 0) s.fail(s.member_label() + ": reading content");
    if (n == 0) break;
    got += static_cast<u64>(n);
    if (got > s.current.size) {
      throw Error(Errc::format, s.name,
                  fmt::format("{}: more content than the declared {} bytes",
                              s.member_label(), s.current.size));
    }
    sink({buffer.data(), static_cast<std::size_t>(n)});
  }
  if (got != s.current.size) {
    throw Error(Errc::format, s.name,
                fmt::format("{}: truncated content ({} of {} bytes)",
                            s.member_label(), got, s.current.size));
  }
}

}  // namespace libpkg::archive
