// CycloneDX SBOM of the grafted libraries (see libpkg/bundle/sbom.hpp).
#include "libpkg/bundle/sbom.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "libpkg/base/sha256.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace libpkg::bundle {
namespace {

constexpr std::size_t kMaxOutput = 4 << 20;

// `dpkg -S` lines: "libzstd1:amd64: /usr/lib/x86_64-linux-gnu/libzstd.so.1"
// → path → "libzstd1:amd64". Paths several packages share ("a, b: path")
// and diversions are skipped; errors for unowned paths are not such lines.
std::map<std::string, std::string> dpkg_search(
    const std::vector<std::string>& paths) {
  std::vector<std::string> argv{"dpkg", "-S"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  RunResult r =
      run_process(argv, {.timeout_seconds = 60, .max_output = kMaxOutput});
  std::map<std::string, std::string> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    auto sep = line.find(": /");
    if (sep == std::string::npos || line.starts_with("diversion") ||
        line.starts_with("dpkg"))
      continue;
    std::string package = line.substr(0, sep);
    if (package.find(',') != std::string::npos) continue;
    out[line.substr(sep + 2)] = package;
  }
  return out;
}

// "libzstd1:amd64" → {name, version, arch}, one dpkg-query for all.
std::map<std::string, OsPackage> dpkg_versions(
    const std::set<std::string>& packages) {
  std::vector<std::string> argv{
      "dpkg-query", "-W", "-f",
      "${binary:Package} ${Package} ${Version} ${Architecture}\n"};
  argv.insert(argv.end(), packages.begin(), packages.end());
  RunResult r =
      run_process(argv, {.timeout_seconds = 60, .max_output = kMaxOutput});
  std::map<std::string, OsPackage> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string qualified;
    OsPackage p;
    fields >> qualified >> p.name >> p.version >> p.arch;
    if (p.version.empty()) continue;
    out[qualified] = p;
    out.emplace(p.name, p);  // "libfoo" when dpkg -S printed no arch
  }
  return out;
}
// A version 5-style UUID from a SHA-256 of `seed`.
std::string uuid_from(const std::string& seed) {
  Sha256 h;
  h.update(seed);
  const std::string hex = Sha256::hex(h.finish());
  std::string u = hex.substr(0, 32);
  u[12] = '5';
  u[16] = "89ab"[std::stoi(u.substr(16, 1), nullptr, 16) & 3];
  return fmt::format("{}-{}-{}-{}-{}", u.substr(0, 8), u.substr(8, 4),
                     u.substr(12, 4), u.substr(16, 4), u.substr(20));
}

}  // namespace

std::string OsPackage::purl() const {
  std::string out = fmt::format("pkg:deb/debian/{}@{}", name, version);
  if (!arch.empty()) out += "?arch=" + arch;
  return out;
}

std::map<fs::path, OsPackage> dpkg_owners(const std::vector<fs::path>& files) {
  std::map<fs::path, std::vector<std::string>> candidates;
  std::vector<std::string> all;
  for (const auto& file : files) {
    auto& c = candidates[file];
    c.push_back(file.string());
    std::error_code ec;
    fs::path real = fs::canonical(file, ec);
    if (!ec && real != file) c.push_back(real.string());
    for (std::size_t i = 0, n = c.size(); i < n; ++i)
      if (c[i].starts_with("/usr/")) c.push_back(c[i].substr(4));
    all.insert(all.end(), c.begin(), c.end());
  }
  std::map<fs::path, OsPackage> out;
  if (all.empty()) return out;
  const auto owners = dpkg_search(all);
  std::set<std::string> packages;
  for (const auto& [path, package] : owners) packages.insert(package);
  if (packages.empty()) return out;
  const auto versions = dpkg_versions(packages);
  for (const auto& [file, paths] : candidates) {
    for (const auto& path : paths) {
      auto owner = owners.find(path);
      if (owner == owners.end()) continue;
      auto version = versions.find(owner->second);
      if (version == versions.end()) continue;
      out[file] = version->second;
      break;
    }
  }
  return out;
}

std::string sbom_member(const std::string& dist_info) {
  return dist_info + "/sboms/pkgtool.cdx.json";
}

std::string sbom_json(const WheelAnalysis& a, const RepairPlan& plan,
                      const OwnerLookup& owners) {
  const std::string wheel_ref =
      fmt::format("pkg:pypi/{}@{}?file_name={}", a.name.distribution,
                  a.name.version, plan.output_name);
  std::vector<fs::path> sources;
  for (const auto& g : plan.grafts) sources.push_back(g.source);
  const auto owned = owners ? owners(sources) : std::map<fs::path, OsPackage>{};
  std::string seed = plan.output_name;
  json components = json::array();
  json depends = json::array();
  for (const auto& g : plan.grafts) {
    seed += "\n" + g.member + " " + g.sha256;
    std::error_code ec;
    fs::path real = fs::canonical(g.source, ec);
    json c = {
        {"type", "library"},
        {"bom-ref", g.member},
        {"name", g.new_soname},
        {"hashes", json::array({{{"alg", "SHA-256"}, {"content", g.sha256}}})},
        {"properties",
         json::array(
             {{{"name", "libpkg:source_path"}, {"value", g.source.string()}},
              {{"name", "libpkg:realpath"},
               {"value", ec ? g.source.string() : real.string()}},
              {{"name", "libpkg:soname"}, {"value", g.soname}}})}};
    if (auto p = owned.find(g.source); p != owned.end()) {
      c["version"] = p->second.version;
      c["purl"] = p->second.purl();
      c["publisher"] = "Debian";
      c["properties"].push_back(
          {{"name", "libpkg:os_package"}, {"value", p->second.name}});
    }
    components.push_back(std::move(c));
    depends.push_back(g.member);
  }
  json doc = {
      {"bomFormat", "CycloneDX"},
      {"specVersion", "1.4"},
      {"serialNumber", "urn:uuid:" + uuid_from(seed)},
      {"version", 1},
      {"metadata",
       {{"tools", json::array({{{"vendor", "libpkg"}, {"name", "pkgtool"}}})},
        {"component",
         {{"type", "library"},
          {"bom-ref", wheel_ref},
          {"name", a.name.distribution},
          {"version", a.name.version},
          {"purl", wheel_ref}}}}},
      {"components", components},
      {"dependencies",
       json::array({{{"ref", wheel_ref}, {"dependsOn", depends}}})}};
  return doc.dump(2) + "\n";
}

}  // namespace libpkg::bundle
