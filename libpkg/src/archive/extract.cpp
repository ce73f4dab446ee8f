// SPDX-License-Identifier: BSD-3-Clause
// Safe extraction (see extract.hpp).
//
// Everything is written into a StagedTarget (a hidden sibling of the target,
// renamed into place at the end; see staged_target.hpp), so the target never
// shows a half-extracted tree.
//
// Inside the temporary directory every path is walked one segment at a time
// with openat(O_DIRECTORY|O_NOFOLLOW) and files are created with
// O_CREAT|O_EXCL|O_NOFOLLOW, so no symlink (from the archive or planted by
// someone else) can redirect a write; symlink members are created last.
#include "libpkg/archive/extract.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <utility>

#include "archive/name_plan.hpp"
#include "libpkg/archive/staged_target.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"

namespace libpkg::archive {
namespace {

namespace fs = std::filesystem;
using names::MemberKind;
using names::PlannedMember;

[[noreturn]] void io_error(const ZipReader& zip, const std::string& member,
                           const std::string& action) {
  int err = errno;
  throw Error(Errc::io, zip.name(),
              fmt::format("{}: {}: {}", member, action, std::strerror(err)));
}

// Opens (and with `create`, first makes) `segments[0..count)` below `root`,
// one O_NOFOLLOW step at a time.
Fd open_dir(const ZipReader& zip, int root, const PlannedMember& m,
            std::size_t count, bool create) {
  Fd current;
  int at = root;
  for (std::size_t i = 0; i < count; ++i) {
    const char* seg = m.segments[i].c_str();
    if (create && ::mkdirat(at, seg, 0700) != 0 && errno != EEXIST)
      io_error(zip, m.entry->name,
               fmt::format("mkdir '{}'", names::join_path(m.segments, i + 1)));
    int fd = ::openat(at, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      io_error(zip, m.entry->name,
               fmt::format("open directory '{}'",
                           names::join_path(m.segments, i + 1)));
    current = Fd(fd);
    at = fd;
  }
  if (count == 0) {
    int fd = ::fcntl(root, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) io_error(zip, m.entry->name, "dup directory fd");
    current = Fd(fd);
  }
  return current;
}

unsigned file_mode(const ZipEntry& e, bool keep_modes) {
  const unsigned mode = e.unix_mode();
  if (keep_modes && (mode & 0777) != 0) return mode & 0777;
  return (mode & 0111) ? 0755 : 0644;
}

// A directory that every user may write to (0777, 01777 /tmp-like) would
// let anyone replace the package's files: its world-write bit is dropped
// rather than kept without the sticky bit that made it safe for /tmp.
unsigned dir_mode(const ZipEntry& e, bool keep_modes) {
  const unsigned mode = e.unix_mode();
  if (keep_modes && (mode & 0777) != 0) return mode & 0775;
  return 0755;
}

struct timespec_pair {
  struct timespec t[2];
};

timespec_pair entry_times(const ZipEntry& e) {
  timespec_pair p{};
  p.t[0].tv_sec = p.t[1].tv_sec = static_cast<time_t>(e.mtime());
  return p;
}

class Extractor {
 public:
  Extractor(const ZipReader& zip, const ExtractOptions& options,
            std::vector<PlannedMember> plan, int root)
      : zip_(zip), options_(options), plan_(std::move(plan)), root_(root) {
    if (options_.digests) {
      report_.digests.resize(zip_.entries().size());
      errors_.resize(zip_.entries().size());
    }
  }

  ExtractReport run() {
    make_directories();
    write_files();
    make_symlinks();
    finish_directories();
    return report_;
  }

  // The first member (in archive order) that failed to inflate, with
  // ExtractOptions::digests; null if none did.
  std::exception_ptr first_member_error() const {
    for (const auto& e : errors_)
      if (e) return e;
    return nullptr;
  }

 private:
  void make_directories() {
    // Every explicit directory and every parent of a member, shallow first
    // (a path sorts before its extensions).
    std::set<std::vector<std::string>> dirs;
    std::set<std::vector<std::string>> explicit_dirs;
    for (const PlannedMember& m : plan_) {
      if (m.kind == MemberKind::directory) explicit_dirs.insert(m.segments);
      std::size_t n = m.kind == MemberKind::directory ? m.segments.size()
                                                      : m.segments.size() - 1;
      for (std::size_t i = 1; i <= n; ++i)
        dirs.emplace(m.segments.begin(), m.segments.begin() + i);
    }
    for (const auto& segments : dirs) {
      // Implicit parents have no entry; a stand-in names them in errors.
      ZipEntry label;
      label.name = names::join_path(segments, segments.size()) + "/";
      PlannedMember d;
      d.entry = &label;
      d.segments = segments;
      Fd parent = open_dir(zip_, root_, d, segments.size() - 1, false);
      if (::mkdirat(parent.get(), segments.back().c_str(), 0700) != 0)
        io_error(zip_, label.name, "mkdir");
      // Directories the archive does not list get the usual 0755 now
      // (mkdir's mode is subject to the umask); listed ones get their own
      // mode in finish_directories().
      if (!explicit_dirs.count(segments) &&
          ::fchmodat(parent.get(), segments.back().c_str(), 0755, 0) != 0)
        io_error(zip_, label.name, "chmod");
      ++report_.directories;
    }
  }

  void write_files() {
    std::vector<const PlannedMember*> files;
    for (const PlannedMember& m : plan_) {
      if (m.kind != MemberKind::file) continue;
      files.push_back(&m);
      total_ += m.entry->uncompressed_size;
    }
    // Largest first, so one GB member does not start last and run alone.
    std::stable_sort(files.begin(), files.end(),
                     [](const PlannedMember* a, const PlannedMember* b) {
                       return a->entry->uncompressed_size >
                              b->entry->uncompressed_size;
                     });
    PoolRef pool(options_.pool, options_.threads);
    pool.parallel_for(files.size(),
                      [&](std::size_t i) { write_file(*files[i]); });
    report_.files = files.size();
    report_.bytes = done_;
  }

  void write_file(const PlannedMember& m) {
    if (failed_.load()) return;  // another member already failed
    const ZipEntry& e = *m.entry;
    try {
      Fd parent = open_dir(zip_, root_, m, m.segments.size() - 1, false);
      Fd fd(::openat(parent.get(), m.segments.back().c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600));
      if (fd.get() < 0) io_error(zip_, e.name, "create");
      u64 since_report = 0;
      const std::string shown = zip_.name() + ":" + e.name;
      MemberDigest* digest = options_.digests
                                 ? &report_.digests[&e - zip_.entries().data()]
                                 : nullptr;
      Sha256 sha;
      try {
        zip_.read(e, [&](std::span<const u8> piece) {
          write_all(fd.get(), piece, shown);
          if (digest) {
            sha.update(piece);
            digest->size += piece.size();
          }
          since_report += piece.size();
          if (since_report >= (u64{4} << 20)) {
            add_progress(since_report);
            since_report = 0;
          }
        });
      } catch (const Error& err) {
        // With digests, a corrupt member is recorded and the others go on
        // (the caller reports it with the rest; extract() throws it later).
        // Write errors (Errc::io) still stop everything.
        if (!digest || err.code() != Errc::format) throw;
        digest->error = err.message();
        errors_[&e - zip_.entries().data()] = std::current_exception();
        add_progress(since_report);
        return;
      }
      add_progress(since_report);
      if (digest) {
        digest->sha256 = sha.finish();
        digest->present = true;
      }
      if (::fchmod(fd.get(), file_mode(e, options_.keep_modes)) != 0)
        io_error(zip_, e.name, "chmod");
      timespec_pair times = entry_times(e);
      if (::futimens(fd.get(), times.t) != 0) io_error(zip_, e.name, "utimes");
      if (::close(fd.release()) != 0) io_error(zip_, e.name, "close");
    } catch (...) {
      failed_.store(true);
      throw;
    }
  }

  void add_progress(u64 bytes) {
    std::lock_guard lock(progress_mutex_);
    done_ += bytes;
    if (options_.progress) options_.progress(done_, total_);
  }

  void make_symlinks() {
    for (const PlannedMember& m : plan_) {
      if (m.kind != MemberKind::symlink) continue;
      Fd parent = open_dir(zip_, root_, m, m.segments.size() - 1, false);
      if (::symlinkat(m.link_target.c_str(), parent.get(),
                      m.segments.back().c_str()) != 0)
        io_error(zip_, m.entry->name, "symlink");
      ++report_.symlinks;
    }
  }

  // Modes and times of directories last: writing files changed their mtimes
  // and a read-only directory mode would have blocked the writes. Deepest
  // first so a parent's mtime is set after its children changed.
  void finish_directories() {
    std::vector<const PlannedMember*> dirs;
    for (const PlannedMember& m : plan_)
      if (m.kind == MemberKind::directory) dirs.push_back(&m);
    std::stable_sort(dirs.begin(), dirs.end(),
                     [](const PlannedMember* a, const PlannedMember* b) {
                       return a->segments.size() > b->segments.size();
                     });
    for (const PlannedMember* m : dirs) {
      Fd parent = open_dir(zip_, root_, *m, m->segments.size() - 1, false);
      const char* leaf = m->segments.back().c_str();
      timespec_pair times = entry_times(*m->entry);
      if (::utimensat(parent.get(), leaf, times.t, AT_SYMLINK_NOFOLLOW) != 0)
        io_error(zip_, m->entry->name, "utimes");
      // fchmodat cannot refuse symlinks on Linux, but this path was just
      // created as a directory by us and the walk above used O_NOFOLLOW.
      if (::fchmodat(parent.get(), leaf,
                     dir_mode(*m->entry, options_.keep_modes), 0) != 0)
        io_error(zip_, m->entry->name, "chmod");
    }
  }

  const ZipReader& zip_;
  const ExtractOptions& options_;
  std::vector<PlannedMember> plan_;
  int root_;
  ExtractReport report_;
  std::mutex progress_mutex_;
  u64 done_ = 0;
  u64 total_ = 0;
  std::atomic<bool> failed_{false};
  std::vector<std::exception_ptr> errors_;  // by entry index (digests)
};

}  // namespace

ExtractReport extract(const ZipReader& zip, const fs::path& dir,
                      const ExtractOptions& options,
                      const BeforeInstallFn& before_install) {
  // Every name rule is applied before anything is written.
  std::vector<PlannedMember> plan =
      names::plan_members(zip, options.allow_symlinks);
  if (options.select)
    std::erase_if(plan, [&](const PlannedMember& m) {
      return m.kind != MemberKind::file || !options.select(*m.entry);
    });

  if (options.max_expansion != 0) {
    u64 declared = 0;
    for (const PlannedMember& m : plan) declared += m.entry->uncompressed_size;
    const u64 cap = std::max(kExpansionFloor,
                             zip.file_size() > ~u64{0} / options.max_expansion
                                 ? ~u64{0}
                                 : zip.file_size() * options.max_expansion);
    if (declared > cap)
      throw Error(
          Errc::format, zip.name(),
          fmt::format("its members total {} bytes, more than {} times "
                      "the archive's {} bytes (a decompression bomb?); "
                      "allow it with --max-expansion RATIO (0: no "
                      "bound)",
                      declared, options.max_expansion, zip.file_size()));
  }
  StagedTarget staged(dir, options.overwrite, zip.name());
  Fd root(::open(staged.path().c_str(),
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() < 0) throw_errno(staged.path().string(), "open");
  Extractor extractor(zip, options, std::move(plan), root.get());
  ExtractReport report = extractor.run();
  if (before_install) before_install(report, staged.path());
  if (std::exception_ptr failed = extractor.first_member_error())
    std::rethrow_exception(failed);
  staged.install();
  return report;
}

}  // namespace libpkg::archive
