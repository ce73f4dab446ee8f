// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "archive/file_state.hpp"
#include "archive/le_bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace {

// The file a source was made from: its size, and its device and inode so
// that a later open by name can tell it is still the same file; its times
// name its content (file_state.hpp).
FileState stat_regular(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw_errno(path.string(), "cannot stat");
  if (!S_ISREG(st.st_mode))
    throw Error(Errc::usage, path.string(), "not a regular file");
  return file_state(st);
}

// Whether `path` is still the file `recorded` describes, times included.
bool still_same(const std::filesystem::path& path, const FileState& recorded) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 &&
         same_file_state(recorded, file_state(st));
}

// The identity of a file source's content, when the file was settled.
std::optional<std::string> identity_of(std::string_view kind,
                                       const FileState& file,
                                       const std::filesystem::path& path) {
  if (!file.settled) return std::nullopt;
  return file_identity(kind, file, path);
}

// Reads exactly out.size() bytes at `offset` of `path`. The file is opened
// per call: a wheel may hold more files than a process may keep open. It
// must still be the file that was queued (`recorded`): another file renamed
// over the name since would put its bytes under the queued file's name and
// size; reaching EOF early means the file shrank since. Either would
// corrupt the archive.
void pread_exact(const std::filesystem::path& path, const std::string& name,
                 const FileState& recorded, u64 offset, std::span<u8> out) {
  if (out.empty()) return;
  // The file may have been replaced by a FIFO since it was queued: never
  // block on it.
  Fd fd = open_regular(path, name);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(name, "cannot stat");
  if (static_cast<u64>(st.st_dev) != recorded.dev ||
      static_cast<u64>(st.st_ino) != recorded.ino)
    throw Error(Errc::io, name,
                "replaced since it was queued (another file is at its name "
                "now)");
  const u64 recorded_size = recorded.size;
  const std::size_t got = pread_full(fd.get(), out, offset, name);
  if (got < out.size())
    throw Error(Errc::io, name,
                fmt::format("file is shorter than when it was queued "
                            "({} bytes, ends at {})",
                            recorded_size, offset + got),
                offset + got);
}

void check_range(const std::string& name, u64 size, u64 offset, u64 len) {
  if (offset > size || len > size - offset)
    throw Error(Errc::usage, name,
                fmt::format("read of {} bytes at {} past the end ({} bytes)",
                            len, offset, size));
}

class FileSource final : public ContentSource {
 public:
  explicit FileSource(const std::filesystem::path& path)
      : path_(path), name_(path.string()), file_(stat_regular(path)) {}

  u64 size() const override { return file_.size; }
  const std::string& name() const override { return name_; }
  void read(u64 offset, std::span<u8> out) const override {
    check_range(name_, file_.size, offset, out.size());
    pread_exact(path_, name_, file_, offset, out);
  }
  std::optional<std::string> content_identity() const override {
    return identity_of("libpkg file content 1", file_, path_);
  }
  bool still_identified() const override {
    return file_.settled && still_same(path_, file_);
  }

 private:
  std::filesystem::path path_;
  std::string name_;
  FileState file_;
};

class BytesSource final : public ContentSource {
 public:
  BytesSource(std::vector<u8> bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}

  u64 size() const override { return bytes_.size(); }
  const std::string& name() const override { return name_; }
  void read(u64 offset, std::span<u8> out) const override {
    check_range(name_, bytes_.size(), offset, out.size());
    if (!out.empty())
      std::memcpy(out.data(), bytes_.data() + offset, out.size());
  }

 private:
  std::vector<u8> bytes_;
  std::string name_;
};

// Serves any range of the edited file: the input's bytes (zeros past its
// end), then the patches that intersect the range laid over them. The
// patches are copied once, normalised, at construction: Overlay normalises
// lazily through mutable state, which concurrent readers must not touch.
class OverlaySource final : public ContentSource {
 public:
  OverlaySource(const std::filesystem::path& input, const Overlay& overlay)
      : path_(input),
        name_(input.string()),
        input_size_(overlay.input_size()),
        size_(overlay.size()),
        patches_(overlay.patches()),
        file_(stat_regular(input)) {
    if (file_.size != input_size_)
      throw Error(Errc::usage, name_,
                  fmt::format("file has {} bytes but the edit was made for {}",
                              file_.size, input_size_));
  }

  u64 size() const override { return size_; }
  const std::string& name() const override { return name_; }
  void read(u64 offset, std::span<u8> out) const override {
    check_range(name_, size_, offset, out.size());
    const u64 end = offset + out.size();
    const u64 from_input_end = std::min(end, input_size_);
    if (offset < from_input_end) {
      pread_exact(path_, name_, file_, offset,
                  out.first(static_cast<size_t>(from_input_end - offset)));
    }
    if (end > std::max(offset, input_size_)) {
      u64 zero_from = std::max(offset, input_size_);
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(zero_from - offset),
                out.end(), u8{0});
    }
    // First patch that may end after `offset` (sorted, non-overlapping).
    auto it = std::lower_bound(patches_.begin(), patches_.end(), offset,
                               [](const Patch& p, u64 off) {
                                 return p.offset + p.bytes.size() <= off;
                               });
    for (; it != patches_.end() && it->offset < end; ++it) {
      u64 lo = std::max(offset, it->offset);
      u64 hi = std::min(end, it->offset + it->bytes.size());
      if (lo >= hi) continue;
      std::memcpy(out.data() + (lo - offset),
                  it->bytes.data() + (lo - it->offset), hi - lo);
    }
  }
  // The input's identity and a digest of the edit: sizes and patches.
  std::optional<std::string> content_identity() const override {
    std::optional<std::string> id =
        identity_of("libpkg edited file content 1", file_, path_);
    if (!id) return id;
    try {
      return *id + "; edit " + edit_digest();
    } catch (const Error&) {
      return std::nullopt;  // OpenSSL failed: nothing is memoized
    }
  }
  bool still_identified() const override {
    return file_.settled && still_same(path_, file_);
  }

 private:
  // Hex SHA-256 of the sizes and the patches.
  std::string edit_digest() const {
    Sha256 edit;
    std::string sizes;
    append_le(sizes, input_size_, 8);
    append_le(sizes, size_, 8);
    append_le(sizes, patches_.size(), 8);
    edit.update(sizes);
    for (const Patch& p : patches_) {
      std::string head;
      append_le(head, p.offset, 8);
      append_le(head, p.bytes.size(), 8);
      edit.update(head);
      edit.update(p.bytes);
    }
    return Sha256::hex(edit.finish());
  }

  std::filesystem::path path_;
  std::string name_;
  u64 input_size_;
  u64 size_;
  std::vector<Patch> patches_;
  FileState file_;  // the input as it was when the edit was made
};

}  // namespace

SourcePtr file_source(const std::filesystem::path& path) {
  return std::make_shared<FileSource>(path);
}

SourcePtr bytes_source(std::vector<u8> bytes, std::string name) {
  return std::make_shared<BytesSource>(std::move(bytes), std::move(name));
}

SourcePtr bytes_source(std::string_view text, std::string name) {
  return std::make_shared<BytesSource>(
      std::vector<u8>(text.begin(), text.end()), std::move(name));
}

SourcePtr overlay_source(const std::filesystem::path& input, Overlay overlay) {
  return std::make_shared<OverlaySource>(input, overlay);
}

}  // namespace libpkg::archive
