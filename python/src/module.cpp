// SPDX-License-Identifier: BSD-3-Clause
// The entry point of `libpkg._libpkg`: one submodule per library area.
#include "bindings.hpp"

namespace libpkg_py {

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

std::vector<std::string> string_list(const py::object& items,
                                     const char* what) {
  if (py::isinstance<py::str>(items) || py::isinstance<py::bytes>(items))
    throw py::type_error(std::string(what) +
                         " must be a list of str, not a single str");
  std::vector<std::string> out;
  for (const py::handle item : py::iter(items)) {
    if (!py::isinstance<py::str>(item))
      throw py::type_error(
          std::string(what) + " must contain only str, got " +
          std::string(py::str(py::type::of(item).attr("__name__"))));
    out.push_back(item.cast<std::string>());
  }
  return out;
}

}  // namespace libpkg_py

namespace py = pybind11;

PYBIND11_MODULE(_libpkg, m) {
  namespace lp = libpkg_py;
  m.doc() = "libpkg: ELF editing, wheels, conda packages, repair and checks";
  m.attr("__version__") = LIBPKG_VERSION;
  lp::bind_errors(m);
  auto sub = [&](const char* name, const char* doc) {
    return m.def_submodule(name, doc);
  };
  py::module_ elf = sub("elf", "Read and edit ELF dynamic-linking metadata");
  lp::bind_elf(elf);
  py::module_ wheel = sub("wheel", "Wheels: open, verify, retag, pack, unpack");
  lp::bind_wheel(wheel);
  py::module_ conda = sub("conda", "conda packages: pack, extract, verify");
  lp::bind_conda(conda);
  py::module_ repair = sub("repair", "Bundle external libraries into wheels");
  lp::bind_repair(repair);
  py::module_ check = sub("check", "check_binary over any artifact");
  lp::bind_check(check);
  py::module_ config = sub("config", "Build configurations, versions, names");
  lp::bind_config(config);
  py::module_ cuda = sub("cuda", "Installed CUDA toolkits");
  lp::bind_cuda(cuda);
  py::module_ driver = sub("driver", "The manywheel, libtorch and conda jobs");
  lp::bind_driver(driver);
  py::module_ deps = sub("deps", "The dynamic loader's view of a file (ldd)");
  lp::bind_deps(deps);
  lp::bind_inspect(m);
  py::module_ macho =
      sub("macho", "Mach-O: read, edit, verify, lipo, symbols (macOS files)");
  lp::bind_macho(macho);
}
