// SPDX-License-Identifier: BSD-3-Clause
// The Mach-O half of `pkgtool inspect`: the reader's facts, per slice.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

namespace lm = libpkg::macho;

bool looks_like_macho(const std::string& file) {
  // Only a regular file is opened here: opening a FIFO would block, and the
  // ELF path refuses FIFOs, devices and directories with a clear error.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  std::ifstream in(file, std::ios::binary);
  unsigned char head[4] = {};
  if (!in.read(reinterpret_cast<char*>(head), 4)) return false;
  return lm::MachOFile::has_magic(head);
}

namespace {

nlohmann::json slice_json(const lm::Slice& s) {
  nlohmann::json j;
  j["arch"] = s.arch();
  j["offset"] = s.offset();
  j["size"] = s.size();
  j["bits"] = s.is_64() ? 64 : 32;
  j["type"] = lm::filetype_name(s.filetype());
  j["parsed"] = s.parsed();
  if (!s.parsed()) return j;
  auto pv = s.platform_version();
  j["platform"] = pv ? nlohmann::json(pv->platform) : nlohmann::json(nullptr);
  j["minos"] = pv ? nlohmann::json(lm::version_string(pv->minos)) : nullptr;
  j["sdk"] = pv ? nlohmann::json(lm::version_string(pv->sdk)) : nullptr;
  j["version_command"] =
      pv ? nlohmann::json(lm::command_name(pv->command)) : nullptr;
  auto id = s.id();
  j["id"] = id ? nlohmann::json(std::string(*id)) : nullptr;
  nlohmann::json dylibs = nlohmann::json::array();
  for (const auto& d : s.dylibs())
    dylibs.push_back(
        {{"name", std::string(d.name)},
         {"kind", lm::dylib_kind_name(d.kind)},
         {"ordinal", d.ordinal},
         {"current_version", lm::version_string(d.current_version)},
         {"compatibility_version",
          lm::version_string(d.compatibility_version)}});
  j["dylibs"] = dylibs;
  nlohmann::json rpaths = nlohmann::json::array();
  for (const auto& r : s.rpaths()) rpaths.push_back(std::string(r.path));
  j["rpaths"] = rpaths;
  if (auto u = s.uuid()) {
    std::string hex;
    for (size_t i = 0; i < u->size(); ++i)
      hex += fmt::format("{}{:02X}",
                         (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "",
                         (*u)[i]);
    j["uuid"] = hex;
  } else {
    j["uuid"] = nullptr;
  }
  j["sizeofcmds"] = s.sizeofcmds();
  j["free_padding"] = s.free_padding();
  j["fixups"] = lm::fixup_format_name(s.fixup_format());
  auto sig = s.code_signature();
  j["code_signature"] = sig ? nlohmann::json{{"present", true},
                                             {"dataoff", sig->dataoff},
                                             {"datasize", sig->datasize}}
                            : nlohmann::json{{"present", false}};
  return j;
}

}  // namespace

nlohmann::json macho_summary(const std::string& file) {
  auto f = lm::MachOFile::open(file);
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : f.slices()) slices.push_back(slice_json(s));
  return {{"file", file},
          {"format", "macho"},
          {"fat", f.is_fat()},
          {"slices", slices}};
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
