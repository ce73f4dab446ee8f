// SPDX-License-Identifier: BSD-3-Clause
// apply_macos_repair: the planned macOS repair written in one pass.
#include "bundle/write_repaired.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/bundle/sbom.hpp"
#include "libpkg/wheel/macos_tag.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {

namespace {

// The file as planned: streamed through its edit overlay (the signature
// included), never copied to a staging tree.
archive::SourcePtr planned_source(const MacosFileEdit& e) {
  return archive::overlay_source(e.file, *e.overlay);
}

}  // namespace

RepairResult apply_macos_repair(const MacosRepairPlan& plan,
                                const fs::path& out_dir,
                                const ApplyOptions& options) {
  const fs::path out = out_dir / plan.output_name;
  std::error_code ec;
  if (fs::equivalent(out, plan.wheel, ec))
    throw Error(Errc::usage, plan.wheel.string(),
                "the repaired wheel would replace the input (same name in "
                "the output directory): choose another -w");
  std::map<std::string, const MacosFileEdit*> edit_of;
  for (const auto& e : plan.edits) edit_of[e.member] = &e;

  wheel::WheelEdits edits;
  u64 grafted_bytes = 0;
  // The wheel's own members are written by splicing their deflate data
  // (archive/splice.hpp): only what the edit changes is deflated again.
  for (const auto& e : plan.edits) {
    if (e.graft) continue;
    const archive::ZipEntry* entry = plan.zip->find(e.member);
    edits.replace[e.member] =
        entry ? archive::edited_member_source(plan.zip, *entry, e.overlay)
              : planned_source(e);
  }
  for (const auto& g : plan.grafts) {
    auto it = edit_of.find(g.member);
    archive::SourcePtr src = it == edit_of.end()
                                 ? archive::file_source(g.realpath)
                                 : planned_source(*it->second);
    grafted_bytes += src->size();
    edits.add.push_back({g.member, std::move(src), 0755});
  }
  const std::string wheel_member = plan.dist_info + "/WHEEL";
  const archive::ZipEntry* entry = plan.zip->find(wheel_member);
  if (!entry)
    throw Error(Errc::format, plan.zip->name(),
                wheel_member + ": missing WHEEL file");
  edits.replace[wheel_member] = archive::bytes_source(
      wheel::retag_wheel_text(
          plan.zip->read_text(*entry),
          wheel::with_platform_tags(plan.name, plan.platform_tags),
          plan.zip->name() + ":" + wheel_member),
      wheel_member);

  if (options.sbom && !plan.grafts.empty())
    add_sbom(edits, *plan.zip, plan.dist_info,
             sbom_json(plan, system_owner_lookup(options.cache.get())));

  return write_repaired_wheel(*plan.zip, out_dir, plan.output_name, edits,
                              options, grafted_bytes);
}

}  // namespace libpkg::bundle
