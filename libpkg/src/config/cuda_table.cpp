// SPDX-License-Identifier: BSD-3-Clause
// Per-CUDA tables: parsing data/cuda/cuda.json (embedded) and user files in
// the same format. A user file may omit the top-level settings (library
// directory, keep-name patterns, pypi RPATH list, optional libraries); it
// then inherits the built-in ones, so overriding one version's bundle list
// takes only that entry.
#include "libpkg/config/cuda_table.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/embedded.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/result.hpp"

namespace libpkg::config {
namespace {

using nlohmann::json;

// The top-level settings every version entry uses.
struct Defaults {
  std::string cuda_root = "/usr/local/cuda";
  std::vector<std::pair<std::string, std::string>> platforms;
  std::string platforms_source;
  std::string keep_names_source;
  std::string library_dir;
  std::vector<std::string> keep_names;
  std::string pypi_template;
  std::vector<std::string> pypi_packages;
  std::optional<std::pair<int, int>> pypi_min;
  std::vector<CudaLibrary> optional_libraries;
};

struct Ctx {
  const std::string& origin;
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Errc::format, origin, what);
  }
};

std::pair<int, int> major_minor(const std::string& text, const Ctx& ctx) {
  Result<Accelerator> a = attempt({Errc::usage, Errc::format},
                                  [&] { return parse_accelerator(text); });
  if (!a || a.value().kind != AcceleratorKind::cuda)
    ctx.fail(fmt::format("'{}' is not a CUDA version (X.Y)", text));
  return {a.value().major, a.value().minor};
}

std::vector<std::string> strings(const json& v, const Ctx& ctx,
                                 const std::string& field) {
  if (!v.is_array()) ctx.fail(fmt::format("'{}' must be a list", field));
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string()) ctx.fail(fmt::format("'{}' must hold strings", field));
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A directory as written: relative ones are under the CUDA root.
std::string under_root(const std::string& dir, const Defaults& d) {
  if (dir.empty() || dir.front() == '/') return dir;
  return d.cuda_root + "/" + dir;
}

// "libcudart.so.12" or {"file"|"path": …, "soname": …, "condition": …,
// "dir": …, "fallback_dirs": […], "optional": bool, "arch": …, "source": …}.
CudaLibrary library(const json& v, const Defaults& d, const Ctx& ctx,
                    const std::string& where) {
  CudaLibrary lib;
  std::string file;
  if (v.is_string()) {
    file = v.get<std::string>();
  } else if (v.is_object()) {
    const char* key = v.contains("path") ? "path" : "file";
    if (!v.contains(key) || !v[key].is_string())
      ctx.fail(fmt::format("{}: a library needs 'file' or 'path'", where));
    file = v[key].get<std::string>();
    lib.soname = v.value("soname", "");
    lib.condition = v.value("condition", "");
    lib.dir = v.value("dir", "");
    if (v.contains("fallback_dirs"))
      lib.fallback_dirs = strings(v["fallback_dirs"], ctx, "fallback_dirs");
    lib.optional = v.value("optional", false);
    lib.arch = v.value("arch", "");
    lib.source = v.value("source", "");
    if (!lib.dir.empty() && file.find('/') != std::string::npos)
      ctx.fail(
          fmt::format("{}: '{}' has both a 'dir' and a path", where, file));
  } else {
    ctx.fail(fmt::format("{}: a library is a string or an object", where));
  }
  if (file.empty()) ctx.fail(fmt::format("{}: empty library name", where));
  if (file.find('/') != std::string::npos) {
    lib.path = file;
    lib.dir = file.substr(0, file.rfind('/'));
  } else {
    if (lib.dir.empty()) lib.dir = d.library_dir;
    std::string dir = under_root(lib.dir, d);
    lib.path = dir.empty() ? file : dir + "/" + file;
  }
  if (lib.soname.empty()) lib.soname = base_name(lib.path);
  return lib;
}

// "8.0;9.0" (every architecture) or {"x86_64": …, "aarch64": …}.
void arch_lists(const json& v, const Ctx& ctx, const std::string& field,
                std::optional<std::string>* single,
                std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_string() && single) {
    *single = v.get<std::string>();
    return;
  }
  if (!v.is_object())
    ctx.fail(fmt::format("'{}' must map architectures to lists", field));
  for (const auto& [arch, list] : v.items()) {
    if (!list.is_string())
      ctx.fail(fmt::format("'{}.{}' must be a string", field, arch));
    out.emplace_back(arch, list.get<std::string>());
  }
}

void read_defaults(const json& doc, Defaults& d, const Ctx& ctx) {
  if (doc.contains("cuda_root"))
    d.cuda_root = doc["cuda_root"].get<std::string>();
  if (doc.contains("platforms")) {
    d.platforms.clear();
    arch_lists(doc["platforms"], ctx, "platforms", nullptr, d.platforms);
    d.platforms_source = doc.value("platforms_source", "");
  }
  if (doc.contains("keep_names_source"))
    d.keep_names_source = doc["keep_names_source"].get<std::string>();
  if (doc.contains("library_dir"))
    d.library_dir = doc["library_dir"].get<std::string>();
  if (doc.contains("keep_names"))
    d.keep_names = strings(doc["keep_names"], ctx, "keep_names");
  if (doc.contains("pypi_rpath")) {
    const json& p = doc["pypi_rpath"];
    if (!p.is_object()) ctx.fail("'pypi_rpath' must be an object");
    if (p.contains("template")) {
      d.pypi_template = p["template"].get<std::string>();
      if (d.pypi_template.find("{}") == std::string::npos)
        ctx.fail("'pypi_rpath.template' must contain {}");
    }
    if (p.contains("packages"))
      d.pypi_packages = strings(p["packages"], ctx, "pypi_rpath.packages");
    if (p.contains("min_cuda"))
      d.pypi_min = major_minor(p["min_cuda"].get<std::string>(), ctx);
  }
  if (doc.contains("optional_libraries")) {
    d.optional_libraries.clear();
    for (const auto& v : doc["optional_libraries"])
      d.optional_libraries.push_back(library(v, d, ctx, "optional_libraries"));
  }
}

// The first pattern matching `name`, or "".
std::string matching_pattern(const std::vector<std::string>& patterns,
                             std::string_view name) {
  std::string n(name);
  for (const auto& p : patterns)
    if (fnmatch(p.c_str(), n.c_str(), 0) == 0) return p;
  return "";
}

bool listed(const std::vector<CudaLibrary>& libs, const CudaLibrary& lib) {
  return std::any_of(libs.begin(), libs.end(), [&](const CudaLibrary& l) {
    return l.file_name() == lib.file_name() && l.arch == lib.arch;
  });
}

CudaTable version_entry(const json& v, const Defaults& d, const Ctx& ctx) {
  if (!v.is_object() || !v.contains("cuda") || !v["cuda"].is_string())
    ctx.fail("each 'versions' entry needs a \"cuda\": \"X.Y\" string");
  CudaTable t;
  auto [major, minor] = major_minor(v["cuda"].get<std::string>(), ctx);
  t.version = fmt::format("{}.{}", major, minor);
  std::string where = "CUDA " + t.version;
  try {
    t.keep_name_patterns = v.contains("keep_names")
                               ? strings(v["keep_names"], ctx, "keep_names")
                               : d.keep_names;
    t.keep_names_source = d.keep_names_source;
    t.cuda_root = d.cuda_root;
    t.platforms = d.platforms;
    t.platforms_source = d.platforms_source;
    if (v.contains("libraries")) {
      std::vector<CudaLibrary> libs;
      for (const auto& item : v["libraries"])
        libs.push_back(library(item, d, ctx, where));
      if (v.contains("arch_libraries"))
        for (const auto& item : v["arch_libraries"]) {
          CudaLibrary lib = library(item, d, ctx, where);
          if (lib.arch.empty())
            ctx.fail(
                fmt::format("{}: '{}' in 'arch_libraries' needs an "
                            "'arch'",
                            where, lib.file_name()));
          libs.push_back(std::move(lib));
        }
      // A version that bundles a default-optional library unconditionally
      // (cusparseLt from 12.6 on) lists it itself.
      for (const auto& lib : d.optional_libraries)
        if (!listed(libs, lib)) libs.push_back(lib);
      for (auto& lib : libs) {
        lib.keep_rule = matching_pattern(t.keep_name_patterns, lib.file_name());
        lib.keep_name = !lib.keep_rule.empty();
      }
      t.libraries = std::move(libs);
    }
    if (v.contains("pypi_rpath") && v["pypi_rpath"].is_array()) {
      t.pypi_rpath = strings(v["pypi_rpath"], ctx, "pypi_rpath");
      t.pypi_rpath_source = v.value("pypi_rpath_source", "");
    } else if (bool pypi =
                   !v.contains("pypi_rpath") || v["pypi_rpath"] != false;
               pypi && !d.pypi_template.empty() &&
               (!d.pypi_min || std::pair{major, minor} >= *d.pypi_min)) {
      for (const auto& pkg : d.pypi_packages) {
        std::string entry = d.pypi_template;
        entry.replace(entry.find("{}"), 2, pkg);
        t.pypi_rpath.push_back(entry);
      }
      t.pypi_rpath_source = "pypi_rpath template";
    }
    if (v.contains("torch_cuda_arch_list"))
      arch_lists(v["torch_cuda_arch_list"], ctx, "torch_cuda_arch_list",
                 &t.torch_cuda_arch_list, t.arch_lists);
    if (v.contains("libtorch_torch_cuda_arch_list"))
      arch_lists(v["libtorch_torch_cuda_arch_list"], ctx,
                 "libtorch_torch_cuda_arch_list", nullptr,
                 t.libtorch_arch_lists);
    if (v.contains("pypi_provides"))
      t.pypi_provides = strings(v["pypi_provides"], ctx, "pypi_provides");
    t.pypi_provides_source = v.value("pypi_provides_source", "");
    t.arch_list_source = v.value("arch_list_source", "");
    t.nvcc_flags = v.value("nvcc_flags", "");
    if (v.contains("build_env")) {
      if (!v["build_env"].is_object())
        ctx.fail(fmt::format("{}: 'build_env' must be an object", where));
      for (const auto& [k, val] : v["build_env"].items())
        t.build_env.emplace_back(k, val.get<std::string>());
    }
    t.bundle_ptxas = v.value("bundle_ptxas", false);
    t.static_cudnn = v.value("static_cudnn", false);
    t.note = v.value("source", "");
  } catch (const json::exception& e) {
    ctx.fail(fmt::format("{}: {}", where, e.what()));
  }
  return t;
}

void parse_with(std::string_view text, const std::string& origin, Defaults d,
                Defaults* out_defaults, std::vector<CudaTable>& tables) {
  Ctx ctx{origin};
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    ctx.fail(fmt::format("not JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("versions") ||
      !doc["versions"].is_array())
    ctx.fail("expected an object with a \"versions\" list");
  try {
    read_defaults(doc, d, ctx);
  } catch (const json::exception& e) {
    ctx.fail(e.what());
  }
  for (const auto& v : doc["versions"]) {
    CudaTable t = version_entry(v, d, ctx);
    for (const auto& seen : tables)
      if (seen.version == t.version)
        ctx.fail(fmt::format("CUDA {} is listed twice", t.version));
    tables.push_back(std::move(t));
  }
  if (out_defaults) *out_defaults = d;
}

const Defaults& builtin_defaults();

}  // namespace

const std::vector<CudaLibrary>& CudaTable::bundled() const {
  if (!libraries)
    throw Error(Errc::not_found, "",
                fmt::format("no bundle list is known for CUDA {}; supply one "
                            "in a CUDA table file",
                            version));
  return *libraries;
}

std::string CudaLibrary::file_name() const { return base_name(path); }

bool table_name_matches(std::string_view table_name, std::string_view soname) {
  if (table_name.empty() || !soname.starts_with(table_name)) return false;
  std::string_view rest = soname.substr(table_name.size());
  if (rest.empty()) return true;
  // Only a version suffix: ".13", ".13.0".
  if (rest.front() != '.' || rest.size() == 1) return false;
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

std::vector<CudaLibrary> CudaTable::bundled_for(std::string_view arch) const {
  std::string want(arch.empty() ? "x86_64" : arch);
  std::vector<CudaLibrary> out;
  for (const auto& lib : bundled())
    if (lib.arch.empty() || lib.arch == want) out.push_back(lib);
  return out;
}

const std::string& CudaTable::arch_list(std::string_view arch,
                                        bool libtorch) const {
  std::string want(arch.empty() ? "x86_64" : arch);
  if (libtorch)
    for (const auto& [a, list] : libtorch_arch_lists)
      if (a == want) return list;
  for (const auto& [a, list] : arch_lists)
    if (a == want) return list;
  if (torch_cuda_arch_list) return *torch_cuda_arch_list;
  std::string known;
  for (const auto& [a, list] : arch_lists)
    known += (known.empty() ? "" : ", ") + a;
  throw Error(Errc::not_found, "",
              fmt::format("no TORCH_CUDA_ARCH_LIST is known for CUDA {} on "
                          "{} (known: {}); supply one in a CUDA table file",
                          version, want, known.empty() ? "none" : known));
}

const std::string& CudaTable::arch_list() const {
  if (!torch_cuda_arch_list)
    throw Error(Errc::not_found, "",
                fmt::format("no TORCH_CUDA_ARCH_LIST is known for CUDA {}; "
                            "supply one in a CUDA table file",
                            version));
  return *torch_cuda_arch_list;
}

std::string CudaTable::pypi_rpath_string() const {
  if (pypi_rpath.empty())
    throw Error(
        Errc::not_found, "",
        fmt::format("no pypi-CUDA RPATH list is known for CUDA {}", version));
  std::string out;
  for (const auto& e : pypi_rpath) out += (out.empty() ? "" : ":") + e;
  return out;
}

bool CudaTable::keeps_name(std::string_view file_name) const {
  return !matching_pattern(keep_name_patterns, file_name).empty();
}

const CudaTables& CudaTables::builtin() {
  static const CudaTables tables = [] {
    CudaTables t;
    Defaults none;
    parse_with(embedded::text(embedded::cuda_tables_json,
                              embedded::cuda_tables_json_size),
               "<built-in cuda.json>", none, nullptr, t.tables_);
    return t;
  }();
  return tables;
}

namespace {
const Defaults& builtin_defaults() {
  static const Defaults d = [] {
    Defaults none, out;
    std::vector<CudaTable> ignored;
    parse_with(embedded::text(embedded::cuda_tables_json,
                              embedded::cuda_tables_json_size),
               "<built-in cuda.json>", none, &out, ignored);
    return out;
  }();
  return d;
}
}  // namespace

CudaTables CudaTables::parse(std::string_view json_text,
                             const std::string& origin) {
  CudaTables t;
  parse_with(json_text, origin, builtin_defaults(), nullptr, t.tables_);
  return t;
}

CudaTables CudaTables::load(const std::filesystem::path& file) {
  return parse(read_regular_file(file), file.string());
}

CudaTables CudaTables::overlaid(const CudaTables& other) const {
  CudaTables out = *this;
  for (const auto& t : other.tables_) {
    auto it =
        std::find_if(out.tables_.begin(), out.tables_.end(),
                     [&](const auto& x) { return x.version == t.version; });
    if (it != out.tables_.end())
      *it = t;
    else
      out.tables_.push_back(t);
  }
  return out;
}

std::vector<std::string> CudaTables::versions() const {
  std::vector<std::string> out;
  for (const auto& t : tables_) out.push_back(t.version);
  return out;
}

const CudaTable& CudaTables::find(const Accelerator& accel) const {
  if (accel.kind != AcceleratorKind::cuda)
    throw Error(Errc::usage, "",
                fmt::format("'{}' is not a CUDA accelerator", accel.tag()));
  std::string want = fmt::format("{}.{}", accel.major, accel.minor);
  for (const auto& t : tables_)
    if (t.version == want) return t;
  std::string known;
  for (const auto& t : tables_)
    known += (known.empty() ? "" : ", ") + t.version;
  throw Error(Errc::not_found, "",
              fmt::format("unknown CUDA version {}: no CUDA table for it "
                          "(known: {})",
                          want, known));
}

const CudaTable& cuda_table(const Accelerator& accel) {
  return CudaTables::builtin().find(accel);
}

}  // namespace libpkg::config
