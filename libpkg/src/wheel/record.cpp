// SPDX-License-Identifier: BSD-3-Clause
// RECORD parsing and formatting (see record.hpp).
#include "libpkg/wheel/record.hpp"

#include <charconv>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::wheel {

namespace {

int b64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

std::string record_hash(const std::array<u8, 32>& sha256) {
  return "sha256=" + Sha256::urlsafe_b64_nopad(sha256);
}

std::string_view hash_algorithm(std::string_view hash) {
  auto eq = hash.find('=');
  return eq == std::string_view::npos ? std::string_view() : hash.substr(0, eq);
}

std::optional<std::array<u8, 32>> parse_sha256_hash(std::string_view hash) {
  if (hash_algorithm(hash) != "sha256") return std::nullopt;
  std::string_view b64 = hash.substr(7);
  // Tolerate the '=' padding some generators leave in.
  while (!b64.empty() && b64.back() == '=') b64.remove_suffix(1);
  if (b64.size() != 43) return std::nullopt;  // ceil(32 * 4 / 3)
  std::array<u8, 32> out{};
  u32 acc = 0;
  int bits = 0;
  std::size_t n = 0;
  for (char c : b64) {
    int v = b64url_value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<u32>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n == out.size()) return std::nullopt;
      out[n++] = static_cast<u8>(acc >> bits);
    }
  }
  if (n != out.size()) return std::nullopt;
  return out;
}

bool is_record_file(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view dir = path.substr(0, slash);
  std::string_view base = path.substr(slash + 1);
  constexpr std::string_view kSuffix = ".dist-info";
  if (dir.find('/') != std::string_view::npos || dir.size() <= kSuffix.size() ||
      dir.substr(dir.size() - kSuffix.size()) != kSuffix)
    return false;
  return base == "RECORD" || base == "RECORD.jws" || base == "RECORD.p7s";
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text,
                                                const std::string& file) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  std::size_t i = 0;
  bool row_has_content = false;
  auto end_row = [&] {
    if (row_has_content) {
      row.push_back(std::move(field));
      rows.push_back(std::move(row));
    }
    row.clear();
    field.clear();
    row_has_content = false;
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '"' && field.empty()) {
      // A quoted field: runs to the next quote not followed by a quote.
      std::size_t start = i++;
      row_has_content = true;
      while (true) {
        if (i >= text.size())
          throw_format(file, start, "unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\n' &&
          text[i] != '\r')
        throw_format(file, i, "unexpected character after a quoted field");
      continue;
    }
    if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      row_has_content = true;
      ++i;
    } else if (c == '\n' || c == '\r') {
      end_row();
      i += (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
    } else {
      field += c;
      row_has_content = true;
      ++i;
    }
  }
  end_row();
  return rows;
}

std::string format_csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string& f = fields[i];
    bool quote = f.find_first_of(",\"\r\n") != std::string::npos ||
                 (fields.size() == 1 && f.empty());
    if (!quote) {
      out += f;
      continue;
    }
    out += '"';
    for (char c : f) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

Record Record::parse(std::string_view text, const std::string& file) {
  Record r;
  std::size_t n = 0;
  for (auto& fields : parse_csv(text, file)) {
    ++n;
    if (fields.size() != 3)
      throw Error(Errc::format, file,
                  "row " + std::to_string(n) + ": expected 3 fields, found " +
                      std::to_string(fields.size()));
    RecordRow row{std::move(fields[0]), std::move(fields[1]), std::nullopt};
    if (row.path.empty())
      throw Error(Errc::format, file,
                  "row " + std::to_string(n) + ": empty path");
    const std::string& size = fields[2];
    if (!size.empty()) {
      u64 v = 0;
      auto [end, ec] =
          std::from_chars(size.data(), size.data() + size.size(), v);
      if (ec != std::errc() || end != size.data() + size.size())
        throw Error(Errc::format, file,
                    "row " + std::to_string(n) + " (" + row.path + "): size '" +
                        size + "' is not a non-negative integer");
      row.size = v;
    }
    r.rows_.push_back(std::move(row));
  }
  return r;
}

std::string Record::format() const {
  std::string out;
  for (const auto& row : rows_)
    out += format_csv_row(
        {row.path, row.hash, row.size ? std::to_string(*row.size) : ""});
  return out;
}

const RecordRow* Record::find(std::string_view path) const {
  for (const auto& row : rows_)
    if (row.path == path) return &row;
  return nullptr;
}

}  // namespace libpkg::wheel
