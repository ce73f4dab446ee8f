// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool repair` on macOS wheels (delocate-wheel's job): run_repair hands
// over when a wheel's file name carries a macosx_* platform tag.
//
// The flags follow delocate-wheel where it has one (-w, -L/--lib-sdir,
// -e/--exclude, --require-archs, --executable-path) and
// MACOSX_DEPLOYMENT_TARGET is the default --target, as for delocate.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/bundle/macos_repair.hpp"

namespace pkgtool {

namespace bd = libpkg::bundle;
namespace fs = std::filesystem;

namespace {

const char* kUsage =
    "usage: pkgtool repair MACOS_WHEEL... [-w DIR] [-L SUBDIR | --lib-dir "
    "DIR]\n"
    "         [--dyld-library-path DIR]... [--executable-path DIR]\n"
    "         [-e|--exclude GLOB]... [--refs loader-path|rpath] "
    "[--keep-rpaths]\n"
    "         [--require-archs arm64|x86_64|universal2|intel]... [--target "
    "X.Y]\n"
    "         [--no-sign] [-z LEVEL] [-j N] [--allow-unverified] [--dry-run] "
    "[--json]\n"
    "         [--cache-dir DIR] [--cache-max SIZE] [--no-cache]\n";

}  // namespace

bool is_macos_repair(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a.size() > 4 && a.ends_with(".whl") && !a.starts_with("-")) {
      libpkg::Result<bool> mac = libpkg::attempt(
          {libpkg::Errc::format}, [&] { return bd::is_macos_wheel(a); });
      if (mac && mac.value()) return true;
    }
  return false;
}

int run_repair_macos(const std::vector<std::string>& args) {
  CLI::App app{"bundle the dylibs a macOS wheel needs and retag it", "repair"};
  bd::MacosRepairOptions ro;
  std::vector<std::string> wheels, dyld_paths;
  std::string out_dir = "wheelhouse", lib_dir, executable_path, target,
              refs = "loader-path";
  int level = 6;
  unsigned threads = 0;
  bool no_sign = false, dry_run = false, json = false, allow_unverified = false;
  app.add_option("wheels", wheels, "wheel files")->required();
  app.add_option("-w,--wheel-dir", out_dir,
                 "output directory (default: wheelhouse)");
  app.add_option("-L,--lib-sdir", ro.lib_sdir,
                 "bundle directory inside the package (default .dylibs)");
  app.add_option("--lib-dir", lib_dir,
                 "bundle directory as a wheel path (e.g. torch/.dylibs)");
  app.add_option("--dyld-library-path", dyld_paths,
                 "directory searched first by leaf name (DYLD_LIBRARY_PATH)");
  app.add_option("--executable-path", executable_path,
                 "what @executable_path stands for");
  app.add_option("-e,--exclude", ro.exclude,
                 "glob on an install name, its leaf or its path: provided by "
                 "another wheel, not bundled");
  app.add_option("--refs", refs,
                 "loader-path (@loader_path/<rel>, delocate) or rpath "
                 "(@rpath/<name> and one @loader_path rpath)")
      ->check(CLI::IsMember({"loader-path", "rpath"}));
  app.add_flag("--keep-rpaths", ro.keep_rpaths,
               "keep absolute and relative LC_RPATHs (dropped by default)");
  app.add_option("--require-archs", ro.require_archs,
                 "architectures every Mach-O file must have")
      ->check(CLI::IsMember({"arm64", "x86_64", "universal2", "intel"}));
  app.add_option("--target", target,
                 "deployment target: floor and ceiling of the tag (default "
                 "$MACOSX_DEPLOYMENT_TARGET)");
  app.add_flag("--no-sign", no_sign,
               "leave signatures of edited files stale (no re-signing)");
  app.add_option("-z,--zip-compression-level", level, "deflate level 0-9")
      ->check(CLI::Range(0, 9));
  app.add_option("-j,--jobs", threads, "threads (default: one per core)");
  app.add_flag("--allow-unverified", allow_unverified,
               "repair a wheel that fails RECORD verification");
  app.add_flag("--dry-run", dry_run, "print the plan, write nothing");
  app.add_flag("--json", json,
               "print the plan (and result) as JSON "
               "(libpkg-macos-repair-plan/1)");
  CacheFlags cache;
  cache.add_to(app);
  if (!parse_cli(app, args, "pkgtool repair", kUsage)) return 0;
  check_lib_sdir(ro.lib_sdir);
  for (const auto& d : dyld_paths)
    ro.dyld_library_path.push_back(fs::absolute(d));
  if (!lib_dir.empty()) ro.lib_dir = lib_dir;
  if (!executable_path.empty()) ro.executable_path = executable_path;
  if (target.empty())
    if (const char* env = std::getenv("MACOSX_DEPLOYMENT_TARGET")) target = env;
  if (!target.empty())
    ro.target = libpkg::wheel::MacosVersion::parse(
        target, "--target / MACOSX_DEPLOYMENT_TARGET");
  ro.refs = refs == "rpath" ? bd::MacosRefs::rpath : bd::MacosRefs::loader_path;
  ro.sign = !no_sign;
  // One pool for resolving, planning and writing every wheel, sized by -j.
  libpkg::ThreadPool pool(threads);
  ro.threads = threads;
  ro.pool = &pool;
  bd::ApplyOptions ao;
  ao.level = level;
  ao.threads = threads;
  ao.pool = &pool;
  if (!dry_run) ao.cache = cache.open();
  ro.cache = ao.cache;  // the grafts' content hashes
  ao.timestamp = libpkg::archive::source_date_epoch();
  ao.allow_unverified = allow_unverified;

  for (const auto& w : wheels) {
    if (!bd::is_macos_wheel(w))
      throw libpkg::Error(libpkg::Errc::usage, w,
                          "not a macOS wheel (no macosx_* platform tag): "
                          "repair it on its own");
    bd::MacosRepairPlan plan = bd::plan_macos_repair(w, ro);
    if (dry_run) {
      if (json)
        std::printf("%s\n", plan.to_json().c_str());
      else
        std::fputs(plan.to_text().c_str(), stdout);
      continue;
    }
    bd::RepairResult r = bd::apply_macos_repair(plan, out_dir, ao);
    print_repair_outcome(plan.to_json(), plan.notes, plan.grafts.size(),
                         plan.edits.size(), r, json, ao.cache.get());
  }
  print_cache_summary(ao.cache.get());
  return 0;
}

}  // namespace pkgtool
