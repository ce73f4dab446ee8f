// SPDX-License-Identifier: BSD-3-Clause
// Shared declarations of the `libpkg._libpkg` extension: one bind_* per
// area (each in its own file) and the helpers they share.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"

namespace libpkg::check {
struct CheckOptions;
}
namespace libpkg::deps {
struct SearchConfig;
enum class Libc;
}  // namespace libpkg::deps

namespace libpkg_py {

namespace py = pybind11;
using namespace pybind11::literals;

void bind_errors(py::module_& m);
void bind_elf(py::module_& m);
void bind_wheel(py::module_& m);
void bind_conda(py::module_& m);
void bind_repair(py::module_& m);
void bind_check(py::module_& m);
void bind_config(py::module_& m);
void bind_cuda(py::module_& m);
void bind_driver(py::module_& m);
void bind_deps(py::module_& m);
void bind_inspect(py::module_& m);
void bind_macho(py::module_& m);

// The loader-search arguments every analysing call takes (libpkg.deps.ldd,
// libpkg.repair.show): lib_paths, ldpaths (':'-separated), ld_library_path
// (None: this process's LD_LIBRARY_PATH) and root, as pkgtool's flags.
void apply_search_args(libpkg::deps::SearchConfig& search,
                       const py::object& lib_paths,
                       const std::optional<std::string>& ldpaths,
                       const py::object& ld_library_path,
                       const std::optional<std::filesystem::path>& root);
// A Python mapping of str to str (None: os.environ) as the library's
// config::Getenv, copied up front so it can be called without the GIL.
std::function<std::optional<std::string>(const std::string&)> getenv_from(
    const py::object& env);
// The `libc=` argument: None, or 'glibc' / 'musl' / 'bionic' (anything else
// raises UsageError).
std::optional<libpkg::deps::Libc> libc_arg(
    const std::optional<std::string>& libc);

// json.loads(text): the to_dict() of every object that has a to_json().
py::object json_loads(const std::string& text);

// A Python callable handed to C++ code that runs with the GIL released
// (possibly from worker threads). Each call takes the GIL; the first
// exception the callable raises is kept, later calls are skipped, and
// rethrow() re-raises it once the C++ call has returned, so a failing
// callback never unwinds through library code.
class Callback {
 public:
  explicit Callback(std::optional<py::function> fn) : fn_(std::move(fn)) {}
  ~Callback() {
    py::gil_scoped_acquire gil;
    fn_.reset();
    error_.reset();
  }

  bool empty() const { return !fn_; }

  template <typename... Args>
  void operator()(Args... args) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!fn_ || error_) return;
    py::gil_scoped_acquire gil;
    try {
      (*fn_)(args...);
    } catch (py::error_already_set& e) {
      error_ = std::make_unique<py::error_already_set>(std::move(e));
    }
  }

  // Call with the GIL held.
  void rethrow() {
    if (error_) {
      py::error_already_set e = std::move(*error_);
      error_.reset();
      throw e;
    }
  }

 private:
  std::optional<py::function> fn_;
  std::unique_ptr<py::error_already_set> error_;
  std::mutex mutex_;
};

// A list of str from any iterable of str (a lone str is refused: it would
// silently become a list of characters).
std::vector<std::string> string_list(const py::object& items, const char* what);

// The check options libpkg.check.run and the drivers share (everything
// but the expectation and threads, which each caller sets its own way);
// python None = this interpreter.
void set_check_options(libpkg::check::CheckOptions& o,
                       const py::object& allow_external, const py::object& only,
                       const py::object& skip, bool runtime,
                       const std::optional<std::string>& python,
                       const py::object& import_modules,
                       const py::object& lib_paths, unsigned timeout);

// The census and link-check knobs, also shared (check_binary's
// --abi-library, --min-symbols, CXX, --client, --link-library): None keeps
// the library's defaults.
struct CheckToolArgs {
  py::object abi_libraries;  // None: libtorch_cpu.so*, libtorch.so*
  std::optional<std::size_t> min_symbols;
  std::optional<std::string> cxx;
  std::optional<std::filesystem::path> client;
  py::object link_libraries;
};
void set_check_tools(libpkg::check::CheckOptions& o, const CheckToolArgs& a);

// The zip writers' chunk cache for a `cache_dir=` keyword: none when None
// (a library call has no side effects unless asked), LIBPKG_NO_CACHE=1
// honoured. Warnings go to stderr: they come from worker threads, which
// must not call into Python.
inline std::shared_ptr<libpkg::archive::ChunkCache> chunk_cache(
    const std::optional<std::filesystem::path>& dir,
    std::optional<libpkg::u64> max_bytes) {
  if (!dir) return nullptr;
  return libpkg::archive::ChunkCache::open(
      false, dir, max_bytes, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
      });
}

}  // namespace libpkg_py
