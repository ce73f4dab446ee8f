// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool patchelf ...`: patchelf's command-line syntax and output.
//
// Prints happen in patchelf's order (interpreter, soname, rpath, needed) and
// show the input's state; then all edits of a file are planned and written
// at once. Several files may follow the options; with --output there must be
// exactly one.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "atomic_links_note.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/editor.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/view.hpp"

namespace pkgtool {

namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::u8;

// The version auditwheel and conda-build probe for (`patchelf --version`
// must report >= 0.14.5): we implement 0.18's semantics for these options.
constexpr const char* kPatchelfCompat = "0.18.0";

const char* kHelp =
    "syntax: patchelf\n"
    "  [--set-interpreter FILENAME]\n"
    "  [--page-size SIZE]\n"
    "  [--print-interpreter]\n"
    "  [--print-soname]\n"
    "  [--set-soname SONAME]\n"
    "  [--set-rpath RPATH]\n"
    "  [--add-rpath RPATH]\n"
    "  [--remove-rpath]\n"
    "  [--shrink-rpath]\n"
    "  [--allowed-rpath-prefixes PREFIXES]\n"
    "  [--print-rpath]\n"
    "  [--force-rpath]\n"
    "  [--add-needed LIBRARY]\n"
    "  [--remove-needed LIBRARY]\n"
    "  [--replace-needed LIBRARY NEW_LIBRARY]\n"
    "  [--print-needed]\n"
    "  [--print-os-abi]\t\tPrints the EI_OSABI field of the ELF header\n"
    "  [--set-os-abi ABI]\t\tSets EI_OSABI (System V, Linux, FreeBSD, ...)\n"
    "  [--print-execstack]\t\tPrints whether the object requests an "
    "executable stack\n"
    "  [--set-execstack]\n"
    "  [--clear-execstack]\n"
    "  [--no-default-lib]\n"
    "  [--add-debug-tag]\n"
    "  [--clear-symbol-version SYMBOL]\n"
    "  [--rename-dynamic-symbols NAME_MAP_FILE]\tLines \"OLD NEW\"\n"
    "  [--no-sort]\t\t\tAccepted; headers are never sorted\n"
    "  [--output FILE]\n"
    "  [--in-place-atomic]\t\tRewrite via a temporary file even when the\n"
    "\t\t\t\tedit fits in place (default: patch the bytes)\n"
    "  [--debug]\n"
    "  [--version]\n"
    "  FILENAME...\n"
    "Arguments of --set-interpreter, --set-os-abi, --set-soname, --set-rpath,\n"
    "--add-rpath, --add-needed, --remove-needed, --clear-symbol-version and\n"
    "--output may be @FILE: the file's exact contents are the value.\n";

struct Args {
  bool print_interpreter = false, print_soname = false, print_rpath = false,
       print_needed = false, print_os_abi = false, print_execstack = false,
       debug = false, atomic = false;
  bool force_rpath = false;
  std::optional<std::string> output;
  libpkg::elf::EditOptions edit;
  std::vector<std::string> files;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

// patchelf 0.18: an argument "@FILE" stands for FILE's exact contents (a
// trailing newline included, as patchelf reads it).
// Read as a stream, not mapped: `--set-rpath @<(command)` names a pipe.
std::string resolve_argument(const std::string& arg) {
  if (!arg.starts_with('@')) return arg;
  std::string path = arg.substr(1);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Errc::io, path,
                fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream value;
  value << in.rdbuf();
  if (in.bad()) throw Error(Errc::io, path, "cannot read");
  return value.str();
}

// --rename-dynamic-symbols: one "OLD NEW" pair of whitespace-separated
// names per line; blank lines are skipped. Anything else (one name, three,
// the same OLD twice) is an error naming the line, never a guess.
std::vector<std::pair<std::string, std::string>> read_symbol_map(
    const std::string& path) {
  std::istringstream in(resolve_argument("@" + path));
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string from, to, extra;
    if (!(words >> from)) continue;
    if (!(words >> to) || (words >> extra))
      throw Error(Errc::usage, path,
                  fmt::format("line {}: expected \"OLD_NAME NEW_NAME\", got "
                              "'{}'",
                              n, line));
    if (!seen.insert(from).second)
      throw Error(Errc::usage, path,
                  fmt::format("line {}: '{}' is renamed twice", n, from));
    out.emplace_back(from, to);
  }
  return out;
}

// EI_OSABI names as patchelf prints them; other values print as 0xNN.
constexpr std::pair<u8, const char*> kOsAbiNames[] = {
    {0, "System V"}, {1, "HP-UX"},   {2, "NetBSD"},   {3, "Linux"},
    {4, "GNU Hurd"}, {6, "Solaris"}, {7, "AIX"},      {8, "IRIX"},
    {9, "FreeBSD"},  {10, "Tru64"},  {12, "OpenBSD"}, {13, "OpenVMS"},
};

// --set-os-abi: the printed names plus patchelf's spellings, any case,
// surrounding whitespace ignored.
u8 parse_os_abi(const std::string& value, const std::string& program) {
  std::string v = value;
  auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!v.empty() && space(v.back())) v.pop_back();
  size_t start = 0;
  while (start < v.size() && space(v[start])) ++start;
  v = v.substr(start);
  for (char& c : v) c = static_cast<char>(std::tolower(c));
  static const std::pair<const char*, u8> kAliases[] = {
      {"system-v", 0}, {"sysv", 0}, {"gnu", 3}, {"gnu-hurd", 4}, {"hurd", 4},
  };
  for (const auto& [abi, name] : kOsAbiNames) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    if (v == lower) return abi;
  }
  for (const auto& [name, abi] : kAliases)
    if (v == name) return abi;
  usage_error(program,
              fmt::format("unrecognized OS ABI '{}' (System V, HP-UX, NetBSD, "
                          "Linux, GNU Hurd, Solaris, AIX, IRIX, FreeBSD, "
                          "Tru64, OpenBSD, OpenVMS)",
                          value));
}

// `program` is how errors name the command: "patchelf" (the entry point)
// or "pkgtool patchelf".
Args parse(const std::vector<std::string>& argv, const std::string& program) {
  Args a;
  using libpkg::elf::RpathOp;
  auto need = [&](size_t& i, size_t n) -> const std::string& {
    if (i + n >= argv.size())
      usage_error(program, fmt::format("option '{}' needs {} argument{}",
                                       argv[i], n, n > 1 ? "s" : ""));
    return argv[++i];
  };
  // An option value that may be @FILE.
  auto value = [&](size_t& i) { return resolve_argument(need(i, 1)); };
  auto set_execstack = [&](bool on) {
    if (a.edit.execstack && *a.edit.execstack != on)
      usage_error(program, "--set-execstack and --clear-execstack conflict");
    a.edit.execstack = on;
  };
  auto set_rpath_op = [&](RpathOp op, const std::string& flag) {
    if (a.edit.rpath_op != RpathOp::none && a.edit.rpath_op != op)
      usage_error(
          program,
          fmt::format("'{}' conflicts with another rpath operation", flag));
    a.edit.rpath_op = op;
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--set-interpreter" || arg == "--interpreter") {
      a.edit.set_interpreter = value(i);
    } else if (arg == "--page-size") {
      const std::string& v = need(i, 1);
      char* end = nullptr;
      unsigned long long n = std::strtoull(v.c_str(), &end, 0);
      if (end == v.c_str() || *end != '\0' || n == 0 || (n & (n - 1)) != 0)
        usage_error(program,
                    fmt::format("invalid page size '{}' (a power of two)", v));
      a.edit.page_size = n;
    } else if (arg == "--print-interpreter") {
      a.print_interpreter = true;
    } else if (arg == "--print-soname") {
      a.print_soname = true;
    } else if (arg == "--set-soname") {
      a.edit.set_soname = value(i);
    } else if (arg == "--set-rpath") {
      set_rpath_op(RpathOp::set, arg);
      a.edit.rpath = value(i);
    } else if (arg == "--add-rpath") {
      set_rpath_op(RpathOp::add, arg);
      a.edit.rpath = value(i);
    } else if (arg == "--remove-rpath") {
      set_rpath_op(RpathOp::remove, arg);
    } else if (arg == "--shrink-rpath") {
      set_rpath_op(RpathOp::shrink, arg);
    } else if (arg == "--allowed-rpath-prefixes") {
      for (auto& p : split(need(i, 1), ':'))
        if (!p.empty()) a.edit.allowed_rpath_prefixes.push_back(p);
    } else if (arg == "--print-rpath") {
      a.print_rpath = true;
    } else if (arg == "--force-rpath") {
      a.force_rpath = true;
    } else if (arg == "--add-needed") {
      a.edit.add_needed.push_back(value(i));
    } else if (arg == "--remove-needed") {
      a.edit.remove_needed.push_back(value(i));
    } else if (arg == "--replace-needed") {
      const std::string& from = need(i, 2);
      const std::string& to = argv[++i];
      a.edit.replace_needed.emplace_back(from, to);
    } else if (arg == "--print-needed") {
      a.print_needed = true;
    } else if (arg == "--print-os-abi") {
      a.print_os_abi = true;
    } else if (arg == "--set-os-abi") {
      a.edit.os_abi = parse_os_abi(value(i), program);
    } else if (arg == "--print-execstack") {
      a.print_execstack = true;
    } else if (arg == "--set-execstack") {
      set_execstack(true);
    } else if (arg == "--clear-execstack") {
      set_execstack(false);
    } else if (arg == "--no-default-lib") {
      a.edit.no_default_lib = true;
    } else if (arg == "--add-debug-tag") {
      a.edit.add_debug_tag = true;
    } else if (arg == "--clear-symbol-version") {
      a.edit.clear_symbol_version.push_back(value(i));
    } else if (arg == "--no-sort") {
      // patchelf's debugging switch to keep header order: we never sort.
    } else if (arg == "--rename-dynamic-symbols") {
      for (auto& pair : read_symbol_map(need(i, 1)))
        a.edit.rename_dynamic_symbols.push_back(std::move(pair));
    } else if (arg == "--output") {
      a.output = value(i);
    } else if (arg == "--in-place-atomic") {
      a.atomic = true;
    } else if (arg == "--debug") {
      a.debug = true;
    } else if (arg == "--version") {
      fmt::print("patchelf {} (libpkg {})\n", kPatchelfCompat, LIBPKG_VERSION);
      std::exit(0);
    } else if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kHelp);
      std::exit(0);
    } else if (arg.starts_with("--")) {
      // patchelf takes anything else as a file name ("-" included).
      usage_error(program, unexpected_argument(arg));
    } else {
      a.files.push_back(arg);
    }
  }
  a.edit.rpath_tag = a.force_rpath ? libpkg::elf::RpathTag::rpath
                                   : libpkg::elf::RpathTag::runpath;
  if (a.files.empty()) usage_error(program, "missing filename");
  if (a.output && a.files.size() != 1)
    usage_error(program, "--output requires exactly one input file");
  return a;
}

void print_facts(const Args& a, const libpkg::elf::ElfFile& elf) {
  if (a.print_interpreter) {
    auto interp = elf.interpreter();
    if (!interp)
      throw Error(Errc::not_found, elf.name(),
                  "no PT_INTERP segment (the file is a shared library or "
                  "statically linked)");
    fmt::print("{}\n", *interp);
  }
  if (a.print_os_abi) {
    u8 abi = elf.bytes().data()[libpkg::elf::EI_OSABI];
    const char* name = nullptr;
    for (const auto& [value, n] : kOsAbiNames)
      if (value == abi) name = n;
    if (name)
      fmt::print("{}\n", name);
    else
      fmt::print("0x{:02X}\n", abi);
  }
  if (a.print_soname) {
    if (auto s = elf.soname()) fmt::print("{}\n", *s);
  }
  // A separate debug file keeps .dynamic as NOBITS: patchelf prints no
  // line for it (not even an empty one), and neither do we.
  auto dyn = a.print_rpath ? elf.section(".dynamic") : std::nullopt;
  bool debug_file = dyn && dyn->type == libpkg::elf::SHT_NOBITS;
  if (a.print_rpath && !debug_file) {
    auto run = elf.runpath();
    auto r = run ? run : elf.rpath();
    fmt::print("{}\n", r ? *r : std::string_view());
  }
  if (a.print_execstack) {
    // patchelf: X (PF_X set), - (clear), ? (no PT_GNU_STACK).
    char state = '?';
    for (const auto& ph : elf.program_headers()) {
      if (ph.type != libpkg::elf::PT_GNU_STACK) continue;
      state = (ph.flags & libpkg::elf::PF_X) ? 'X' : '-';
      break;
    }
    fmt::print("execstack: {}\n", state);
  }
  if (a.print_needed) {
    for (auto n : elf.needed()) fmt::print("{}\n", n);
  }
}

}  // namespace

int run_patchelf(const std::vector<std::string>& argv) {
  return run_patchelf_as(argv, "pkgtool patchelf");
}

int run_patchelf_entry(const std::vector<std::string>& argv) {
  return run_patchelf_as(argv, "patchelf");
}

int run_patchelf_as(const std::vector<std::string>& argv,
                    const std::string& program) {
  // As patchelf: no arguments at all print the syntax on stderr (patchelf
  // exits 1; our errors exit 2).
  if (argv.empty()) {
    fmt::print(stderr, "{}", kHelp);
    return 2;
  }
  Args a = parse(argv, program);
  bool prints = a.print_interpreter || a.print_soname || a.print_rpath ||
                a.print_needed || a.print_os_abi || a.print_execstack;
  for (const auto& file : a.files) {
    if (prints) {
      auto elf = libpkg::elf::ElfFile::open(file);
      if ((a.print_rpath || a.print_needed || a.print_soname) &&
          !elf.has_dynamic())
        throw Error(Errc::not_found, file,
                    "no dynamic section (the file is statically linked)");
      print_facts(a, elf);
    }
    std::string out = a.output ? *a.output : file;
    if (a.edit.empty() && !a.output) continue;
    nlink_t links =
        links_an_atomic_edit_breaks(file, a.atomic, a.output.has_value());
    auto report =
        libpkg::elf::edit_file(file, out, a.edit,
                               a.atomic ? libpkg::WriteMode::atomic
                                        : libpkg::WriteMode::patch_in_place);
    note_broken_links(file, links, report.changed);
    if (a.debug) {
      fmt::print(stderr, "{}: {}{} ({} -> {} bytes)\n", file,
                 report.changed ? "changed" : "unchanged",
                 report.grew ? ", tables moved to the appended segment"
                             : (report.in_place ? ", patched in place" : ""),
                 report.old_size, report.new_size);
    }
  }
  return 0;
}

}  // namespace pkgtool
