// SPDX-License-Identifier: BSD-3-Clause
// extract_tar: writes tar members under a directory, never outside it.
//
// Why symlink targets must be in normal form: a purely lexical check of each
// target is not enough when links chain (`a/l1 -> ..` is fine on its own, but
// `l2 -> a/l1/..` then climbs above the root although it looks inside). If
// every target is `..`* followed by plain names and its leading `..`s stay
// inside the root from the link's (real, O_NOFOLLOW-walked) directory, then by
// induction every link resolves inside the root, whatever it chains through.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "libpkg/archive/tar.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::archive {
namespace {

struct Context {
  const std::string& archive;
  int root;
};

[[noreturn]] void refuse(const Context& c, const std::string& member,
                         const std::string& why) {
  throw Error(Errc::format, c.archive, member + ": " + why);
}

// Splits a member name into checked segments ("./" prefixes and a trailing
// '/' are tolerated; `.` segments dropped).
// `member` names the member in messages, `name` is the path being split
// (the member's own name or its hardlink target).
std::vector<std::string> split_name(const Context& c, const std::string& member,
                                    const std::string& name,
                                    const std::string& what = "member name") {
  if (name.empty())
    refuse(c, member.empty() ? "<empty name>" : member, "empty " + what);
  if (name.front() == '/')
    refuse(c, member, "absolute " + what + " '" + name + "'");
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    if (part == "..") refuse(c, member, what + " '" + name + "' contains '..'");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = end + 1;
  }
  if (parts.empty())
    refuse(c, member, what + " '" + name + "' has no path segments");
  return parts;
}

// Opens (creating when `create`) the directory made of parts[0, count) under
// the root, one O_NOFOLLOW component at a time.
Fd open_dir(const Context& c, const std::string& member,
            const std::vector<std::string>& parts, std::size_t count,
            bool create) {
  Fd dir(::dup(c.root));
  if (dir.get() < 0) throw_errno(c.archive, "dup");
  for (std::size_t i = 0; i < count; ++i) {
    const char* part = parts[i].c_str();
    int fd = ::openat(dir.get(), part,
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir.get(), part, 0755) != 0 && errno != EEXIST) {
        throw_errno(c.archive, member + ": mkdir " + parts[i]);
      }
      fd = ::openat(dir.get(), part,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        refuse(c, member,
               "path component '" + parts[i] +
                   "' is a symlink or not a directory");
      }
      throw_errno(c.archive, member + ": open directory " + parts[i]);
    }
    dir = Fd(fd);
  }
  return dir;
}

void check_symlink_target(const Context& c, const std::string& member,
                          std::size_t link_depth, const std::string& target) {
  if (target.empty()) refuse(c, member, "empty symlink target");
  if (target.front() == '/') {
    refuse(c, member, "absolute symlink target '" + target + "'");
  }
  std::size_t ups = 0;
  bool seen_name = false;
  std::size_t start = 0;
  while (start <= target.size()) {
    std::size_t end = target.find('/', start);
    if (end == std::string::npos) end = target.size();
    std::string part = target.substr(start, end - start);
    if (part == "..") {
      if (seen_name) {
        refuse(c, member, "symlink target '" + target + "' is not normalised");
      }
      ++ups;
    } else if (part.empty() || part == ".") {
      if (end != target.size() || part == ".") {
        refuse(c, member, "symlink target '" + target + "' is not normalised");
      }
    } else {
      seen_name = true;
    }
    start = end + 1;
  }
  if (ups > link_depth) {
    refuse(c, member, "symlink target '" + target + "' points outside");
  }
}

void write_file(const Context& c, TarReader& reader, const TarMember& m,
                int dir, const std::string& leaf, TarExtractReport& report) {
  Fd fd(::openat(dir, leaf.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    if (errno == EEXIST) refuse(c, m.path, "already exists in the target");
    throw_errno(c.archive, m.path + ": create");
  }
  const std::string shown = c.archive + ":" + m.path;
  reader.read_data(
      [&](std::span<const u8> bytes) { write_all(fd.get(), bytes, shown); });
  if (::fchmod(fd.get(), m.mode & 0777) != 0) {
    throw_errno(c.archive, m.path + ": chmod");
  }
  ++report.files;
  report.bytes += m.size;
}

struct PendingMode {
  std::vector<std::string> parts;
  unsigned mode;
};

}  // namespace

TarExtractReport extract_tar(TarReader& reader,
                             const std::filesystem::path& dir,
                             const TarExtractOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Error(Errc::io, dir.string(),
                "cannot create directory: " + ec.message());
  }
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) throw_errno(dir.string(), "open target directory");
  Context c{reader.name(), root.get()};
  TarExtractReport report;
  // Directory modes are applied last, so a read-only directory in the
  // archive does not stop its own members from being written.
  std::vector<PendingMode> dir_modes;

  TarMember m;
  while (reader.next(m)) {
    std::vector<std::string> parts = split_name(c, m.path, m.path);
    std::string leaf = parts.back();
    Fd parent = open_dir(c, m.path, parts, parts.size() - 1, true);
    switch (m.kind) {
      case TarKind::file:
        write_file(c, reader, m, parent.get(), leaf, report);
        break;
      case TarKind::directory: {
        if (::mkdirat(parent.get(), leaf.c_str(), 0755) != 0) {
          if (errno != EEXIST) throw_errno(c.archive, m.path + ": mkdir");
          struct stat st {};
          if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) !=
                  0 ||
              !S_ISDIR(st.st_mode)) {
            refuse(c, m.path, "exists in the target and is not a directory");
          }
        }
        // Never world-writable (see archive/extract.hpp: 01777 would
        // otherwise lose its sticky bit and stay writable by everyone).
        dir_modes.push_back({parts, m.mode & 0775});
        ++report.directories;
        break;
      }
      case TarKind::symlink:
        if (!options.allow_symlinks) refuse(c, m.path, "symlinks not allowed");
        check_symlink_target(c, m.path, parts.size() - 1, m.link_target);
        if (::symlinkat(m.link_target.c_str(), parent.get(), leaf.c_str()) !=
            0) {
          if (errno == EEXIST)
            refuse(c, m.path, "already exists in the target");
          throw_errno(c.archive, m.path + ": symlink");
        }
        ++report.symlinks;
        break;
      case TarKind::hardlink: {
        if (!options.allow_hardlinks)
          refuse(c, m.path, "hardlinks not allowed");
        std::vector<std::string> source =
            split_name(c, m.path, m.link_target, "hardlink target");
        Fd source_dir = open_dir(c, m.path, source, source.size() - 1, false);
        struct stat st {};
        if (::fstatat(source_dir.get(), source.back().c_str(), &st,
                      AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode)) {
          refuse(c, m.path,
                 "hardlink target '" + m.link_target +
                     "' is not an extracted regular file");
        }
        if (::linkat(source_dir.get(), source.back().c_str(), parent.get(),
                     leaf.c_str(), 0) != 0) {
          if (errno == EEXIST)
            refuse(c, m.path, "already exists in the target");
          throw_errno(c.archive, m.path + ": link");
        }
        ++report.hardlinks;
        break;
      }
      case TarKind::other:
        refuse(c, m.path, "device, FIFO or socket members are not allowed");
    }
  }
  for (auto it = dir_modes.rbegin(); it != dir_modes.rend(); ++it) {
    Fd d = open_dir(c, it->parts.back(), it->parts, it->parts.size(), false);
    if (::fchmod(d.get(), it->mode) != 0) {
      throw_errno(c.archive, it->parts.back() + ": chmod");
    }
  }
  return report;
}

}  // namespace libpkg::archive
