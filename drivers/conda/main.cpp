// SPDX-License-Identifier: BSD-3-Clause
// conda: a staged install prefix → relocated .conda / .tar.bz2 packages,
// checked by check_binary. Replaces conda/build_pytorch.sh's packaging half
// (builder-scripts.md §3); all logic is libpkg::driver::run_conda.
//
//   conda --prefix DIR [--meta FILE.json] [--name N] [--depends SPEC]...
//         [--constrains SPEC]... [--license L] [--summary S] [--home URL]
//         [--format conda|tar.bz2|both] [--zstd-level N] [--placeholder P]
//         [--keep-outside-rpaths] [--no-inject] + the shared driver flags
//
// Exit status: 0 packages written and checked, 1 a check failed, 2 bad
// input (one line on stderr).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "driver_cli.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/driver/conda.hpp"

namespace {

namespace cfg = libpkg::config;
namespace conda = libpkg::conda;
using libpkg::Errc;
using libpkg::Error;

const char* kUsage =
    "usage: conda --prefix DIR [--meta FILE.json] [--name N] "
    "[--depends SPEC]... [--format conda|tar.bz2|both] [-o DIR] "
    "[--dry-run] [--json] (see --help)";

std::vector<conda::PackageFormat> parse_formats(const std::string& text) {
  if (text == "conda") return {conda::PackageFormat::conda};
  if (text == "tar.bz2") return {conda::PackageFormat::tar_bz2};
  if (text == "both")
    return {conda::PackageFormat::conda, conda::PackageFormat::tar_bz2};
  throw Error(Errc::usage, "--format",
              fmt::format("unknown package format '{}' (accepted: conda, "
                          "tar.bz2, both)",
                          text));
}

int run(int argc, char** argv) {
  CLI::App app{
      "Package a staged install prefix as conda packages: RPATHs relocated "
      "into the environment, prefix placeholders recorded, .conda and/or "
      ".tar.bz2 written and checked."};
  driver_cli::CommonFlags flags;
  driver_cli::add_common_flags(app, flags);
  libpkg::driver::CondaDriverOptions options;
  conda::CondaMetadata& meta = options.metadata;
  std::string prefix, meta_file, format = "both", placeholder;
  bool keep_outside = false, no_inject = false;
  app.add_option("--prefix", prefix, "staged install prefix (required)");
  app.add_option("--meta", meta_file,
                 "metadata JSON (name, version, build_number, depends, "
                 "license, ...)");
  app.add_option("--name", meta.name,
                 "conda package name (default: pytorch for torch, else "
                 "the package name)");
  app.add_option("--depends", meta.depends, "run requirement (repeatable)");
  app.add_option("--constrains", meta.constrains,
                 "run constraint (repeatable)");
  app.add_option("--license", meta.license, "license (about.json, index)");
  app.add_option("--summary", meta.summary, "one-line summary (about.json)");
  app.add_option("--home", meta.home, "home page URL (about.json)");
  app.add_option("--format", format, "conda, tar.bz2 or both (default)");
  app.add_option("--zstd-level", options.zstd_level,
                 "zstd level of .conda members, 1-22 (19)");
  app.add_option("--placeholder", placeholder,
                 "build prefix the files were built for (default: the "
                 "prefix's own path; \"\" disables the search)");
  app.add_flag("--keep-outside-rpaths", keep_outside,
               "keep RPATH entries outside the prefix (default: drop)");
  app.add_flag("--no-inject", no_inject,
               "do not add the python pin / pytorch-cuda requirement");
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!driver_cli::parse(app, args, "conda", kUsage)) return 0;

  if (prefix.empty())
    throw Error(Errc::usage, "conda", "--prefix DIR is required");
  options.prefix = prefix;
  if (!meta_file.empty()) options.metadata_file = meta_file;
  if (app.count("--placeholder") > 0) options.placeholder = placeholder;
  options.formats = parse_formats(format);
  options.outside_rpaths =
      keep_outside ? conda::OutsideRpath::keep : conda::OutsideRpath::drop;
  options.inject_depends = !no_inject;
  driver_cli::resolve(flags, cfg::PackageType::conda);
  options.common = flags.options;
  return driver_cli::finish(libpkg::driver::run_conda(options), flags);
}

}  // namespace

int main(int argc, char** argv) {
  return driver_cli::guarded([&] { return run(argc, argv); });
}
