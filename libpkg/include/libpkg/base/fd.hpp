// SPDX-License-Identifier: BSD-3-Clause
// The one way the library touches a file descriptor.
//
// Fd owns a descriptor (move-only, closed on destruction), so no call site
// closes by hand on each path out. The I/O helpers retry EINTR and loop over
// short transfers, and name the file in the Error they throw.
//
// Inputs that must be regular files are opened with open_regular: open(2) of
// a FIFO for reading blocks until a writer appears, so a plain open-then-
// fstat check hangs forever on a FIFO named like the input. The file is
// opened with O_NONBLOCK (which makes that open return at once), checked
// with fstat, and only then switched back to blocking reads; FIFOs, devices,
// sockets and directories are refused in this one place, as readelf does.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/result.hpp"

namespace libpkg {

/// An owning file descriptor; -1 when empty.
class Fd {
 public:
  Fd() = default;
  /// Takes ownership of `fd` (which may be -1).
  explicit Fd(int fd) noexcept : fd_(fd) {}
  /// Takes over `other`'s descriptor; `other` becomes empty.
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  /// Closes the held descriptor and takes over `other`'s.
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  /// The descriptor, still owned; -1 when empty.
  int get() const { return fd_; }
  /// True when a descriptor is held.
  explicit operator bool() const { return fd_ >= 0; }
  /// Gives up ownership and returns the descriptor.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Closes the held descriptor (errors ignored) and takes `fd`.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

/// Opens `path` read-only (O_CLOEXEC), never blocking, and only if it is a
/// regular file. Throws Errc::io "cannot open: <strerror>" or "not a regular
/// file (a FIFO)" naming `name` (the path when empty), with errno attached.
Fd open_regular(const std::filesystem::path& path,
                const std::string& name = {});

/// open_regular's non-throwing form: the Error is returned, not thrown.
Result<Fd> try_open_regular(const std::filesystem::path& path,
                            const std::string& name = {});

/// open_regular for callers that hand the raw descriptor on (and close it).
int open_regular_file(const std::filesystem::path& path,
                      const std::string& name = {});

/// "a FIFO", "a character device", "a directory", ...: for error messages.
const char* file_kind_name(unsigned st_mode);

/// Reads until `out` is full or end of file; returns the bytes read. Throws
/// Errc::io naming `name` on a read error.
std::size_t read_full(int fd, std::span<u8> out, const std::string& name);

/// read_full at `offset` (pread: the file position is not used).
std::size_t pread_full(int fd, std::span<u8> out, u64 offset,
                       const std::string& name);

/// Writes all of `data`; throws Errc::io naming `name` on a write error.
void write_all(int fd, std::span<const u8> data, const std::string& name);

/// Calls `sink` with successive chunks of the whole file, read through a
/// buffer of `buffer_size` bytes (bounded memory whatever the file size).
template <typename Sink>
void read_chunks(int fd, const std::string& name, std::size_t buffer_size,
                 Sink&& sink);

/// The first `n` bytes of the regular file `path` (fewer when it is
/// shorter). Throws as open_regular and read_full do: an unreadable file is
/// an error, never "too short".
std::vector<u8> read_prefix(const std::filesystem::path& path, std::size_t n);

/// The whole regular file `path` as a string (text or bytes): opened with
/// open_regular, so a FIFO, device or directory is refused at once instead
/// of blocking. Throws Errc::io naming `name` (the path when empty): "cannot
/// open: <strerror>" (errno attached), "not a regular file (a FIFO)", or a
/// read error.
std::string read_regular_file(const std::filesystem::path& path,
                              const std::string& name = {});

/// read_regular_file's non-throwing form: the Error is returned, not thrown.
Result<std::string> try_read_regular_file(const std::filesystem::path& path,
                                          const std::string& name = {});

/// Throws unless `path` is an existing directory (symlinks followed):
/// Errc::io naming `path`, "no such <what>" with errno ENOENT, "<what> is
/// not a directory (a FIFO)" without errno, or the stat error with its.
void require_directory(const std::filesystem::path& path,
                       const std::string& what);

/// read_chunks' definition (documented at its declaration above).
template <typename Sink>
void read_chunks(int fd, const std::string& name, std::size_t buffer_size,
                 Sink&& sink) {
  std::vector<u8> buf(buffer_size);
  for (;;) {
    std::size_t n = read_full(fd, buf, name);
    if (n > 0) sink(std::span<const u8>(buf.data(), n));
    if (n < buf.size()) return;
  }
}

}  // namespace libpkg
