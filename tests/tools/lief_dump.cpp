// SPDX-License-Identifier: BSD-3-Clause
// lief_dump FILE...: an independent second ELF reader for the cross-checks.
//
// Prints a JSON array with one object per file, using the key names and
// semantics of `pkgtool inspect --json` as far as LIEF 0.9 exposes them:
//   file, class, endian, machine, type, interpreter, soname, needed, rpath,
//   runpath, flags_raw, flags_1_raw, symbols {defined, undefined},
//   version_needs [{file, versions}]
// A file LIEF cannot parse yields {"file": ..., "error": "..."}; the exit
// status is 1 if any file failed, 0 otherwise.
//
// Only what LIEF itself reads is reported (no fallback to our own code), so
// that a disagreement with pkgtool points at one of the two readers. Machine
// names are mapped from the e_machine number to pkgtool's spelling here,
// since that mapping is a naming convention, not something to cross-check.
//
// LIEF 0.9 parses the whole file (relocations, symbols, sections), which is
// slow and memory-hungry on very large libraries: callers keep it to
// normal-sized files.
#include <LIEF/ELF.hpp>
#include <LIEF/exception.hpp>
#include <LIEF/logging.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace E = LIEF::ELF;

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          // Bytes >= 0x80 pass through; the reader decodes with
          // errors="surrogateescape"/"replace" as it sees fit.
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string opt(const std::optional<std::string>& v) {
  return v ? quote(*v) : "null";
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + quote(v[i]);
  return out + "]";
}

// Same spelling as libpkg's elf::machine_name.
std::string machine_name(uint64_t m) {
  switch (m) {
    case 3:
      return "i386";
    case 62:
      return "x86_64";
    case 183:
      return "aarch64";
    case 40:
      return "arm";
    case 20:
      return "ppc";
    case 21:
      return "ppc64";
    case 22:
      return "s390";
    case 8:
      return "mips";
    case 243:
      return "riscv";
    case 258:
      return "loongarch";
    case 2:
      return "sparc";
    case 43:
      return "sparcv9";
    case 50:
      return "ia64";
    case 4:
      return "m68k";
    case 42:
      return "sh";
    case 15:
      return "parisc";
    case 41:
      return "alpha";
    case 191:
      return "tilegx";
    default:
      return "unknown";
  }
}

std::string type_name(E::E_TYPE t) {
  switch (t) {
    case E::E_TYPE::ET_NONE:
      return "NONE";
    case E::E_TYPE::ET_REL:
      return "REL";
    case E::E_TYPE::ET_EXEC:
      return "EXEC";
    case E::E_TYPE::ET_DYN:
      return "DYN";
    case E::E_TYPE::ET_CORE:
      return "CORE";
    default:
      return "unknown";
  }
}

// e_shnum from the raw header: LIEF 0.9's automatic .dynsym sizing (from
// the hash tables) undercounts some files (0 for libicuuc.so.72), so ask it
// to size .dynsym from the section header when there is one, and from the
// hash tables only for files without section headers.
bool has_section_headers(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return true;
  unsigned char h[64] = {};
  size_t n = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  if (n < 52) return true;
  bool is64 = h[4] == 2, le = h[5] == 1;
  size_t off = is64 ? 0x3C : 0x30;
  unsigned shnum = le ? (h[off] | h[off + 1] << 8) : (h[off] << 8 | h[off + 1]);
  return shnum != 0;
}

std::string dump(const std::string& path) {
  std::unique_ptr<E::Binary> bin = E::Parser::parse(
      path, has_section_headers(path) ? E::DYNSYM_COUNT_METHODS::COUNT_SECTION
                                      : E::DYNSYM_COUNT_METHODS::COUNT_HASH);
  if (!bin) throw std::runtime_error("LIEF returned no binary");
  const E::Header& hdr = bin->header();

  std::optional<std::string> interpreter, soname, rpath, runpath;
  std::vector<std::string> needed;
  std::optional<uint64_t> flags, flags_1;
  for (const E::DynamicEntry& entry : bin->dynamic_entries()) {
    switch (entry.tag()) {
      case E::DYNAMIC_TAGS::DT_NEEDED:
        needed.push_back(
            dynamic_cast<const E::DynamicEntryLibrary&>(entry).name());
        break;
      case E::DYNAMIC_TAGS::DT_SONAME:
        // First one wins, as for ld.so and pkgtool.
        if (!soname)
          soname = dynamic_cast<const E::DynamicSharedObject&>(entry).name();
        break;
      case E::DYNAMIC_TAGS::DT_RPATH:
        if (!rpath)
          rpath = dynamic_cast<const E::DynamicEntryRpath&>(entry).rpath();
        break;
      case E::DYNAMIC_TAGS::DT_RUNPATH:
        if (!runpath)
          runpath =
              dynamic_cast<const E::DynamicEntryRunPath&>(entry).runpath();
        break;
      case E::DYNAMIC_TAGS::DT_FLAGS:
        if (!flags) flags = entry.value();
        break;
      case E::DYNAMIC_TAGS::DT_FLAGS_1:
        if (!flags_1) flags_1 = entry.value();
        break;
      default:
        break;
    }
  }
  if (bin->has_interpreter()) interpreter = bin->interpreter();

  // .dynsym without the null entry at index 0 (LIEF keeps it in the list).
  unsigned long long defined = 0, undefined = 0;
  bool first = true;
  for (const E::Symbol& sym : bin->dynamic_symbols()) {
    if (first) {
      first = false;
      if (sym.name().empty() && sym.shndx() == 0 && sym.value() == 0) continue;
    }
    if (sym.shndx() != 0)
      ++defined;
    else if (!sym.name().empty())
      ++undefined;
  }

  std::string needs = "[";
  bool first_need = true;
  for (const E::SymbolVersionRequirement& req :
       bin->symbols_version_requirement()) {
    std::vector<std::string> versions;
    for (const E::SymbolVersionAuxRequirement& aux : req.auxiliary_symbols())
      versions.push_back(aux.name());
    needs += std::string(first_need ? "" : ", ") +
             "{\"file\": " + quote(req.name()) +
             ", \"versions\": " + list(versions) + "}";
    first_need = false;
  }
  needs += "]";

  std::string out = "{";
  out += "\"file\": " + quote(path);
  out += ", \"class\": " +
         quote(hdr.identity_class() == E::ELF_CLASS::ELFCLASS64 ? "ELF64"
                                                                : "ELF32");
  out +=
      ", \"endian\": " +
      quote(hdr.identity_data() == E::ELF_DATA::ELFDATA2MSB ? "big" : "little");
  out += ", \"machine\": " +
         quote(machine_name(static_cast<uint64_t>(hdr.machine_type())));
  out += ", \"type\": " + quote(type_name(hdr.file_type()));
  out += ", \"interpreter\": " + opt(interpreter);
  out += ", \"soname\": " + opt(soname);
  out += ", \"needed\": " + list(needed);
  out += ", \"rpath\": " + opt(rpath);
  out += ", \"runpath\": " + opt(runpath);
  out += ", \"flags_raw\": " +
         (flags ? std::to_string(*flags) : std::string("null"));
  out += ", \"flags_1_raw\": " +
         (flags_1 ? std::to_string(*flags_1) : std::string("null"));
  out += ", \"symbols\": {\"defined\": " + std::to_string(defined) +
         ", \"undefined\": " + std::to_string(undefined) + "}";
  out += ", \"version_needs\": " + needs;
  out += "}";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: lief_dump FILE...\n");
    return 2;
  }
  LIEF::Logger::disable();
  int rc = 0;
  std::string out = "[";
  for (int i = 1; i < argc; ++i) {
    std::string path = argv[i];
    std::string obj;
    try {
      obj = dump(path);
    } catch (const std::exception& e) {
      obj =
          "{\"file\": " + quote(path) + ", \"error\": " + quote(e.what()) + "}";
      rc = 1;
    }
    out += (i > 1 ? ",\n " : "") + obj;
  }
  out += "]\n";
  std::fputs(out.c_str(), stdout);
  return rc;
}
