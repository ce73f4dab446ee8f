// SPDX-License-Identifier: BSD-3-Clause
// The conda part of a published channel: each package's info/index.json
// read straight from the archive (the info tar of a .conda, the first
// members of a .tar.bz2: nothing else is inflated), and the channel's
// <subdir>/repodata.json and channeldata.json as `conda index` writes them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace libpkg::nightly {

struct CondaRecord {
  std::string file;        // the package's file name
  std::string index_json;  // its info/index.json text
  std::string sha256, md5;
  unsigned long long size = 0;
};

// Errc::format naming the package when it has no readable info/index.json,
// or when its subdir is not a plain platform name (see check_conda_subdir).
// The bytes are read from `from` (the package, or a /proc/self/fd path of
// it); `package` gives its name, format and what errors name.
CondaRecord read_conda_record(const std::filesystem::path& from,
                              const std::filesystem::path& package);

/// Throws Errc::format naming `file` unless `subdir` matches
/// ^[a-z0-9]+(-[a-z0-9_]+)*$ (linux-64, osx-arm64, noarch, ...): the subdir
/// becomes a directory of the channel, so "../x" or "/abs" would write
/// outside it.
void check_conda_subdir(const std::string& subdir, const std::string& file);

// Writes <dir>/<subdir>/repodata.json for every subdir of `records` (and an
// empty noarch/ one when absent, which conda clients request), and
// <dir>/channeldata.json.
void write_conda_channel(const std::filesystem::path& dir,
                         const std::vector<CondaRecord>& records);

}  // namespace libpkg::nightly
