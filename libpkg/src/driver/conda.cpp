// SPDX-License-Identifier: BSD-3-Clause
// run_conda: relocate a staged prefix, pack it, check the packages.
#include "libpkg/driver/conda.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/config/names.hpp"

namespace libpkg::driver {
namespace fs = std::filesystem;

namespace {

std::string join(const std::vector<std::string>& items) {
  if (items.empty()) return "(none)";
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string placeholder_of(const CondaDriverOptions& o) {
  std::string p = o.placeholder
                      ? *o.placeholder
                      : fs::absolute(o.prefix).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

conda::RelocateOptions relocate_options(const CondaDriverOptions& o,
                                        const std::string& placeholder) {
  conda::RelocateOptions r;
  r.build_prefixes.push_back(placeholder);
  std::string own = fs::absolute(o.prefix).lexically_normal().string();
  if (own != placeholder) r.build_prefixes.push_back(own);
  r.outside = o.outside_rpaths;
  r.threads = o.common.threads;
  r.pool = o.common.pool;
  return r;
}

std::string format_name(conda::PackageFormat f) {
  return f == conda::PackageFormat::conda ? ".conda" : ".tar.bz2";
}

std::string relocation_line(const conda::FileRelocation& r) {
  auto show = [](const std::string& tag, const std::string& value) {
    return tag.empty() ? std::string("(none)")
                       : fmt::format("{} {}", tag, value);
  };
  return fmt::format("relocate {}: {} -> {}", r.path,
                     show(r.old_tag, r.old_value),
                     show(r.new_tag, r.new_value));
}

std::string plan_json(const conda::CondaMetadata& meta,
                      const conda::RelocationPlan& plan,
                      const std::string& placeholder) {
  nlohmann::json j;
  j["schema"] = "libpkg-conda-plan/1";
  j["name"] = meta.name;
  j["version"] = meta.version;
  j["build"] = meta.build;
  j["build_number"] = meta.build_number;
  j["depends"] = meta.depends;
  j["constrains"] = meta.constrains;
  j["placeholder"] = placeholder;
  j["files"] = plan.files;
  j["elf_files"] = plan.elf_files;
  j["relocations"] = nlohmann::json::array();
  for (const conda::FileRelocation& r : plan.relocations)
    j["relocations"].push_back({{"path", r.path},
                                {"old_tag", r.old_tag},
                                {"old", r.old_value},
                                {"new_tag", r.new_tag},
                                {"new", r.new_value},
                                {"changed", r.changed()},
                                {"notes", r.notes}});
  return j.dump();
}

i64 timestamp_ms(const CommonOptions& common) {
  if (common.timestamp) return *common.timestamp * 1000;
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void validate(const CondaDriverOptions& o) {
  std::error_code ec;
  if (o.prefix.empty())
    throw Error(Errc::usage, "conda", "no staged prefix given (--prefix)");
  require_directory(o.prefix, "staged prefix");
  // Packages and the staging tree written inside the prefix would be
  // packed into themselves.
  fs::path prefix = fs::weakly_canonical(o.prefix, ec);
  fs::path out = fs::weakly_canonical(o.common.out_dir, ec);
  auto [p_end, o_it] =
      std::mismatch(prefix.begin(), prefix.end(), out.begin(), out.end());
  if (!ec && p_end == prefix.end())
    throw Error(Errc::usage, o.common.out_dir.string(),
                "the output directory is inside the staged prefix " +
                    o.prefix.string());
  if (o.formats.empty())
    throw Error(Errc::usage, "conda", "no package format requested");
  if (o.zstd_level < 1 || o.zstd_level > 22)
    throw Error(Errc::usage, "conda",
                fmt::format("zstd level {} (accepted: 1..22)", o.zstd_level));
  if (o.placeholder && !o.placeholder->empty() && o.placeholder->front() != '/')
    throw Error(Errc::usage, *o.placeholder,
                "the placeholder must be an absolute path (the build prefix)");
}

}  // namespace

Summary run_conda(const CondaDriverOptions& options) {
  Stopwatch clock;
  const CommonOptions& common = options.common;
  const config::BuildConfig& config = common.config;
  validate(options);
  Summary summary;
  summary.driver = "conda";
  summary.config = config;
  summary.dry_run = common.dry_run;

  // complete_metadata checks names and fills subdir/arch now, so bad
  // metadata fails before anything is staged.
  conda::CondaMetadata meta =
      conda::complete_metadata(resolve_conda_metadata(options));
  std::string placeholder = placeholder_of(options);
  conda::RelocateOptions ropts = relocate_options(options, placeholder);

  summary.plan.push_back(
      fmt::format("prefix: {}", fs::absolute(options.prefix).string()));
  summary.plan.push_back(fmt::format("name: {}", meta.name));
  summary.plan.push_back(fmt::format("version: {}", meta.version));
  summary.plan.push_back(fmt::format("build string: {}", meta.build));
  if (!config.cudnn_version)
    if (auto cudnn = toolkit_cudnn(options))
      summary.plan.push_back(
          fmt::format("cuDNN {}: read from the toolkit at {}", cudnn->version,
                      cudnn->where.string()));
  summary.plan.push_back(fmt::format("build number: {}", meta.build_number));
  summary.plan.push_back(fmt::format("subdir: {}", meta.subdir));
  summary.plan.push_back(fmt::format("depends: {}", join(meta.depends)));
  if (!meta.constrains.empty())
    summary.plan.push_back(
        fmt::format("constrains: {}", join(meta.constrains)));
  std::string magma = config::conda_magma_package(config);
  if (!magma.empty())
    summary.plan.push_back(fmt::format(
        "host requirement of the old recipe (linked statically, not a run "
        "dependency): {}",
        magma));
  summary.plan.push_back(
      placeholder.empty() ? std::string("prefix placeholder: none (no search)")
                          : fmt::format("prefix placeholder: {}", placeholder));
  if (meta.version != config.version)
    summary.notes.push_back(
        fmt::format("the package version {} differs from the "
                    "configuration's {}",
                    meta.version, config.version));

  // config::conda_file_name is the configuration's name for the package;
  // custom metadata names the file after itself (index.json must match
  // the file name).
  // A configuration without a build string of its own (usage error) is
  // not the configuration's package.
  Result<std::string> own_build = attempt(
      {Errc::usage}, [&] { return config::conda_build_string(config); });
  const bool configs_own = meta.name == "pytorch" &&
                           meta.version == config.version && own_build &&
                           meta.build == own_build.value();
  std::vector<fs::path> outputs;
  for (conda::PackageFormat f : options.formats)
    outputs.push_back(common.out_dir /
                      (configs_own
                           ? config::conda_file_name(config, format_name(f))
                           : conda::package_stem(meta) + format_name(f)));

  if (common.log)
    common.log(
        fmt::format("planning the relocation of {}", options.prefix.string()));
  conda::RelocationPlan rplan;
  std::optional<ScratchDir> scratch;
  fs::path packed_from;
  if (common.dry_run) {
    rplan = conda::plan_relocation(options.prefix, ropts);
  } else {
    create_output_directory(common.out_dir);
    // Staged next to the outputs: hard links work when the output is on
    // the prefix's filesystem, copies otherwise.
    scratch.emplace(common.out_dir, ".libpkg-conda-");
    packed_from = scratch->path() / "prefix";
    rplan = conda::relocate_into(options.prefix, packed_from, ropts);
  }
  summary.plan.push_back(fmt::format("files: {} ({} dynamic ELF, {} relocated)",
                                     rplan.files, rplan.elf_files,
                                     rplan.changed_count()));
  for (const conda::FileRelocation& r : rplan.relocations) {
    if (r.changed()) summary.plan.push_back(relocation_line(r));
    for (const std::string& n : r.notes)
      summary.notes.push_back(fmt::format("{}: {}", r.path, n));
  }
  for (const std::string& n : rplan.notes) summary.notes.push_back(n);
  std::vector<std::string> formats;
  for (conda::PackageFormat f : options.formats)
    formats.push_back(f == conda::PackageFormat::conda
                          ? fmt::format(".conda (zstd {})", options.zstd_level)
                          : std::string(".tar.bz2"));
  summary.plan.push_back(fmt::format("formats: {}", join(formats)));
  for (const fs::path& out : outputs)
    summary.plan.push_back(fmt::format("output: {}", out.string()));
  summary.plan_json = plan_json(meta, rplan, placeholder);
  if (common.dry_run) {
    summary.seconds = clock.seconds();
    return summary;
  }

  conda::PackOptions pack;
  pack.formats = options.formats;
  pack.zstd_level = options.zstd_level;
  pack.threads = common.threads;
  pack.pool = common.pool;
  pack.cache = common.cache;  // large files' zstd frames and bzip2 blocks
  pack.timestamp_ms = timestamp_ms(common);
  pack.placeholder = placeholder;
  pack.out_dir = common.out_dir;
  pack.progress = common.progress;
  if (common.log) common.log(fmt::format("packing {} files", rplan.files));
  conda::PackResult packed = conda::pack(packed_from, meta, pack);
  scratch.reset();  // the staged tree is no longer needed

  std::size_t with_prefix = 0;
  for (const conda::PathRecord& r : packed.paths)
    if (r.prefix_placeholder) {
      ++with_prefix;
      summary.plan.push_back(fmt::format(
          "has_prefix: {} ({})", r.path,
          r.file_mode ? conda::file_mode_name(*r.file_mode) : "binary"));
    }
  summary.plan.push_back(fmt::format("paths: {} ({} with the placeholder)",
                                     packed.paths.size(), with_prefix));
  for (std::size_t i = 0; i < packed.outputs.size(); ++i) {
    if (packed.outputs[i] != outputs[i])
      throw Error(Errc::unsupported, packed.outputs[i].string(),
                  "internal error: packed under another name than planned (" +
                      outputs[i].string() + ")");
    // The size is the writers' count of bytes written, not the file's: an
    // output written into /dev/null or a FIFO has no size to read back.
    add_artifact(summary,
                 options.formats[i] == conda::PackageFormat::conda ? "conda-v2"
                                                                   : "conda",
                 packed.outputs[i], /*check=*/true, packed.sizes.at(i));
  }
  // Conda packages take CUDA from their dependencies (pytorch-cuda), so
  // check_binary does not expect the per-CUDA table's libraries inside.
  check_artifacts(summary, common, check_expectation(config, false));
  summary.seconds = clock.seconds();
  summary.record_cache(common);
  return summary;
}

}  // namespace libpkg::driver
