// SPDX-License-Identifier: BSD-3-Clause
// libpkg.config: the typed build configuration ("manywheel 3.11 cu124"),
// version policy and artifact names.
#include <chrono>
#include <ctime>

#include "bindings.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/config/version.hpp"

namespace libpkg_py {

namespace {

namespace cf = libpkg::config;

// A datetime.date / datetime.datetime (its calendar day), an int
// timestamp, or None (today, UTC).
std::chrono::sys_days day_of(const py::object& when) {
  if (when.is_none()) return cf::utc_day(std::time(nullptr));
  if (py::isinstance<py::int_>(when))
    return cf::utc_day(static_cast<std::time_t>(when.cast<long long>()));
  if (py::hasattr(when, "year") && py::hasattr(when, "month") &&
      py::hasattr(when, "day")) {
    std::chrono::year_month_day ymd{
        std::chrono::year(when.attr("year").cast<int>()),
        std::chrono::month(when.attr("month").cast<unsigned>()),
        std::chrono::day(when.attr("day").cast<unsigned>())};
    return std::chrono::sys_days(ymd);
  }
  throw py::type_error("day must be a datetime.date, an int timestamp or None");
}

cf::PackageType package_type_of(const std::string& text) {
  return cf::parse_package_type(text);
}

}  // namespace

cf::Getenv getenv_from(const py::object& env) {
  py::object mapping =
      env.is_none() ? py::module_::import("os").attr("environ") : env;
  // Copied up front: the library may call getenv with the GIL released.
  std::map<std::string, std::string> copy;
  for (const py::handle key : py::iter(mapping)) {
    py::object value = mapping[key];
    if (!py::isinstance<py::str>(key) || !py::isinstance<py::str>(value))
      throw py::type_error("the environment must map str to str");
    copy[key.cast<std::string>()] = value.cast<std::string>();
  }
  return [copy = std::move(copy)](
             const std::string& name) -> std::optional<std::string> {
    auto it = copy.find(name);
    if (it == copy.end()) return std::nullopt;
    return it->second;
  };
}

void bind_config(py::module_& m) {
  py::class_<cf::Accelerator>(m, "Accelerator",
                              "cpu, a CUDA or ROCm version, xpu")
      .def_property_readonly("kind",
                             [](const cf::Accelerator& a) {
                               return cf::accelerator_kind_name(a.kind);
                             })
      .def_readonly("major", &cf::Accelerator::major)
      .def_readonly("minor", &cf::Accelerator::minor)
      .def_readonly("patch", &cf::Accelerator::patch)
      .def_property_readonly("version", &cf::Accelerator::version)
      .def_property_readonly("tag", &cf::Accelerator::tag)
      .def("__str__", &cf::Accelerator::tag)
      .def("__repr__",
           [](const cf::Accelerator& a) {
             return "<Accelerator " + a.tag() + ">";
           })
      .def(py::self == py::self);

  py::class_<cf::PythonVersion>(m, "PythonVersion")
      .def_readonly("major", &cf::PythonVersion::major)
      .def_readonly("minor", &cf::PythonVersion::minor)
      .def_readonly("free_threaded", &cf::PythonVersion::free_threaded)
      .def_property_readonly("python_tag", &cf::PythonVersion::python_tag)
      .def_property_readonly("abi_tag", &cf::PythonVersion::abi_tag)
      .def_property_readonly("dotted", &cf::PythonVersion::dotted)
      .def("__str__", &cf::PythonVersion::str)
      .def("__repr__",
           [](const cf::PythonVersion& p) {
             return "<PythonVersion " + p.str() + ">";
           })
      .def(py::self == py::self);

  py::class_<cf::BuildConfig>(m, "BuildConfig",
                              "What one binary-build job produces")
      .def_property_readonly("package_type",
                             [](const cf::BuildConfig& c) {
                               return cf::package_type_name(c.type);
                             })
      .def_readonly("python", &cf::BuildConfig::python)
      .def_readonly("build_python", &cf::BuildConfig::build_python)
      .def_readonly("accelerator", &cf::BuildConfig::accelerator)
      .def_property_readonly("cxx_abi",
                             [](const cf::BuildConfig& c) {
                               return cf::cxx_abi_option(c.cxx_abi);
                             })
      .def_property_readonly(
          "variant",
          [](const cf::BuildConfig& c) -> std::optional<std::string> {
            if (!c.variant) return std::nullopt;
            return c.variant->name();
          })
      .def_readonly("os", &cf::BuildConfig::os)
      .def_readonly("arch", &cf::BuildConfig::arch)
      .def_readonly("debug", &cf::BuildConfig::debug)
      .def_readonly("package_name", &cf::BuildConfig::package_name)
      .def_readonly("base_version", &cf::BuildConfig::base_version)
      .def_readonly("version", &cf::BuildConfig::version)
      .def_readonly("build_number", &cf::BuildConfig::build_number)
      .def_readonly("version_overridden", &cf::BuildConfig::version_overridden)
      .def_readonly("cudnn_version", &cf::BuildConfig::cudnn_version)
      .def_property_readonly("build_environment",
                             &cf::BuildConfig::build_environment)
      .def(
          "with_overrides",
          [](const cf::BuildConfig& c, std::optional<std::string> package_type,
             std::optional<std::string> python,
             std::optional<std::string> accelerator,
             std::optional<std::string> abi, std::optional<std::string> variant,
             std::optional<std::string> os, std::optional<std::string> arch,
             std::optional<std::string> package_name,
             std::optional<std::string> base_version,
             std::optional<std::string> override_version,
             std::optional<std::string> cudnn_version,
             std::optional<int> build_number, std::optional<bool> debug) {
            cf::ConfigOverrides o;
            o.package_type = package_type;
            o.python = python;
            o.accelerator = accelerator;
            o.abi = abi;
            o.variant = variant;
            o.os = os;
            o.arch = arch;
            o.package_name = package_name;
            o.base_version = base_version;
            o.override_version = override_version;
            o.cudnn_version = cudnn_version;
            o.build_number = build_number;
            o.debug = debug;
            return cf::apply_overrides(c, o);
          },
          py::kw_only(), "package_type"_a = py::none(), "python"_a = py::none(),
          "accelerator"_a = py::none(), "abi"_a = py::none(),
          "variant"_a = py::none(), "os"_a = py::none(), "arch"_a = py::none(),
          "package_name"_a = py::none(), "base_version"_a = py::none(),
          "override_version"_a = py::none(), "cudnn_version"_a = py::none(),
          "build_number"_a = py::none(), "debug"_a = py::none(),
          "A copy with these fields replaced (version re-resolved, validated).")
      .def(
          "wheel_name",
          [](const cf::BuildConfig& c) { return cf::wheel_name(c).format(); },
          "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl")
      .def("conda_build_string", &cf::conda_build_string)
      .def("conda_file_name", &cf::conda_file_name, "extension"_a = ".tar.bz2")
      .def("package_dir_suffix", &cf::package_dir_suffix)
      .def(
          "artifact_names",
          [](const cf::BuildConfig& c) { return cf::artifact_names(c); },
          "Every (role, file name) the configuration produces.")
      .def("__repr__",
           [](const cf::BuildConfig& c) {
             return "<BuildConfig " + c.build_environment() + " " + c.version +
                    ">";
           })
      .def(py::self == py::self);

  m.def("parse", &cf::parse_build_environment, "text"_a,
        "Parses a BUILD_ENVIRONMENT string: 'manywheel 3.11 cu124'.");
  m.def(
      "from_environment",
      [](const py::object& env) {
        return cf::from_environment(getenv_from(env));
      },
      "env"_a = py::none(),
      "The configuration from the old scripts' variables (None = os.environ).");
  m.def("parse_accelerator", &cf::parse_accelerator, "text"_a);
  m.def("parse_python", &cf::PythonVersion::parse, "text"_a);
  m.def(
      "nightly_version",
      [](const std::string& base, const py::object& day) {
        return cf::nightly_version(base, day_of(day));
      },
      "base"_a, "day"_a = py::none(),
      "'2.5.0' → '2.5.0.devYYYYMMDD' (the UTC day; None = today).");
  m.def("release_version", &cf::release_version, "tag"_a,
        "'v2.4.1-rc1' → '2.4.1'");
  m.def("upload_channel", &cf::upload_channel, "version"_a);
  m.def("with_build_number", &cf::with_build_number, "version"_a,
        "build_number"_a);
  // os None: the package type's own ("macos" for "wheel", else "linux").
  auto os_of = [](cf::PackageType type, const std::optional<std::string>& os) {
    if (os) return *os;
    return std::string(type == cf::PackageType::wheel_macos ? "macos"
                                                            : "linux");
  };
  m.def(
      "local_suffix",
      [os_of](const std::string& package_type, const std::string& accelerator,
              const std::optional<std::string>& os) {
        cf::PackageType type = package_type_of(package_type);
        return cf::local_suffix(type, os_of(type, os),
                                cf::parse_accelerator(accelerator));
      },
      "package_type"_a, "accelerator"_a, "os"_a = py::none(),
      "'+cu124', '+cpu' or '' (conda and macOS builds: '')");
  m.def(
      "package_version",
      [os_of](const std::string& base, const std::string& package_type,
              const std::string& accelerator,
              const std::optional<std::string>& os) {
        cf::PackageType type = package_type_of(package_type);
        return cf::package_version(base, type, os_of(type, os),
                                   cf::parse_accelerator(accelerator));
      },
      "base"_a, "package_type"_a, "accelerator"_a, "os"_a = py::none());
}

}  // namespace libpkg_py
