// SPDX-License-Identifier: BSD-3-Clause
// Publishing a nightly: the artifacts of its SUCCEEDED jobs go into a
// channel directory people install from, replacing the old
// update_s3_htmls.sh (builder-scripts.md §6.2.7) with real indexes:
//   <channel>/files/<file>                 every published file, copied once
//   <channel>/releases/<stamp>/simple/     PEP 503 HTML + PEP 691 JSON
//   <channel>/releases/<stamp>/libtorch/index.html
//   <channel>/releases/<stamp>/conda/<subdir>/{repodata.json,packages}
//   <channel>/current -> releases/<stamp>  swapped with one rename
//   <channel>/manifest.json                what is published, per nightly
// A new index is built in full under a fresh stamp, then `current` is
// switched by renaming a new symlink over it, so a reader sees the old
// channel or the new one, never half of one. Files of pruned versions and
// old releases are deleted only after the switch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/nightly/layout.hpp"

namespace libpkg::nightly {

/// How publish_nightly prunes the channel.
struct PublishOptions {
  // Keep the last N nightlies' versions of each package and configuration
  // (project + wheel tags + local version label, or the libtorch name
  // without its version); 0 keeps everything.
  unsigned keep = 0;
};

/// What publish_nightly changed in the channel.
struct PublishResult {
  std::vector<std::string> added;   // file names newly published
  std::vector<std::string> pruned;  // file names removed by retention
  std::filesystem::path release;    // the release `current` points to
};

/// Publishes the SUCCEEDED jobs' wheels (.whl), conda packages (.conda,
/// .tar.bz2) and libtorch zips (libtorch*.zip) of
/// `layout` into `channel`. Errc::usage when a runner still holds the
/// nightly; Errc::format naming a wheel whose name or METADATA is bad.
PublishResult publish_nightly(const Layout& layout,
                              const std::filesystem::path& channel,
                              const PublishOptions& options);

/// PEP 503's normalized project name: lowercase, runs of -_. become '-'.
std::string normalize_project(const std::string& name);

}  // namespace libpkg::nightly
