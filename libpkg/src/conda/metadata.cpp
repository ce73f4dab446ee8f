// SPDX-License-Identifier: BSD-3-Clause
// CondaMetadata: JSON parsing, defaults and name checks.
#include "libpkg/conda/metadata.hpp"

#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::conda {
namespace {

using nlohmann::json;

std::string string_field(const json& j, const std::string& key,
                         const std::string& file) {
  if (!j.is_string()) {
    throw Error(Errc::format, file, "field '" + key + "' must be a string");
  }
  return j.get<std::string>();
}

std::vector<std::string> list_field(const json& j, const std::string& key,
                                    const std::string& file) {
  if (!j.is_array()) {
    throw Error(Errc::format, file,
                "field '" + key + "' must be an array of strings");
  }
  std::vector<std::string> out;
  for (const json& item : j) out.push_back(string_field(item, key, file));
  return out;
}

void check_token(const std::string& value, const char* what, bool allow_dash) {
  if (value.empty()) {
    throw Error(Errc::usage, what, std::string("empty ") + what);
  }
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || (!allow_dash && ch == '-') || ch == '/') {
      throw Error(Errc::usage, what,
                  std::string(what) + " '" + value +
                      "' contains a character conda does not allow");
    }
  }
}

}  // namespace

CondaMetadata parse_metadata_json(std::string_view text,
                                  const std::string& file) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw Error(Errc::format, file, "not a JSON object");
  }
  CondaMetadata m;
  for (const auto& [key, value] : j.items()) {
    if (key == "name") {
      m.name = string_field(value, key, file);
    } else if (key == "version") {
      m.version = string_field(value, key, file);
    } else if (key == "build" || key == "build_string") {
      m.build = string_field(value, key, file);
    } else if (key == "build_number") {
      if (!value.is_number_unsigned()) {
        throw Error(Errc::format, file,
                    "field 'build_number' must be a non-negative integer");
      }
      m.build_number = value.get<u64>();
    } else if (key == "depends") {
      m.depends = list_field(value, key, file);
    } else if (key == "constrains") {
      m.constrains = list_field(value, key, file);
    } else if (key == "license") {
      m.license = string_field(value, key, file);
    } else if (key == "license_family") {
      m.license_family = string_field(value, key, file);
    } else if (key == "summary") {
      m.summary = string_field(value, key, file);
    } else if (key == "description") {
      m.description = string_field(value, key, file);
    } else if (key == "home") {
      m.home = string_field(value, key, file);
    } else if (key == "doc_url") {
      m.doc_url = string_field(value, key, file);
    } else if (key == "dev_url") {
      m.dev_url = string_field(value, key, file);
    } else if (key == "subdir") {
      m.subdir = string_field(value, key, file);
    } else if (key == "arch") {
      m.arch = string_field(value, key, file);
    } else if (key == "platform") {
      m.platform = string_field(value, key, file);
    } else if (key == "noarch") {
      m.noarch = string_field(value, key, file);
    } else {
      throw Error(Errc::format, file, "unknown field '" + key + "'");
    }
  }
  return m;
}

void overlay_text_fields(CondaMetadata& base, const CondaMetadata& over) {
  for (auto field :
       {&CondaMetadata::name, &CondaMetadata::version, &CondaMetadata::build,
        &CondaMetadata::license, &CondaMetadata::license_family,
        &CondaMetadata::summary, &CondaMetadata::description,
        &CondaMetadata::home, &CondaMetadata::doc_url, &CondaMetadata::dev_url,
        &CondaMetadata::subdir, &CondaMetadata::arch, &CondaMetadata::platform,
        &CondaMetadata::noarch})
    if (!(over.*field).empty()) base.*field = over.*field;
}

CondaMetadata load_metadata(const std::filesystem::path& path) {
  return parse_metadata_json(read_regular_file(path), path.string());
}

CondaPlatform host_platform() {
#if defined(__x86_64__)
  return {"linux-64", "x86_64", "linux"};
#elif defined(__aarch64__)
  return {"linux-aarch64", "aarch64", "linux"};
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return {"linux-ppc64le", "ppc64le", "linux"};
#elif defined(__s390x__)
  return {"linux-s390x", "s390x", "linux"};
#elif defined(__i386__)
  return {"linux-32", "x86", "linux"};
#else
  return {"", "", ""};
#endif
}

CondaMetadata complete_metadata(CondaMetadata m) {
  check_token(m.name, "name", true);
  for (char ch : m.name) {
    if (ch >= 'A' && ch <= 'Z') {
      throw Error(Errc::usage, "name",
                  "name '" + m.name + "' must be lowercase");
    }
  }
  check_token(m.version, "version", false);
  if (m.build.empty()) m.build = std::to_string(m.build_number);
  check_token(m.build, "build", false);
  if (!m.noarch.empty() && m.noarch != "generic" && m.noarch != "python") {
    throw Error(Errc::usage, "noarch",
                "noarch must be 'generic' or 'python', got '" + m.noarch + "'");
  }
  if (!m.noarch.empty()) {
    if (m.subdir.empty()) m.subdir = "noarch";
  } else {
    CondaPlatform host = host_platform();
    if (m.subdir.empty()) m.subdir = host.subdir;
    if (m.arch.empty()) m.arch = host.arch;
    if (m.platform.empty()) m.platform = host.platform;
  }
  if (m.subdir.empty()) {
    throw Error(Errc::usage, "subdir",
                "unknown host platform: give subdir, arch and platform");
  }
  return m;
}

std::string package_stem(const CondaMetadata& meta) {
  return meta.name + "-" + meta.version + "-" + meta.build;
}

}  // namespace libpkg::conda
