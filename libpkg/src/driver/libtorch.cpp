// SPDX-License-Identifier: BSD-3-Clause
// run_libtorch: see driver/libtorch.hpp. The input side (tree or wheel,
// build hash) is in libtorch_input.cpp, the macOS bundle in
// libtorch_macos.cpp.
#include "libpkg/driver/libtorch.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/glob.hpp"
#include "driver/libtorch_input.hpp"
#include "driver/libtorch_macos.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/bundle/tree.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/cppdist/debug_split.hpp"
#include "libpkg/cppdist/libtorch.hpp"
#include "libpkg/cuda/table_files.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver {
namespace {

cppdist::LibtorchVariant variant_of(const config::BuildConfig& c) {
  if (c.type != config::PackageType::libtorch)
    throw Error(
        Errc::usage, "configuration",
        fmt::format("the libtorch driver needs a libtorch "
                    "configuration, not {} ('{}')",
                    config::package_type_name(c.type), c.build_environment()));
  // macOS zips have no variants: the default stands for "shared".
  return c.variant.value_or(cppdist::LibtorchVariant{});
}

// What travels with a with-deps variant besides what the policy decides:
// the per-CUDA table's libraries (unconditional ones: libtorch builds set
// USE_CUSPARSELT=0) and OpenMP, always bundled by the old scripts.
bundle::TreeBundleOptions bundle_options(const LibtorchDriverOptions& o,
                                         const cppdist::LibtorchVariant& v,
                                         const std::vector<std::string>& skip,
                                         std::vector<std::string>& plan) {
  bundle::TreeBundleOptions b;
  b.skip_entries = skip;
  b.cache = o.common.cache;  // the grafts' content hashes
  b.bundle_external = v.with_deps;
  // A without-deps zip takes its dependencies from the user's machine:
  // one this machine lacks is not the package's problem.
  b.ignore_missing = !v.with_deps;
  b.hash_names = !o.keep_names;
  if (v.with_deps) {
    const config::Accelerator& accel = o.common.config.accelerator;
    if (accel.kind == config::AcceleratorKind::cuda) {
      const config::CudaTable& table = cuda_tables(o.common).find(accel);
      const std::string& arch = o.common.config.arch;
      std::vector<config::CudaLibrary> wanted;
      for (const config::CudaLibrary& lib : table.bundled_for(arch))
        if (lib.condition.empty()) wanted.push_back(lib);
      const cuda::TableFiles files = cuda::find_table_files(
          table, wanted, o.common.cuda_roots, cuda::elf_machine_of(arch));
      for (const cuda::TableFile& f : files.found)
        b.include.push_back(
            {f.path.string(), fmt::format("CUDA {} table", table.version),
             f.entry.keep_name || table.keeps_name(f.soname), false});
      b.keep_names.insert(b.keep_names.end(), table.keep_name_patterns.begin(),
                          table.keep_name_patterns.end());
      plan.push_back(fmt::format("CUDA {} table: {} libraries to bundle",
                                 table.version, b.include.size()));
    }
    b.include.push_back({"libgomp.so.1", "OpenMP", false, true});
  }
  for (const auto& spec : o.include)
    b.include.push_back({spec, "--include", false, false});
  return b;
}

// The regular files under lib/ the debug split will take (checked before
// anything is written, so a glob that matches nothing fails the dry run).
std::vector<std::string> debug_split_targets(
    const fs::path& lib, const std::vector<std::string>& globs) {
  std::vector<std::string> names;
  bool first = false;
  for (const auto& e : fs::recursive_directory_iterator(lib)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    const std::string name = e.path().filename().string();
    for (std::size_t i = 0; i < globs.size(); ++i)
      if (glob_match(globs[i], name)) {
        names.push_back(name);
        first = first || i == 0;
        break;
      }
  }
  if (!first)
    throw Error(Errc::usage, lib.string(),
                fmt::format("debug split: no library matches '{}' (its "
                            "debuglink CRC names the debug zip)",
                            globs.empty() ? "" : globs.front()));
  std::sort(names.begin(), names.end());
  return names;
}

bool has_static_archive(const fs::path& lib) {
  for (const auto& e : fs::recursive_directory_iterator(lib))
    if (e.path().extension() == ".a") return true;
  return false;
}

}  // namespace

Summary run_libtorch(const LibtorchDriverOptions& o) {
  Stopwatch clock;
  Summary s;
  s.driver = "libtorch";
  s.config = o.common.config;
  s.dry_run = o.common.dry_run;
  const cppdist::LibtorchVariant variant = variant_of(o.common.config);
  auto log = [&](const std::string& line) {
    if (o.common.log) o.common.log(line);
  };

  ScratchDir scratch = ScratchDir::in_temp("libpkg-libtorch-");
  LibtorchInput input = resolve_libtorch_input(o, scratch.path());
  const std::string build_hash = resolve_build_hash(o);
  const cppdist::LibtorchName name = config::libtorch_name(o.common.config);

  s.plan.push_back(input.description);
  const bool macos = o.common.config.os == "macos";
  s.plan.push_back(fmt::format(
      "{}, build-version {}, build-hash {}",
      macos ? "macOS " + o.common.config.arch : "variant " + variant.name(),
      name.version, build_hash));
  for (const auto& skipped : input.skip)
    s.plan.push_back(fmt::format("skip {} (not part of the layout)", skipped));

  if (macos && o.debug_split)
    throw Error(Errc::usage, "--debug-split",
                "splits ELF debug info (objcopy); a macOS zip has none");
  log(fmt::format("resolving the dependencies of {}", input.tree.string()));
  bundle::TreeBundlePlan bundle;
  std::optional<bundle::MacosTreeBundlePlan> mac;
  if (macos) {
    mac = plan_libtorch_macos(o, input, s.plan);
    s.plan_json = mac->to_json(-1);
  } else {
    bundle::TreeBundleOptions bo =
        bundle_options(o, variant, input.skip, s.plan);
    bundle = bundle::plan_tree_bundle(input.tree, bo);
    for (auto& line : bundle.lines()) s.plan.push_back(std::move(line));
    if (!variant.with_deps && !bundle.external.empty())
      s.plan.push_back(fmt::format(
          "without-deps: {} external librar{} left to the user's system "
          "(accepted by the dependency check)",
          bundle.external.size(), bundle.external.size() == 1 ? "y" : "ies"));
    s.plan_json = bundle.to_json(-1);
  }

  if (!macos && !variant.shared && !has_static_archive(input.tree / "lib"))
    s.notes.push_back(
        "static variant, but lib/ holds no static archive (.a): the zip "
        "will contain the shared libraries, as the old static zips did "
        "(the -DTORCH_STATIC=1 flag never reached their build)");
  if (o.debug_split)
    s.plan.push_back(fmt::format(
        "debug split of {} (objcopy --only-keep-debug, --strip-debug, "
        "--add-gnu-debuglink)",
        fmt::join(debug_split_targets(input.tree / "lib", o.debug_libraries),
                  ", ")));
  s.plan.push_back(fmt::format(
      "write {}", (o.common.out_dir / cppdist::zip_name(name)).string()));
  if (o.write_latest)
    for (const auto& latest : cppdist::latest_names(name))
      s.plan.push_back(
          fmt::format("copy to {}", (o.common.out_dir / latest).string()));
  if (o.debug_split) {
    std::string debug_name = cppdist::debug_zip_name(name, 0);
    debug_name.replace(debug_name.size() - 12, 8, "<crc32>");  // 00000000.zip
    s.plan.push_back(
        fmt::format("write {}", (o.common.out_dir / debug_name).string()));
  }
  if (o.common.dry_run) {
    s.seconds = clock.seconds();
    s.record_cache(o.common);
    return s;
  }

  create_output_directory(o.common.out_dir);
  ScratchDir work(o.common.out_dir, ".libpkg-libtorch-");
  const fs::path staging = work.path() / "libtorch";
  log("staging the tree (hard links)");
  bundle::stage_tree(input.tree, staging, input.skip);
  const std::size_t grafts = mac ? mac->grafts.size() : bundle.grafts.size();
  const std::size_t edits = mac ? mac->edits.size() : bundle.edits.size();
  if (grafts || edits)
    log(fmt::format("bundling {} libraries, editing {} files", grafts, edits));
  if (mac)
    bundle::apply_macos_tree_bundle(*mac, staging);
  else
    bundle::apply_tree_bundle(bundle, staging);

  std::optional<cppdist::DebugSplitResult> split;
  if (o.debug_split) {
    log("splitting debug info");
    cppdist::DebugSplitOptions dso;
    dso.libraries = o.debug_libraries;
    dso.objcopy = o.objcopy;
    split =
        cppdist::split_debug_info(staging / "lib", work.path() / "debug", dso);
  }

  cppdist::LibtorchPackOptions po;
  po.name = name;
  po.build_hash = build_hash;
  po.level = o.common.zip_level;
  po.threads = o.common.threads;
  po.pool = o.common.pool;
  po.timestamp = o.common.timestamp;
  po.write_latest = o.write_latest;
  po.progress = o.common.progress;
  po.cache = o.common.cache;
  log(fmt::format("packing {}", cppdist::zip_name(name)));
  cppdist::LibtorchPackResult packed =
      cppdist::pack_libtorch(staging, o.common.out_dir, po);
  add_artifact(s, "libtorch", packed.zip, /*check=*/true, packed.zip_size);
  for (std::size_t i = 0; i < packed.latest.size(); ++i)
    add_artifact(s, "libtorch-latest", packed.latest[i], /*check=*/false,
                 packed.latest_sizes[i]);
  if (split) {
    fs::path debug_zip =
        o.common.out_dir / cppdist::debug_zip_name(name, *split->main_crc);
    const u64 debug_size = cppdist::write_debug_zip(
        *split, debug_zip, o.common.zip_level, o.common.threads,
        o.common.timestamp, o.common.pool);
    add_artifact(s, "debug-libtorch", debug_zip, /*check=*/false, debug_size);
    for (const auto& f : split->files)
      s.plan.push_back(fmt::format("debuglink {} -> {} (crc32 {:08x})",
                                   f.library.filename().string(),
                                   f.debug.filename().string(), f.crc));
  }

  // What the variant leaves to the user's machine is not a packaging
  // error: without-deps zips rely on the system's CUDA and OpenMP, and
  // the GPU driver libraries never travel.
  CommonOptions co = o.common;
  for (const auto& [soname, path] : bundle.external)
    co.check.allow_external.push_back(soname);
  for (const auto& soname : bundle.excluded)
    co.check.allow_external.push_back(soname);
  for (const auto& [soname, needers] : bundle.missing)
    co.check.allow_external.push_back(soname);
  check::Expectation expect =
      check_expectation(o.common.config, !macos && variant.with_deps);
  // The zip claims no platform tag: hold its Mach-O files to the
  // deployment target and arch it was built for.
  if (macos) expect.platform = macos_zip_platform(o);
  check_artifacts(s, co, expect);
  s.seconds = clock.seconds();
  s.record_cache(o.common);
  return s;
}

}  // namespace libpkg::driver
