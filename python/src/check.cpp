// SPDX-License-Identifier: BSD-3-Clause
// libpkg.check: check_binary's checks over any artifact, as data.
#include "libpkg/check/check.hpp"

#include "bindings.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/config/accelerator.hpp"

namespace libpkg_py {

namespace {

namespace ck = libpkg::check;

}  // namespace

void set_check_options(ck::CheckOptions& o, const py::object& allow_external,
                       const py::object& only, const py::object& skip,
                       bool runtime, const std::optional<std::string>& python,
                       const py::object& import_modules,
                       const py::object& lib_paths, unsigned timeout) {
  o.allow_external = string_list(allow_external, "allow_external");
  o.only = string_list(only, "only");
  o.skip = string_list(skip, "skip");
  o.runtime = runtime;
  o.python =
      python
          ? *python
          : py::module_::import("sys").attr("executable").cast<std::string>();
  o.import_modules = string_list(import_modules, "import_modules");
  o.search.extra_paths = string_list(lib_paths, "lib_paths");
  o.timeout_seconds = timeout;
}

void set_check_tools(ck::CheckOptions& o, const CheckToolArgs& a) {
  if (!a.abi_libraries.is_none())
    o.abi_libraries = string_list(a.abi_libraries, "abi_libraries");
  if (a.min_symbols) {
    o.min_cxx11_symbols = *a.min_symbols;
    o.min_pre_cxx11_symbols = *a.min_symbols;
  }
  if (a.cxx) o.cxx = *a.cxx;
  o.client = a.client;
  o.link_libraries = string_list(a.link_libraries, "link_libraries");
}

void bind_check(py::module_& m) {
  py::class_<ck::Problem>(m, "Problem")
      .def_readonly("file", &ck::Problem::file)
      .def_readonly("message", &ck::Problem::message)
      .def("__str__", [](const ck::Problem& p) {
        return p.file.empty() ? p.message : p.file + ": " + p.message;
      });

  py::class_<ck::CheckResult>(m, "CheckResult", "One check's finding")
      .def_readonly("id", &ck::CheckResult::id)
      .def_property_readonly(
          "status",
          [](const ck::CheckResult& r) { return ck::status_name(r.status); },
          "'pass', 'fail' or 'skip'")
      .def_readonly("summary", &ck::CheckResult::summary)
      .def_readonly("problems", &ck::CheckResult::problems)
      .def_readonly("notes", &ck::CheckResult::notes)
      .def("__repr__", [](const ck::CheckResult& r) {
        return "<CheckResult " + r.id + " " + ck::status_name(r.status) + ">";
      });

  py::class_<ck::Report>(m, "Report")
      .def_readonly("artifact", &ck::Report::artifact)
      .def_property_readonly(
          "kind",
          [](const ck::Report& r) { return ck::artifact_kind_name(r.kind); })
      .def_readonly("checks", &ck::Report::checks)
      .def_property_readonly("passed", &ck::Report::passed)
      .def(
          "count",
          [](const ck::Report& r, const std::string& status) {
            if (status == "pass") return r.count(ck::Status::pass);
            if (status == "fail") return r.count(ck::Status::fail);
            if (status == "skip") return r.count(ck::Status::skip);
            throw py::value_error(
                "status must be 'pass', 'fail' or 'skip', not '" + status +
                "'");
          },
          "status"_a)
      .def(
          "find",
          [](const ck::Report& r,
             const std::string& id) -> std::optional<ck::CheckResult> {
            const auto* c = r.find(id);
            if (!c) return std::nullopt;
            return *c;
          },
          "id"_a)
      .def("to_text", &ck::Report::to_text, "verbose"_a = false)
      .def("to_json", &ck::Report::to_json, "indent"_a = 2,
           "The libpkg-check/1 document.")
      .def("to_dict",
           [](const ck::Report& r) { return json_loads(r.to_json(-1)); })
      .def("__bool__", &ck::Report::passed)
      .def("__str__", [](const ck::Report& r) { return r.to_text(); });

  m.def("ids", &ck::check_ids, "All check ids, in report order.");
  m.def(
      "run",
      [](const std::filesystem::path& artifact,
         std::optional<std::string> package_type,
         std::optional<std::string> accelerator,
         std::optional<std::string> cxx_abi,
         std::optional<std::string> platform, const py::object& libraries,
         bool table_libraries, const py::object& allow_external,
         const py::object& only, const py::object& skip, bool runtime,
         std::optional<std::string> python, const py::object& import_modules,
         const py::object& lib_paths, unsigned timeout, unsigned threads,
         const py::object& abi_libraries,
         std::optional<std::size_t> min_symbols, std::optional<std::string> cxx,
         std::optional<std::filesystem::path> client,
         const py::object& link_libraries,
         std::optional<py::function> progress) {
        ck::CheckOptions o;
        o.expect.package_type = std::move(package_type);
        if (accelerator)
          o.expect.accelerator =
              libpkg::config::parse_accelerator(*accelerator);
        if (cxx_abi) o.expect.cxx_abi = libpkg::config::parse_cxx_abi(*cxx_abi);
        o.expect.platform = std::move(platform);
        o.expect.libraries = string_list(libraries, "libraries");
        o.expect.table_libraries = table_libraries;
        set_check_options(o, allow_external, only, skip, runtime, python,
                          import_modules, lib_paths, timeout);
        set_check_tools(
            o, {abi_libraries, min_symbols, cxx, client, link_libraries});
        o.threads = threads;
        Callback log(std::move(progress));
        if (!log.empty())
          o.log = [&log](const std::string& line) { log(line); };
        ck::Report report;
        {
          py::gil_scoped_release release;
          report = ck::run(artifact, o);
        }
        log.rethrow();
        return report;
      },
      "artifact"_a, py::kw_only(), "package_type"_a = py::none(),
      "accelerator"_a = py::none(), "cxx_abi"_a = py::none(),
      "platform"_a = py::none(), "libraries"_a = py::tuple(),
      "table_libraries"_a = false, "allow_external"_a = py::tuple(),
      "only"_a = py::tuple(), "skip"_a = py::tuple(), "runtime"_a = true,
      "python"_a = py::none(), "import_modules"_a = py::tuple(),
      "lib_paths"_a = py::tuple(), "timeout"_a = 600, "threads"_a = 0,
      "abi_libraries"_a = py::none(), "min_symbols"_a = py::none(),
      "cxx"_a = py::none(), "client"_a = py::none(),
      "link_libraries"_a = py::tuple(), "progress"_a = py::none(),
      "Runs check_binary's checks on a wheel, conda package, libtorch zip or "
      "installed tree. `progress(line)` receives progress lines; python "
      "None = this interpreter (for the import check).");
}

}  // namespace libpkg_py
