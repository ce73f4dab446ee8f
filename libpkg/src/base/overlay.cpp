// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/overlay.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg {

void Overlay::write(u64 offset, std::span<const u8> bytes) {
  if (bytes.empty()) return;
  if (offset > ~u64{0} - bytes.size())
    throw Error(Errc::usage, "", "overlay write past the 64-bit offset range");
  patches_.push_back({offset, {bytes.begin(), bytes.end()}});
  normalized_ = false;
  size_ = std::max(size_, offset + bytes.size());
}

// Rebuilds the patch list as sorted, non-overlapping, merged ranges where a
// later write wins over an earlier one. Edits produce a handful of patches,
// so a simple byte-interval sweep is plenty.
void Overlay::normalize() const {
  if (normalized_) return;
  std::vector<Patch> out;
  for (const Patch& p : patches_) {
    u64 start = p.offset, end = p.offset + p.bytes.size();
    std::vector<Patch> next;
    for (Patch& q : out) {
      u64 qs = q.offset, qe = q.offset + q.bytes.size();
      if (qe <= start || qs >= end) {
        next.push_back(std::move(q));
        continue;
      }
      if (qs < start)
        next.push_back({qs, {q.bytes.begin(), q.bytes.begin() + (start - qs)}});
      if (qe > end)
        next.push_back({end, {q.bytes.begin() + (end - qs), q.bytes.end()}});
    }
    next.push_back(p);
    out = std::move(next);
  }
  std::sort(out.begin(), out.end(),
            [](const Patch& a, const Patch& b) { return a.offset < b.offset; });
  std::vector<Patch> merged;
  for (Patch& p : out) {
    if (!merged.empty() &&
        merged.back().offset + merged.back().bytes.size() == p.offset) {
      auto& b = merged.back().bytes;
      b.insert(b.end(), p.bytes.begin(), p.bytes.end());
    } else {
      merged.push_back(std::move(p));
    }
  }
  patches_ = std::move(merged);
  normalized_ = true;
}

const std::vector<Patch>& Overlay::patches() const {
  normalize();
  return patches_;
}

bool Overlay::is_identity(std::span<const u8> input) const {
  if (size_ != input.size()) return false;
  for (const Patch& p : patches()) {
    if (p.offset >= size_) continue;  // cut off by a later resize()
    u64 n = std::min<u64>(p.bytes.size(), size_ - p.offset);
    if (std::memcmp(input.data() + p.offset, p.bytes.data(), n) != 0)
      return false;
  }
  return true;
}

Overlay Overlay::without_unchanged(std::span<const u8> input,
                                   u64 min_gap) const {
  Overlay out(input_size_);
  const u64 input_end = std::min<u64>(input.size(), input_size_);
  for (const Patch& p : patches()) {
    const u64 end = p.offset + p.bytes.size();
    auto keep = [&](u64 from, u64 to) {
      out.write(from, std::span<const u8>(p.bytes).subspan(
                          static_cast<std::size_t>(from - p.offset),
                          static_cast<std::size_t>(to - from)));
    };
    bool open = false;
    u64 begin = 0, last_end = 0;  // the differing range being collected
    for (u64 at = p.offset; at < end; ++at) {
      const bool differs =
          at >= input_end || p.bytes[at - p.offset] != input[at];
      if (!differs) continue;
      if (open && at - last_end >= min_gap) {
        keep(begin, last_end);
        open = false;
      }
      if (!open) {
        begin = at;
        open = true;
      }
      last_end = at + 1;
    }
    if (open) keep(begin, last_end);
  }
  out.resize(size_);  // also cuts what a resize() had cut here
  return out;
}

void Overlay::for_each_chunk(
    std::span<const u8> input,
    const std::function<void(std::span<const u8>)>& sink) const {
  static const u8 kZeros[4096] = {};
  auto emit_input = [&](u64 from, u64 to) {
    u64 in_end = std::min<u64>(to, input.size());
    if (from < in_end) sink(input.subspan(from, in_end - from));
    for (u64 pos = std::max(from, in_end); pos < to;) {
      u64 n = std::min<u64>(to - pos, sizeof(kZeros));
      sink({kZeros, static_cast<size_t>(n)});
      pos += n;
    }
  };
  u64 pos = 0;
  for (const Patch& p : patches()) {
    if (p.offset >= size_) break;
    emit_input(pos, p.offset);
    u64 n = std::min<u64>(p.bytes.size(), size_ - p.offset);
    sink({p.bytes.data(), static_cast<size_t>(n)});
    pos = p.offset + n;
  }
  emit_input(pos, size_);
}

namespace {

bool same_file(const std::string& input, const std::filesystem::path& output) {
  std::error_code ec;
  return std::filesystem::exists(output, ec) &&
         std::filesystem::equivalent(input, output, ec);
}

// Holds off the signals a user or a job runner sends to stop a process, so
// that a patch sequence is not interrupted half-way by them.
class SignalGuard {
 public:
  SignalGuard() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalGuard() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

void pwrite_all(int fd, const std::string& name, u64 offset,
                std::span<const u8> bytes) {
  while (!bytes.empty()) {
    ssize_t n =
        ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(name, "cannot write");
    bytes = bytes.subspan(static_cast<size_t>(n));
    offset += static_cast<u64>(n);
  }
}

}  // namespace

WriteResult write_overlay(const MappedFile& input, const Overlay& overlay,
                          const std::filesystem::path& output, WriteMode mode) {
  WriteResult result;
  std::span<const u8> in(input.data(), input.size());
  bool identity = overlay.is_identity(in);
  result.changed = !identity;
  bool in_place = same_file(input.name(), output);
  // In place through a symlink edits the file it points to; renaming over
  // the link would replace the link with a regular file.
  std::filesystem::path target = output;
  if (in_place) {
    std::error_code ec;
    auto resolved = std::filesystem::canonical(output, ec);
    if (!ec) target = resolved;
  }

  if (in_place && identity) return result;

  // A file the caller may not write is never replaced, even when its
  // directory would allow a rename over it (write protection, as patchelf
  // and cp honour it).
  if (::faccessat(AT_FDCWD, target.c_str(), W_OK, AT_EACCESS) != 0 &&
      (errno == EACCES || errno == EPERM || errno == EROFS))
    throw_errno(target.string(), "cannot write");

  Fd fd;
  if (in_place && mode == WriteMode::patch_in_place && !overlay.grows()) {
    fd.reset(::open(target.c_str(), O_WRONLY | O_CLOEXEC));
    // A running executable can't be opened for writing (ETXTBSY): fall back
    // to temp file + rename, which replaces the inode instead.
    if (!fd && errno != ETXTBSY)
      throw_errno(target.string(), "cannot open for writing");
  }
  if (fd) {
    SignalGuard guard;
    for (const Patch& p : overlay.patches()) {
      pwrite_all(fd.get(), target.string(), p.offset, p.bytes);
      result.bytes_written += p.bytes.size();
    }
    // close(2) reports a failed write-back (NFS, quota): not Fd::reset,
    // which ignores it.
    if (::close(fd.release()) != 0)
      throw_errno(target.string(), "cannot close");
    result.in_place = true;
    return result;
  }

  // The bytes copied must be the ones the overlay was planned on: the name
  // is opened again only if it still leads to the mapped file.
  const Fd src = input.reopen();
  // Patched in place (patchelf's mode), a hard-linked file that must grow
  // is rewritten in its own inode so every link sees the edit, as patchelf
  // does. WriteMode::atomic keeps replacing this name only: callers that
  // stage trees with hard links (conda relocation, bundling) rely on the
  // other links keeping the original bytes.
  bool keep_links = in_place && mode == WriteMode::patch_in_place;
  AtomicFile out = AtomicFile::create(
      target, input.mode(),
      keep_links ? AtomicFile::Links::keep : AtomicFile::Links::replace);
  out.copy_from(src.get(), 0, std::min(input.size(), overlay.size()), 0);
  for (const Patch& p : overlay.patches()) {
    out.pwrite(p.offset, p.bytes);
    result.bytes_written += p.bytes.size();
  }
  out.truncate(overlay.size());
  out.commit();
  return result;
}

}  // namespace libpkg
