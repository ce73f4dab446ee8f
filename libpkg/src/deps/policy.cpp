// SPDX-License-Identifier: BSD-3-Clause
// Policy tags, the libraries a policy allows, and blocker descriptions.
// (Parsing and validation: policy_set.cpp; the evaluation: evaluate.cpp.)
#include "libpkg/deps/policy.hpp"

#include <fmt/format.h>

namespace libpkg::deps {

// Android tags name the NDK ABI, not the machine (PEP 738):
// android_21_arm64_v8a, android_21_x86_64.
std::string_view policy_tag_arch(Libc libc, std::string_view arch) {
  if (libc != Libc::bionic) return arch;
  if (arch == "aarch64") return "arm64_v8a";
  if (arch == "armv7l") return "armeabi_v7a";
  if (arch == "i686") return "x86";
  return arch;
}

std::string Policy::tag(std::string_view arch) const {
  return fmt::format("{}_{}", name, policy_tag_arch(libc, arch));
}

// Aliases are legacy names (manylinux1, manylinux2010, manylinux2014) that
// PEP 600 defines only for the architectures their PEPs covered; the data
// lists exactly those architectures for the aliased policies, so an alias
// tag is produced only when the policy supports `arch` (no
// "manylinux1_aarch64").
std::vector<std::string> Policy::tags(std::string_view arch) const {
  std::vector<std::string> out{tag(arch)};
  if (symbol_versions.contains(std::string(arch))) {
    for (const auto& alias : aliases)
      out.push_back(fmt::format("{}_{}", alias, policy_tag_arch(libc, arch)));
  }
  return out;
}

bool Policy::allows_library(std::string_view soname) const {
  if (lib_whitelist.contains(std::string(soname))) return true;
  if (libc == Libc::musl) {
    // The musl policies whitelist "libc.so"; on a musl system the C library
    // is needed as libc.musl-<arch>.so.1 (Alpine's soname; <arch> is musl's
    // name such as x86 or armv7, not always the policy's), and the loader
    // ld-musl-<arch>.so.1 is the same file.
    bool has_libc = lib_whitelist.contains("libc.so");
    return has_libc &&
           ((soname.starts_with("libc.musl-") && soname.ends_with(".so.1")) ||
            (soname.starts_with("ld-musl-") && soname.ends_with(".so.1")));
  }
  if (libc == Libc::bionic) return false;  // the NDK libraries are listed
  // The glibc dynamic loader under its per-architecture names
  // (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1, ld-linux.so.2, ...;
  // ld64.so.1/2 on s390x and ppc64).
  return soname.starts_with("ld-linux") || soname == "ld64.so.1" ||
         soname == "ld64.so.2";
}

const char* blocker_kind_name(BlockerKind kind) {
  switch (kind) {
    case BlockerKind::symbol_version:
      return "symbol_version";
    case BlockerKind::library:
      return "library";
    case BlockerKind::blacklisted_symbol:
      return "blacklisted_symbol";
    case BlockerKind::missing_library:
      return "missing_library";
    case BlockerKind::python_abi:
      return "python_abi";
    case BlockerKind::libpython:
      return "libpython";
    case BlockerKind::isa_extension:
      return "isa_extension";
  }
  return "unknown";
}

std::string Blocker::message() const {
  switch (kind) {
    case BlockerKind::symbol_version: {
      std::string out = fmt::format("{}: needs {} from {}", file, detail, from);
      if (!symbols.empty()) {
        out +=
            fmt::format(" ({} symbol{}, e.g. {}", symbol_count,
                        symbol_count == 1 ? "" : "s", fmt::join(symbols, ", "));
        out += ')';
      }
      return out;
    }
    case BlockerKind::library:
      return fmt::format("{}: links {} ({}), which the policy does not allow",
                         file, detail, from);
    case BlockerKind::blacklisted_symbol:
      return fmt::format("{}: references {} from {}, which the policy forbids",
                         file, detail, from);
    case BlockerKind::missing_library:
      return fmt::format("{}: needs {}, which was not found", file, detail);
    case BlockerKind::python_abi:
      return fmt::format(
          "{}: references {} ({}), which no manylinux "
          "interpreter provides (PEP 513)",
          file, detail, from);
    case BlockerKind::libpython:
      return fmt::format(
          "{}: needs {}: extensions must not link libpython (the "
          "interpreter provides it; repair removes this NEEDED)",
          file, detail);
    case BlockerKind::isa_extension:
      return fmt::format(
          "{}: requires the {} instruction set (GNU property note), above "
          "the x86-64 baseline the policy promises "
          "(--disable-isa-ext-check ignores it)",
          file, detail);
  }
  return file + ": " + detail;
}

}  // namespace libpkg::deps
