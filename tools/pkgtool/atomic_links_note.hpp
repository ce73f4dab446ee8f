// SPDX-License-Identifier: BSD-3-Clause
// The note `--in-place-atomic` prints when it gives a hard-linked file's name
// a new inode (`pkgtool patchelf`, `pkgtool macho edit`): the other links
// silently keep the old contents otherwise.
#pragma once

#include <fmt/format.h>
#include <sys/stat.h>

#include <string>

namespace pkgtool {

// The link count of `file` when an atomic in-place edit would break its
// links, else 0 (taken before the edit).
inline nlink_t links_an_atomic_edit_breaks(const std::string& file, bool atomic,
                                           bool to_output) {
  struct stat st {};
  if (!atomic || to_output || ::stat(file.c_str(), &st) != 0) return 0;
  return st.st_nlink > 1 ? st.st_nlink : 0;
}

inline void note_broken_links(const std::string& file, nlink_t links,
                              bool changed) {
  if (links > 1 && changed)
    fmt::print(stderr,
               "note: {}: had {} hard links; --in-place-atomic gave this "
               "name a new file, the other links keep the old contents\n",
               file, links);
}

}  // namespace pkgtool
