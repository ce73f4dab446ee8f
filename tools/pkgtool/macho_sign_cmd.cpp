// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool macho sign FILE...` and `pkgtool macho verify FILE...`: code
// signatures of thin and fat Mach-O files (libpkg/macho/codesign.hpp).
//
// The work is the library's (macho/sign_file.hpp, macho/codesign.hpp); this
// file parses the arguments and prints one line per slice.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/sign_file.hpp"

namespace pkgtool {
namespace {

namespace cs = libpkg::macho;

int sign_file(const std::string& path) {
  for (const auto& s : cs::sign_file(path).slices)
    std::printf("%s: %s\n", s.name.c_str(),
                s.is_64 ? "signed" : "32-bit slice left unsigned");
  return 0;
}

int verify_file(const std::string& path) {
  auto file = libpkg::MappedFile::open(path);
  int status = 0;
  for (const auto& [slice, is_64] : cs::signature_slices(file.view(), path)) {
    if (!is_64) {
      std::printf("%s: 32-bit slice not checked\n", slice.name().c_str());
      continue;
    }
    cs::SliceLayout layout = cs::find_slice_layout(slice);
    if (!layout.signed_()) {
      std::fprintf(stderr, "error: %s: not signed\n", slice.name().c_str());
      status = 2;
      continue;
    }
    cs::VerifyReport r = cs::verify_signature(slice, layout);
    for (const auto& p : r.problems)
      std::fprintf(stderr, "error: %s: CodeDirectory %zu (hash type %u): %s\n",
                   slice.name().c_str(), p.cd,
                   r.signature.code_directories[p.cd].hash_type,
                   p.what.c_str());
    if (!r.ok()) {
      status = 2;
      continue;
    }
    const auto& cd = r.signature.code_directories.front();
    std::printf("%s: valid (%zu CodeDirectories, identifier %s, %s)\n",
                slice.name().c_str(), r.signature.code_directories.size(),
                cd.identifier.c_str(),
                (cd.flags & cs::kFlagAdhoc) ? "ad-hoc" : "CMS");
  }
  return status;
}

int run_files(const std::vector<std::string>& files,
              int (*one)(const std::string&)) {
  int status = 0;
  for (const auto& f : files) {
    try {
      status = std::max(status, one(f));
    } catch (const libpkg::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      status = std::max(status, e.exit_code());
    }
  }
  return status;
}

int run_sign(const std::vector<std::string>& args) {
  CLI::App app{
      "Ad-hoc sign Mach-O files, or re-sign keeping the signature's "
      "fields",
      "macho sign"};
  std::vector<std::string> files;
  app.add_option("files", files, "thin or fat Mach-O files")->required();
  if (!parse_cli(app, args, "pkgtool macho sign", "")) return 0;
  return run_files(files, sign_file);
}

int run_verify(const std::vector<std::string>& args) {
  CLI::App app{"Verify every page hash of every CodeDirectory", "macho verify"};
  std::vector<std::string> files;
  app.add_option("files", files, "thin or fat Mach-O files")->required();
  if (!parse_cli(app, args, "pkgtool macho verify", "")) return 0;
  return run_files(files, verify_file);
}

const MachoSubcommand kSign("sign",
                            "FILE...           ad-hoc sign, or re-sign "
                            "keeping the signature's fields",
                            run_sign);
const MachoSubcommand kVerify("verify",
                              "FILE...         verify every page hash of "
                              "every CodeDirectory",
                              run_verify);

}  // namespace

}  // namespace pkgtool
