// libpkg::Error → libpkg.Error, carrying the structured parts (code, file,
// offset, message) as attributes so scripts need not parse the text.
#include "bindings.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg_py {

namespace {

// Owned for the life of the process: the translator may run at any time
// until the interpreter is finalised, so the type is never released.
PyObject* g_error_type = nullptr;

}  // namespace

void bind_errors(py::module_& m) {
  py::exception<libpkg::Error> error(m, "Error");
  error.doc() =
      "A libpkg error: bad input, an unreadable file or an impossible "
      "request.\n\nAttributes: code ('io', 'format', 'unsupported', 'usage', "
      "'not_found'), file (str, '' when none), offset (int or None), message "
      "(str, without the file and offset).";
  g_error_type = error.inc_ref().ptr();

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const libpkg::Error& e) {
      py::object exc =
          py::reinterpret_borrow<py::object>(g_error_type)(e.what());
      exc.attr("code") = libpkg::errc_name(e.code());
      exc.attr("file") = e.file();
      exc.attr("message") = e.message();
      exc.attr("offset") = e.offset() ? py::object(py::int_(*e.offset()))
                                      : py::object(py::none());
      PyErr_SetObject(g_error_type, exc.ptr());
    }
  });
}

}  // namespace libpkg_py
