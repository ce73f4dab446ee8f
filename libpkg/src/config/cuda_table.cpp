// Per-CUDA tables: parsing data/cuda/cuda.json (embedded) and user files in
// the same format. A user file may omit the top-level settings (library
// directory, keep-name patterns, pypi RPATH list, optional libraries); it
// then inherits the built-in ones, so overriding one version's bundle list
// takes only that entry.
#include "libpkg/config/cuda_table.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/embedded.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::config {
namespace {

using nlohmann::json;

// The top-level settings every version entry uses.
struct Defaults {
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
  try {
    Accelerator a = parse_accelerator(text);
    if (a.kind != AcceleratorKind::cuda) throw Error(Errc::usage, "", "");
    return {a.major, a.minor};
  } catch (const Error&) {
    ctx.fail(fmt::format("'{}' is not a CUDA version (X.Y)", text));
  }
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

// "libcudart.so.12" or {"file"|"path": …, "soname": …, "condition": …}.
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
    if (v.contains("soname")) lib.soname = v["soname"].get<std::string>();
    if (v.contains("condition"))
      lib.condition = v["condition"].get<std::string>();
  } else {
    ctx.fail(fmt::format("{}: a library is a string or an object", where));
  }
  if (file.empty()) ctx.fail(fmt::format("{}: empty library name", where));
  lib.path = file.find('/') == std::string::npos
                 ? (d.library_dir.empty() ? file : d.library_dir + "/" + file)
                 : file;
  if (lib.soname.empty()) lib.soname = base_name(lib.path);
  return lib;
}

void read_defaults(const json& doc, Defaults& d, const Ctx& ctx) {
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

bool matches_any(const std::vector<std::string>& patterns,
                 std::string_view name) {
  std::string n(name);
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) {
    return fnmatch(p.c_str(), n.c_str(), 0) == 0;
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
    if (v.contains("libraries")) {
      std::vector<CudaLibrary> libs;
      for (const auto& item : v["libraries"])
        libs.push_back(library(item, d, ctx, where));
      for (const auto& lib : d.optional_libraries) libs.push_back(lib);
      for (auto& lib : libs)
        lib.keep_name = matches_any(t.keep_name_patterns, base_name(lib.path));
      t.libraries = std::move(libs);
    }
    bool pypi = !v.contains("pypi_rpath") || v["pypi_rpath"] != false;
    if (pypi && !d.pypi_template.empty() &&
        (!d.pypi_min || std::pair{major, minor} >= *d.pypi_min)) {
      for (const auto& pkg : d.pypi_packages) {
        std::string entry = d.pypi_template;
        entry.replace(entry.find("{}"), 2, pkg);
        t.pypi_rpath.push_back(entry);
      }
    }
    if (v.contains("torch_cuda_arch_list"))
      t.torch_cuda_arch_list = v["torch_cuda_arch_list"].get<std::string>();
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
  return matches_any(keep_name_patterns, file_name);
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
  std::ifstream in(file, std::ios::binary);
  if (!in) throw_errno(file.string(), "open");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), file.string());
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
              fmt::format("no CUDA table for {} (known: {})", want, known));
}

const CudaTable& cuda_table(const Accelerator& accel) {
  return CudaTables::builtin().find(accel);
}

}  // namespace libpkg::config
