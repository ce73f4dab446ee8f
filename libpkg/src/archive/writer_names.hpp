// SPDX-License-Identifier: BSD-3-Clause
// Member name checks for the zip writer: a writer must never produce an
// archive that an extractor could turn against its user.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace libpkg::archive {

// Throws Errc::usage naming the member when `name` is empty, absolute, has a
// backslash, a NUL, an empty, "." or ".." segment, or is longer than a zip
// header can hold. Directory names end in '/' (and only they).
void check_member_name(const std::string& name, bool directory);

// The names of one archive: refuses duplicates, names that are not valid
// UTF-8, names the reader would take for the same file (NFKC case fold,
// archive/name_fold.hpp), and a member below a file or symlink member ("lib"
// -> /etc, then "lib/passwd": an extractor that follows the link writes
// outside its target directory), in either order. What the writer accepts,
// archive::check_member_names accepts.
class MemberNames {
 public:
  // Checks `name` (check_member_name, then the above) and records it.
  void add(const std::string& name, bool directory);

 private:
  // `path` folded segment by segment; refuses invalid UTF-8.
  static std::string fold(const std::string& name, const std::string& path);

  // One entry per member (a writer of many small files keeps these for
  // every member until commit, so nothing is stored twice): its folded path
  // -> its name and whether it is a file or symlink (a leaf). An exact
  // duplicate is found here too: its fold is the same.
  struct Member {
    std::string name;
    bool leaf = false;
  };
  std::unordered_map<std::string, Member> folded_;
  std::unordered_set<std::string> parents_;  // "a", "a/b" of "a/b/c"
};

// Throws Errc::usage naming the member when a symlink's `target` is one
// the extractor refuses whatever else the archive holds: empty, with a NUL
// byte, or longer than names::kMaxLinkTarget. (Whether a relative target
// stays inside the extraction directory depends on the extractor's options
// and the other members, so it is checked there.)
void check_symlink_target(const std::string& name, const std::string& target);

// True when `name` has a byte outside ASCII (the header then gets the UTF-8
// flag, APPNOTE 4.4.4 bit 11).
bool needs_utf8_flag(const std::string& name);

}  // namespace libpkg::archive
