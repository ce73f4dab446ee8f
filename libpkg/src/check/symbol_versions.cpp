// SPDX-License-Identifier: BSD-3-Clause
// symbol-versions: the GLIBC_/GLIBCXX_/CXXABI_/GCC_ ceiling the old
// scripts never checked (builder-scripts.md §1.3, §7.7). Every ELF file of
// the package — grafted libraries included, since they are loaded too —
// is evaluated against the policy the package claims: the wheel's most
// compatible platform tag, or --platform.
#include <fmt/format.h>

#include <algorithm>

#include "check/package.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::check::detail {
namespace {

std::string highest_versions(const deps::Evaluation& eval) {
  std::vector<std::string> parts;
  // The families users trip on; others (GOMP_, OMP_, ZLIB_) are the
  // libraries' own and listed by `pkgtool show`.
  for (const auto& [prefix, ex] : eval.max_versions)
    if (prefix == "GLIBC" || prefix == "GLIBCXX" || prefix == "CXXABI" ||
        prefix == "GCC")
      parts.push_back(fmt::format("{} ({})", ex.tag.str(), ex.file));
  return parts.empty() ? "no versioned symbol requirements"
                       : fmt::format("highest {}", fmt::join(parts, ", "));
}

bool is_version_blocker(const deps::Blocker& b) {
  return b.kind == deps::BlockerKind::symbol_version ||
         b.kind == deps::BlockerKind::blacklisted_symbol;
}

// The best-fit policy, and when something other than symbol versions keeps
// it below what the versions alone would reach (an x86-64-v3 ISA note,
// libpython, a python ABI symbol), the policy the versions fit and why it
// is blocked: "linux_x86_64" alone would read as "the versions are too new".
std::string best_fit(const deps::Evaluation& eval) {
  std::string best = eval.best ? eval.best->tag(eval.arch) : "none";
  for (const auto& v : eval.verdicts) {
    if (v.policy == eval.best) break;  // nothing more compatible fits
    if (std::any_of(v.blockers.begin(), v.blockers.end(), is_version_blocker))
      continue;
    auto other = std::find_if(
        v.blockers.begin(), v.blockers.end(), [](const deps::Blocker& b) {
          return b.kind != deps::BlockerKind::library &&
                 b.kind != deps::BlockerKind::missing_library;
        });
    if (other == v.blockers.end()) continue;
    return fmt::format("{}; the symbol versions alone fit {}, blocked by {}",
                       best, v.policy->tag(eval.arch), other->message());
  }
  return best;
}

}  // namespace

const deps::Policy* claimed_policy(const Package& pkg,
                                   const CheckOptions& options,
                                   const deps::PolicySet& policies,
                                   std::string* tag, std::string* why) {
  if (options.expect.platform) {
    const deps::Policy* p = policies.find(*options.expect.platform);
    if (!p)
      throw Error(Errc::usage, "",
                  fmt::format("unknown platform '{}' (expected a manylinux or "
                              "musllinux policy name or tag, e.g. "
                              "manylinux2014 or manylinux_2_28_x86_64)",
                              *options.expect.platform));
    *tag = *options.expect.platform;
    return p;
  }
  if (pkg.platform_tags.empty()) {
    *why = "no platform tag to check against (a wheel's tag, or --platform)";
    return nullptr;
  }
  const deps::Policy* best = nullptr;
  for (const auto& t : pkg.platform_tags) {
    const deps::Policy* p = policies.find(t);
    if (p && p->name != "linux" && (!best || p->priority > best->priority)) {
      best = p;
      *tag = t;
    }
  }
  if (!best)
    *why = fmt::format("platform tag {} sets no ceiling",
                       fmt::join(pkg.platform_tags, "."));
  return best;
}

void check_symbol_versions(const Package& pkg, const CheckOptions& options,
                           CheckResult& result) {
  if (pkg.elfs.empty()) {
    result.status = Status::skip;
    result.summary = "no ELF files in the package";
    return;
  }
  const deps::PolicySet& policies =
      options.policies ? *options.policies : deps::PolicySet::builtin();
  std::vector<deps::BinaryFacts> facts;
  for (const auto& e : pkg.elfs) facts.push_back(e.facts);
  std::string tag, why;
  const deps::Policy* policy =
      claimed_policy(pkg, options, policies, &tag, &why);
  // Binaries that don't state their libc (no interpreter, no NEEDED libc)
  // belong to the family of the claimed tag, not to glibc by default.
  deps::EvaluateOptions eval_options;
  if (policy && policy->name != "linux") eval_options.libc = policy->libc;
  const deps::Evaluation eval = deps::evaluate(facts, policies, eval_options);
  if (!policy) {
    result.status = Status::skip;
    result.summary = fmt::format("{}; {}", why, highest_versions(eval));
    return;
  }
  // The tag's architecture, when it names one, must be the binaries'.
  for (const char* arch : {"x86_64", "i686", "aarch64", "ppc64le", "s390x",
                           "armv7l", "riscv64", "loongarch64"}) {
    if (tag.ends_with(std::string("_") + arch) && eval.arch != arch)
      result.problems.push_back(
          {"", fmt::format("platform tag {} is for {}, the binaries are {}",
                           tag, arch, eval.arch)});
  }
  if (policy->libc != eval.libc) {
    result.problems.push_back(
        {"", fmt::format("platform tag {} is for {} but the binaries link "
                         "{}",
                         tag, deps::libc_name(policy->libc),
                         deps::libc_name(eval.libc))});
  }
  for (const auto& verdict : eval.verdicts) {
    if (verdict.policy != policy) continue;
    for (const auto& b : verdict.blockers)
      if (b.kind == deps::BlockerKind::symbol_version ||
          b.kind == deps::BlockerKind::blacklisted_symbol)
        result.problems.push_back(
            {b.file, b.message().substr(b.message().starts_with(b.file + ": ")
                                            ? b.file.size() + 2
                                            : 0)});
  }
  const std::string name = policy->tag(eval.arch);
  result.summary =
      result.problems.empty()
          ? fmt::format("fits {}: {}", name, highest_versions(eval))
          : fmt::format("needs more than {} allows (best fit: {}); {}", name,
                        best_fit(eval), highest_versions(eval));
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
