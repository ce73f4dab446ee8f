// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg {

MappedFile MappedFile::open(const std::filesystem::path& path, int* keep_fd) {
  MappedFile f;
  f.name_ = path.string();
  // Never blocks: a FIFO or device is refused before any read.
  Fd fd = open_regular(path, f.name_);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(f.name_, "cannot stat");
  f.mode_ = st.st_mode & 07777;
  f.size_ = static_cast<u64>(st.st_size);
  f.dev_ = static_cast<u64>(st.st_dev);
  f.ino_ = static_cast<u64>(st.st_ino);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) throw_errno(f.name_, "cannot map");
    f.data_ = static_cast<u8*>(p);
  }
  // The caller may keep the descriptor (ZipReader: raw copies read the
  // checked archive, not whatever file is at its path later).
  if (keep_fd != nullptr) *keep_fd = fd.release();
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mode_(other.mode_),
      dev_(other.dev_),
      ino_(other.ino_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mode_ = other.mode_;
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

Fd MappedFile::reopen() const {
  Fd fd = open_regular(name_);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(name_, "cannot stat");
  if (static_cast<u64>(st.st_dev) != dev_ ||
      static_cast<u64>(st.st_ino) != ino_ ||
      static_cast<u64>(st.st_size) != size_)
    throw Error(Errc::io, name_,
                "changed while being edited: another file (or other bytes) "
                "is at its name now; nothing was written");
  return fd;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace libpkg
