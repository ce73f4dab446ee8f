// SPDX-License-Identifier: BSD-3-Clause
// What identifies a file's content without reading it, for facts memoized
// in the chunk cache: a file's SHA-256 (file_digest.hpp) and the chunk keys
// and RECORD hash of a member made from it (member_memo.hpp).
//
// The identity is the effective user, device, inode, size, mtime and ctime
// (nanoseconds) and the path. The kernel sets ctime on every change to the
// file (and it cannot be set by hand), so another content under the same
// identity would need the clock to give the same nanosecond twice. As in
// ccache's inode cache, a file changed in the two seconds before it was
// stat'ed is not memoized (a write in the same clock tick would keep its
// times), and whoever memoizes a fact stats the file again after computing
// it: if it changed meanwhile, nothing is stored. Private to the archive
// layer.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

/// A file as stat(2) saw it.
struct FileState {
  u64 dev = 0, ino = 0, size = 0;
  i64 mtime_ns = 0, ctime_ns = 0;
  // Unchanged for two seconds when it was stat'ed: facts about it may be
  // memoized.
  bool settled = false;
};

/// The state `st` describes, `settled` judged against the clock now.
/// Never throws.
FileState file_state(const struct stat& st);

/// Same device, inode, size, mtime and ctime.
bool same_file_state(const FileState& a, const FileState& b);

/// "<kind>; uid …; dev …; ino …; size …; mtime …; ctime …; path …": the
/// identity described above, for ChunkCache::key_for(). Never throws.
std::string file_identity(std::string_view kind, const FileState& state,
                          const std::filesystem::path& path);

}  // namespace libpkg::archive
