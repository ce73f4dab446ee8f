// SPDX-License-Identifier: BSD-3-Clause
// plan_macos_repair: unpack the Mach-O members, plan their closure
// (macos_closure.hpp: what to bundle, how every reference and run path
// changes, each edit with its preflight and signature) and retag from the
// binaries' minos, before anything is written.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "bundle/macos_closure.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

namespace libpkg::bundle {
namespace {

bool is_macho_member(const archive::ZipReader& zip,
                     const archive::ZipEntry& entry) {
  // Smaller than a mach header: not a loadable image.
  if (entry.is_directory() || entry.is_symlink() ||
      entry.uncompressed_size < 28)
    return false;
  return lm::MachOFile::has_magic(zip.read_prefix(entry, 4));
}

// The minos of a slice as a tag version; none without a macOS platform
// command.
std::optional<wheel::MacosVersion> slice_minos(const lm::Slice& s) {
  auto pv = s.platform_version();
  if (!pv) return std::nullopt;
  // LC_BUILD_VERSION for another platform (iOS, ...) says nothing here.
  if (pv->command == lm::kLcBuildVersion && pv->platform != 1)
    return std::nullopt;
  return wheel::MacosVersion{pv->minos >> 16, (pv->minos >> 8) & 0xff};
}

class Planner {
 public:
  Planner(const fs::path& wheel, const MacosRepairOptions& options)
      : options_(options) {
    plan_.wheel = wheel;
    plan_.refs = options.refs;
    plan_.sign = options.sign;
  }

  MacosRepairPlan run() {
    open_wheel();
    unpack();
    choose_lib_dir();
    take_closure(plan_macos_closure({plan_.wheel.string(), plan_.tree,
                                     plan_.binaries, plan_.lib_dir},
                                    options_),
                 plan_);
    retag();
    return std::move(plan_);
  }

 private:
  void open_wheel() {
    plan_.name = wheel::WheelName::parse(plan_.wheel.filename().string());
    plan_.zip = std::make_shared<archive::ZipReader>(
        archive::ZipReader::open(plan_.wheel));
    archive::check_member_names(*plan_.zip, /*allow_symlinks=*/true);
    plan_.dist_info = wheel::find_dist_info(*plan_.zip, plan_.name);
    plan_.scratch = std::make_shared<ScratchDir>(
        options_.scratch_parent.empty()
            ? ScratchDir::in_temp("libpkg-macos-repair-")
            : ScratchDir(options_.scratch_parent, ".libpkg-macos-repair-"));
    // Canonical, so paths dyld's rules reach through symlinked directories
    // are still recognised as the wheel's own.
    plan_.tree = fs::weakly_canonical(plan_.scratch->path()) / "wheel";
  }

  void unpack() {
    const archive::ZipReader& zip = *plan_.zip;
    std::set<const archive::ZipEntry*> wanted;
    for (const auto& e : zip.entries())
      if (is_macho_member(zip, e)) wanted.insert(&e);
    archive::ExtractOptions eo;
    eo.threads = options_.threads;
    eo.pool = options_.pool;
    eo.max_expansion = 0;  // the zip reader's limits apply
    eo.select = [&](const archive::ZipEntry& e) { return wanted.count(&e); };
    if (!wanted.empty()) archive::extract(zip, plan_.tree, eo);
    for (const auto& e : zip.entries()) {
      if (!wanted.count(&e)) continue;
      fs::path file = plan_.tree / e.name;
      // A fat magic is also Java's class-file magic: such a member that
      // does not parse is not a Mach-O file. Anything else is bad input.
      Result<lm::MachOFile> f = attempt({Errc::format, Errc::unsupported}, [&] {
        return lm::MachOFile::open(file);
      });
      if (!f) {
        auto head = zip.read_prefix(e, 4);
        if (head[0] == 0xca && head[1] == 0xfe) continue;
        throw Error(Errc::format, plan_.wheel.string(),
                    fmt::format("{}: {}", e.name, f.error().message()));
      }
      plan_.binaries.push_back(e.name);
    }
    if (plan_.binaries.empty())
      throw Error(Errc::usage, plan_.wheel.string(),
                  "no Mach-O files: a pure-Python wheel needs no repair");
  }

  void choose_lib_dir() {
    if (options_.lib_dir) {
      std::string d = *options_.lib_dir;
      while (!d.empty() && d.back() == '/') d.pop_back();
      fs::path p(d);
      if (d.empty() || p.is_absolute() ||
          std::any_of(p.begin(), p.end(),
                      [](const fs::path& c) { return c == ".." || c == "."; }))
        throw Error(Errc::usage, d,
                    "--lib-dir must be a relative directory inside the wheel");
      plan_.lib_dir = d;
      return;
    }
    // delocate's rule: the package named like the distribution, else the
    // first top-level package, else "<name>.dylibs" at the root.
    std::set<std::string> tops;
    for (const auto& e : plan_.zip->entries()) {
      auto slash = e.name.find('/');
      if (slash == std::string::npos) continue;
      std::string top = e.name.substr(0, slash);
      if (top == plan_.dist_info || top.ends_with(".data")) continue;
      tops.insert(top);
    }
    const std::string want =
        wheel::escape_distribution(plan_.name.distribution);
    std::string pkg;
    for (const auto& t : tops)
      if (wheel::escape_distribution(t) == want) pkg = t;
    if (pkg.empty() && !tops.empty()) pkg = *tops.begin();
    plan_.lib_dir =
        pkg.empty() ? want + options_.lib_sdir : pkg + "/" + options_.lib_sdir;
  }

  // Every Mach-O file of the output (member, file): the wheel's and the
  // grafts.
  std::vector<std::pair<std::string, fs::path>> nodes() const {
    std::vector<std::pair<std::string, fs::path>> out;
    for (const auto& m : plan_.binaries) out.emplace_back(m, plan_.tree / m);
    for (const auto& g : plan_.grafts) out.emplace_back(g.member, g.realpath);
    return out;
  }

  // A platform tag promises its archs for every loadable file of the wheel
  // (delocate computes it over all slices of all files and can tag a wheel
  // universal2 whose extension is thin). So the tag takes the archs every
  // executable, dylib and bundle has. An arch the input's tag claimed but
  // a file lacks is an error naming the files; one it never claimed (a fat
  // library grafted into an arm64 wheel) is left out with a note.
  std::set<std::string> tag_archs(
      const std::vector<wheel::MacosBinary>& loadable) {
    std::set<std::string> common = wheel::archs_of_every_file(loadable);
    std::set<std::string> all, claimed;
    for (const auto& b : loadable) all.insert(wheel::tag_arch(b.arch));
    for (const auto& t : plan_.name.platform_tags)
      for (auto& a : wheel::macos_tag_archs(t)) claimed.insert(a);
    if (loadable.empty() || all == common) return common;
    std::map<std::string, std::set<std::string>> has;  // file → archs
    for (const auto& b : loadable) has[b.file].insert(wheel::tag_arch(b.arch));
    std::vector<std::string> lacking, left_out;
    for (const auto& arch : all) {
      if (common.count(arch)) continue;
      std::vector<std::string> files;
      for (const auto& [file, archs] : has)
        if (!archs.count(arch)) files.push_back(file);
      (claimed.count(arch) ? lacking : left_out)
          .push_back(
              fmt::format("{} lacked by {}", arch, fmt::join(files, ", ")));
    }
    if (!lacking.empty())
      throw Error(
          Errc::format, plan_.wheel.string(),
          fmt::format("the tag {} claims {}, but loadable Mach-O "
                      "files lack an arch of it: {} (every file "
                      "must have each arch of the tag: rebuild them, "
                      "or repair single-arch wheels and join them "
                      "with `pkgtool wheel fuse`)",
                      fmt::join(plan_.name.platform_tags, "."),
                      fmt::join(claimed, "+"), fmt::join(lacking, "; ")));
    if (common.empty())
      throw Error(Errc::format, plan_.wheel.string(),
                  fmt::format("no architecture is common to every loadable "
                              "Mach-O file: {}",
                              fmt::join(left_out, "; ")));
    plan_.notes.push_back(fmt::format(
        "left out of the tag (an arch the input's tag did not claim, which "
        "some loadable files lack): {}",
        fmt::join(left_out, "; ")));
    return common;
  }

  void retag() {
    std::vector<wheel::MacosBinary> bins, loadable;
    for (const auto& [member, file] : nodes()) {
      lm::MachOFile f = lm::MachOFile::open(file);
      for (const auto& s : f.slices()) {
        const u32 type = s.filetype();
        if (type == lm::kMhExecute || type == lm::kMhDylib ||
            type == lm::kMhBundle)
          loadable.push_back({member, s.arch(), {}});
        if (s.parsed())
          if (auto v = slice_minos(s)) bins.push_back({member, s.arch(), *v});
      }
    }
    const std::set<std::string> archs = tag_archs(loadable);
    std::erase_if(bins, [&](const wheel::MacosBinary& b) {
      return !loadable.empty() && !archs.count(wheel::tag_arch(b.arch));
    });
    if (bins.empty()) {
      plan_.platform_tags = plan_.name.platform_tags;
      plan_.notes.push_back(
          "no Mach-O file states a minimum macOS version: platform tags kept");
    } else {
      wheel::MacosTagOptions to;
      to.target = options_.target;
      wheel::MacosTagResult r =
          wheel::compute_macos_platform_tags(bins, to, plan_.wheel.string());
      plan_.platform_tags = r.platform_tags;
      plan_.arch_versions = r.arch_versions;
    }
    plan_.output_name =
        wheel::with_platform_tags(plan_.name, plan_.platform_tags).format();
  }

  const MacosRepairOptions& options_;
  MacosRepairPlan plan_;
};

}  // namespace

bool is_macos_wheel(const fs::path& wheel) {
  wheel::WheelName name = wheel::WheelName::parse(wheel.filename().string());
  return std::any_of(
      name.platform_tags.begin(), name.platform_tags.end(),
      [](const std::string& t) { return wheel::is_macos_platform_tag(t); });
}

MacosRepairPlan plan_macos_repair(const fs::path& wheel,
                                  const MacosRepairOptions& options) {
  return Planner(wheel, options).run();
}

}  // namespace libpkg::bundle
