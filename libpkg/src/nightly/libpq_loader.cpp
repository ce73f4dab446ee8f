// SPDX-License-Identifier: BSD-3-Clause
#include "libpq_loader.hpp"

#include <dlfcn.h>

#include <string>

#include "libpkg/base/error.hpp"

namespace libpkg::nightly::detail {

namespace {

struct Loaded {
  Libpq functions;
  std::string error;  // empty when loaded
};

Loaded load() {
  Loaded out;
  // RTLD_LOCAL: libpq's symbols stay out of the global scope (a Python
  // process may load another libpq for psycopg2, at another version).
  void* handle = dlopen(kLibpqSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    out.error = why ? why : "cannot be loaded";
    return out;
  }
  std::string missing;
#define LIBPKG_LIBPQ_RESOLVE(name)                               \
  out.functions.name =                                           \
      reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (!out.functions.name)                                       \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
  LIBPKG_LIBPQ_FUNCTIONS(LIBPKG_LIBPQ_RESOLVE)
#undef LIBPKG_LIBPQ_RESOLVE
  if (!missing.empty()) {
    // An old or foreign libpq.so.5: none of it is used.
    out = Loaded{};
    out.error = std::string(kLibpqSoname) + " lacks " + missing;
    dlclose(handle);
  }
  return out;
}

}  // namespace

const Libpq& pq() {
  // A function-local static: initialised once, other threads wait for it.
  static const Loaded loaded = load();
  if (!loaded.error.empty())
    throw Error(Errc::io, "--stats-url",
                std::string("the PostgreSQL stats store needs ") +
                    kLibpqSoname + " (apt install libpq5): " + loaded.error);
  return loaded.functions;
}

}  // namespace libpkg::nightly::detail
