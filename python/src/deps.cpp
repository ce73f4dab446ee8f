// SPDX-License-Identifier: BSD-3-Clause
// libpkg.deps: the dynamic loader's view of a file (`pkgtool ldd`), and the
// search arguments every analysing call shares (also libpkg.repair's).
#include "bindings.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/ldd.hpp"

namespace libpkg_py {

namespace dp = libpkg::deps;

namespace {

std::vector<std::string> split_colon(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(':', start);
    std::string part = s.substr(start, p - start);
    if (!part.empty()) out.push_back(part);
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

}  // namespace

void apply_search_args(dp::SearchConfig& search, const py::object& lib_paths,
                       const std::optional<std::string>& ldpaths,
                       const py::object& ld_library_path,
                       const std::optional<std::filesystem::path>& root) {
  // A frontend's job, as in pkgtool: the library never reads the
  // environment. None means "this process's LD_LIBRARY_PATH".
  if (ld_library_path.is_none()) {
    py::object value = py::module_::import("os").attr("environ").attr("get")(
        "LD_LIBRARY_PATH", "");
    search.ld_library_path =
        dp::split_ld_library_path(value.cast<std::string>());
  } else {
    search.ld_library_path = string_list(ld_library_path, "ld_library_path");
  }
  search.extra_paths = string_list(lib_paths, "lib_paths");
  if (ldpaths) search.system_dirs = split_colon(*ldpaths);
  if (root) search.root = *root;
}

std::optional<dp::Libc> libc_arg(const std::optional<std::string>& libc) {
  if (!libc) return std::nullopt;
  auto parsed = dp::parse_libc(*libc);
  // As pkgtool's --libc: an unknown name is a usage error.
  if (!parsed)
    throw libpkg::Error(
        libpkg::Errc::usage, "",
        "libc must be 'glibc', 'musl' or 'bionic', not '" + *libc + "'");
  return parsed;
}

void bind_deps(py::module_& m) {
  m.def(
      "ldd",
      [](const std::filesystem::path& path, const py::object& lib_paths,
         const std::optional<std::string>& ldpaths,
         const py::object& ld_library_path,
         const std::optional<std::filesystem::path>& root,
         const std::optional<std::string>& libc) {
        dp::SearchConfig search;
        apply_search_args(search, lib_paths, ldpaths, ld_library_path, root);
        auto force = libc_arg(libc);
        std::string text;
        {
          py::gil_scoped_release release;
          text = dp::to_json(dp::ldd({path}, search, force), -1);
        }
        return json_loads(text);
      },
      "path"_a, py::kw_only(), "lib_paths"_a = py::tuple(),
      "ldpaths"_a = py::none(), "ld_library_path"_a = py::none(),
      "root"_a = py::none(), "libc"_a = py::none(),
      "The shared-library closure of path as the dynamic loader resolves it,\n"
      "without running anything: the dict `pkgtool ldd --json` prints\n"
      "(libpkg/deps/ldd.hpp), e.g. ['libs']['libfoo.so.1']['path'] and\n"
      "['missing']. lib_paths are searched after LD_LIBRARY_PATH; ldpaths\n"
      "(':'-separated) replaces ld.so.conf and the default directories; root\n"
      "is a sysroot for them; ld_library_path=None takes this process's\n"
      "LD_LIBRARY_PATH; libc ('glibc', 'musl', 'bionic') overrides the\n"
      "loader rules the file asks for.");
}

}  // namespace libpkg_py
