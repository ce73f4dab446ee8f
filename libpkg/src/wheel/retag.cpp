// SPDX-License-Identifier: BSD-3-Clause
// `wheel tags`: new python/abi/platform tags, build tag, local version
// stripping, written as a raw-copy rewrite (see wheel.hpp).
#include <algorithm>

#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::wheel {

namespace {

// wheel tags' rule: "+a.b" appends, "-a.b" removes, anything else replaces.
std::vector<std::string> apply_tag_edit(const std::vector<std::string>& tags,
                                        const std::optional<std::string>& edit,
                                        std::string_view what) {
  if (!edit) return tags;
  std::vector<std::string> out;
  if (!edit->empty() && (edit->front() == '+' || edit->front() == '-')) {
    auto change = split_tag_set(std::string_view(*edit).substr(1), what);
    if (edit->front() == '+') {
      out = tags;
      out.insert(out.end(), change.begin(), change.end());
    } else {
      for (const auto& t : tags)
        if (std::find(change.begin(), change.end(), t) == change.end())
          out.push_back(t);
    }
  } else {
    out = split_tag_set(*edit, what);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty())
    throw Error(Errc::usage, std::string(what),
                "'" + *edit + "' would leave no tags");
  return out;
}

std::string strip_local(std::string_view version) {
  return std::string(version.substr(0, version.find('+')));
}

}  // namespace

WheelName retagged_name(const WheelName& name, const RetagOptions& options) {
  WheelName out = name;
  out.python_tags =
      apply_tag_edit(name.python_tags, options.python_tags, "python tag");
  out.abi_tags = apply_tag_edit(name.abi_tags, options.abi_tags, "abi tag");
  out.platform_tags =
      apply_tag_edit(name.platform_tags, options.platform_tags, "platform tag");
  if (options.build) {
    if (options.build->empty()) {
      out.build.reset();
    } else {
      if (!is_valid_build_tag(*options.build))
        throw Error(Errc::usage, *options.build,
                    "invalid build tag (must start with a digit)");
      out.build = *options.build;
    }
  }
  if (options.strip_local_version) out = out.without_local_version();
  return out;
}

RewriteResult retag(const fs::path& wheel, const RetagOptions& options) {
  const WheelName name = WheelName::parse(wheel.filename().string());
  const WheelName new_name = retagged_name(name, options);
  fs::path out_dir =
      options.out_dir.empty() ? wheel.parent_path() : options.out_dir;
  if (out_dir.empty()) out_dir = ".";
  const fs::path out = out_dir / new_name.format();
  std::error_code ec;
  const bool same_file =
      fs::weakly_canonical(out, ec) == fs::weakly_canonical(wheel, ec);
  if (same_file && !options.in_place)
    throw Error(Errc::usage, wheel.string(),
                "the retagged wheel has the same name as the input (pass "
                "in_place / --in-place to rewrite it)");

  auto zip = archive::ZipReader::open(wheel);
  const std::string dist_info = find_dist_info(zip, name);
  create_output_directory(out_dir);
  WheelEdits edits;

  const std::string wheel_member = dist_info + "/WHEEL";
  const archive::ZipEntry* wheel_entry = zip.find(wheel_member);
  if (!wheel_entry)
    throw Error(Errc::format, zip.name(), "missing " + wheel_member);
  WheelFile wf = WheelFile::parse(zip.read_text(*wheel_entry),
                                  zip.name() + ":" + wheel_member);
  wf.set_tags(new_name.tags());
  if (options.build) wf.set_build(*options.build);
  edits.replace[wheel_member] =
      archive::bytes_source(wf.format(), zip.name() + ":" + wheel_member);

  if (options.strip_local_version && !name.local_version().empty()) {
    // Rename <name>-<version+local>.dist-info (and .data) by stripping the
    // local part of the directory's own spelling of the version.
    std::string stem = dist_info.substr(0, dist_info.size() - 10);
    auto dash = stem.find('-');
    std::string new_stem =
        stem.substr(0, dash) + "-" + strip_local(stem.substr(dash + 1));
    const std::string old_data = stem + ".data/";
    const std::string old_meta = dist_info + "/";
    for (const auto& e : zip.entries()) {
      if (e.name.compare(0, old_meta.size(), old_meta) == 0)
        edits.rename[e.name] =
            new_stem + ".dist-info/" + e.name.substr(old_meta.size());
      else if (e.name.compare(0, old_data.size(), old_data) == 0)
        edits.rename[e.name] =
            new_stem + ".data/" + e.name.substr(old_data.size());
    }
    const std::string md_member = dist_info + "/METADATA";
    if (const archive::ZipEntry* md = zip.find(md_member)) {
      std::string source = zip.name() + ":" + md_member;
      std::string text = zip.read_text(*md);
      CoreMetadata core = read_core_metadata(text, source);
      edits.replace[md_member] = archive::bytes_source(
          rewrite_metadata_version(text, strip_local(core.version), source),
          source);
    }
  }

  RewriteOptions ropt;
  ropt.threads = options.threads;
  ropt.pool = options.pool;
  ropt.allow_unverified = options.allow_unverified;
  RewriteResult result = rewrite(zip, out, edits, ropt);
  if (options.remove_original && !same_file) fs::remove(wheel);
  return result;
}

}  // namespace libpkg::wheel
