// A private scratch directory, removed with everything in it when the
// object goes away (also when an exception unwinds), so a failed run leaves
// nothing behind.
#pragma once

#include <filesystem>
#include <string>

namespace libpkg {

class ScratchDir {
 public:
  // Creates `parent`/<prefix>XXXXXX (mkdtemp: mode 0700, unique).
  explicit ScratchDir(const std::filesystem::path& parent,
                      const std::string& prefix = ".libpkg-");
  // A scratch directory under the system's temporary directory ($TMPDIR
  // or /tmp, as std::filesystem::temp_directory_path decides).
  static ScratchDir in_temp(const std::string& prefix = "libpkg-");
  ~ScratchDir();
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace libpkg
