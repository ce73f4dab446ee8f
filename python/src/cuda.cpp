// SPDX-License-Identifier: BSD-3-Clause
// libpkg.cuda: installed CUDA toolkits and switching between them.
#include "bindings.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/cuda/toolkit.hpp"

namespace libpkg_py {

namespace cu = libpkg::cuda;

void bind_cuda(py::module_& m) {
  py::class_<cu::Toolkit>(m, "Toolkit")
      .def_readonly("dir", &cu::Toolkit::dir)
      .def_readonly("version", &cu::Toolkit::version)
      .def_readonly("major", &cu::Toolkit::major)
      .def_readonly("minor", &cu::Toolkit::minor)
      .def_readonly("cudnn", &cu::Toolkit::cudnn)
      .def_readonly("nccl", &cu::Toolkit::nccl)
      .def_readonly("version_source", &cu::Toolkit::version_source)
      .def_readonly("is_current", &cu::Toolkit::is_current)
      .def("environment", &cu::environment,
           "`export NAME=value` lines selecting this toolkit")
      .def("__repr__", [](const cu::Toolkit& t) {
        return "<Toolkit " + t.version + " " + t.dir.string() + ">";
      });

  py::class_<cu::SwitchResult>(m, "SwitchResult")
      .def_readonly("link", &cu::SwitchResult::link)
      .def_readonly("old_target", &cu::SwitchResult::old_target)
      .def_readonly("new_target", &cu::SwitchResult::new_target)
      .def_property_readonly("magma",
                             [](const cu::SwitchResult& r) {
                               return cu::magma_switch_name(r.magma);
                             })
      .def_readonly("magma_old_target", &cu::SwitchResult::magma_old_target)
      .def_readonly("magma_new_target", &cu::SwitchResult::magma_new_target);

  m.def(
      "list",
      [](const std::filesystem::path& root) {
        py::gil_scoped_release release;
        return cu::list_toolkits(root);
      },
      "root"_a = "/usr/local",
      "Every cuda-X.Y toolkit under root, by version.");
  m.def(
      "current",
      [](const std::filesystem::path& root) {
        py::gil_scoped_release release;
        return cu::current_toolkit(root);
      },
      "root"_a = "/usr/local", "The toolkit root/cuda points to, or None.");
  m.def(
      "probe",
      [](const std::filesystem::path& dir) {
        py::gil_scoped_release release;
        return cu::probe_toolkit(dir);
      },
      "dir"_a, "The versions of the toolkit in dir, or None.");
  m.def(
      "switch",
      [](const std::string& version, const std::filesystem::path& root,
         bool switch_magma) {
        auto accel = libpkg::config::parse_accelerator(version);
        py::gil_scoped_release release;
        return cu::switch_toolkit(root, accel, switch_magma);
      },
      "version"_a, py::kw_only(), "root"_a = "/usr/local",
      "switch_magma"_a = true,
      "Atomically points root/cuda at cuda-X.Y ('12.4', 'cu124').");
}

}  // namespace libpkg_py
