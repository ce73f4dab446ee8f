#include "archive/writer_names.hpp"

#include <string_view>

#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

[[noreturn]] void refuse(const std::string& name, const char* why) {
  throw Error(Errc::usage, name.empty() ? std::string("<member>") : name,
              std::string("refusing member name: ") + why);
}

}  // namespace

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

void MemberNames::add(const std::string& name, bool directory) {
  check_member_name(name, directory);
  if (names_.count(name) != 0) refuse(name, "duplicate");
  const std::string path =
      directory ? name.substr(0, name.size() - 1) : name;  // no trailing '/'
  for (size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (leaves_.count(path.substr(0, slash)) != 0)
      refuse(name, "a parent directory is a file or symlink member");
  }
  if (!directory && parents_.count(path) != 0)
    refuse(name, "other members are inside this path");
  if (directory && leaves_.count(path) != 0)
    refuse(name, "a file or symlink member has this path");
  if (!directory && names_.count(path + "/") != 0)
    refuse(name, "a directory member has this path");
  names_.insert(name);
  if (!directory) leaves_.insert(path);
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
