// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <utility>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg {

void create_output_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(Errc::io, dir.string(),
                "cannot create the output directory: " + ec.message());
}

u64 copy_file_atomically(const std::filesystem::path& from,
                         const std::filesystem::path& to, unsigned add_mode) {
  Fd fd = open_regular(from);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) throw_errno(from.string(), "stat");
  AtomicFile out = AtomicFile::create(to, (st.st_mode & 0777) | add_mode);
  const u64 size = static_cast<u64>(st.st_size);
  out.copy_from(fd.get(), 0, size, 0);
  out.commit();
  return size;
}

void write_file_atomically(const std::filesystem::path& to,
                           std::string_view text, unsigned mode) {
  AtomicFile out = AtomicFile::create(to, mode);
  out.write(text);
  out.commit();
}

// The bytes go to an unnamed O_TMPFILE inode in the target's directory where
// the filesystem supports it: if the process is killed, the kernel frees it
// and nothing is left behind. Elsewhere a named `.NAME.libpkg-XXXXXX` file is
// used (and removed on any error we can see).
AtomicFile AtomicFile::create(const std::filesystem::path& target,
                              unsigned mode, Links links) {
  AtomicFile f;
  f.target_ = target;
  f.mode_ = mode;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw Error(Errc::io, target.string(),
                  "the output path is a directory, not a file");
    bool shared_inode =
        S_ISREG(st.st_mode) && st.st_nlink > 1 && links == Links::keep;
    if (!S_ISREG(st.st_mode) || shared_inode) {
      f.open_sink(S_ISREG(st.st_mode));
      f.open_scratch();
      return f;
    }
  }
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  f.fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (f.fd_ >= 0) return f;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL &&
      errno != ENOENT)
    throw_errno(target.string(), "cannot create temporary file");
  std::string templ = temp_template(target);
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  // Created and registered with no window for a signal in between.
  f.temp_cleanup_ = SignalCleanup::create([&] {
    f.fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
    if (f.fd_ < 0) throw_errno(target.string(), "cannot create temporary file");
    return std::filesystem::path(buf.data());
  });
  f.temp_ = buf.data();
  return f;
}

// The existing target we write into on commit. O_NONBLOCK makes opening a
// FIFO without a reader fail (ENXIO) instead of waiting forever.
void AtomicFile::open_sink(bool regular) {
  sink_regular_ = regular;
  sink_fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (sink_fd_ < 0 && errno == ENXIO)
    throw Error(Errc::io, target_.string(),
                "the output is a FIFO with no reader (refusing to wait)");
  if (sink_fd_ < 0) throw_errno(target_.string(), "cannot open for writing");
  int flags = ::fcntl(sink_fd_, F_GETFL);
  if (flags >= 0) ::fcntl(sink_fd_, F_SETFL, flags & ~O_NONBLOCK);
}

// The bytes are assembled in an unnamed file in the temporary directory
// (callers write at offsets, which a FIFO cannot take; and a device's
// directory, such as /dev, is no place for scratch files).
void AtomicFile::open_scratch() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ >= 0) return;
  std::string templ = (dir / ".libpkg-output-XXXXXX").string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0) throw_errno(target_.string(), "cannot create temporary file");
  ::unlink(buf.data());  // anonymous from now on
}

std::string AtomicFile::temp_template(const std::filesystem::path& target) {
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  // Built with += : GCC 12 at -O3 warns falsely (-Wrestrict) on "." + string.
  std::string name = ".";
  name += target.filename().string();
  name += ".libpkg-XXXXXX";
  return (dir / name).string();
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::move(other.temp_)),
      temp_cleanup_(std::move(other.temp_cleanup_)),
      fd_(std::exchange(other.fd_, -1)),
      sink_fd_(std::exchange(other.sink_fd_, -1)),
      sink_regular_(other.sink_regular_),
      mode_(other.mode_),
      committed_(std::exchange(other.committed_, true)) {}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (sink_fd_ >= 0) ::close(sink_fd_);
  sink_fd_ = -1;
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  temp_cleanup_.release();
  committed_ = true;
}

void AtomicFile::write(std::span<const u8> bytes) {
  const u8* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(target_.string(), "cannot write");
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void AtomicFile::pwrite(u64 offset, std::span<const u8> bytes) {
  const u8* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(target_.string(), "cannot write");
    p += n;
    offset += static_cast<u64>(n);
    left -= static_cast<size_t>(n);
  }
}

namespace {

// Copies [in, in + len) to out inside the kernel where it can, falling back
// to a bounded buffer. Returns normally only when every byte was copied.
void copy_range(int src_fd, int dst_fd, u64 in, u64 len, u64 out,
                const std::string& name) {
  auto src = static_cast<loff_t>(in);
  auto dst = static_cast<loff_t>(out);
  while (len > 0) {
    ssize_t n = ::copy_file_range(src_fd, &src, dst_fd, &dst, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                  errno == EOPNOTSUPP)) {
      break;  // not supported between these files: buffered copy below
    }
    if (n < 0) throw_errno(name, "cannot copy data");
    if (n == 0) throw Error(Errc::io, name, "input ended early");
    len -= static_cast<u64>(n);
  }
  std::vector<u8> buf(len > 0 ? std::min<u64>(len, 1 << 20) : 0);
  while (len > 0) {
    size_t chunk = static_cast<size_t>(std::min<u64>(len, buf.size()));
    ssize_t n = ::pread(src_fd, buf.data(), chunk, src);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(name, "cannot read input");
    if (n == 0) throw Error(Errc::io, name, "input ended early");
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(dst_fd, buf.data() + done,
                           static_cast<size_t>(n - done), dst + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw_errno(name, "cannot write");
      done += w;
    }
    src += n;
    dst += n;
    len -= static_cast<u64>(n);
  }
}

}  // namespace

// Sparse inputs (a file grown past 4 GiB with a hole) stay sparse: only the
// data extents are copied, holes are left as holes by the final size.
void AtomicFile::copy_from(int src_fd, u64 src_offset, u64 len,
                           u64 dst_offset) {
  struct stat src_st {};
  if (::fstat(src_fd, &src_st) != 0)
    throw_errno(target_.string(), "cannot stat input");
  if (src_offset > static_cast<u64>(src_st.st_size) ||
      len > static_cast<u64>(src_st.st_size) - src_offset)
    throw Error(Errc::io, target_.string(),
                "input ended early (copy range past its end)");
  u64 end = src_offset + len;
  u64 pos = src_offset;
  while (pos < end) {
    off_t data = ::lseek(src_fd, static_cast<off_t>(pos), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole remains
      // SEEK_DATA unsupported: copy everything.
      copy_range(src_fd, fd_, pos, end - pos, dst_offset + (pos - src_offset),
                 target_.string());
      break;
    }
    u64 dstart = std::min<u64>(static_cast<u64>(data), end);
    if (dstart >= end) break;
    off_t hole = ::lseek(src_fd, static_cast<off_t>(dstart), SEEK_HOLE);
    u64 dend = hole < 0 ? end : std::min<u64>(static_cast<u64>(hole), end);
    copy_range(src_fd, fd_, dstart, dend - dstart,
               dst_offset + (dstart - src_offset), target_.string());
    pos = dend;
  }
  // Make sure the destination covers the copied range even if it ends in a
  // hole.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && static_cast<u64>(st.st_size) < dst_offset + len)
    truncate(dst_offset + len);
}

void AtomicFile::truncate(u64 size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    throw_errno(target_.string(), "cannot resize");
}

// Streams the finished scratch file into the existing target from its
// start (a device or FIFO takes it as a stream; a hard-linked regular file is
// overwritten and cut to the new size). Its mode and owner stay as they are.
void AtomicFile::commit_through(bool durable) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_errno(target_.string(), "cannot stat");
  u64 size = static_cast<u64>(st.st_size);
  std::vector<u8> buf(static_cast<size_t>(std::min<u64>(size, 1 << 20)));
  for (u64 pos = 0; pos < size;) {
    size_t chunk = static_cast<size_t>(std::min<u64>(size - pos, buf.size()));
    ssize_t n = ::pread(fd_, buf.data(), chunk, static_cast<off_t>(pos));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(target_.string(), "cannot read temporary file");
    for (ssize_t done = 0; done < n;) {
      ssize_t w =
          ::write(sink_fd_, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw_errno(target_.string(), "cannot write");
      done += w;
    }
    pos += static_cast<u64>(n);
  }
  if (sink_regular_ && ::ftruncate(sink_fd_, static_cast<off_t>(size)) != 0)
    throw_errno(target_.string(), "cannot resize");
  if (durable && sink_regular_ && ::fsync(sink_fd_) != 0)
    throw_errno(target_.string(), "cannot sync");
  int sink = std::exchange(sink_fd_, -1);
  if (::close(sink) != 0) throw_errno(target_.string(), "cannot close");
  ::close(std::exchange(fd_, -1));
  committed_ = true;
}

void AtomicFile::commit(bool durable) {
  if (sink_fd_ >= 0) {
    commit_through(durable);
    return;
  }
  if (::fchmod(fd_, mode_) != 0) throw_errno(target_.string(), "cannot chmod");
  if (durable && ::fsync(fd_) != 0)
    throw_errno(target_.string(), "cannot sync");
  if (temp_.empty()) {
    // Give the unnamed inode a temporary name, then rename it over the
    // target (linkat cannot replace an existing file).
    std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    temp_cleanup_ = SignalCleanup::create([&] {
      for (int attempt = 0;; ++attempt) {
        std::string templ = temp_template(target_);
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        // mkstemp-style unique name without creating the file.
        static const char* kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
        std::random_device rd;
        for (size_t i = buf.size() - 7; i < buf.size() - 1; ++i)
          buf[i] = kChars[rd() % 36];
        if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, buf.data(),
                     AT_SYMLINK_FOLLOW) == 0) {
          temp_ = buf.data();
          return temp_;
        }
        if (errno != EEXIST || attempt > 16)
          throw_errno(target_.string(), "cannot link temporary file");
      }
    });
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw_errno(target_.string(), "cannot close");
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    throw_errno(target_.string(), "cannot rename temporary into place");
  temp_cleanup_.release();
  committed_ = true;
}

}  // namespace libpkg
