// SPDX-License-Identifier: BSD-3-Clause
// The one JSON form of `pkgtool inspect` (schema in libpkg/abi/inspect.hpp),
// shared by the command line and Python's `libpkg.inspect`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "libpkg/abi/inspect.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::abi {

namespace {

namespace lm = libpkg::macho;

nlohmann::json opt(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json elf_json(const ElfSummary& s) {
  nlohmann::json j;
  j["file"] = s.file;
  j["class"] = s.elf_class;
  j["endian"] = s.endian;
  j["machine"] = s.machine;
  j["osabi"] = s.osabi;
  j["type"] = s.type;
  j["interpreter"] = opt(s.interpreter);
  j["soname"] = opt(s.soname);
  j["needed"] = s.needed;
  j["rpath"] = opt(s.rpath);
  j["runpath"] = opt(s.runpath);
  j["flags"] = s.flags;
  j["flags_1"] = s.flags_1;
  j["build_id"] = opt(s.build_id);
  j["isa_level"] = opt(s.isa_level);
  nlohmann::json maxv = nlohmann::json::object();
  for (const auto& [prefix, req] : s.max_versions)
    maxv[prefix] = {{"version", req.tag.version()},
                    {"tag", req.tag.str()},
                    {"from", req.file}};
  j["max_versions"] = maxv;
  nlohmann::json needs = nlohmann::json::array();
  for (const auto& n : s.version_needs) {
    nlohmann::json versions = nlohmann::json::array();
    for (const auto& v : n.versions) versions.push_back(std::string(v.name));
    needs.push_back({{"file", std::string(n.file)}, {"versions", versions}});
  }
  j["version_needs"] = needs;
  j["version_defs"] = s.version_defs;
  j["symbols"] = {{"defined", s.defined_symbols},
                  {"undefined", s.undefined_symbols}};
  return j;
}

// UUIDs in the 8-4-4-4-12 form dwarfdump and otool print.
std::string uuid_string(const std::array<u8, 16>& u) {
  std::string hex;
  for (size_t i = 0; i < u.size(); ++i)
    hex += fmt::format(
        "{}{:02X}", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", u[i]);
  return hex;
}

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
  auto u = s.uuid();
  j["uuid"] = u ? nlohmann::json(uuid_string(*u)) : nlohmann::json(nullptr);
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

nlohmann::json macho_json(const std::filesystem::path& file) {
  auto f = lm::MachOFile::open(file);
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : f.slices()) slices.push_back(slice_json(s));
  return {{"file", file.string()},
          {"format", "macho"},
          {"fat", f.is_fat()},
          {"slices", slices}};
}

}  // namespace

std::string to_json(const ElfSummary& summary, int indent) {
  return elf_json(summary).dump(indent);
}

bool is_macho_file(const std::filesystem::path& path) {
  // Only a regular file is opened: opening a FIFO would block, and the ELF
  // reader refuses FIFOs, devices and directories with a clear error.
  auto fd = try_open_regular(path);
  if (!fd) return false;
  u8 head[4] = {};
  try {
    if (read_full(fd.value().get(), head, path.string()) != sizeof head)
      return false;
  } catch (const Error&) {
    return false;
  }
  return lm::MachOFile::has_magic(head);
}

std::string inspect_json(const std::filesystem::path& file,
                         const elf::ElfWarningFn& warning, int indent) {
  if (is_macho_file(file)) return macho_json(file).dump(indent);
  elf::ElfReadOptions options;
  options.warning = warning;
  return to_json(summarize(elf::ElfFile::open(file, options)), indent);
}

}  // namespace libpkg::abi
