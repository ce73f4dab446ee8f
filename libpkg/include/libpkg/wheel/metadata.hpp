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

/// An ordered list of `Key: value` header fields. Keys compare
/// case-insensitively (as email.parser does); continuation lines (leading
/// whitespace) are folded into the previous value with '\n'.
class HeaderFields {
 public:
  /// `file` names the source in errors (e.g. "x.whl:pkg.dist-info/WHEEL").
  /// Parses the header block up to the first blank line; throws
  /// Error(Errc::format) naming `file` and the byte offset on a continuation
  /// line before the first field or a line that is not `Key: value`.
  static HeaderFields parse(std::string_view text, const std::string& file);

  /// "Key: value\n" per field, in order (continuations re-indented by 8), then
  /// the blank line that ends the block; never throws.
  std::string format() const;

  /// The value of the first `key` field (case-insensitive), or nullopt; never
  /// throws.
  std::optional<std::string> get(std::string_view key) const;  // first
  /// The values of every `key` field, in order; never throws.
  std::vector<std::string> get_all(std::string_view key) const;
  /// Replaces the first `key` field in place and drops any others; appends
  /// when absent.
  void set(std::string_view key, std::string value);
  /// Appends a `key` field after every other field; never throws.
  void add(std::string key, std::string value);
  /// Drops every `key` field; never throws.
  void remove(std::string_view key);
  /// Replaces all `key` fields by `values`, at the position of the first one
  /// (or at the end).
  void replace_all(std::string_view key,
                   const std::vector<std::string>& values);

  /// All fields in order, as (key, value) pairs; never throws.
  const std::vector<std::pair<std::string, std::string>>& fields() const {
    return fields_;
  }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

/// The WHEEL file.
class WheelFile {
 public:
  /// Parses WHEEL `text`; throws Error(Errc::format) naming `file` as
  /// HeaderFields::parse does, and keeps `file` for errors of tags().
  static WheelFile parse(std::string_view text, const std::string& file);
  /// A new WHEEL for `tags` (Wheel-Version 1.0).
  static WheelFile make(std::string generator, bool root_is_purelib,
                        const std::vector<WheelTag>& tags,
                        std::optional<std::string> build = std::nullopt);
  /// The WHEEL text, as HeaderFields::format writes it; never throws.
  std::string format() const { return fields_.format(); }

  /// The Wheel-Version field, or nullopt.
  std::optional<std::string> wheel_version() const {
    return fields_.get("Wheel-Version");
  }
  /// The Generator field, or nullopt.
  std::optional<std::string> generator() const {
    return fields_.get("Generator");
  }
  /// Whether Root-Is-Purelib is "true" (case-insensitive); nullopt when absent.
  std::optional<bool> root_is_purelib() const;
  /// The Build field, or nullopt.
  std::optional<std::string> build() const { return fields_.get("Build"); }
  /// The Tag lines parsed; throws Errc::format naming `file` on a malformed
  /// line (not exactly three '-'-separated non-empty parts).
  std::vector<WheelTag> tags() const;
  /// Sorted unique python/abi/platform sets over all Tag lines, as `wheel
  /// pack` computes the file name's tag part.
  /// Throws as tags() does.
  std::vector<std::string> python_tags() const;
  /// The abi set, as python_tags(); throws as tags() does.
  std::vector<std::string> abi_tags() const;
  /// The platform set, as python_tags(); throws as tags() does.
  std::vector<std::string> platform_tags() const;

  /// One Tag line per tag, in the given order, where the old ones were.
  void set_tags(const std::vector<WheelTag>& tags);
  /// Sets the Build field, or removes it when `build` is empty/unset.
  void set_build(const std::optional<std::string>& build);

  /// The header fields, for keys this class has no accessor for.
  HeaderFields& fields() { return fields_; }
  const HeaderFields& fields() const { return fields_; }

 private:
  std::string file_;
  HeaderFields fields_;
};

/// Name and Version of a METADATA (or PKG-INFO) text: the first occurrence of
/// each in the header block. Throws Errc::format naming `file` when missing.
struct CoreMetadata {
  std::string name;
  std::string version;
};
/// Reads Name and Version as CoreMetadata says; throws Error(Errc::format)
/// naming `file` when either is missing.
CoreMetadata read_core_metadata(std::string_view text, const std::string& file);

/// `text` with the value of its Version header replaced by `version`; every
/// other byte (other headers, line endings, the body) is kept.
/// Throws Error(Errc::format) naming `file` when the header block has no
/// Version field.
std::string rewrite_metadata_version(std::string_view text,
                                     std::string_view version,
                                     const std::string& file);

}  // namespace libpkg::wheel
