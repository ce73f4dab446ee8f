// SPDX-License-Identifier: BSD-3-Clause
#include "archive/writer_names.hpp"

#include <optional>
#include <string_view>

#include "archive/name_fold.hpp"
#include "archive/name_plan.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw Error(Errc::usage, name.empty() ? std::string("<member>") : name,
              "refusing member name: " + why);
}

}  // namespace

void check_symlink_target(const std::string& name, const std::string& target) {
  auto refuse_target = [&](const std::string& why) {
    throw Error(Errc::usage, name.empty() ? std::string("<member>") : name,
                "refusing symlink member: " + why);
  };
  if (target.empty()) refuse_target("empty target");
  if (target.find('\0') != std::string::npos)
    refuse_target("target contains a NUL byte");
  if (target.size() > names::kMaxLinkTarget)
    refuse_target("target of " + std::to_string(target.size()) +
                  " bytes is longer than " +
                  std::to_string(names::kMaxLinkTarget));
}

void check_member_name(const std::string& name, bool directory) {
  if (name.empty()) refuse(name, "empty");
  if (name.size() > 0xffff) refuse(name, "longer than 65535 bytes");
  if (name.front() == '/') refuse(name, "absolute path");
  if (name.find('\\') != std::string::npos) refuse(name, "backslash");
  if (name.find('\0') != std::string::npos) refuse(name, "NUL byte");
  const bool trailing_slash = name.back() == '/';
  if (directory && !trailing_slash)
    refuse(name, "a directory name must end in '/'");
  if (!directory && trailing_slash)
    refuse(name, "only directory names end in '/'");
  std::string_view rest(name);
  if (trailing_slash) rest.remove_suffix(1);
  for (;;) {
    size_t slash = rest.find('/');
    std::string_view segment = rest.substr(0, slash);
    if (segment.empty()) refuse(name, "empty path segment");
    if (segment == ".") refuse(name, "'.' segment");
    if (segment == "..") refuse(name, "'..' segment");
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
}

// Every structural rule is applied to the folded path, so two names the
// reader would take for one file (same normalised path, or the same file
// after NFKC case folding) are refused here too.
std::string MemberNames::fold(const std::string& name,
                              const std::string& path) {
  std::string out;
  std::size_t start = 0;
  for (;;) {
    std::size_t slash = path.find('/', start);
    std::string_view seg(
        path.data() + start,
        (slash == std::string::npos ? path.size() : slash) - start);
    std::optional<std::string> f = names::nfkc_casefold(seg);
    if (!f)
      refuse(name,
             "not valid UTF-8 (a non-ASCII name is written with the UTF-8 "
             "flag, and readers refuse invalid UTF-8 under it)");
    if (start != 0) out += '/';
    out += *f;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

void MemberNames::add(const std::string& name, bool directory) {
  check_member_name(name, directory);
  const std::string path =
      fold(name, directory ? name.substr(0, name.size() - 1) : name);  // no '/'
  if (auto it = folded_.find(path); it != folded_.end()) {
    if (it->second.name == name) refuse(name, "duplicate");
    refuse(name, "names the same file as '" + it->second.name +
                     "' (paths are compared after NFKC case folding: the "
                     "same file on macOS/Windows; extractors refuse it)");
  }
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    auto it = folded_.find(path.substr(0, slash));
    if (it != folded_.end() && it->second.leaf)
      refuse(name, "a parent directory is a file or symlink member");
  }
  if (!directory && parents_.count(path) != 0)
    refuse(name, "other members are inside this path");
  folded_.emplace(path, Member{name, !directory});
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1))
    parents_.insert(path.substr(0, slash));
}

bool needs_utf8_flag(const std::string& name) {
  for (char c : name)
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  return false;
}

}  // namespace libpkg::archive
