// SPDX-License-Identifier: BSD-3-Clause
// Wheel file name parsing and formatting (see name.hpp).
#include "libpkg/wheel/name.hpp"

#include <algorithm>
#include <regex>

#include "libpkg/base/error.hpp"

namespace libpkg::wheel {

namespace {

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// Collapses every run of [-_.] into `sep` and lower-cases ASCII letters.
std::string collapse_separators(std::string_view name, char sep) {
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += sep;
      in_run = true;
    } else {
      out += ascii_lower(c);
      in_run = false;
    }
  }
  return out;
}

[[noreturn]] void bad_name(std::string_view file, const std::string& why) {
  throw Error(Errc::format, std::string(file),
              "not a valid wheel file name: " + why);
}

// Legacy names allowed what setuptools produced: letters, digits, '.', '_'
// (the '-' separates fields). A double underscore can't come from either
// escaping rule, so pip rejects it and so do we. PEP 508 names begin and end
// with a letter or digit: that also keeps "." and ".." out, which would
// make "../-1.0.dist-info"-like paths of a name ("..-1.0.dist-info").
bool is_valid_distribution_part(std::string_view s) {
  if (s.empty()) return false;
  if (s.find("__") != std::string_view::npos) return false;
  if (!is_ascii_alnum(s.front()) || !is_ascii_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_ascii_alnum(c) || c == '.' || c == '_';
  });
}

}  // namespace

std::string escape_distribution(std::string_view name) {
  return collapse_separators(name, '_');
}

std::string canonicalize_name(std::string_view name) {
  return collapse_separators(name, '-');
}

std::string escape_version(std::string_view version) {
  std::string out(version);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

bool is_valid_version(std::string_view version) {
  // PEP 440 "Appendix B" grammar: epoch, release, pre, post (including the
  // implicit "-N" form), dev and local segments with every permitted
  // separator spelling. Compiled per call: versions are parsed a few times
  // per wheel, and a function-local static regex would be shared state.
  constexpr const char* kPattern =
      "v?"
      "(?:[0-9]+!)?"
      "[0-9]+(?:\\.[0-9]+)*"
      "(?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?"
      "(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?"
      "(?:[-_.]?dev[-_.]?[0-9]*)?"
      "(?:\\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?";
  const std::regex re(kPattern, std::regex::ECMAScript | std::regex::icase);
  return std::regex_match(version.begin(), version.end(), re);
}

bool is_valid_build_tag(std::string_view build) {
  if (build.empty() || build[0] < '0' || build[0] > '9') return false;
  return std::all_of(build.begin(), build.end(), [](char c) {
    return is_ascii_alnum(c) || c == '.' || c == '_' || c == '+';
  });
}

std::vector<std::string> split_tag_set(std::string_view compressed,
                                       std::string_view what) {
  std::vector<std::string> tags;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = compressed.find('.', start);
    std::string_view tag = compressed.substr(
        start,
        dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (tag.empty())
      throw Error(Errc::format, std::string(what),
                  "empty tag in tag set '" + std::string(compressed) + "'");
    for (char c : tag)
      if (!is_ascii_alnum(c) && c != '_')
        throw Error(Errc::format, std::string(what),
                    "invalid character '" + std::string(1, c) + "' in tag '" +
                        std::string(tag) + "'");
    tags.emplace_back(tag);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

std::string join_tag_set(std::vector<std::string> tags) {
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  std::string out;
  for (const auto& t : tags) {
    if (!out.empty()) out += '.';
    out += t;
  }
  return out;
}

WheelName WheelName::parse(std::string_view filename) {
  std::string_view base = filename;
  if (auto slash = base.rfind('/'); slash != std::string_view::npos)
    base = base.substr(slash + 1);
  const std::string file(filename);
  constexpr std::string_view kExt = ".whl";
  if (base.size() <= kExt.size() ||
      base.substr(base.size() - kExt.size()) != kExt)
    bad_name(file, "it does not end in .whl");
  std::string_view stem = base.substr(0, base.size() - kExt.size());

  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dash = stem.find('-', start);
    parts.push_back(stem.substr(start, dash == std::string_view::npos
                                           ? std::string_view::npos
                                           : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  if (parts.size() != 5 && parts.size() != 6)
    bad_name(file,
             "expected 5 or 6 '-'-separated parts "
             "(name-version[-build]-python-abi-platform), found " +
                 std::to_string(parts.size()));
  static constexpr const char* kPartNames[] = {"distribution", "version",
                                               "build tag"};
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].empty()) {
      std::size_t from_end = parts.size() - i;
      const char* what = from_end == 1   ? "platform tag"
                         : from_end == 2 ? "abi tag"
                         : from_end == 3 ? "python tag"
                                         : kPartNames[i];
      bad_name(file, std::string("empty ") + what);
    }

  WheelName name;
  if (!is_valid_distribution_part(parts[0]))
    bad_name(file, "invalid distribution name '" + std::string(parts[0]) +
                       "' (allowed: letters, digits, '.', single '_')");
  name.distribution = parts[0];
  if (!is_valid_version(parts[1]))
    bad_name(file, "invalid PEP 440 version '" + std::string(parts[1]) + "'");
  name.version = parts[1];
  if (parts.size() == 6) {
    if (!is_valid_build_tag(parts[2]))
      bad_name(file, "invalid build tag '" + std::string(parts[2]) +
                         "' (must start with a digit)");
    name.build = std::string(parts[2]);
  }
  std::size_t n = parts.size();
  name.python_tags = split_tag_set(parts[n - 3], file);
  name.abi_tags = split_tag_set(parts[n - 2], file);
  name.platform_tags = split_tag_set(parts[n - 1], file);
  return name;
}

std::string WheelName::python_tag() const { return join_tag_set(python_tags); }
std::string WheelName::abi_tag() const { return join_tag_set(abi_tags); }
std::string WheelName::platform_tag() const {
  return join_tag_set(platform_tags);
}

std::string WheelName::format() const {
  std::string out = name_version();
  if (build) out += "-" + *build;
  out += "-" + python_tag() + "-" + abi_tag() + "-" + platform_tag() + ".whl";
  return out;
}

std::string WheelName::local_version() const {
  auto plus = version.find('+');
  return plus == std::string::npos ? std::string() : version.substr(plus + 1);
}

WheelName WheelName::without_local_version() const {
  WheelName copy = *this;
  auto plus = copy.version.find('+');
  if (plus != std::string::npos) copy.version.resize(plus);
  return copy;
}

std::vector<WheelTag> WheelName::tags() const {
  std::vector<WheelTag> out;
  for (const auto& p : python_tags)
    for (const auto& a : abi_tags)
      for (const auto& pl : platform_tags) out.push_back({p, a, pl});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace libpkg::wheel
