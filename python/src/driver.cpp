// SPDX-License-Identifier: BSD-3-Clause
// libpkg.driver: the manywheel, wheel_macos, libtorch and conda jobs (the
// drivers/ mains' library calls), each returning its Summary as data.
#include <fmt/format.h>

#include "bindings.hpp"
#include "conda_args.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/config/cuda_table.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/driver/common.hpp"
#include "libpkg/driver/conda.hpp"
#include "libpkg/driver/libtorch.hpp"
#include "libpkg/driver/manywheel.hpp"
#include "libpkg/driver/wheel_macos.hpp"

namespace libpkg_py {

namespace {

namespace dr = libpkg::driver;
namespace cf = libpkg::config;
namespace fs = std::filesystem;
using libpkg::Errc;
using libpkg::Error;

// The keyword options every driver takes (CommonOptions plus the check
// options libpkg.check.run takes), as Python passed them.
struct CommonArgs {
  fs::path out_dir;
  bool dry_run;
  unsigned threads;
  int zip_level;
  std::optional<libpkg::i64> timestamp;
  std::optional<fs::path> cuda_table;
  py::object cuda_roots;
  bool run_checks;
  py::object allow_external, only, skip;
  bool runtime;
  std::optional<std::string> python;
  py::object import_modules, lib_paths;
  unsigned timeout;
  CheckToolArgs tools;
  std::optional<py::function> progress;
};

// A named error rather than whatever the driver would make of a
// configuration for another package type.
void require_type(const cf::BuildConfig& config, cf::PackageType type) {
  if (config.type != type)
    throw Error(Errc::usage, "config",
                fmt::format("the {0} driver needs a {0} configuration, not "
                            "{1} ('{2}')",
                            cf::package_type_name(type),
                            cf::package_type_name(config.type),
                            config.build_environment()));
}

// Fills `common` from `a`, runs `job` with the GIL released and returns its
// summary; a progress callback's exception is re-raised afterwards.
template <typename Job>
dr::Summary run_job(dr::CommonOptions& common, const CommonArgs& a, Job job) {
  common.out_dir = a.out_dir;
  common.dry_run = a.dry_run;
  common.threads = a.threads;
  if (a.zip_level < 0 || a.zip_level > 9)
    throw Error(Errc::usage, "zip_level",
                "must be 0-9, not " + std::to_string(a.zip_level));
  common.zip_level = a.zip_level;
  common.timestamp = a.timestamp;
  // As the drivers' --cuda-root: more places to look for the table's
  // libraries, before the table's own cuda_root.
  for (const auto& root : string_list(a.cuda_roots, "cuda_roots"))
    common.cuda_roots.emplace_back(root);
  common.run_checks = a.run_checks;
  set_check_options(common.check, a.allow_external, a.only, a.skip, a.runtime,
                    a.python, a.import_modules, a.lib_paths, a.timeout);
  set_check_tools(common.check, a.tools);
  common.check.threads = a.threads;
  Callback log(a.progress);
  if (!log.empty()) {
    common.log = [&log](const std::string& line) { log(line); };
    common.check.log = common.log;
  }
  dr::Summary summary;
  {
    py::gil_scoped_release release;
    // Kept alive for the whole run: common.cuda_tables points at it.
    std::optional<cf::CudaTables> tables;
    if (a.cuda_table) {
      tables = cf::CudaTables::builtin().overlaid(
          cf::CudaTables::load(*a.cuda_table));
      common.cuda_tables = &*tables;
    }
    summary = job();
    common.cuda_tables = nullptr;
  }
  log.rethrow();
  return summary;
}

// The keyword arguments shared by the three functions, in the order
// CommonArgs lists them (pybind11 needs them spelled out per function).
#define LIBPKG_DRIVER_COMMON_KWARGS                                          \
  "out_dir"_a, "dry_run"_a = false, "threads"_a = 0, "zip_level"_a = 6,      \
               "timestamp"_a = py::none(), "cuda_table"_a = py::none(),      \
               "cuda_roots"_a = py::tuple(), "run_checks"_a = true,          \
               "allow_external"_a = py::tuple(), "only"_a = py::tuple(),     \
               "skip"_a = py::tuple(), "runtime"_a = true,                   \
               "python"_a = py::none(), "import_modules"_a = py::tuple(),    \
               "lib_paths"_a = py::tuple(), "timeout"_a = 600,               \
               "abi_libraries"_a = py::none(), "min_symbols"_a = py::none(), \
               "cxx"_a = py::none(), "client"_a = py::none(),                \
               "link_libraries"_a = py::tuple(), "progress"_a = py::none()

#define LIBPKG_DRIVER_COMMON_PARAMS                                            \
  const fs::path &out_dir, bool dry_run, unsigned threads, int zip_level,      \
      std::optional<libpkg::i64> timestamp,                                    \
      std::optional<fs::path> cuda_table, const py::object &cuda_roots,        \
      bool run_checks, const py::object &allow_external,                       \
      const py::object &only, const py::object &skip, bool runtime,            \
      std::optional<std::string> python, const py::object &import_modules,     \
      const py::object &lib_paths, unsigned timeout,                           \
      const py::object &abi_libraries, std::optional<std::size_t> min_symbols, \
      std::optional<std::string> cxx, std::optional<fs::path> client,          \
      const py::object &link_libraries, std::optional<py::function> progress

#define LIBPKG_DRIVER_COMMON_ARGS                                            \
  CommonArgs {                                                               \
    out_dir, dry_run, threads, zip_level, timestamp, cuda_table, cuda_roots, \
        run_checks, allow_external, only, skip, runtime, python,             \
        import_modules, lib_paths, timeout,                                  \
        {abi_libraries, min_symbols, cxx, client, link_libraries}, progress  \
  }

}  // namespace

void bind_driver(py::module_& m) {
  py::class_<dr::Artifact>(m, "Artifact", "One file a driver wrote")
      .def_readonly("role", &dr::Artifact::role,
                    "'wheel', 'conda', 'conda-v2', 'libtorch', ...")
      .def_readonly("path", &dr::Artifact::path)
      .def_readonly("size", &dr::Artifact::size)
      .def_readonly("checked", &dr::Artifact::check,
                    "Whether check_binary ran on it")
      .def("__repr__", [](const dr::Artifact& a) {
        return "<Artifact " + a.role + " " + a.path.string() + ">";
      });

  py::class_<dr::Summary>(m, "Summary", "What a driver planned and did")
      .def_readonly("driver", &dr::Summary::driver)
      .def_readonly("config", &dr::Summary::config)
      .def_readonly("dry_run", &dr::Summary::dry_run)
      .def_readonly("plan", &dr::Summary::plan)
      .def_readonly("artifacts", &dr::Summary::artifacts)
      .def_readonly("checks", &dr::Summary::checks)
      .def_readonly("notes", &dr::Summary::notes)
      .def_readonly("seconds", &dr::Summary::seconds)
      .def_property_readonly("passed", &dr::Summary::passed,
                             "No check failed (True when none ran)")
      .def("to_text", &dr::Summary::to_text, "verbose"_a = false)
      .def("to_json", &dr::Summary::to_json, "indent"_a = 2,
           "The libpkg-driver/1 document.")
      .def("to_dict",
           [](const dr::Summary& s) { return json_loads(s.to_json(-1)); })
      .def("__bool__", &dr::Summary::passed)
      .def("__str__", [](const dr::Summary& s) { return s.to_text(); })
      .def("__repr__", [](const dr::Summary& s) {
        return "<Summary " + s.driver + " " + s.config.build_environment() +
               (s.dry_run ? " dry-run" : "") + ">";
      });

  m.def(
      "wheel_python",
      [](const fs::path& wheel) { return dr::wheel_python(wheel); }, "wheel"_a,
      "The CPython a wheel's file name is for (None when it names no single "
      "one).");

  m.def(
      "manywheel",
      [](std::optional<fs::path> wheel, const cf::BuildConfig& config,
         std::optional<std::string> build_command,
         std::optional<fs::path> source_dir, std::optional<fs::path> dist_dir,
         unsigned build_timeout, std::optional<std::string> lib_dir,
         bool pypi_cuda, bool force_rpath, const py::object& include,
         const py::object& keep_names, const py::object& exclude,
         const py::object& enable, const std::string& plat,
         const py::object& ld_library_path, const py::object& env,
         LIBPKG_DRIVER_COMMON_PARAMS) {
        require_type(config, cf::PackageType::manywheel);
        dr::ManywheelOptions o;
        if (wheel) o.wheel = *wheel;
        o.common.config = config;
        if (build_command) o.build_command = *build_command;
        if (source_dir) o.source_dir = *source_dir;
        if (dist_dir) o.dist_dir = *dist_dir;
        o.build_timeout_seconds = build_timeout;
        o.lib_dir = std::move(lib_dir);
        o.pypi_cuda = pypi_cuda;
        o.force_rpath = force_rpath;
        o.include = string_list(include, "include");
        o.keep_names = string_list(keep_names, "keep_names");
        o.exclude = string_list(exclude, "exclude");
        o.enable = string_list(enable, "enable");
        o.plat = plat;
        o.search.ld_library_path =
            string_list(ld_library_path, "ld_library_path");
        o.search.extra_paths = string_list(lib_paths, "lib_paths");
        // Only when asked: a release script states what it wants, the
        // process environment is not read behind its back.
        if (!env.is_none()) {
          dr::apply_environment_switches(o, getenv_from(env));
        }
        return run_job(o.common, LIBPKG_DRIVER_COMMON_ARGS,
                       [&o] { return dr::run_manywheel(o); });
      },
      "wheel"_a, "config"_a, py::kw_only(), "build_command"_a = py::none(),
      "source_dir"_a = py::none(), "dist_dir"_a = py::none(),
      "build_timeout"_a = 0, "lib_dir"_a = py::none(), "pypi_cuda"_a = false,
      "force_rpath"_a = false, "include"_a = py::tuple(),
      "keep_names"_a = py::tuple(), "exclude"_a = py::tuple(),
      "enable"_a = py::tuple(), "plat"_a = "auto",
      "ld_library_path"_a = py::tuple(), "env"_a = py::none(),
      LIBPKG_DRIVER_COMMON_KWARGS,
      "A built wheel (or, with wheel=None, what `build_command` writes) → "
      "the distributable manylinux wheel in `out_dir`, checked. lib_paths "
      "and ld_library_path are where outside libraries are found (the "
      "environment is never read).");

  m.def(
      "wheel_macos",
      [](std::optional<fs::path> wheel, const cf::BuildConfig& config,
         std::optional<std::string> build_command,
         std::optional<fs::path> source_dir, std::optional<fs::path> dist_dir,
         unsigned build_timeout, std::optional<std::string> deployment_target,
         const py::object& dyld_library_path, const py::object& exclude,
         LIBPKG_DRIVER_COMMON_PARAMS) {
        require_type(config, cf::PackageType::wheel_macos);
        dr::WheelMacosOptions o;
        if (wheel) o.wheel = *wheel;
        o.common.config = config;
        if (build_command) o.build_command = *build_command;
        if (source_dir) o.source_dir = *source_dir;
        if (dist_dir) o.dist_dir = *dist_dir;
        o.build_timeout_seconds = build_timeout;
        o.deployment_target = std::move(deployment_target);
        for (const auto& d :
             string_list(dyld_library_path, "dyld_library_path"))
          o.library_path.push_back(d);
        for (const auto& d : string_list(lib_paths, "lib_paths"))
          o.library_path.push_back(d);
        o.exclude = string_list(exclude, "exclude");
        return run_job(o.common, LIBPKG_DRIVER_COMMON_ARGS,
                       [&o] { return dr::run_wheel_macos(o); });
      },
      "wheel"_a, "config"_a, py::kw_only(), "build_command"_a = py::none(),
      "source_dir"_a = py::none(), "dist_dir"_a = py::none(),
      "build_timeout"_a = 0, "deployment_target"_a = py::none(),
      "dyld_library_path"_a = py::tuple(), "exclude"_a = py::tuple(),
      LIBPKG_DRIVER_COMMON_KWARGS,
      "A built macOS wheel (or, with wheel=None, what `build_command` "
      "writes) → torch-<ver>-cp<XY>-none-macosx_<tag>.whl in `out_dir`: "
      "outside dylibs bundled into <package>/.dylibs, one OpenMP runtime "
      "(<package>/lib), tagged from minos with deployment_target (10.15 by "
      "default; arm64 at least 11.0) as floor and ceiling, checked. "
      "dyld_library_path then lib_paths are searched first by leaf name "
      "(the environment is never read).");

  m.def(
      "libtorch",
      [](std::optional<fs::path> tree, std::optional<fs::path> wheel,
         const cf::BuildConfig& config, std::optional<std::string> build_hash,
         std::optional<fs::path> source, bool debug_split,
         const py::object& debug_libraries, const py::object& include,
         bool skip_other_entries, bool write_latest, bool keep_names,
         const std::string& objcopy, const std::string& git,
         std::optional<std::string> deployment_target,
         const py::object& dyld_library_path, const py::object& exclude,
         LIBPKG_DRIVER_COMMON_PARAMS) {
        require_type(config, cf::PackageType::libtorch);
        if (tree.has_value() == wheel.has_value())
          throw Error(Errc::usage, "libtorch",
                      "give either an install tree or a wheel, not both or "
                      "neither");
        dr::LibtorchDriverOptions o;
        o.common.config = config;
        o.tree = std::move(tree);
        o.wheel = std::move(wheel);
        o.build_hash = std::move(build_hash);
        o.source = std::move(source);
        o.debug_split = debug_split;
        o.debug_libraries = string_list(debug_libraries, "debug_libraries");
        o.include = string_list(include, "include");
        o.skip_other_entries = skip_other_entries;
        o.write_latest = write_latest;
        o.keep_names = keep_names;
        o.objcopy = objcopy;
        o.git = git;
        o.deployment_target = std::move(deployment_target);
        for (const auto& d :
             string_list(dyld_library_path, "dyld_library_path"))
          o.library_path.push_back(d);
        o.exclude = string_list(exclude, "exclude");
        return run_job(o.common, LIBPKG_DRIVER_COMMON_ARGS,
                       [&o] { return dr::run_libtorch(o); });
      },
      "tree"_a = py::none(), "wheel"_a = py::none(), py::kw_only(), "config"_a,
      "build_hash"_a = py::none(), "source"_a = py::none(),
      "debug_split"_a = false,
      "debug_libraries"_a = std::vector<std::string>{"libtorch_cpu.so"},
      "include"_a = py::tuple(), "skip_other_entries"_a = false,
      "write_latest"_a = true, "keep_names"_a = false, "objcopy"_a = "objcopy",
      "git"_a = "git", "deployment_target"_a = py::none(),
      "dyld_library_path"_a = py::tuple(), "exclude"_a = py::tuple(),
      LIBPKG_DRIVER_COMMON_KWARGS,
      "An install tree (lib/ include/ [share/ bin/]) or a built wheel → "
      "the libtorch zip set of the configuration's variant in `out_dir`, "
      "checked. build-hash: `build_hash`, or `git rev-parse HEAD` in "
      "`source`. A macOS configuration makes libtorch-macos-<arch>-<ver>.zip: "
      "outside dylibs (found first in dyld_library_path, not `exclude`d) "
      "bundled into lib/, the one OpenMP runtime the tree's lib/ ships (the "
      "wheel's torch/lib/libomp.dylib), checked against deployment_target "
      "(10.15 by default; arm64 at least 11.0).");

  m.def(
      "conda",
      [](const fs::path& prefix, const cf::BuildConfig& config,
         const py::object& metadata, bool inject_depends,
         const py::object& formats, int zstd_level,
         std::optional<std::string> placeholder, bool keep_outside_rpaths,
         LIBPKG_DRIVER_COMMON_PARAMS) {
        require_type(config, cf::PackageType::conda);
        dr::CondaDriverOptions o;
        o.common.config = config;
        o.prefix = prefix;
        // A dict overrides the defaults field by field; a path is the
        // command's --meta file (its fields replace the defaults).
        if (py::isinstance<py::dict>(metadata)) {
          std::string text = py::module_::import("json")
                                 .attr("dumps")(metadata)
                                 .cast<std::string>();
          o.metadata =
              libpkg::conda::parse_metadata_json(text, "<metadata dict>");
        } else if (py::isinstance<py::str>(metadata) ||
                   py::hasattr(metadata, "__fspath__")) {
          o.metadata_file = metadata.cast<fs::path>();
        } else if (!metadata.is_none()) {
          throw py::type_error(
              "metadata must be a dict, the path of a JSON file or None, "
              "not " +
              std::string(py::str(py::type::of(metadata).attr("__name__"))));
        }
        o.inject_depends = inject_depends;
        o.formats.clear();
        for (const auto& f : string_list(formats, "formats"))
          o.formats.push_back(parse_conda_format(f));
        if (o.formats.empty())
          throw Error(Errc::usage, "formats", "must name at least one format");
        o.zstd_level = zstd_level;
        o.placeholder = std::move(placeholder);
        o.outside_rpaths = keep_outside_rpaths
                               ? libpkg::conda::OutsideRpath::keep
                               : libpkg::conda::OutsideRpath::drop;
        return run_job(o.common, LIBPKG_DRIVER_COMMON_ARGS,
                       [&o] { return dr::run_conda(o); });
      },
      "prefix"_a, "config"_a, py::kw_only(), "metadata"_a = py::none(),
      "inject_depends"_a = true,
      "formats"_a = std::vector<std::string>{"conda", "tar.bz2"},
      "zstd_level"_a = 19, "placeholder"_a = py::none(),
      "keep_outside_rpaths"_a = false, LIBPKG_DRIVER_COMMON_KWARGS,
      "A staged install prefix → relocated .conda / .tar.bz2 packages in "
      "`out_dir`, checked. metadata: a dict of index fields, a JSON file, "
      "or None (all from the configuration). placeholder None = the "
      "prefix's own path, '' = no placeholder search.");
}

}  // namespace libpkg_py
