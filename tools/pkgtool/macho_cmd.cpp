// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool macho SUBCOMMAND`: the subcommand table, and `macho edit` (also
// the `install_name_tool` entry point) with install_name_tool's syntax.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "atomic_links_note.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/macho/editor.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {

namespace {

// Function-local so registrations from other files' static initialisers
// never see an unconstructed map.
SubcommandTable& table() {
  static SubcommandTable t;
  return t;
}

const char* kEditUsage =
    "usage: pkgtool macho edit [-id NAME] [-change OLD NEW]... [-rpath OLD "
    "NEW]...\n"
    "         [-add_rpath PATH]... [-prepend_rpath PATH]... [-delete_rpath "
    "PATH]...\n"
    "         [-delete_all_rpaths] [-arch ARCH]... [--output OUT] "
    "[--in-place-atomic]\n"
    "         [--json] FILE...\n"
    "  (also installed as `install_name_tool`; options apply to every 64-bit\n"
    "  slice, or to the -arch ones; the file is edited in place unless\n"
    "  --output is given: only the changed header bytes are written into the\n"
    "  file, which every hard link sees; --in-place-atomic writes a temporary\n"
    "  file and renames it over this name instead)\n";

struct EditArgs {
  libpkg::macho::EditOptions opts;
  std::vector<std::string> files;
  std::string output;
  bool json = false;
  bool atomic = false;
};

// `program` names the command in errors: "pkgtool macho edit" or
// "install_name_tool" (the entry point).
EditArgs parse_edit(const std::vector<std::string>& args,
                    const std::string& program) {
  EditArgs e;
  auto& o = e.opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](size_t n) {
      if (i + n >= args.size())
        usage_error(program, fmt::format("{} expects {} argument{}", a, n,
                                         n > 1 ? "s" : ""));
      return args[i + n];
    };
    if (a == "-id") {
      o.id = value(1);
      ++i;
    } else if (a == "-change") {
      o.changes.emplace_back(value(1), value(2));
      i += 2;
    } else if (a == "-rpath") {
      o.rename_rpaths.emplace_back(value(1), value(2));
      i += 2;
    } else if (a == "-add_rpath") {
      o.add_rpaths.push_back(value(1));
      ++i;
    } else if (a == "-prepend_rpath") {
      o.prepend_rpaths.push_back(value(1));
      ++i;
    } else if (a == "-delete_rpath") {
      o.delete_rpaths.push_back(value(1));
      ++i;
    } else if (a == "-delete_all_rpaths") {
      o.delete_all_rpaths = true;
    } else if (a == "-arch") {
      o.archs.push_back(value(1));
      ++i;
    } else if (a == "--output" || a == "-o") {
      e.output = value(1);
      ++i;
    } else if (a == "--no-sign") {
      o.sign = false;
    } else if (a == "--json") {
      e.json = true;
    } else if (a == "--in-place-atomic") {
      e.atomic = true;
    } else if (a.starts_with("-") && a.size() > 1) {
      usage_error(program, unexpected_argument(a));
    } else {
      e.files.push_back(a);
    }
  }
  if (e.files.empty()) usage_error(program, "no input file");
  if (!e.output.empty() && e.files.size() != 1)
    usage_error(program, "--output takes exactly one input file");
  return e;
}

const char* signing_name(libpkg::macho::SliceReport::Signing s) {
  using S = libpkg::macho::SliceReport::Signing;
  switch (s) {
    case S::resigned:
      return "resigned";
    case S::adhoc_signed:
      return "adhoc_signed";
    case S::stale:
      return "stale";
    case S::none:
      break;
  }
  return "none";
}

nlohmann::json report_json(const std::string& file,
                           const libpkg::macho::EditPlan& plan) {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : plan.slices) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : s.changed_ranges)
      ranges.push_back({{"offset", r.offset}, {"size", r.size}});
    nlohmann::json sig = nullptr;
    if (s.code_signature)
      sig = {{"dataoff", s.code_signature->dataoff},
             {"datasize", s.code_signature->datasize}};
    slices.push_back({{"arch", s.arch},
                      {"offset", s.slice_offset},
                      {"edited", s.edited},
                      {"changed", s.changed},
                      {"code_signature", sig},
                      {"changed_ranges", ranges},
                      {"signing", signing_name(s.signing)},
                      {"sizeofcmds_before", s.sizeofcmds_before},
                      {"sizeofcmds_after", s.sizeofcmds_after},
                      {"padding_free_before", s.padding_free_before}});
  }
  return {{"file", file}, {"changed", plan.changed()}, {"slices", slices}};
}

int run_edit_as(const std::vector<std::string>& args,
                const std::string& program) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    fmt::print("{}", kEditUsage);
    return 0;
  }
  // As install_name_tool: no arguments at all print the usage on stderr.
  if (args.empty()) {
    fmt::print(stderr, "{}", kEditUsage);
    return 2;
  }
  EditArgs e = parse_edit(args, program);
  // Plan every file before writing any, so a preflight failure (padding too
  // small, rpath not found) leaves every input untouched.
  std::vector<libpkg::macho::MachOFile> files;
  std::vector<libpkg::macho::EditPlan> plans;
  for (const auto& f : e.files) {
    files.push_back(libpkg::macho::MachOFile::open(f));
    plans.push_back(libpkg::macho::plan_edit(files.back(), e.opts));
  }
  nlohmann::json reports = nlohmann::json::array();
  for (size_t i = 0; i < files.size(); ++i) {
    nlink_t links =
        links_an_atomic_edit_breaks(e.files[i], e.atomic, !e.output.empty());
    auto written = libpkg::macho::apply_edit(
        files[i], plans[i], e.output.empty() ? e.files[i] : e.output,
        e.atomic ? libpkg::WriteMode::atomic
                 : libpkg::WriteMode::patch_in_place);
    note_broken_links(e.files[i], links, written.changed);
    for (const auto& s : plans[i].slices) {
      // Only --no-sign leaves a signature stale: say so (codesign and dyld
      // on arm64 reject it).
      if (s.signing == libpkg::macho::SliceReport::Signing::stale && !e.json)
        fmt::print(stderr,
                   "warning: {} ({}): the code signature no longer matches "
                   "the edited load commands; re-sign the file\n",
                   e.files[i], s.arch);
    }
    reports.push_back(report_json(e.files[i], plans[i]));
    reports.back()["in_place"] = written.in_place;
  }
  if (e.json) fmt::print("{}\n", reports.dump(2));
  return 0;
}

int run_edit(const std::vector<std::string>& args) {
  return run_edit_as(args, "pkgtool macho edit");
}

const MachoSubcommand kEdit("edit",
                            "OPTIONS FILE...   install_name_tool's edits",
                            run_edit);

}  // namespace

MachoSubcommand::MachoSubcommand(const char* name, const char* usage,
                                 SubcommandFn fn) {
  table()[name] = SubcommandEntry{usage, fn};
}

int run_macho(const std::vector<std::string>& args) {
  return run_subcommand(table(), "pkgtool macho", args);
}

int run_install_name_tool(const std::vector<std::string>& args) {
  return run_edit_as(args, "install_name_tool");
}

}  // namespace pkgtool
