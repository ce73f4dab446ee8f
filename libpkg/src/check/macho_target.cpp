// SPDX-License-Identifier: BSD-3-Clause
// deployment-target and code-signature: the two things macOS checks before
// it runs any code of a Mach-O file. A file whose minos is above the
// wheel's macosx_X_Y tag is refused by the older systems pip installs it on;
// a slice missing from a universal2 wheel's file fails to load on that
// architecture (a tag promises its archs for every loadable file); an arm64
// slice that is unsigned, or whose signature no longer matches its pages (an
// edit without re-signing), is killed.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "check/package.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/macho/view.hpp"
#include "libpkg/wheel/macos_tag.hpp"

namespace libpkg::check::detail {
namespace {

// A version in Mach-O's nibbles: xxxx.yy.zz.
constexpr u32 macho_version(u32 major, u32 minor) {
  return major << 16 | minor << 8;
}
// arm64 Macs start at macOS 11: a lower tag means 11.0 for arm64 slices.
constexpr u32 kArm64Floor = macho_version(11, 0);

struct MacTag {
  std::string tag;
  u32 version = 0;
  std::vector<std::string> archs;  // empty: a multi-arch name we don't know
};

// The architectures a macosx tag's last field names (packaging's
// _mac_binary_formats, reduced to the sets a file can be checked against).
std::vector<std::string> tag_archs(std::string_view arch) {
  if (arch == "universal2") return {"arm64", "x86_64"};
  if (arch == "intel") return {"i386", "x86_64"};
  if (arch == "fat64") return {"ppc64", "x86_64"};
  if (arch == "fat" || arch == "fat32") return {"i386", "ppc"};
  if (arch == "fat3") return {"i386", "ppc", "x86_64"};
  if (arch == "universal") return {};
  return {std::string(arch)};
}

// "macosx_11_0_universal2" → 11.0, {arm64, x86_64}.
std::optional<MacTag> parse_mac_tag(std::string_view tag) {
  if (!tag.starts_with("macosx_")) return std::nullopt;
  std::string_view rest = tag.substr(7);
  u32 major = 0, minor = 0;
  auto r1 = std::from_chars(rest.data(), rest.data() + rest.size(), major);
  if (r1.ec != std::errc() || r1.ptr == rest.data() + rest.size() ||
      *r1.ptr != '_')
    return std::nullopt;
  const char* p = r1.ptr + 1;
  auto r2 = std::from_chars(p, rest.data() + rest.size(), minor);
  if (r2.ec != std::errc() || r2.ptr == rest.data() + rest.size() ||
      *r2.ptr != '_' || major > 0xffff || minor > 0xff)
    return std::nullopt;
  std::string_view arch(r2.ptr + 1, rest.data() + rest.size() - r2.ptr - 1);
  if (arch.empty()) return std::nullopt;
  return MacTag{std::string(tag), macho_version(major, minor), tag_archs(arch)};
}

std::string join_archs(const std::vector<std::string>& archs) {
  return archs.empty() ? "no slice" : fmt::format("{}", fmt::join(archs, "+"));
}

// The highest minos per arch and the file that has it.
std::string highest_minos(const Package& pkg) {
  std::map<std::string, std::pair<u32, std::string>> top;
  for (const auto& e : pkg.machos)
    for (const auto& s : e.slices)
      if (s.minos && (!top.count(s.arch) || *s.minos > top[s.arch].first))
        top[s.arch] = {*s.minos, e.member};
  std::vector<std::string> parts;
  for (const auto& [arch, v] : top)
    parts.push_back(fmt::format("{} {} ({})", arch,
                                macho::version_string(v.first), v.second));
  return parts.empty()
             ? "no minos recorded"
             : fmt::format("highest minos {}", fmt::join(parts, ", "));
}

std::vector<std::string> file_archs(const MachoEntry& e) {
  std::vector<std::string> archs;
  for (const auto& s : e.slices) archs.push_back(s.arch);
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string plural_files(std::size_t n) {
  return fmt::format("{} Mach-O file{}", n, n == 1 ? "" : "s");
}

bool is_arm64(std::string_view arch) { return arch.starts_with("arm64"); }

}  // namespace

void check_deployment_target(const Package& pkg, const CheckOptions& options,
                             CheckResult& result) {
  if (pkg.machos.empty()) {
    result.status = Status::skip;
    result.summary = "no Mach-O files in the package";
    return;
  }
  std::vector<MacTag> tags;
  std::vector<std::string> other;
  const std::vector<std::string> claimed =
      options.expect.platform ? std::vector{*options.expect.platform}
                              : pkg.platform_tags;
  for (const auto& t : claimed) {
    if (auto m = parse_mac_tag(t))
      tags.push_back(*m);
    else
      other.push_back(t);
  }
  if (tags.empty()) {
    if (!claimed.empty()) {
      result.status = Status::fail;
      result.problems.push_back(
          {"", fmt::format("platform {} is not a macOS tag "
                           "(macosx_<major>_<minor>_<arch>), but the package "
                           "has Mach-O files",
                           fmt::join(claimed, "."))});
      result.summary = "Mach-O files under a non-macOS platform tag";
      return;
    }
    // A libtorch zip claims no tag: its files must at least agree.
    std::map<std::vector<std::string>, std::string> sets;
    for (const auto& e : pkg.machos)
      if (e.loadable) sets.emplace(file_archs(e), e.member);
    if (sets.size() > 1)
      for (const auto& [archs, member] : sets)
        result.problems.push_back(
            {member, fmt::format("has {}, other files of the package differ "
                                 "(one architecture set per package)",
                                 join_archs(archs))});
    result.status = result.problems.empty() ? Status::skip : Status::fail;
    result.summary = fmt::format(
        "no macOS platform tag to check against (a wheel's tag, or "
        "--platform macosx_11_0_arm64); {}",
        highest_minos(pkg));
    return;
  }
  // Each tag claims "macOS >= version on these archs": an arch's ceiling is
  // the lowest version claimed for it; the archs are every tag's.
  std::map<std::string, std::pair<u32, std::string>> ceiling;
  bool known_archs = true;
  for (const auto& t : tags) {
    if (t.archs.empty()) known_archs = false;
    for (const auto& a : t.archs) {
      u32 v = is_arm64(a) ? std::max(t.version, kArm64Floor) : t.version;
      auto it = ceiling.find(a);
      if (it == ceiling.end() || v < it->second.first) ceiling[a] = {v, t.tag};
    }
  }
  std::vector<std::string> wanted;
  for (const auto& [a, c] : ceiling) wanted.push_back(a);
  std::vector<std::string> tag_names;
  for (const auto& t : tags) tag_names.push_back(t.tag);
  const std::string tag_text = fmt::format("{}", fmt::join(tag_names, "."));
  std::size_t files = 0;
  for (const auto& e : pkg.machos) {
    if (!e.loadable) {
      result.notes.push_back(fmt::format(
          "{}: not loaded by dyld (object or debug file)", e.member));
      continue;
    }
    ++files;
    const auto archs = file_archs(e);
    // Every file must have each arch the tag claims (a multi-arch tag is a
    // promise for the whole package); an extra slice is only unused bytes.
    if (known_archs) {
      std::set<std::string> have;
      for (const auto& a : archs) have.insert(wheel::tag_arch(a));
      std::vector<std::string> missing, extra;
      for (const auto& a : wanted)
        if (!have.count(a)) missing.push_back(a);
      for (const auto& a : have)
        if (!ceiling.count(a)) extra.push_back(a);
      if (!missing.empty())
        result.problems.push_back(
            {e.member,
             fmt::format("has {}, but {} claims {}: no {} slice, so "
                         "it cannot load there",
                         join_archs(archs), tag_text, join_archs(wanted),
                         fmt::join(missing, " or "))});
      else if (!extra.empty())
        result.notes.push_back(fmt::format(
            "{}: also has {}, which {} does not claim (unused there)", e.member,
            fmt::join(extra, "+"), tag_text));
    }
    for (const auto& s : e.slices) {
      auto c = ceiling.find(s.arch);
      if (c == ceiling.end()) continue;
      if (!s.minos) {
        if (s.parsed)
          result.notes.push_back(fmt::format(
              "{} ({}): no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX", e.member,
              s.arch));
        continue;
      }
      if (*s.minos > c->second.first)
        result.problems.push_back(
            {e.member,
             fmt::format("({}) minos {} is above {} ({} for {}): macOS "
                         "{} refuses to load it",
                         s.arch, macho::version_string(*s.minos),
                         c->second.second,
                         macho::version_string(c->second.first), s.arch,
                         macho::version_string(c->second.first))});
    }
  }
  if (!other.empty())
    result.notes.push_back(
        fmt::format("non-macOS tags not checked: {}", fmt::join(other, ", ")));
  result.summary =
      fmt::format("{} against {} ({}): {}", plural_files(files), tag_text,
                  join_archs(wanted), highest_minos(pkg));
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

void check_code_signature(const Package& pkg, const CheckOptions& options,
                          CheckResult& result) {
  if (pkg.machos.empty()) {
    result.status = Status::skip;
    result.summary = "no Mach-O files in the package";
    return;
  }
  std::vector<std::vector<std::vector<std::string>>> found(pkg.machos.size());
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(pkg.machos.size(), [&](std::size_t i) {
    found[i] = verify_signatures(pkg.machos[i]);
  });
  std::size_t verified = 0, unsigned_other = 0;
  for (std::size_t i = 0; i < pkg.machos.size(); ++i) {
    const MachoEntry& e = pkg.machos[i];
    for (std::size_t k = 0; k < e.slices.size(); ++k) {
      const MachoSlice& s = e.slices[k];
      const std::vector<std::string>& problems =
          k < found[i].size() ? found[i][k] : std::vector<std::string>{};
      if (!s.parsed) {
        result.notes.push_back(fmt::format(
            "{} ({}): 32-bit slice, signature not checked", e.member, s.arch));
        continue;
      }
      if (!s.is_signed) {
        if (e.loadable && is_arm64(s.arch))
          result.problems.push_back(
              {e.member, fmt::format("({}) is not signed: macOS kills "
                                     "unsigned arm64 code (pkgtool macho "
                                     "sign)",
                                     s.arch)});
        else
          ++unsigned_other;
        continue;
      }
      if (problems.empty()) {
        ++verified;
        continue;
      }
      constexpr std::size_t kShown = 3;
      std::vector<std::string> shown(
          problems.begin(),
          problems.begin() + std::min(kShown, problems.size()));
      std::string more =
          problems.size() > kShown
              ? fmt::format(" (and {} more)", problems.size() - kShown)
              : "";
      result.problems.push_back(
          {e.member, fmt::format("({}) code signature does not verify: {}{}",
                                 s.arch, fmt::join(shown, "; "), more)});
    }
  }
  result.summary = fmt::format(
      "{} signature{} verif{} in {}{}", verified, verified == 1 ? "" : "s",
      verified == 1 ? "ies" : "y", plural_files(pkg.machos.size()),
      unsigned_other
          ? fmt::format(", {} unsigned slice{} where macOS "
                        "allows it (x86_64, objects)",
                        unsigned_other, unsigned_other == 1 ? "" : "s")
          : "");
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
