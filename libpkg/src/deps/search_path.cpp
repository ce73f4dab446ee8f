// SPDX-License-Identifier: BSD-3-Clause
// Search-path strings: ':'-lists and the dynamic string tokens ($ORIGIN,
// $LIB, $PLATFORM) the loader expands in them.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/deps/resolve.hpp"

namespace libpkg::deps {

namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// If `rest` (just after a '$') starts with the token `name`, written as
// NAME or {NAME}, returns the length consumed; 0 otherwise. Like glibc's
// is_dst, the unbraced form must not be followed by an identifier
// character: "$ORIGINAL" is not $ORIGIN.
size_t match_token(std::string_view rest, std::string_view name) {
  if (rest.starts_with('{')) {
    if (rest.substr(1).starts_with(name) && rest.size() > name.size() + 1 &&
        rest[name.size() + 1] == '}')
      return name.size() + 2;
    return 0;
  }
  if (!rest.starts_with(name)) return 0;
  if (rest.size() > name.size() && is_identifier_char(rest[name.size()]))
    return 0;
  return name.size();
}

}  // namespace

namespace {

// Entries of `list` ending at any of `separators`, empty ones kept.
std::vector<std::string> split_at(std::string_view list,
                                  std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = list.find_first_of(separators, start);
    out.emplace_back(list.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> split_path_list(std::string_view list) {
  return split_at(list, ":");
}

std::vector<std::string> split_ld_library_path(std::string_view value) {
  // glibc (elf/dl-load.c, _dl_init_paths) hands LD_LIBRARY_PATH to the
  // same splitter as DT_RPATH but with ":;" as separators; DT_RPATH and
  // DT_RUNPATH split on ':' only (split_path_list). Unset or empty: none.
  if (value.empty()) return {};
  return split_at(value, ":;");
}

std::string expand_dst(std::string_view entry, std::string_view origin,
                       std::string_view lib, std::string_view platform) {
  std::string out;
  out.reserve(entry.size() + origin.size());
  for (size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    std::string_view rest = entry.substr(i + 1);
    if (size_t n = match_token(rest, "ORIGIN")) {
      out += origin;
      i += 1 + n;
    } else if (size_t n2 = match_token(rest, "LIB")) {
      out += lib;
      i += 1 + n2;
    } else if (size_t n3 = match_token(rest, "PLATFORM")) {
      out += platform;
      i += 1 + n3;
    } else {
      // Unknown tokens stay literal, as in ld.so.
      out += entry[i++];
    }
  }
  return out;
}

const char* found_via_name(FoundVia via) {
  switch (via) {
    case FoundVia::path:
      return "path";
    case FoundVia::rpath:
      return "rpath";
    case FoundVia::inherited_rpath:
      return "inherited_rpath";
    case FoundVia::ld_library_path:
      return "ld_library_path";
    case FoundVia::extra_path:
      return "extra_path";
    case FoundVia::runpath:
      return "runpath";
    case FoundVia::ld_so_conf:
      return "ld_so_conf";
    case FoundVia::default_dir:
      return "default_dir";
    case FoundVia::not_found:
      return "not_found";
  }
  return "unknown";
}

}  // namespace libpkg::deps
