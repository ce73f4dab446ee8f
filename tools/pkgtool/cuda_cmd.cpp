// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool cuda list|switch|env`: installed CUDA toolkits, switching the
// root/cuda symlink, and the environment to export
// (conda/switch_cuda_version.sh, builder-scripts.md §5).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/cuda/toolkit.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

namespace cu = libpkg::cuda;

const char* kUsage =
    "usage: pkgtool cuda list [--root DIR] [--json]\n"
    "       pkgtool cuda switch X.Y|cuXY [--root DIR] [--no-magma] [--json]\n"
    "       pkgtool cuda env [X.Y|cuXY] [--root DIR]\n";

nlohmann::json optional_json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<std::filesystem::path>& v) {
  return v ? nlohmann::json(v->string()) : nlohmann::json(nullptr);
}

nlohmann::json toolkit_json(const cu::Toolkit& t) {
  return {{"dir", t.dir.string()},
          {"version", t.version},
          {"major", t.major},
          {"minor", t.minor},
          {"version_source", t.version_source},
          {"cudnn", optional_json(t.cudnn)},
          {"nccl", optional_json(t.nccl)},
          {"current", t.is_current}};
}

bool parse(CLI::App& app, const std::vector<std::string>& args) {
  return parse_cli(app, args, "pkgtool cuda " + app.get_name(), kUsage);
}

libpkg::config::Accelerator parse_version(const std::string& text) {
  auto v = libpkg::config::parse_accelerator(text);
  if (v.kind != libpkg::config::AcceleratorKind::cuda)
    throw libpkg::Error(
        libpkg::Errc::usage, "pkgtool cuda",
        fmt::format("'{}' is not a CUDA version (accepted: X.Y, cuXY, "
                    "cudaX.Y)",
                    text));
  return v;
}

int run_list(const std::vector<std::string>& args) {
  CLI::App app{"list the CUDA toolkits installed under a root", "list"};
  std::string root = "/usr/local";
  bool json = false;
  app.add_option("--root", root, "where cuda-X.Y live (default /usr/local)");
  app.add_flag("--json", json, "JSON output");
  if (!parse(app, args)) return 0;
  std::vector<cu::Toolkit> toolkits = cu::list_toolkits(root);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : toolkits) list.push_back(toolkit_json(t));
    nlohmann::json out = {{"root", root}, {"toolkits", list}};
    std::puts(out.dump(2).c_str());
    return 0;
  }
  if (toolkits.empty())
    std::fprintf(stderr, "no CUDA toolkits under %s\n", root.c_str());
  for (const auto& t : toolkits) {
    std::string extra;
    if (t.cudnn) extra += "  cudnn " + *t.cudnn;
    if (t.nccl) extra += "  nccl " + *t.nccl;
    std::printf("%s %-8s %s  (from %s)%s\n", t.is_current ? "*" : " ",
                t.version.c_str(), t.dir.c_str(), t.version_source.c_str(),
                extra.c_str());
  }
  return 0;
}

int run_switch(const std::vector<std::string>& args) {
  CLI::App app{"point ROOT/cuda (and ROOT/magma) at cuda-X.Y", "switch"};
  std::string version, root = "/usr/local";
  bool no_magma = false, json = false;
  app.add_option("version", version, "X.Y, cuXY or cudaX.Y")->required();
  app.add_option("--root", root, "where cuda-X.Y live (default /usr/local)");
  app.add_flag("--no-magma", no_magma, "leave ROOT/magma alone");
  app.add_flag("--json", json, "JSON output");
  if (!parse(app, args)) return 0;
  cu::SwitchResult r =
      cu::switch_toolkit(root, parse_version(version), !no_magma);
  if (json) {
    nlohmann::json out = {
        {"link", r.link.string()},
        {"old_target", optional_json(r.old_target)},
        {"new_target", r.new_target.string()},
        {"magma", cu::magma_switch_name(r.magma)},
        {"magma_old_target", optional_json(r.magma_old_target)},
        {"magma_new_target", optional_json(r.magma_new_target)}};
    std::puts(out.dump(2).c_str());
    return 0;
  }
  std::printf("%s -> %s (was %s)\n", r.link.c_str(), r.new_target.c_str(),
              r.old_target ? r.old_target->c_str() : "absent");
  const std::string magma = (std::filesystem::path(root) / "magma").string();
  switch (r.magma) {
    case cu::MagmaSwitch::switched:
      std::printf("%s -> %s (was %s)\n", magma.c_str(),
                  r.magma_new_target->c_str(),
                  r.magma_old_target ? r.magma_old_target->c_str() : "absent");
      break;
    case cu::MagmaSwitch::absent:
      std::printf(
          "%s: no magma for %s, left alone%s\n", magma.c_str(),
          r.new_target.c_str(),
          r.magma_old_target
              ? (" (still -> " + r.magma_old_target->string() + ")").c_str()
              : "");
      break;
    case cu::MagmaSwitch::skipped:
      break;
  }
  return 0;
}

int run_env(const std::vector<std::string>& args) {
  CLI::App app{"print the shell exports selecting a toolkit", "env"};
  std::string version, root = "/usr/local";
  app.add_option("version", version,
                 "X.Y, cuXY or cudaX.Y (default: what ROOT/cuda points to)");
  app.add_option("--root", root, "where cuda-X.Y live (default /usr/local)");
  if (!parse(app, args)) return 0;
  cu::Toolkit t;
  if (!version.empty()) {
    t = cu::find_toolkit(root, parse_version(version));
  } else {
    auto current = cu::current_toolkit(root);
    if (!current)
      throw libpkg::Error(
          libpkg::Errc::not_found,
          (std::filesystem::path(root) / "cuda").string(),
          "does not exist (name a version: pkgtool cuda env X.Y)");
    t = std::move(*current);
  }
  for (const auto& line : cu::environment(t)) std::puts(line.c_str());
  return 0;
}

}  // namespace

int run_cuda(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"list", {"", run_list}},
      {"switch", {"", run_switch}},
      {"env", {"", run_env}},
  };
  return run_subcommand(table, "pkgtool cuda", args, kUsage);
}

}  // namespace pkgtool
