#include "libpkg/base/scratch_dir.hpp"

#include <stdlib.h>

#include <system_error>

#include "libpkg/base/error.hpp"

namespace fs = std::filesystem;

namespace libpkg {

ScratchDir::ScratchDir(const fs::path& parent, const std::string& prefix) {
  std::string templ = (parent / (prefix + "XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr)
    throw_errno(parent.string(), "create scratch directory");
  path_ = templ;
}

ScratchDir ScratchDir::in_temp(const std::string& prefix) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return ScratchDir(tmp, prefix);
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept
    : path_(std::move(other.path_)) {
  other.path_.clear();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace libpkg
