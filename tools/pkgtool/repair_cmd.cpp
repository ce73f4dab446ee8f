// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool show` and `pkgtool repair`: the auditwheel replacement.
//
// The command lines follow auditwheel's (so `repair -w {dest_dir} {wheel}`
// works as cibuildwheel's repair-wheel-command), and AUDITWHEEL_PLAT, which
// the manylinux images set, is the default --plat as it is for auditwheel.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/bundle/analyze.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/deps/resolve.hpp"

namespace pkgtool {
namespace {

namespace bd = libpkg::bundle;
namespace dp = libpkg::deps;
namespace fs = std::filesystem;

const char* kShowUsage =
    "usage: pkgtool show WHEEL... [--json] [--lib-path DIR]... "
    "[--ldpaths DIRS] [--root DIR]\n"
    "                    [--exclude PATTERN]... [--policy-file FILE] "
    "[--libc glibc|musl|bionic]\n"
    "                    [--disable-isa-ext-check]\n";

const char* kRepairUsage =
    "usage: pkgtool repair WHEEL... [-w DIR] [--plat TAG|auto|linux]\n"
    "         [--exclude PATTERN]... [--include LIB]... [-L|--lib-sdir SUFFIX "
    "| "
    "--lib-dir DIR]\n"
    "         [--keep-name GLOB]... [--no-default-keep-names] "
    "[--rpath-tag rpath|runpath]\n"
    "         [-z LEVEL] [-j N] [--strip] [--strip-level L] [--only-plat]\n"
    "         [--no-update-tags] [--ignore-missing]\n"
    "         [--lib-path DIR]... [--ldpaths DIRS] [--root DIR] "
    "[--policy-file FILE]\n"
    "         [--libc glibc|musl|bionic] [--disable-isa-ext-check] "
    "[--allow-unverified]\n"
    "         [--dry-run] [--json] [--cache-dir DIR] [--cache-max SIZE] "
    "[--no-cache]\n";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Flags shared by show and repair: where libraries are searched, which
// policies apply, what is excluded or included.
struct AnalysisFlags {
  std::vector<std::string> wheels;
  std::vector<std::string> lib_paths;
  std::string ldpaths;
  std::string root;
  std::string libc;
  std::string policy_file;
  std::vector<std::string> exclude;
  std::vector<std::string> include;
  bool disable_isa_ext_check = false;
  bool allow_pure = false;
  unsigned threads = 0;

  void add_to(CLI::App& app, bool repair) {
    app.add_option("wheels", wheels, "wheel files")->required();
    app.add_option("--lib-path", lib_paths,
                   "extra library directory, searched after LD_LIBRARY_PATH");
    app.add_option("--ldpaths", ldpaths,
                   "':'-separated list replacing ld.so.conf and the default "
                   "directories");
    app.add_option("--root", root,
                   "target sysroot: ld.so.conf and the default directories "
                   "are read under it (a foreign-architecture wheel)");
    app.add_option("--libc", libc,
                   "the C library when neither the binaries, the extension "
                   "suffixes nor the wheel tag say")
        ->check(CLI::IsMember({"glibc", "musl", "bionic"}));
    app.add_option("--policy-file", policy_file,
                   "policies in auditwheel's JSON format (replaces the "
                   "built-in ones)");
    app.add_option("--exclude", exclude,
                   "soname or path glob of a library provided elsewhere");
    if (repair)
      app.add_option("--include", include,
                     "also bundle a library loaded with dlopen (path or "
                     "soname), keeping its name");
    app.add_flag("--disable-isa-ext-check", disable_isa_ext_check,
                 "don't block binaries whose GNU property note requires an "
                 "x86-64 level above the baseline (x86-64-v2/v3/v4)");
    app.add_flag("--allow-pure-python-wheel", allow_pure,
                 "accept a wheel without ELF files (show: reported as pure; "
                 "repair: copied to the output directory unchanged)");
    app.add_option("-j,--jobs", threads, "threads (default: one per core)");
  }

  // auditwheel's --allow-pure-python-wheel: a wheel without ELF files is
  // accepted instead of refused (exit 2).
  bool accepted_as_pure(const std::string& wheel) const {
    return allow_pure && bd::is_pure_wheel(wheel);
  }

  bd::AnalyzeOptions options(std::shared_ptr<dp::PolicySet>* owned) const {
    bd::AnalyzeOptions o;
    o.search.ld_library_path = dp::split_path_list(env("LD_LIBRARY_PATH"));
    // An unset LD_LIBRARY_PATH is no entry, not "the current directory".
    if (env("LD_LIBRARY_PATH").empty()) o.search.ld_library_path.clear();
    o.search.extra_paths = lib_paths;
    if (!ldpaths.empty()) o.search.system_dirs = dp::split_path_list(ldpaths);
    if (!root.empty()) o.search.root = root;
    if (!libc.empty()) o.libc = dp::parse_libc(libc);
    if (!policy_file.empty()) {
      *owned =
          std::make_shared<dp::PolicySet>(dp::PolicySet::load(policy_file));
      o.policies = owned->get();
    }
    o.exclude = exclude;
    o.include = include;
    o.isa_ext_check = !disable_isa_ext_check;
    o.threads = threads;
    return o;
  }
};

// A pure wheel accepted by repair goes to the output directory as it is;
// nothing to do when it already is the file there.
void copy_pure_wheel(const fs::path& wheel, const fs::path& dest) {
  libpkg::create_output_directory(dest.parent_path());
  std::error_code ec;
  if (fs::equivalent(wheel, dest, ec)) return;
  libpkg::copy_file_atomically(wheel, dest);
}

bool parse(CLI::App& app, const std::vector<std::string>& args,
           const char* usage) {
  return parse_cli(app, args, "pkgtool " + app.get_name(), usage);
}

}  // namespace

void check_lib_sdir(const std::string& value) {
  std::error_code ec;
  const bool is_dir =
      !value.starts_with(".") && fs::is_directory(fs::path(value), ec);
  if (value.find('/') == std::string::npos && !is_dir) return;
  throw libpkg::Error(
      libpkg::Errc::usage, "-L " + value,
      "-L is --lib-sdir, the name of the directory grafted libraries go to "
      "(as in auditwheel and delocate), not a directory to search: give "
      "that as --lib-path DIR (ELF) or --dyld-library-path DIR (macOS)");
}

void print_repair_outcome(const std::string& plan_json,
                          const std::vector<std::string>& notes,
                          std::size_t grafts, std::size_t edits,
                          const bd::RepairResult& r, bool json,
                          const libpkg::archive::ChunkCache* cache) {
  if (json) {
    nlohmann::json doc = nlohmann::json::parse(plan_json);
    doc["result"] = {{"path", r.path.string()},
                     {"members", r.members},
                     {"raw_copies", r.raw_copies},
                     {"compressed", r.compressed},
                     {"spliced", r.spliced},
                     {"spliced_reused_bytes", r.spliced_reused_bytes},
                     {"grafted_bytes", r.grafted_bytes}};
    if (cache) {
      const auto c = cache->counters();
      doc["result"]["cache"] = {{"hits", c.hits},
                                {"misses", c.misses},
                                {"corrupt", c.corrupt},
                                {"bytes_saved", c.bytes_saved},
                                {"tagged_hits", c.tagged_hits},
                                {"memo_hits", c.memo_hits}};
    }
    std::printf("%s\n", doc.dump(2).c_str());
    return;
  }
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  std::printf("grafted %zu librar%s (%.1f MB); edited %zu file%s\n", grafts,
              grafts == 1 ? "y" : "ies",
              static_cast<double>(r.grafted_bytes) / 1e6, edits,
              edits == 1 ? "" : "s");
  std::printf("wrote %s\n", r.path.c_str());
}

int run_show(const std::vector<std::string>& args) {
  // `show -L DIR` was --lib-path; -L now means --lib-sdir (repair).
  for (const auto& a : args)
    if (a.starts_with("-L"))
      throw libpkg::Error(libpkg::Errc::usage, a,
                          "show has no -L (repair's -L is --lib-sdir, as in "
                          "auditwheel and delocate): give library "
                          "directories as --lib-path DIR");
  CLI::App app{"which platform tag a wheel satisfies, and why", "show"};
  AnalysisFlags flags;
  flags.add_to(app, /*repair=*/false);
  bool json = false;
  app.add_flag("--json", json, "machine-readable report (libpkg-show/1)");
  if (!parse(app, args, kShowUsage)) return 0;
  std::shared_ptr<dp::PolicySet> owned;
  bd::AnalyzeOptions options = flags.options(&owned);
  options.restart_points = true;  // show only reports (docs/archives.md)
  for (const auto& w : flags.wheels) {
    if (flags.accepted_as_pure(w)) {
      if (json)
        std::printf("%s\n", nlohmann::json({{"schema", "libpkg-show/1"},
                                            {"wheel", w},
                                            {"pure", true}})
                                .dump(2)
                                .c_str());
      else
        std::printf(
            "%s: a pure-Python wheel (no ELF files): no platform "
            "tag to judge\n",
            w.c_str());
      continue;
    }
    bd::WheelAnalysis a = bd::analyze_wheel(w, options);
    if (json)
      std::printf("%s\n", bd::show_json(a).c_str());
    else
      std::fputs(bd::show_text(a).c_str(), stdout);
  }
  return 0;
}

int run_repair(const std::vector<std::string>& args) {
  if (is_macos_repair(args)) return run_repair_macos(args);
  CLI::App app{"bundle external libraries into a wheel and retag it", "repair"};
  AnalysisFlags flags;
  flags.add_to(app, /*repair=*/true);
  bd::RepairOptions ro;
  if (!env("AUDITWHEEL_PLAT").empty()) ro.plat = env("AUDITWHEEL_PLAT");
  std::string out_dir = "wheelhouse";  // auditwheel's default
  int level = 6;
  bool no_default_keep = false, dry_run = false, json = false;
  std::vector<std::string> keep;
  std::string rpath_tag = "rpath";
  std::string lib_dir;
  app.add_option("-w,--wheel-dir", out_dir,
                 "output directory (default: wheelhouse, as auditwheel)");
  app.add_option("--plat", ro.plat,
                 "target tag: auto (default, or $AUDITWHEEL_PLAT), a "
                 "policy name or alias, or linux");
  app.add_option("-L,--lib-sdir", ro.lib_sdir,
                 "graft directory suffix: <dist><suffix> (default .libs; "
                 "-L as in auditwheel)");
  app.add_option("--lib-dir", lib_dir,
                 "graft directory inside the wheel (e.g. torch/lib)");
  app.add_option("--keep-name", keep,
                 "soname glob of libraries that keep their name");
  app.add_flag("--no-default-keep-names", no_default_keep,
               "don't keep the names of libnvrtc-builtins*, libcudnn*, "
               "libcublas*");
  app.add_option("--rpath-tag", rpath_tag, "rpath (default) or runpath")
      ->check(CLI::IsMember({"rpath", "runpath"}));
  app.add_option("-z,--zip-compression-level", level, "deflate level 0-9")
      ->check(CLI::Range(0, 9));
  app.add_flag("--strip", ro.strip,
               "strip -s every ELF file before patching (= --strip-level "
               "all)");
  app.add_option("--strip-level", ro.strip_level,
                 "strip every ELF file before patching: none (default), "
                 "debug (-g), unneeded (--strip-unneeded), all (-s)")
      ->check(CLI::IsMember({"none", "debug", "unneeded", "all"}));
  app.add_flag("--only-plat", ro.only_plat,
               "only the requested tag, not also a more compatible one");
  app.add_flag(
      "--no-update-tags", [&](std::int64_t) { ro.update_tags = false; },
      "keep the input's platform tags in the file name and WHEEL "
      "(the libraries are still bundled for --plat)");
  app.add_flag("--ignore-missing", ro.ignore_missing,
               "proceed when a dependency is not found");
  bool allow_unverified = false;
  app.add_flag("--allow-unverified", allow_unverified,
               "repair a wheel that fails RECORD verification (what was "
               "not verified stays unlisted in the new RECORD)");
  app.add_flag("--dry-run", dry_run, "print the plan, write nothing");
  app.add_flag("--json", json, "print the plan (and result) as JSON");
  CacheFlags cache;
  cache.add_to(app);
  if (!parse(app, args, kRepairUsage)) return 0;
  check_lib_sdir(ro.lib_sdir);
  if (!lib_dir.empty()) ro.lib_dir = lib_dir;
  if (no_default_keep) ro.keep_names.clear();
  for (auto& k : keep) ro.keep_names.push_back(k);
  ro.rpath_tag = rpath_tag == "runpath" ? libpkg::elf::RpathTag::runpath
                                        : libpkg::elf::RpathTag::rpath;
  std::shared_ptr<dp::PolicySet> owned;
  bd::AnalyzeOptions options = flags.options(&owned);
  // One pool for analysing, planning and writing every wheel, sized by -j.
  libpkg::ThreadPool pool(flags.threads);
  options.pool = &pool;
  bd::ApplyOptions ao;
  ao.level = level;
  ao.threads = flags.threads;
  ao.pool = &pool;
  ro.threads = flags.threads;
  ro.pool = &pool;
  ao.timestamp = libpkg::archive::source_date_epoch();
  ao.allow_unverified = allow_unverified;
  if (!dry_run) ao.cache = cache.open();
  ro.cache = ao.cache;  // also memoizes the grafts' content hashes

  for (const auto& w : flags.wheels) {
    if (flags.accepted_as_pure(w)) {
      // auditwheel copies it as it is (unless it is already there).
      const fs::path dest = fs::path(out_dir) / fs::path(w).filename();
      if (!dry_run) copy_pure_wheel(w, dest);
      if (json) {
        nlohmann::json doc = {{"wheel", w}, {"pure", true}};
        if (!dry_run) doc["result"] = {{"path", dest.string()}};
        std::printf("%s\n", doc.dump(2).c_str());
      } else {
        std::printf("%s: a pure-Python wheel (no ELF files): %s %s\n",
                    w.c_str(), dry_run ? "would copy it to" : "copied to",
                    dest.c_str());
      }
      continue;
    }
    bd::WheelAnalysis a = bd::analyze_wheel(w, options);
    bd::RepairPlan plan = bd::plan_repair(a, ro);
    if (dry_run) {
      if (json)
        std::printf("%s\n", plan.to_json().c_str());
      else
        std::fputs(plan.to_text().c_str(), stdout);
      continue;
    }
    bd::RepairResult r = bd::apply_repair(a, plan, out_dir, ao);
    print_repair_outcome(plan.to_json(), plan.notes, plan.grafts.size(),
                         plan.edits.size(), r, json, ao.cache.get());
  }
  print_cache_summary(ao.cache.get());
  return 0;
}

}  // namespace pkgtool
