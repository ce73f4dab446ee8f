// SPDX-License-Identifier: BSD-3-Clause
// dependencies, rpath, runtimes: what the loader will do with the package
// once installed. check_binary.sh only printed `ldd` and RUNPATH; these
// fail on what users hit: a library picked up from the build machine's
// /usr/lib, a build directory left in RPATH, two OpenMP runtimes in one
// process ("OMP: Error #15"), a grafted library whose SONAME no longer
// matches its file name.
#include <fmt/format.h>

#include <map>

#include "base/glob.hpp"
#include "check/package.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

const deps::PolicySet& policy_set(const CheckOptions& options) {
  return options.policies ? *options.policies : deps::PolicySet::builtin();
}

// The policy whose whitelist decides which system libraries are fine: the
// claimed one, else the broadest of the binaries' libc family (conda and
// libtorch packages claim no tag but run on the same systems).
const deps::Policy* allowing_policy(const Package& pkg,
                                    const CheckOptions& options) {
  const deps::PolicySet& policies = policy_set(options);
  std::string tag, why;
  if (const deps::Policy* p =
          claimed_policy(pkg, options, policies, &tag, &why))
    return p;
  deps::Libc libc = deps::Libc::glibc;
  for (const auto& e : pkg.elfs)
    if (e.facts.libc) libc = *e.facts.libc;
  auto family = policies.family(libc);
  return family.empty() ? nullptr : family.back();
}

bool allowed_external(const CheckOptions& options, const ResolvedNeed& need) {
  if (matches_any(options.allow_external, need.soname)) return true;
  if (need.path && matches_any(options.allow_external, need.path->string()))
    return true;
  return need.realpath &&
         matches_any(options.allow_external, need.realpath->string());
}

bool under_root(const fs::path& p, const fs::path& root) {
  auto rel = p.lexically_normal().lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// "libgomp" for "libgomp-a34b3233.so.1", "libstdc++" for "libstdc++.so.6".
std::string library_base(std::string_view file_name) {
  std::string name = unhashed_name(file_name);
  auto so = name.find(".so");
  return so == std::string::npos ? name : name.substr(0, so);
}

struct RuntimeFamily {
  const char* name;
  std::vector<std::string> bases;
};

const std::vector<RuntimeFamily>& runtime_families() {
  static const std::vector<RuntimeFamily> families = {
      {"OpenMP runtimes", {"libgomp", "libiomp5", "libiomp", "libomp"}},
      {"C++ standard libraries", {"libstdc++"}},
      {"GCC runtime libraries", {"libgcc_s"}},
      {"CUDA runtimes", {"libcudart"}},
  };
  return families;
}

}  // namespace

void check_dependencies(const Package& pkg, const CheckOptions& options,
                        CheckResult& result) {
  if (pkg.elfs.empty()) {
    result.status = Status::skip;
    result.summary = "no ELF files in the package";
    return;
  }
  const deps::Policy* policy = allowing_policy(pkg, options);
  const std::string policy_name = policy ? policy->name : "no policy";
  std::size_t inside = 0, system = 0, elsewhere = 0;
  for (const auto& need : pkg.needs) {
    if (need.soname.starts_with("libpython")) continue;  // the interpreter's
    if (need.member) {
      ++inside;
      continue;
    }
    const bool whitelisted = policy && policy->allows_library(need.soname);
    if (need.path) {
      if (whitelisted || allowed_external(options, need)) {
        ++system;
        continue;
      }
      result.problems.push_back(
          {need.requester,
           fmt::format("needs {}, resolved outside the package to {}, which "
                       "{} does not allow (bundle it, or --allow-external)",
                       need.soname, need.path->string(), policy_name)});
      continue;
    }
    if (need.sibling_dir) {
      ++elsewhere;
      result.notes.push_back(fmt::format(
          "{}: {} is expected from {}/ (another distribution installed next "
          "to this one)",
          need.requester, need.soname, *need.sibling_dir));
      continue;
    }
    if (whitelisted || allowed_external(options, need)) {
      ++system;
      result.notes.push_back(fmt::format(
          "{}: {} is not on this machine (allowed: the system provides it)",
          need.requester, need.soname));
      continue;
    }
    result.problems.push_back(
        {need.requester,
         fmt::format("needs {}, which is neither in the package nor found "
                     "on this system",
                     need.soname)});
  }
  // Grafted libraries (name-<hash>.so.N) are found by the exact name their
  // dependants ask for: the SONAME must be the file name.
  for (const auto& e : pkg.elfs) {
    const std::string name = e.file.filename().string();
    if (unhashed_name(name) == name || e.soname.empty()) continue;
    if (e.soname != name)
      result.problems.push_back(
          {e.member, fmt::format("grafted library's SONAME is {}, not its "
                                 "file name {}",
                                 e.soname, name)});
  }
  result.summary = fmt::format(
      "{} ELF file{}: {} needs inside the package, {} allowed system "
      "libraries ({}){}",
      pkg.elfs.size(), pkg.elfs.size() == 1 ? "" : "s", inside, system,
      policy_name,
      elsewhere ? fmt::format(", {} from sibling distributions", elsewhere)
                : "");
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

void check_rpath(const Package& pkg, const CheckOptions& options,
                 CheckResult& result) {
  std::size_t entries = 0, files = 0;
  for (const auto& e : pkg.elfs) {
    bool any = false;
    for (const auto& [tag, list] :
         {std::pair{"RPATH", &e.rpath}, std::pair{"RUNPATH", &e.runpath}}) {
      if (!*list) continue;
      any = true;
      for (const auto& raw : deps::split_path_list(**list)) {
        ++entries;
        if (raw.empty()) {
          result.problems.push_back(
              {e.member, fmt::format("{} '{}' has an empty entry, which the "
                                     "loader reads as the current directory",
                                     tag, **list)});
          continue;
        }
        const bool relative =
            raw.starts_with("$ORIGIN") || raw.starts_with("${ORIGIN}");
        if (!relative) {
          result.problems.push_back(
              {e.member,
               fmt::format("{} entry {} is {} (a leaked build or machine "
                           "path; use $ORIGIN-relative entries)",
                           tag, raw,
                           raw.starts_with("/") ? "absolute"
                                                : "relative to the current "
                                                  "directory")});
          continue;
        }
        fs::path dir = fs::path(expand_entry(e, raw, options.search));
        if (!under_root(dir, pkg.root) && dir.lexically_normal() != pkg.root)
          result.problems.push_back(
              {e.member,
               fmt::format("{} entry {} leaves the package (it "
                           "points at {})",
                           tag, raw, dir.lexically_normal().string())});
      }
    }
    files += any;
  }
  result.summary = fmt::format("{} RPATH/RUNPATH entries in {} of {} ELF files",
                               entries, files, pkg.elfs.size());
  if (pkg.elfs.empty()) {
    result.status = Status::skip;
    result.summary = "no ELF files in the package";
    return;
  }
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

void check_runtimes(const Package& pkg, const CheckOptions&,
                    CheckResult& result) {
  if (pkg.elfs.empty()) {
    result.status = Status::skip;
    result.summary = "no ELF files in the package";
    return;
  }
  for (const auto& family : runtime_families()) {
    // Distinct files that would be loaded: realpath → description.
    std::map<std::string, std::string> instances;
    std::string first_member;
    for (const auto& e : pkg.elfs) {
      auto base = library_base(e.file.filename().string());
      if (std::find(family.bases.begin(), family.bases.end(), base) ==
          family.bases.end())
        continue;
      std::error_code ec;
      instances.emplace(fs::weakly_canonical(e.file, ec).string(),
                        e.member + " (in the package)");
      if (first_member.empty()) first_member = e.member;
    }
    for (const auto& need : pkg.needs) {
      if (need.member || !need.realpath) continue;
      auto base = library_base(need.soname);
      if (std::find(family.bases.begin(), family.bases.end(), base) ==
          family.bases.end())
        continue;
      instances.emplace(need.realpath->string(),
                        fmt::format("{} (system, needed by {})",
                                    need.path->string(), need.requester));
    }
    if (instances.size() < 2) continue;
    std::vector<std::string> described;
    for (const auto& [path, what] : instances) described.push_back(what);
    result.problems.push_back(
        {first_member,
         fmt::format("{} {} would be loaded: {}", instances.size(), family.name,
                     fmt::join(described, "; "))});
  }
  result.summary =
      result.problems.empty()
          ? "at most one OpenMP, libstdc++, libgcc_s and CUDA runtime"
          : fmt::format("{} runtime{} would be loaded more than once",
                        result.problems.size(),
                        result.problems.size() == 1 ? "" : "s");
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
