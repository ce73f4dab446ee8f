// SPDX-License-Identifier: BSD-3-Clause
// WHEEL and METADATA parsing and surgical rewriting (see metadata.hpp).
#include "libpkg/wheel/metadata.hpp"

#include <algorithm>

#include "libpkg/base/error.hpp"

namespace libpkg::wheel {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) {
             return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a')
                                           : c;
           };
           return lower(x) == lower(y);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// One physical line including its terminator, and the line without it.
struct Line {
  std::string_view with_eol;
  std::string_view text;
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view with = text.substr(pos, end - pos);
    std::string_view bare = with;
    if (!bare.empty() && bare.back() == '\n') bare.remove_suffix(1);
    if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
    lines.push_back({with, bare});
    pos = end;
  }
  return lines;
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

// ---- HeaderFields ---------------------------------------------------------

HeaderFields HeaderFields::parse(std::string_view text,
                                 const std::string& file) {
  HeaderFields h;
  std::size_t offset = 0;
  for (const Line& line : split_lines(text)) {
    if (line.text.empty()) break;  // end of the header block
    if (line.text.front() == ' ' || line.text.front() == '\t') {
      if (h.fields_.empty())
        throw_format(file, offset, "continuation line before the first field");
      h.fields_.back().second += "\n" + std::string(trim(line.text));
    } else {
      auto colon = line.text.find(':');
      if (colon == std::string_view::npos || colon == 0)
        throw_format(file, offset,
                     "expected 'Key: value', found '" +
                         std::string(line.text.substr(0, 80)) + "'");
      h.fields_.emplace_back(std::string(trim(line.text.substr(0, colon))),
                             std::string(trim(line.text.substr(colon + 1))));
    }
    offset += line.with_eol.size();
  }
  return h;
}

std::string HeaderFields::format() const {
  std::string out;
  for (const auto& [key, value] : fields_) {
    out += key + ": ";
    for (char c : value) {
      out += c;
      if (c == '\n') out += "        ";
    }
    out += '\n';
  }
  // The blank line that ends the header block, as email.generator writes
  // it (bdist_wheel's WHEEL files end with it).
  out += '\n';
  return out;
}

std::optional<std::string> HeaderFields::get(std::string_view key) const {
  for (const auto& [k, v] : fields_)
    if (iequals(k, key)) return v;
  return std::nullopt;
}

std::vector<std::string> HeaderFields::get_all(std::string_view key) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fields_)
    if (iequals(k, key)) out.push_back(v);
  return out;
}

void HeaderFields::set(std::string_view key, std::string value) {
  replace_all(key, {std::move(value)});
}

void HeaderFields::add(std::string key, std::string value) {
  fields_.emplace_back(std::move(key), std::move(value));
}

void HeaderFields::remove(std::string_view key) { replace_all(key, {}); }

void HeaderFields::replace_all(std::string_view key,
                               const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> out;
  bool inserted = false;
  for (auto& field : fields_) {
    if (!iequals(field.first, key)) {
      out.push_back(std::move(field));
      continue;
    }
    if (!inserted) {
      for (const auto& v : values) out.emplace_back(field.first, v);
      inserted = true;
    }
  }
  if (!inserted)
    for (const auto& v : values) out.emplace_back(std::string(key), v);
  fields_ = std::move(out);
}

// ---- WheelFile ------------------------------------------------------------

WheelFile WheelFile::parse(std::string_view text, const std::string& file) {
  WheelFile w;
  w.file_ = file;
  w.fields_ = HeaderFields::parse(text, file);
  return w;
}

WheelFile WheelFile::make(std::string generator, bool root_is_purelib,
                          const std::vector<WheelTag>& tags,
                          std::optional<std::string> build) {
  WheelFile w;
  w.file_ = "WHEEL";
  w.fields_.add("Wheel-Version", "1.0");
  w.fields_.add("Generator", std::move(generator));
  w.fields_.add("Root-Is-Purelib", root_is_purelib ? "true" : "false");
  if (build && !build->empty()) w.fields_.add("Build", *build);
  w.set_tags(tags);
  return w;
}

std::optional<bool> WheelFile::root_is_purelib() const {
  auto v = fields_.get("Root-Is-Purelib");
  if (!v) return std::nullopt;
  return iequals(*v, "true");
}

std::vector<WheelTag> WheelFile::tags() const {
  std::vector<WheelTag> out;
  for (const auto& line : fields_.get_all("Tag")) {
    auto d1 = line.find('-');
    auto d2 = d1 == std::string::npos ? d1 : line.find('-', d1 + 1);
    bool ok = d2 != std::string::npos &&
              line.find('-', d2 + 1) == std::string::npos && d1 > 0 &&
              d2 > d1 + 1 && d2 + 1 < line.size();
    if (!ok)
      throw Error(
          Errc::format, file_,
          "malformed Tag line '" + line + "' (expected python-abi-platform)");
    out.push_back({line.substr(0, d1), line.substr(d1 + 1, d2 - d1 - 1),
                   line.substr(d2 + 1)});
  }
  return out;
}

std::vector<std::string> WheelFile::python_tags() const {
  std::vector<std::string> v;
  for (const auto& t : tags()) v.push_back(t.python);
  return sorted_unique(std::move(v));
}

std::vector<std::string> WheelFile::abi_tags() const {
  std::vector<std::string> v;
  for (const auto& t : tags()) v.push_back(t.abi);
  return sorted_unique(std::move(v));
}

std::vector<std::string> WheelFile::platform_tags() const {
  std::vector<std::string> v;
  for (const auto& t : tags()) v.push_back(t.platform);
  return sorted_unique(std::move(v));
}

void WheelFile::set_tags(const std::vector<WheelTag>& tags) {
  std::vector<std::string> lines;
  for (const auto& t : tags) lines.push_back(t.str());
  fields_.replace_all("Tag", lines);
}

void WheelFile::set_build(const std::optional<std::string>& build) {
  if (build && !build->empty())
    fields_.set("Build", *build);
  else
    fields_.remove("Build");
}

// ---- METADATA -------------------------------------------------------------

CoreMetadata read_core_metadata(std::string_view text,
                                const std::string& file) {
  CoreMetadata md;
  bool have_name = false, have_version = false;
  for (const Line& line : split_lines(text)) {
    if (line.text.empty()) break;
    if (line.text.front() == ' ' || line.text.front() == '\t') continue;
    auto colon = line.text.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(line.text.substr(0, colon));
    std::string_view value = trim(line.text.substr(colon + 1));
    if (!have_name && iequals(key, "Name")) {
      md.name = value;
      have_name = true;
    } else if (!have_version && iequals(key, "Version")) {
      md.version = value;
      have_version = true;
    }
  }
  if (!have_name) throw Error(Errc::format, file, "no Name field");
  if (!have_version) throw Error(Errc::format, file, "no Version field");
  return md;
}

std::string rewrite_metadata_version(std::string_view text,
                                     std::string_view version,
                                     const std::string& file) {
  std::size_t offset = 0;
  for (const Line& line : split_lines(text)) {
    if (line.text.empty()) break;
    auto colon = line.text.find(':');
    if (line.text.front() != ' ' && line.text.front() != '\t' &&
        colon != std::string_view::npos &&
        iequals(trim(line.text.substr(0, colon)), "Version")) {
      std::string out(text.substr(0, offset));
      out += line.text.substr(0, colon + 1);
      out += ' ';
      out += version;
      out += line.with_eol.substr(line.text.size());  // original line ending
      out += text.substr(offset + line.with_eol.size());
      return out;
    }
    offset += line.with_eol.size();
  }
  throw Error(Errc::format, file, "no Version field to rewrite");
}

}  // namespace libpkg::wheel
