// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/cppdist/naming.hpp"

#include <fmt/format.h>

#include <cctype>

#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::cppdist {
namespace {

constexpr std::string_view kAbiPrefix = "cxx11-abi-";
constexpr std::string_view kVariants[] = {
    "shared-with-deps", "shared-without-deps", "static-with-deps",
    "static-without-deps"};

// The part between "libtorch-" and "-<version>": ABI prefix and variant on
// Linux, "macos[-arch]" on macOS.
std::string flavour(const LibtorchName& n) {
  if (n.platform == DistPlatform::macos) {
    return n.macos_arch.empty() ? "macos" : "macos-" + n.macos_arch;
  }
  return std::string(n.cxx11_abi ? kAbiPrefix : "") + n.variant.name();
}

void check_version(const LibtorchName& n) {
  if (n.version.empty()) {
    throw Error(Errc::usage, "libtorch", "the version is empty");
  }
  for (char c : n.version) {
    // A '/' or '-' would make the name ambiguous to parse (the variant and
    // the version are separated by '-').
    if (c == '/' || c == '-' || std::isspace(static_cast<unsigned char>(c))) {
      throw Error(Errc::usage, "libtorch",
                  fmt::format("version '{}' contains '{}'", n.version, c));
    }
  }
  if (n.platform == DistPlatform::macos && !n.macos_arch.empty() &&
      n.macos_arch != "x86_64" && n.macos_arch != "arm64") {
    throw Error(Errc::usage, "libtorch",
                fmt::format("macOS architecture '{}' is not x86_64 or arm64",
                            n.macos_arch));
  }
}

std::string replace_all(std::string s, std::string_view from,
                        std::string_view to) {
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos;
       pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

}  // namespace

LibtorchVariant LibtorchVariant::parse(std::string_view text) {
  for (std::string_view v : kVariants) {
    if (text == v) {
      return {v.starts_with("shared"), !v.ends_with("without-deps")};
    }
  }
  throw Error(Errc::usage, "libtorch",
              fmt::format("unknown variant '{}' (expected one of {})", text,
                          fmt::join(kVariants, ", ")));
}

std::string LibtorchVariant::name() const {
  return fmt::format("{}-{}-deps", shared ? "shared" : "static",
                     with_deps ? "with" : "without");
}

std::string zip_name(const LibtorchName& name) {
  check_version(name);
  return fmt::format("libtorch-{}-{}.zip", flavour(name), name.version);
}

std::vector<std::string> latest_names(const LibtorchName& name) {
  check_version(name);
  std::vector<std::string> out{
      fmt::format("libtorch-{}-latest.zip", flavour(name))};
  if (name.platform == DistPlatform::macos && name.macos_arch == "x86_64") {
    out.push_back("libtorch-macos-latest.zip");
  }
  return out;
}

std::string debug_zip_name(const LibtorchName& name, u32 crc) {
  check_version(name);
  return fmt::format("debug-libtorch-{}-{}-{:08x}.zip", flavour(name),
                     name.version, crc);
}

std::string debug_wheel_zip_name(std::string_view wheel, u32 crc) {
  if (wheel.ends_with(".whl")) wheel.remove_suffix(4);
  if (wheel.empty() || wheel.find('/') != std::string_view::npos) {
    throw Error(Errc::usage, std::string(wheel),
                "not a wheel file name (expected NAME-VERSION-TAGS.whl)");
  }
  return fmt::format("debug-whl-libtorch-{}-{:08x}.zip", wheel, crc);
}

LibtorchName parse_zip_name(std::string_view file_name) {
  std::string name = replace_all(std::string(file_name), "%2B", "+");
  name = replace_all(std::move(name), "%2b", "+");
  auto fail = [&](std::string_view why) -> Error {
    return Error(Errc::format, std::string(file_name),
                 fmt::format("not a libtorch zip name: {}", why));
  };
  std::string_view rest = name;
  if (!rest.starts_with("libtorch-")) throw fail("no 'libtorch-' prefix");
  if (!rest.ends_with(".zip")) throw fail("no '.zip' suffix");
  rest.remove_prefix(9);
  rest.remove_suffix(4);

  LibtorchName out;
  if (rest.starts_with("macos-")) {
    out.platform = DistPlatform::macos;
    rest.remove_prefix(6);
    for (std::string_view arch : {"x86_64-", "arm64-"}) {
      if (rest.starts_with(arch)) {
        out.macos_arch = std::string(arch.substr(0, arch.size() - 1));
        rest.remove_prefix(arch.size());
      }
    }
  } else {
    out.cxx11_abi = rest.starts_with(kAbiPrefix);
    if (out.cxx11_abi) rest.remove_prefix(kAbiPrefix.size());
    bool found = false;
    for (std::string_view v : kVariants) {
      if (rest.starts_with(v) && rest.size() > v.size() &&
          rest[v.size()] == '-') {
        out.variant = LibtorchVariant::parse(v);
        rest.remove_prefix(v.size() + 1);
        found = true;
        break;
      }
    }
    if (!found) {
      throw fail(fmt::format("no variant (one of {}) after the ABI prefix",
                             fmt::join(kVariants, ", ")));
    }
  }
  if (rest.empty()) throw fail("no version");
  out.version = std::string(rest);
  if (out.version == "latest") throw fail("a '-latest' copy has no version");
  try {
    check_version(out);
  } catch (const Error& e) {
    throw fail(e.message());
  }
  return out;
}

std::string url_escape(std::string_view file_name) {
  return replace_all(std::string(file_name), "+", "%2B");
}

std::optional<u32> debuglink_crc(const std::filesystem::path& path) {
  elf::ElfFile file = elf::ElfFile::open(path);
  std::optional<elf::SectionHeader> section = file.section(".gnu_debuglink");
  if (!section) return std::nullopt;
  // Layout: NUL-terminated file name, padding to 4, then the 4-byte CRC.
  if (section->size < 8 || section->size % 4 != 0) {
    throw_format(file.name(), section->offset,
                 fmt::format(".gnu_debuglink is {} bytes; expected a name, "
                             "padding to 4 and a 4-byte CRC",
                             section->size));
  }
  std::span<const u8> bytes = file.bytes().range(
      section->offset + section->size - 4, 4, ".gnu_debuglink CRC");
  u32 le = u32{bytes[0]} | u32{bytes[1]} << 8 | u32{bytes[2]} << 16 |
           u32{bytes[3]} << 24;
  u32 be = u32{bytes[3]} | u32{bytes[2]} << 8 | u32{bytes[1]} << 16 |
           u32{bytes[0]} << 24;
  return file.is_little_endian() ? le : be;
}

}  // namespace libpkg::cppdist
