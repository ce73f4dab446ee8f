// CycloneDX SBOM of the grafted libraries (see libpkg/bundle/sbom.hpp).
#include "libpkg/bundle/sbom.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "libpkg/base/sha256.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace libpkg::bundle {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// "libzstd1:amd64: /usr/lib/x86_64-linux-gnu/libzstd.so.1.5.5" → package
// "libzstd1:amd64" (the first line; diversions are reported differently
// and skipped).
std::optional<std::string> dpkg_search(const std::string& path) {
  RunResult r = run_process({"dpkg", "-S", path}, {.timeout_seconds = 30});
  if (!r.ok()) return std::nullopt;
  std::string line = r.output.substr(0, r.output.find('\n'));
  auto sep = line.find(": ");
  if (sep == std::string::npos || line.starts_with("diversion")) return {};
  std::string package = line.substr(0, sep);
  if (package.find(',') != std::string::npos) return {};  // shared path
  return package;
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

std::optional<OsPackage> dpkg_owner(const fs::path& file) {
  std::vector<std::string> candidates{file.string()};
  std::error_code ec;
  fs::path real = fs::canonical(file, ec);
  if (!ec && real != file) candidates.push_back(real.string());
  for (std::size_t i = 0, n = candidates.size(); i < n; ++i)
    if (candidates[i].starts_with("/usr/"))
      candidates.push_back(candidates[i].substr(4));
  for (const auto& path : candidates) {
    auto package = dpkg_search(path);
    if (!package) continue;
    RunResult q =
        run_process({"dpkg-query", "-W", "-f",
                     "${Package} ${Version} ${Architecture}", *package},
                    {.timeout_seconds = 30});
    if (!q.ok()) continue;
    std::istringstream fields(trim(q.output));
    OsPackage p;
    fields >> p.name >> p.version >> p.arch;
    if (p.name.empty() || p.version.empty()) continue;
    return p;
  }
  return std::nullopt;
}

std::string sbom_member(const std::string& dist_info) {
  return dist_info + "/sboms/pkgtool.cdx.json";
}

std::string sbom_json(const WheelAnalysis& a, const RepairPlan& plan,
                      const OwnerLookup& owner) {
  const std::string wheel_ref =
      fmt::format("pkg:pypi/{}@{}?file_name={}", a.name.distribution,
                  a.name.version, plan.output_name);
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
    if (auto p = owner ? owner(g.source) : std::nullopt) {
      c["version"] = p->version;
      c["purl"] = p->purl();
      c["publisher"] = "Debian";
      c["properties"].push_back(
          {{"name", "libpkg:os_package"}, {"value", p->name}});
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
