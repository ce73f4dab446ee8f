// SPDX-License-Identifier: BSD-3-Clause
// The text half of `pkgtool inspect` on Mach-O files: the library's JSON
// (libpkg/abi/inspect.hpp) drawn as lines, per slice.
#include <fmt/format.h>

#include "libpkg/abi/inspect.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

bool looks_like_macho(const std::string& file) {
  return libpkg::abi::is_macho_file(file);
}

void print_macho_summary(const nlohmann::json& j) {
  fmt::print("{}:\n", j["file"].get<std::string>());
  fmt::print("  format:      Mach-O{}\n", j["fat"].get<bool>() ? " (fat)" : "");
  for (const auto& s : j["slices"]) {
    fmt::print("  slice {} ({}-bit {}, 0x{:x}+0x{:x})\n",
               s["arch"].get<std::string>(), s["bits"].get<int>(),
               s["type"].get<std::string>(), s["offset"].get<uint64_t>(),
               s["size"].get<uint64_t>());
    if (!s["parsed"].get<bool>()) {
      fmt::print("    (32-bit or big-endian: listed only)\n");
      continue;
    }
    if (!s["minos"].is_null())
      fmt::print("    minos:     {} (sdk {})\n", s["minos"].get<std::string>(),
                 s["sdk"].get<std::string>());
    if (!s["id"].is_null())
      fmt::print("    id:        {}\n", s["id"].get<std::string>());
    for (const auto& d : s["dylibs"])
      fmt::print("    dylib:     {} ({})\n", d["name"].get<std::string>(),
                 d["kind"].get<std::string>());
    for (const auto& r : s["rpaths"])
      fmt::print("    rpath:     {}\n", r.get<std::string>());
    fmt::print("    padding:   {} bytes free\n",
               s["free_padding"].get<uint64_t>());
    fmt::print("    fixups:    {}\n", s["fixups"].get<std::string>());
    const auto& sig = s["code_signature"];
    if (sig["present"].get<bool>())
      fmt::print("    signature: {} bytes at 0x{:x}\n",
                 sig["datasize"].get<uint64_t>(),
                 sig["dataoff"].get<uint64_t>());
    else
      fmt::print("    signature: none\n");
  }
}

}  // namespace pkgtool
