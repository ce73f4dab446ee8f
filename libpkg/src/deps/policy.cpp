// Policy tags, the libraries a policy allows, and blocker descriptions.
// (Parsing and validation: policy_set.cpp; the evaluation: evaluate.cpp.)
#include "libpkg/deps/policy.hpp"

#include <fmt/format.h>

namespace libpkg::deps {

std::string Policy::tag(std::string_view arch) const {
  return fmt::format("{}_{}", name, arch);
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
      out.push_back(fmt::format("{}_{}", alias, arch));
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
  }
  return file + ": " + detail;
}

}  // namespace libpkg::deps
