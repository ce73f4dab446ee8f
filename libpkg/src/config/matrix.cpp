// SPDX-License-Identifier: BSD-3-Clause
// Matrix expansion: data/matrix.json groups → validated BuildConfigs →
// a GitHub Actions strategy.matrix document.
#include "libpkg/config/matrix.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/embedded.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::config {
namespace {

using nlohmann::json;
using Fields = std::map<std::string, std::string>;

std::vector<std::string> list(const json& group, const char* key,
                              const std::string& origin, std::size_t index,
                              std::vector<std::string> fallback) {
  if (!group.contains(key)) return fallback;
  const json& v = group[key];
  if (!v.is_array() || v.empty())
    throw Error(
        Errc::format, origin,
        fmt::format("group {}: '{}' must be a non-empty list", index, key));
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string())
      throw Error(Errc::format, origin,
                  fmt::format("group {}: '{}' must hold strings", index, key));
    out.push_back(s.get<std::string>());
  }
  return out;
}

bool excluded(const Fields& f, const json& exclude) {
  for (const auto& rule : exclude) {
    bool all = true;
    for (const auto& [key, pattern] : rule.items()) {
      auto it = f.find(key);
      std::string value = it == f.end() ? "" : it->second;
      if (fnmatch(pattern.get<std::string>().c_str(), value.c_str(), 0) != 0) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

std::string accelerator_token(const Accelerator& a) {
  if (a.kind == AcceleratorKind::cuda && a.minor >= 10)
    return "cuda" + a.version();
  return a.tag();
}

bool filter_accepts(const MatrixFilter& f, const BuildConfig& c) {
  if (!f.package_types.empty() &&
      std::none_of(
          f.package_types.begin(), f.package_types.end(),
          [&](const auto& t) { return parse_package_type(t) == c.type; }))
    return false;
  if (!f.accelerators.empty() &&
      std::none_of(f.accelerators.begin(), f.accelerators.end(),
                   [&](const std::string& a) {
                     // A kind alone ("cuda", "rocm") selects every version.
                     if (a == "cuda" || a == "rocm" || a == "xpu")
                       return a == accelerator_kind_name(c.accelerator.kind);
                     Accelerator want = parse_accelerator(a);
                     if (!want.patch) {
                       return want.kind == c.accelerator.kind &&
                              want.major == c.accelerator.major &&
                              want.minor == c.accelerator.minor;
                     }
                     return want == c.accelerator;
                   }))
    return false;
  if (!f.pythons.empty() &&
      std::none_of(f.pythons.begin(), f.pythons.end(), [&](const auto& p) {
        return c.python && PythonVersion::parse(p) == *c.python;
      }))
    return false;
  return true;
}

std::string underscored(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

}  // namespace

std::string_view builtin_matrix_json() {
  return embedded::text(embedded::matrix_json, embedded::matrix_json_size);
}

std::vector<BuildConfig> expand_matrix(std::string_view text,
                                       const std::string& origin,
                                       const MatrixFilter& filter) {
  // Filter values are user input: refuse bad ones even if nothing matches.
  for (const auto& t : filter.package_types) parse_package_type(t);
  for (const auto& a : filter.accelerators)
    if (a != "cuda" && a != "rocm" && a != "xpu") parse_accelerator(a);
  for (const auto& p : filter.pythons) PythonVersion::parse(p);

  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw Error(Errc::format, origin, fmt::format("not JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("groups") || !doc["groups"].is_array())
    throw Error(Errc::format, origin,
                "expected an object with a \"groups\" list");
  json exclude = doc.value("exclude", json::array());
  for (const auto& rule : exclude)
    for (const auto& [key, value] : rule.items()) {
      static const char* kKeys[] = {"package_type", "python",  "accelerator",
                                    "abi",          "variant", "os",
                                    "arch"};
      if (std::none_of(std::begin(kKeys), std::end(kKeys),
                       // clang < 16 cannot capture a structured binding.
                       [&field = key](const char* k) { return field == k; }))
        throw Error(Errc::format, origin,
                    fmt::format("exclude: unknown field '{}' (fields: "
                                "package_type, python, accelerator, abi, "
                                "variant, os, arch)",
                                key));
      if (!value.is_string())
        throw Error(Errc::format, origin,
                    fmt::format("exclude: '{}' must be a string pattern", key));
    }

  std::vector<BuildConfig> out;
  for (std::size_t gi = 0; gi < doc["groups"].size(); ++gi) {
    const json& g = doc["groups"][gi];
    if (!g.is_object() || !g.contains("package_type") ||
        !g["package_type"].is_string())
      throw Error(Errc::format, origin,
                  fmt::format("group {}: needs a \"package_type\"", gi));
    std::string type = g["package_type"].get<std::string>();
    auto where = [&](const std::string& what) {
      return fmt::format("group {} ({}): {}", gi, type, what);
    };
    try {
      PackageType kind = parse_package_type(type);
      bool pythonless = kind == PackageType::libtorch;
      auto pythons = list(g, "pythons", origin, gi, {""});
      if (pythonless && g.contains("pythons"))
        throw Error(Errc::format, origin, where("libtorch has no pythons"));
      auto accels = list(g, "accelerators", origin, gi, {});
      if (accels.empty())
        throw Error(Errc::format, origin, where("needs \"accelerators\""));
      auto abis = list(g, "abis", origin, gi, {""});
      auto variants = list(g, "variants", origin, gi, {""});
      std::string os =
          g.value("os", kind == PackageType::wheel_macos ? "macos" : "linux");
      std::string arch = g.value("arch", "x86_64");
      for (const auto& py : pythons)
        for (const auto& acc : accels)
          for (const auto& abi_text : abis)
            for (const auto& variant : variants) {
              Accelerator a = parse_accelerator(acc);
              Fields f{
                  {"package_type", package_type_name(kind)},
                  {"python", py.empty() ? "" : PythonVersion::parse(py).str()},
                  {"accelerator", a.tag()},
                  {"variant", variant},
                  {"os", os},
                  {"arch", arch}};
              f["abi"] =
                  !abi_text.empty() ? cxx_abi_option(parse_cxx_abi(abi_text))
                  : os == "macos"   ? "none"
                                  : cxx_abi_option(abi_from_devtoolset("", a));
              if (excluded(f, exclude)) continue;
              ConfigOverrides o;
              o.package_type = type;
              if (!py.empty()) o.python = py;
              o.accelerator = acc;
              if (!abi_text.empty()) o.abi = abi_text;
              if (!variant.empty()) o.variant = variant;
              o.os = os;
              o.arch = arch;
              BuildConfig c;
              try {
                c = apply_overrides(BuildConfig{}, o);
              } catch (const Error& e) {
                throw Error(Errc::format, origin, where(e.message()));
              }
              if (filter_accepts(filter, c)) out.push_back(std::move(c));
            }
    } catch (const json::exception& e) {
      throw Error(Errc::format, origin, where(e.what()));
    } catch (const Error& e) {
      if (e.code() == Errc::format) throw;
      throw Error(Errc::format, origin, where(e.message()));
    }
  }
  return out;
}

std::string build_name(const BuildConfig& c) {
  std::string name = package_type_name(c.type);
  // str(), not dotted(): 2.7m and 2.7mu are different jobs.
  if (c.python) name += "-py" + underscored(c.python->str());
  const Accelerator& a = c.accelerator;
  switch (a.kind) {
    case AcceleratorKind::cuda:
      name += "-cuda" + underscored(a.version());
      break;
    case AcceleratorKind::rocm:
      name += "-rocm" + underscored(a.version());
      break;
    default:
      name += std::string("-") + accelerator_kind_name(a.kind);
  }
  if (c.variant) name += "-" + c.variant->name();
  if (c.type == PackageType::libtorch && c.os == "linux")
    name += std::string("-") + cxx_abi_option(c.cxx_abi);
  if (c.os == "macos" && c.type != PackageType::wheel_macos) name += "-macos";
  if (c.arch != "x86_64") name += "-" + c.arch;
  if (c.debug) name += "-debug";
  return name;
}

std::string matrix_json(const std::vector<BuildConfig>& configs, int indent) {
  json include = json::array();
  for (const auto& c : configs) {
    const Accelerator& a = c.accelerator;
    include.push_back({
        {"package_type", package_type_name(c.type)},
        {"desired_python", c.python ? c.python->str() : ""},
        {"desired_cuda", accelerator_token(a)},
        {"gpu_arch_type", accelerator_kind_name(a.kind)},
        {"gpu_arch_version", a.version()},
        {"desired_devtoolset",
         c.cxx_abi == abi::CxxAbi::cxx11 ? "cxx11-abi" : ""},
        {"cxx_abi", cxx_abi_option(c.cxx_abi)},
        {"libtorch_variant", c.variant ? c.variant->name() : ""},
        {"os", c.os},
        {"arch", c.arch},
        {"build_name", build_name(c)},
        {"build_environment", c.build_environment()},
    });
  }
  return json{{"include", include}}.dump(indent);
}

}  // namespace libpkg::config
