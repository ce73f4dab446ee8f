// SPDX-License-Identifier: BSD-3-Clause
// libpkg.inspect: the dict `pkgtool inspect --json` prints for one file
// (schema in libpkg/abi/inspect.hpp), ELF or Mach-O.
#include "libpkg/abi/inspect.hpp"

#include "bindings.hpp"

namespace libpkg_py {

void bind_inspect(py::module_& m) {
  m.def(
      "inspect",
      [](const std::filesystem::path& path) {
        std::string text;
        std::vector<std::string> warnings;
        {
          py::gil_scoped_release release;
          text = libpkg::abi::inspect_json(
              path, [&](std::string_view w) { warnings.emplace_back(w); }, -1);
        }
        // Oddities the reader worked around, as pkgtool's "warning:" lines.
        auto warn = py::module_::import("warnings").attr("warn");
        for (const auto& w : warnings) warn(path.string() + ": " + w);
        return json_loads(text);
      },
      "path"_a,
      "What `pkgtool inspect --json` reports about one ELF or Mach-O file,\n"
      "as the same dict (schema in libpkg/abi/inspect.hpp): for ELF\n"
      "'machine', 'soname', 'needed', 'rpath', 'runpath', 'max_versions',\n"
      "'symbols', ...; for Mach-O 'fat' and per-slice 'slices'. Oddities\n"
      "the reader works around are issued as warnings.warn.");
}

}  // namespace libpkg_py
