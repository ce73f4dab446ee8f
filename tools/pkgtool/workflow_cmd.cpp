// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool workflow`: the nightly as a GitHub Actions workflow written from
// the configuration matrix (docs/nightly.md, "pkgtool workflow").
//   pkgtool workflow [--package-type T]... [--cuda C]... [--python P]...
//                    [--matrix-file F] [--name N] [--cron C] [--source R]
//                    [--keep N] [-o FILE]
//   pkgtool workflow --check FILE [generation options]
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/state.hpp"
#include "libpkg/nightly/workflow.hpp"
#include "matrix_input.hpp"

namespace pkgtool {
namespace {

namespace nl = libpkg::nightly;

const char* kUsage =
    "usage: pkgtool workflow [--package-type T]... [--cuda C]... [--python "
    "P]...\n"
    "                        [--matrix-file F] [--name N] [--cron C] "
    "[--source OWNER/REPO]\n"
    "                        [--keep N] [-o FILE]\n"
    "       pkgtool workflow --check FILE [same options; default: those FILE "
    "records]\n";

struct Generated {
  std::string text;
  std::string output;  // -o, "" for stdout
};

// Parses the generation options (everything but --check) and writes the
// workflow text; `check` only shows in --help.
Generated generate(const std::vector<std::string>& args, bool* help) {
  CLI::App app{"write the nightly as a GitHub Actions workflow", "workflow"};
  MatrixInput matrix;
  matrix.add_to(app);
  nl::WorkflowOptions o;
  Generated out;
  std::string check;
  app.add_option("--name", o.name, "the workflow's name (default nightly)");
  app.add_option("--cron", o.cron, "its schedule, UTC (default \"5 0 * * *\")");
  app.add_option("--source", o.source,
                 "the repository the jobs build (default pytorch/pytorch)");
  app.add_option("--keep", o.keep,
                 "nightlies kept per package in the channel (default 5)");
  app.add_option("-o,--output", out.output,
                 "write it here (also checked by the workflow's final job); "
                 "default: stdout");
  app.add_option("--check", check,
                 "compare FILE with what the arguments it records generate: "
                 "exit 1 naming the first difference, 0 when equal");
  *help = !parse_cli(app, args, "pkgtool workflow", kUsage);
  if (*help) return out;
  o.matrix_file = matrix.file;
  o.package_types = split_commas(matrix.package_types);
  o.accelerators = split_commas(matrix.accelerators);
  o.pythons = split_commas(matrix.pythons);
  o.path = out.output;
  o.arguments = args;
  out.text = nl::workflow_yaml(matrix.configs(), o);
  return out;
}

// The shell spelling of the command that regenerates a workflow.
std::string command_line(const std::vector<std::string>& args) {
  std::string out = "pkgtool workflow";
  for (const auto& a : args) {
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") ==
                                   std::string::npos;
    if (plain) {
      out += " " + a;
      continue;
    }
    out += " '";
    for (char c : a)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += "'";
  }
  return out;
}

std::string shown(const nl::TextDifference& d, bool expected) {
  if (expected ? d.expected_ended : d.found_ended) return "end of file";
  return nlohmann::json(expected ? d.expected : d.found).dump();
}

int check_file(const std::string& file, std::vector<std::string> args) {
  std::string text = nl::read_text_file(file);
  bool recorded = false;
  if (args.empty()) {
    if (auto a = nl::recorded_workflow_arguments(text)) {
      args = *a;
      recorded = true;
    }
  }
  bool help = false;
  Generated want = generate(args, &help);
  auto d = nl::first_difference(want.text, text);
  if (!d) {
    std::printf("%s: matches %s\n", file.c_str(), command_line(args).c_str());
    return 0;
  }
  std::fprintf(stderr,
               "%s:%zu: differs from what `%s` writes%s: expected %s, found "
               "%s\n",
               file.c_str(), d->line, command_line(args).c_str(),
               recorded ? " (the arguments it records)" : "",
               shown(*d, true).c_str(), shown(*d, false).c_str());
  return 1;
}

}  // namespace

int run_workflow(const std::vector<std::string>& args) {
  // --check FILE is taken out first: the rest are generation options,
  // exactly what a generated file records.
  std::optional<std::string> check;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--check") {
      if (i + 1 >= args.size())
        usage_error("pkgtool workflow", "--check needs a FILE");
      check = args[++i];
    } else if (args[i].rfind("--check=", 0) == 0) {
      check = args[i].substr(8);
    } else {
      rest.push_back(args[i]);
    }
  }
  if (check) return check_file(*check, rest);
  bool help = false;
  Generated g = generate(rest, &help);
  if (help) return 0;
  if (g.output.empty()) {
    std::fwrite(g.text.data(), 1, g.text.size(), stdout);
    return 0;
  }
  std::filesystem::path out(g.output);
  if (out.has_parent_path()) libpkg::create_output_directory(out.parent_path());
  nl::write_text_atomically(out, g.text);
  std::printf("%s: written\n", g.output.c_str());
  return 0;
}

}  // namespace pkgtool
