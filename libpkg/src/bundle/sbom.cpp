// SPDX-License-Identifier: BSD-3-Clause
// CycloneDX SBOM of the grafted libraries (see libpkg/bundle/sbom.hpp).
#include "libpkg/bundle/sbom.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "libpkg/archive/file_memo.hpp"
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
// Each file as given and resolved (rpm's database lists the real path;
// a symlink is asked through its target too).
std::vector<std::string> existing_names(const fs::path& file) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(file, ec)) return out;
  out.push_back(file.string());
  fs::path real = fs::canonical(file, ec);
  if (!ec && real != file) out.push_back(real.string());
  return out;
}

// The distribution, for the purl namespace: os-release's ID.
std::string os_release_id() {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("ID=")) continue;
      std::string id = line.substr(3);
      std::erase(id, '"');
      std::erase(id, '\'');
      if (!id.empty()) return id;
    }
  }
  return "unknown";
}

// `rpm -qf` with a marked query format: one line per path, either the
// marked answer or rpm's "file X is not owned by any package". nullopt
// when the lines don't pair with the paths (a file owned by several
// packages prints several lines).
constexpr std::string_view kRpmMark = "libpkg-rpm\t";
std::optional<std::vector<std::optional<OsPackage>>> rpm_query(
    const std::vector<std::string>& paths, const std::string& vendor) {
  std::vector<std::string> argv{
      "rpm", "-qf", "--queryformat",
      std::string(kRpmMark) + "%{NAME}\t%{VERSION}-%{RELEASE}\t%{ARCH}\n"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  RunResult r =
      run_process(argv, {.timeout_seconds = 60, .max_output = kMaxOutput});
  if (r.not_found) return std::vector<std::optional<OsPackage>>(paths.size());
  std::vector<std::optional<OsPackage>> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("file ") &&
        line.ends_with("not owned by any package")) {
      out.emplace_back();
    } else if (line.starts_with(kRpmMark)) {
      std::istringstream fields(line.substr(kRpmMark.size()));
      OsPackage p;
      std::getline(fields, p.name, '\t');
      std::getline(fields, p.version, '\t');
      std::getline(fields, p.arch);
      if (p.arch == "(none)") p.arch.clear();
      p.type = "rpm";
      p.vendor = vendor;
      p.publisher = vendor;
      out.emplace_back(p);
    }
  }
  if (out.size() != paths.size()) return std::nullopt;
  return out;
}

// The executable `name` in the first directory of $PATH that has one.
std::optional<fs::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

bool on_path(const std::string& name) { return find_on_path(name).has_value(); }

// The owners as memo bytes: {"file": {name, version, arch, type, vendor,
// publisher}}.
std::vector<u8> owners_to_bytes(const std::map<fs::path, OsPackage>& owners) {
  json doc = json::object();
  for (const auto& [file, p] : owners)
    doc[file.string()] = {{"name", p.name},     {"version", p.version},
                          {"arch", p.arch},     {"type", p.type},
                          {"vendor", p.vendor}, {"publisher", p.publisher}};
  const std::string text = doc.dump();
  return {text.begin(), text.end()};
}

// owners_to_bytes() read back; nullopt for anything else.
std::optional<std::map<fs::path, OsPackage>> owners_from_bytes(
    const std::vector<u8>& bytes) {
  const json doc = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  std::map<fs::path, OsPackage> out;
  for (const auto& [file, p] : doc.items()) {
    if (!p.is_object()) return std::nullopt;
    OsPackage package;
    for (auto [field, key] : {std::pair{&package.name, "name"},
                              {&package.version, "version"},
                              {&package.arch, "arch"},
                              {&package.type, "type"},
                              {&package.vendor, "vendor"},
                              {&package.publisher, "publisher"}}) {
      auto it = p.find(key);
      if (it == p.end() || !it->is_string()) return std::nullopt;
      *field = it->get<std::string>();
    }
    out[file] = std::move(package);
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
  std::string out = fmt::format("pkg:{}/{}/{}@{}", type, vendor, name, version);
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

std::map<fs::path, OsPackage> rpm_owners(const std::vector<fs::path>& files) {
  std::map<fs::path, OsPackage> out;
  std::vector<std::string> all;
  std::vector<fs::path> whose;  // the file each entry of `all` stands for
  for (const auto& file : files)
    for (auto& name : existing_names(file)) {
      all.push_back(std::move(name));
      whose.push_back(file);
    }
  if (all.empty()) return out;
  const std::string vendor = os_release_id();
  auto answers = rpm_query(all, vendor);
  if (!answers) {  // ask one path at a time; several owners: none
    answers.emplace();
    for (const auto& path : all) {
      auto one = rpm_query({path}, vendor);
      answers->push_back(one ? (*one)[0] : std::nullopt);
    }
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    if ((*answers)[i] && !out.contains(whose[i]))
      out[whose[i]] = *(*answers)[i];
  return out;
}

std::map<fs::path, OsPackage> system_owners(
    const std::vector<fs::path>& files) {
  if (on_path("dpkg")) return dpkg_owners(files);
  if (on_path("rpm")) return rpm_owners(files);
  return {};
}

OwnerLookup memoized_owners(OwnerLookup lookup, archive::ChunkCache* cache,
                            std::string kind, std::vector<fs::path> database) {
  if (cache == nullptr) return lookup;
  return [lookup = std::move(lookup), cache, kind = std::move(kind),
          database = std::move(database)](const std::vector<fs::path>& files) {
    // The key names the files as asked and as resolved (a lookup may ask
    // for either), and the database the answer came from.
    std::vector<fs::path> keyed = database;
    for (const fs::path& file : files) {
      keyed.push_back(file);
      std::error_code ec;
      fs::path real = fs::canonical(file, ec);
      if (!ec && real != file) keyed.push_back(std::move(real));
    }
    std::optional<std::map<fs::path, OsPackage>> computed;
    const std::vector<u8> bytes = archive::memoized_file_fact(
        cache, "libpkg os package owners 1; " + kind, keyed, kMaxOutput, [&] {
          computed = lookup(files);
          return owners_to_bytes(*computed);
        });
    if (computed) return std::move(*computed);
    if (auto known = owners_from_bytes(bytes)) return std::move(*known);
    return lookup(files);
  };
}

OwnerLookup system_owner_lookup(archive::ChunkCache* cache) {
  if (std::optional<fs::path> dpkg = find_on_path("dpkg")) {
    // dpkg rewrites its status file on every install and removal, and
    // dpkg-divert its diversions file; DPKG_ADMINDIR moves both. The
    // programs asked are part of the key too (another dpkg on PATH, or an
    // upgraded one).
    const char* admin = std::getenv("DPKG_ADMINDIR");
    const fs::path dir = admin && *admin ? admin : "/var/lib/dpkg";
    std::vector<fs::path> database{dir / "status", dir / "diversions", *dpkg};
    if (auto query = find_on_path("dpkg-query")) database.push_back(*query);
    return memoized_owners(dpkg_owners, cache, "dpkg", std::move(database));
  }
  // rpm's database lives where its macros say (%_dbpath): not memoized.
  return system_owners;
}

std::string sbom_member(const std::string& dist_info) {
  return dist_info + "/sboms/pkgtool.cdx.json";
}

std::string sbom_document(const std::string& distribution,
                          const std::string& version,
                          const std::string& wheel_file,
                          const std::vector<SbomLibrary>& libraries,
                          const OwnerLookup& owners) {
  const std::string wheel_ref = fmt::format("pkg:pypi/{}@{}?file_name={}",
                                            distribution, version, wheel_file);
  std::vector<fs::path> sources;
  for (const auto& l : libraries) sources.push_back(l.source);
  const auto owned = owners ? owners(sources) : std::map<fs::path, OsPackage>{};
  std::string seed = wheel_file;
  json components = json::array();
  json depends = json::array();
  for (const auto& l : libraries) {
    seed += "\n" + l.member + " " + l.sha256;
    std::error_code ec;
    fs::path real = fs::canonical(l.source, ec);
    json props = json::array(
        {{{"name", "libpkg:source_path"}, {"value", l.source.string()}},
         {{"name", "libpkg:realpath"},
          {"value", ec ? l.source.string() : real.string()}}});
    for (const auto& [name, value] : l.properties)
      props.push_back({{"name", "libpkg:" + name}, {"value", value}});
    json c = {
        {"type", "library"},
        {"bom-ref", l.member},
        {"name", l.name},
        {"hashes", json::array({{{"alg", "SHA-256"}, {"content", l.sha256}}})},
        {"properties", std::move(props)}};
    if (auto p = owned.find(l.source); p != owned.end()) {
      c["version"] = p->second.version;
      c["purl"] = p->second.purl();
      c["publisher"] = p->second.publisher;
      c["properties"].push_back(
          {{"name", "libpkg:os_package"}, {"value", p->second.name}});
    }
    components.push_back(std::move(c));
    depends.push_back(l.member);
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
          {"name", distribution},
          {"version", version},
          {"purl", wheel_ref}}}}},
      {"components", components},
      {"dependencies",
       json::array({{{"ref", wheel_ref}, {"dependsOn", depends}}})}};
  return doc.dump(2) + "\n";
}

std::string sbom_json(const WheelAnalysis& a, const RepairPlan& plan,
                      const OwnerLookup& owners) {
  std::vector<SbomLibrary> libraries;
  for (const auto& g : plan.grafts)
    libraries.push_back(
        {g.member, g.new_soname, g.sha256, g.source, {{"soname", g.soname}}});
  return sbom_document(a.name.distribution, a.name.version, plan.output_name,
                       libraries, owners);
}

std::string sbom_json(const MacosRepairPlan& plan, const OwnerLookup& owners) {
  std::vector<SbomLibrary> libraries;
  for (const auto& g : plan.grafts) {
    SbomLibrary l{g.member, g.name, g.sha256, g.source, {}};
    for (const auto& n : g.install_names)
      l.properties.emplace_back("install_name", n);
    libraries.push_back(std::move(l));
  }
  return sbom_document(plan.name.distribution, plan.name.version,
                       plan.output_name, libraries, owners);
}

}  // namespace libpkg::bundle
