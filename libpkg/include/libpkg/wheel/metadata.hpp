// SPDX-License-Identifier: BSD-3-Clause
// The text files of a .dist-info directory that packaging tools rewrite:
// WHEEL (email-header style, `Key: value` lines) and METADATA (core metadata:
// headers, a blank line, then an optional free-form body).
//
// Rewrites are surgical: unknown keys, their order and every byte we don't
// change survive, so a retagged wheel differs from its input only where it
// must.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libpkg/wheel/name.hpp"

namespace libpkg::wheel {

// An ordered list of `Key: value` header fields. Keys compare
// case-insensitively (as email.parser does); continuation lines (leading
// whitespace) are folded into the previous value with '\n'.
class HeaderFields {
 public:
  // `file` names the source in errors (e.g. "x.whl:pkg.dist-info/WHEEL").
  static HeaderFields parse(std::string_view text, const std::string& file);

  // "Key: value\n" per field, in order (continuations re-indented by 8).
  std::string format() const;

  std::optional<std::string> get(std::string_view key) const;  // first
  std::vector<std::string> get_all(std::string_view key) const;
  // Replaces the first `key` field in place and drops any others; appends
  // when absent.
  void set(std::string_view key, std::string value);
  void add(std::string key, std::string value);
  void remove(std::string_view key);
  // Replaces all `key` fields by `values`, at the position of the first one
  // (or at the end).
  void replace_all(std::string_view key,
                   const std::vector<std::string>& values);

  const std::vector<std::pair<std::string, std::string>>& fields() const {
    return fields_;
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// The WHEEL file.
class WheelFile {
 public:
  static WheelFile parse(std::string_view text, const std::string& file);
  // A new WHEEL for `tags` (Wheel-Version 1.0).
  static WheelFile make(std::string generator, bool root_is_purelib,
                        const std::vector<WheelTag>& tags,
                        std::optional<std::string> build = std::nullopt);
  std::string format() const { return fields_.format(); }

  std::optional<std::string> wheel_version() const {
    return fields_.get("Wheel-Version");
  }
  std::optional<std::string> generator() const {
    return fields_.get("Generator");
  }
  std::optional<bool> root_is_purelib() const;
  std::optional<std::string> build() const { return fields_.get("Build"); }
  // The Tag lines parsed; throws Errc::format naming `file` on a malformed
  // line (not exactly three '-'-separated non-empty parts).
  std::vector<WheelTag> tags() const;
  // Sorted unique python/abi/platform sets over all Tag lines, as `wheel
  // pack` computes the file name's tag part.
  std::vector<std::string> python_tags() const;
  std::vector<std::string> abi_tags() const;
  std::vector<std::string> platform_tags() const;

  // One Tag line per tag, in the given order, where the old ones were.
  void set_tags(const std::vector<WheelTag>& tags);
  // Sets the Build field, or removes it when `build` is empty/unset.
  void set_build(const std::optional<std::string>& build);

  HeaderFields& fields() { return fields_; }
  const HeaderFields& fields() const { return fields_; }

 private:
  std::string file_;
  HeaderFields fields_;
};

// Name and Version of a METADATA (or PKG-INFO) text: the first occurrence of
// each in the header block. Throws Errc::format naming `file` when missing.
struct CoreMetadata {
  std::string name;
  std::string version;
};
CoreMetadata read_core_metadata(std::string_view text, const std::string& file);

// `text` with the value of its Version header replaced by `version`; every
// other byte (other headers, line endings, the body) is kept.
std::string rewrite_metadata_version(std::string_view text,
                                     std::string_view version,
                                     const std::string& file);

}  // namespace libpkg::wheel
