// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libpkg/base/error.hpp"

namespace libpkg {

void Fd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

const char* file_kind_name(unsigned st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

Result<Fd> try_open_regular(const std::filesystem::path& path,
                            const std::string& name) {
  const std::string& shown = name.empty() ? path.string() : name;
  auto sys_error = [&](const char* action) {
    const int err = errno;
    return Error(Errc::io, shown,
                 std::string(action) + ": " + std::strerror(err))
        .with_errno(err);
  };
  int raw;
  do {
    raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return sys_error("cannot open");
  Fd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys_error("cannot stat");
  if (!S_ISREG(st.st_mode))
    return Error(
        Errc::io, shown,
        std::string("not a regular file (") + file_kind_name(st.st_mode) + ")");
  // Regular files ignore O_NONBLOCK for reads, but clear it anyway so the
  // descriptor behaves exactly like a plain open.
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Fd open_regular(const std::filesystem::path& path, const std::string& name) {
  return try_open_regular(path, name).value();
}

int open_regular_file(const std::filesystem::path& path,
                      const std::string& name) {
  return open_regular(path, name).release();
}

std::size_t read_full(int fd, std::span<u8> out, const std::string& name) {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(name, "cannot read");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::size_t pread_full(int fd, std::span<u8> out, u64 offset,
                       const std::string& name) {
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done,
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(name, "cannot read");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void write_all(int fd, std::span<const u8> data, const std::string& name) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(name, "cannot write");
    data = data.subspan(static_cast<std::size_t>(n));
  }
}

Result<std::string> try_read_regular_file(const std::filesystem::path& path,
                                          const std::string& name) {
  const std::string shown = name.empty() ? path.string() : name;
  return attempt({Errc::io}, [&] {
    Fd fd = open_regular(path, shown);
    std::string out;
    std::vector<u8> buf(1 << 16);
    read_chunks(fd.get(), shown, buf.size(), [&](std::span<const u8> chunk) {
      out.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    });
    return out;
  });
}

std::string read_regular_file(const std::filesystem::path& path,
                              const std::string& name) {
  return try_read_regular_file(path, name).value();
}

void require_directory(const std::filesystem::path& path,
                       const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT)
      throw Error(Errc::io, path.string(), "no such " + what).with_errno(err);
    throw Error(Errc::io, path.string(),
                std::string("cannot stat: ") + std::strerror(err))
        .with_errno(err);
  }
  // No errno: it is there, so not "missing" (ENOTDIR would read as that).
  if (!S_ISDIR(st.st_mode))
    throw Error(
        Errc::io, path.string(),
        what + " is not a directory (" + file_kind_name(st.st_mode) + ")");
}

std::vector<u8> read_prefix(const std::filesystem::path& path, std::size_t n) {
  Fd fd = open_regular(path);
  std::vector<u8> head(n);
  head.resize(pread_full(fd.get(), head, 0, path.string()));
  return head;
}

}  // namespace libpkg
