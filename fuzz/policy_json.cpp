// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the platform policy loader (deps::PolicySet::parse:
// manylinux, musllinux and android policies in auditwheel's JSON format).
// The libc family comes from the input's size, so the real policy files
// are seeds as they are. Any input must load or fail with libpkg::Error
// naming the file; a loaded set must answer its queries (tags, lookups by
// name and alias, families) without throwing. Anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/deps/policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using libpkg::deps::Libc;
  using libpkg::deps::PolicySet;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Libc libcs[] = {Libc::glibc, Libc::musl, Libc::bionic};
  const Libc libc = libcs[size % 3];
  try {
    PolicySet set = PolicySet::parse(text, "fuzz-input", libc);
    if (set.policies().empty()) std::abort();  // "linux" is always there
    for (const auto& policy : set.policies()) {
      for (const auto& [arch, versions] : policy.symbol_versions) {
        for (const std::string& tag : policy.tags(arch))
          if (set.find(tag) == nullptr) std::abort();  // its own tag
      }
      if (set.find(policy.name) == nullptr) std::abort();
      for (const std::string& alias : policy.aliases) set.find(alias);
      policy.allows_library("libc.so.6");
    }
    set.family(libc);
  } catch (const libpkg::Error& e) {
    if (e.file() != "fuzz-input") std::abort();  // every error names the file
  }
  return 0;
}
