// SPDX-License-Identifier: BSD-3-Clause
// Policy data: parsing auditwheel's JSON format, validating it, the built-in
// (embedded) tables, and lookup by name, alias and tag.
//
// Validation (a bad user file is Errc::format naming the file and policy):
//  - the document is a list of objects with `name` (string), `priority`
//    (integer), `symbol_versions` ({arch: {prefix: [versions]}}),
//    `lib_whitelist` ([sonames]) and optionally `aliases` ([names]) and
//    `blacklist` ({soname: [symbols]});
//  - names and aliases are unique, priorities unique within the file;
//    "linux" (if present) has priority 0, every other policy more;
//  - PEP 600 monotonicity, as auditwheel's _validate_pep600_compliance: going
//    from the most compatible policy to the least, each whitelist contains
//    all earlier ones and, per arch and prefix, each symbol-version list
//    contains all earlier ones (a newer glibc never removes a version).
// A file without a "linux" policy gets one (priority 0, no whitelist): it is
// the fallback every evaluation needs.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>

#include "base/embedded.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/deps/policy.hpp"

namespace libpkg::deps {

namespace {

using nlohmann::json;

constexpr std::string_view kLinux = "linux";

// Error context: the file and which policy (by name, or by position while
// the name is not known yet).
struct Where {
  const std::string& file;
  std::string policy;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(
        Errc::format, file,
        policy.empty() ? what : fmt::format("policy {}: {}", policy, what));
  }
};

std::vector<std::string> string_list(const json& value, const Where& where,
                                     const std::string& field) {
  if (!value.is_array()) where.fail(fmt::format("'{}' must be a list", field));
  std::vector<std::string> out;
  for (const auto& item : value) {
    if (!item.is_string())
      where.fail(fmt::format("'{}' must contain only strings", field));
    out.push_back(item.get<std::string>());
  }
  return out;
}

const json& required(const json& object, const char* field,
                     const Where& where) {
  auto it = object.find(field);
  if (it == object.end()) where.fail(fmt::format("missing '{}'", field));
  return *it;
}

Policy parse_policy(const json& item, std::size_t position, Libc libc,
                    const std::string& file) {
  Where where{file, fmt::format("#{}", position)};
  if (!item.is_object()) where.fail("must be an object");
  const json& name = required(item, "name", where);
  if (!name.is_string() || name.get<std::string>().empty())
    where.fail("'name' must be a non-empty string");
  Policy policy;
  policy.name = name.get<std::string>();
  policy.libc = libc;
  where.policy = policy.name;

  const json& priority = required(item, "priority", where);
  if (!priority.is_number_integer() || priority.get<long long>() < 0 ||
      priority.get<long long>() > 1'000'000)
    where.fail("'priority' must be an integer from 0 to 1000000");
  policy.priority = priority.get<int>();

  if (item.contains("aliases"))
    policy.aliases = string_list(item["aliases"], where, "aliases");

  const json& versions = required(item, "symbol_versions", where);
  if (!versions.is_object())
    where.fail("'symbol_versions' must be an object {arch: {prefix: [...]}}");
  for (const auto& [arch, prefixes] : versions.items()) {
    if (!prefixes.is_object())
      where.fail(fmt::format("'symbol_versions.{}' must be an object", arch));
    auto& out = policy.symbol_versions[arch];
    for (const auto& [prefix, list] : prefixes.items()) {
      auto names = string_list(
          list, where, fmt::format("symbol_versions.{}.{}", arch, prefix));
      out[prefix].insert(names.begin(), names.end());
    }
  }

  auto whitelist = string_list(required(item, "lib_whitelist", where), where,
                               "lib_whitelist");
  policy.lib_whitelist.insert(whitelist.begin(), whitelist.end());

  if (item.contains("blacklist")) {
    const json& blacklist = item["blacklist"];
    if (!blacklist.is_object())
      where.fail("'blacklist' must be an object {soname: [symbols]}");
    for (const auto& [soname, list] : blacklist.items()) {
      auto symbols =
          string_list(list, where, fmt::format("blacklist.{}", soname));
      policy.blacklist[soname].insert(symbols.begin(), symbols.end());
    }
  }

  bool is_linux = policy.name == kLinux;
  if (is_linux && policy.priority != 0)
    where.fail("the 'linux' policy must have priority 0");
  if (!is_linux && policy.priority == 0)
    where.fail("priority 0 is reserved for the 'linux' policy");
  return policy;
}

// Most compatible first; equal priorities keep their order (the merged
// built-in set lists manylinux before musllinux).
void sort_by_priority(std::vector<Policy>& policies) {
  std::stable_sort(
      policies.begin(), policies.end(),
      [](const Policy& a, const Policy& b) { return a.priority > b.priority; });
}

void validate_unique(const std::vector<Policy>& policies,
                     const std::string& file) {
  std::map<std::string, std::string> names;  // name or alias → policy
  std::map<int, std::string> priorities;
  for (const auto& policy : policies) {
    Where where{file, policy.name};
    for (const auto* name : [&] {
           std::vector<const std::string*> all{&policy.name};
           for (const auto& alias : policy.aliases) all.push_back(&alias);
           return all;
         }()) {
      auto [it, fresh] = names.emplace(*name, policy.name);
      if (!fresh)
        where.fail(fmt::format("name '{}' is already used by policy {}", *name,
                               it->second));
    }
    auto [it, fresh] = priorities.emplace(policy.priority, policy.name);
    if (!fresh)
      where.fail(fmt::format("priority {} is already used by policy {}",
                             policy.priority, it->second));
  }
}

// `policies` sorted most compatible first.
void validate_monotonic(const std::vector<Policy>& policies,
                        const std::string& file) {
  std::set<std::string> whitelist;  // union of the more compatible ones
  std::string previous;
  std::map<std::string, std::map<std::string, std::set<std::string>>> versions;
  for (const auto& policy : policies) {
    if (policy.name == kLinux) continue;
    Where where{file, policy.name};
    for (const auto& soname : whitelist) {
      if (!policy.lib_whitelist.contains(soname))
        where.fail(fmt::format(
            "lib_whitelist lacks {}, which the more compatible policy {} "
            "allows (whitelists must grow with the glibc version)",
            soname, previous));
    }
    whitelist.insert(policy.lib_whitelist.begin(), policy.lib_whitelist.end());
    for (const auto& [arch, prefixes] : policy.symbol_versions) {
      auto& seen_arch = versions[arch];
      for (const auto& [prefix, allowed] : prefixes) {
        auto& seen = seen_arch[prefix];
        for (const auto& version : seen) {
          if (!allowed.contains(version))
            where.fail(fmt::format(
                "symbol_versions.{}.{} lacks {}, which a more compatible "
                "policy allows (versions must grow with the glibc version)",
                arch, prefix, version));
        }
        seen.insert(allowed.begin(), allowed.end());
      }
    }
    previous = policy.name;
  }
}

Policy linux_policy() {
  Policy policy;
  policy.name = std::string(kLinux);
  return policy;
}

bool is_linux(const Policy& policy) { return policy.name == kLinux; }

std::vector<Policy> parse_policies(std::string_view text,
                                   const std::string& file, Libc libc) {
  json document;
  try {
    document = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw Error(Errc::format, file, fmt::format("invalid JSON: {}", e.what()),
                e.byte);
  }
  if (!document.is_array())
    throw Error(Errc::format, file, "expected a JSON list of policies");
  std::vector<Policy> policies;
  for (std::size_t i = 0; i < document.size(); ++i)
    policies.push_back(parse_policy(document[i], i, libc, file));
  validate_unique(policies, file);
  sort_by_priority(policies);
  validate_monotonic(policies, file);
  if (std::none_of(policies.begin(), policies.end(), is_linux))
    policies.push_back(linux_policy());
  return policies;
}

// The libc family of a user file, from its policy names: musllinux_* →
// musl, anything else glibc. One file holds one family.
Libc infer_libc(std::string_view text, const std::string& file) {
  std::set<Libc> seen;
  try {
    json document = json::parse(text.begin(), text.end());
    if (document.is_array()) {
      for (const auto& item : document) {
        if (!item.is_object() || !item.contains("name") ||
            !item["name"].is_string())
          continue;
        std::string_view name = item["name"].get_ref<const std::string&>();
        if (name == kLinux) continue;
        seen.insert(name.starts_with("musllinux")  ? Libc::musl
                    : name.starts_with("android_") ? Libc::bionic
                                                   : Libc::glibc);
      }
    }
  } catch (const json::parse_error&) {
    return Libc::glibc;  // parse_policies reports it with the position
  }
  if (seen.size() > 1)
    throw Error(Errc::format, file,
                "mixes manylinux, musllinux or android policies; one file "
                "holds the policies of one libc family");
  return seen.empty() ? Libc::glibc : *seen.begin();
}

}  // namespace

const PolicySet& PolicySet::builtin() {
  // Immutable after construction (thread-safe static initialisation).
  static const PolicySet set = [] {
    PolicySet out;
    out.policies_ =
        parse_policies(embedded::text(embedded::manylinux_policy_json,
                                      embedded::manylinux_policy_json_size),
                       "<built-in manylinux-policy.json>", Libc::glibc);
    auto add = [&](std::string_view text, const char* name, Libc libc) {
      for (auto& policy : parse_policies(text, name, libc))
        if (!is_linux(policy)) out.policies_.push_back(std::move(policy));
    };
    add(embedded::text(embedded::musllinux_policy_json,
                       embedded::musllinux_policy_json_size),
        "<built-in musllinux-policy.json>", Libc::musl);
    add(embedded::text(embedded::android_policy_json,
                       embedded::android_policy_json_size),
        "<built-in android-policy.json>", Libc::bionic);
    sort_by_priority(out.policies_);
    return out;
  }();
  return set;
}

PolicySet PolicySet::parse(std::string_view json_text, std::string name,
                           Libc libc) {
  PolicySet out;
  out.policies_ = parse_policies(json_text, name, libc);
  return out;
}

PolicySet PolicySet::load(const std::filesystem::path& file) {
  std::string content = read_regular_file(file);
  return parse(content, file.string(), infer_libc(content, file.string()));
}

std::vector<const Policy*> PolicySet::family(Libc libc) const {
  std::vector<const Policy*> out;
  for (const auto& policy : policies_) {
    if (policy.libc == libc && !is_linux(policy)) out.push_back(&policy);
  }
  return out;
}

const Policy* PolicySet::find(std::string_view name) const {
  // Every architecture some policy knows: "linux" accepts any of them.
  std::set<std::string, std::less<>> arches;
  for (const auto& policy : policies_)
    for (const auto& entry : policy.symbol_versions) arches.insert(entry.first);

  auto matches = [&](const Policy& policy, std::string_view base) {
    if (name == base) return true;
    if (name.size() <= base.size() + 1 || !name.starts_with(base) ||
        name[base.size()] != '_')
      return false;
    std::string_view arch = name.substr(base.size() + 1);
    if (is_linux(policy)) return arches.contains(arch);
    for (const auto& entry : policy.symbol_versions)
      if (policy_tag_arch(policy.libc, entry.first) == arch) return true;
    return false;
  };
  for (const auto& policy : policies_) {
    if (matches(policy, policy.name)) return &policy;
    for (const auto& alias : policy.aliases)
      if (matches(policy, alias)) return &policy;
  }
  return nullptr;
}

}  // namespace libpkg::deps
