// SPDX-License-Identifier: BSD-3-Clause
// libpkg::Error → a libpkg.Error subclass per error code, carrying the
// structured parts (code, file, offset, message) as attributes so scripts need
// not parse the text. Each subclass also derives from the built-in exception
// a Python user would catch for that kind of failure, so `except OSError`,
// `except FileNotFoundError` or `except ValueError` work as they would for the
// standard library:
//
//   Error(Exception)
//   ├─ IoError(Error, OSError)                    code 'io'
//   │  ├─ MissingFileError(IoError, FileNotFoundError)   errno ENOENT/ENOTDIR
//   │  └─ AccessError(IoError, PermissionError)          errno
//   EACCES/EPERM/EROFS ├─ FormatError(Error, ValueError)             code
//   'format' ├─ UnsupportedError(Error, ValueError)        code 'unsupported'
//   ├─ UsageError(Error, ValueError)              code 'usage'
//   └─ NotFoundError(Error, LookupError)          code 'not_found'
#include <cerrno>

#include "bindings.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg_py {

namespace {

// Owned for the life of the process: the translator may run at any time
// until the interpreter is finalised, so the types are never released.
struct ErrorTypes {
  PyObject* base = nullptr;
  PyObject* io = nullptr;
  PyObject* missing = nullptr;
  PyObject* access = nullptr;
  PyObject* format = nullptr;
  PyObject* unsupported = nullptr;
  PyObject* usage = nullptr;
  PyObject* not_found = nullptr;
};
ErrorTypes g_types;

// A new exception class `libpkg.NAME` deriving from `bases`, added to `m`.
PyObject* new_error_type(py::module_& m, const char* name, const char* doc,
                         std::initializer_list<PyObject*> bases) {
  py::tuple base_tuple(bases.size());
  std::size_t i = 0;
  for (PyObject* b : bases) {
    base_tuple[i++] = py::reinterpret_borrow<py::object>(b);
  }
  std::string qualified = std::string("libpkg.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc,
                                             base_tuple.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(type));
  return type;
}

PyObject* type_for(const libpkg::Error& e) {
  switch (e.code()) {
    case libpkg::Errc::io:
      switch (e.sys_errno()) {
        case ENOENT:
        case ENOTDIR:
          return g_types.missing;
        case EACCES:
        case EPERM:
        case EROFS:
          return g_types.access;
        default:
          return g_types.io;
      }
    case libpkg::Errc::format:
      return g_types.format;
    case libpkg::Errc::unsupported:
      return g_types.unsupported;
    case libpkg::Errc::usage:
      return g_types.usage;
    case libpkg::Errc::not_found:
      return g_types.not_found;
  }
  return g_types.base;
}

}  // namespace

void bind_errors(py::module_& m) {
  py::exception<libpkg::Error> error(m, "Error");
  error.doc() =
      "A libpkg error: bad input, an unreadable file or an impossible "
      "request.\n\nAttributes: code ('io', 'format', 'unsupported', 'usage', "
      "'not_found'), file (str, '' when none), offset (int or None), message "
      "(str, without the file and offset). Each code has a subclass that also "
      "derives from the matching built-in (IoError: OSError, with "
      "MissingFileError: FileNotFoundError and AccessError: PermissionError; "
      "FormatError, UnsupportedError, UsageError: ValueError; NotFoundError: "
      "LookupError).";
  g_types.base = error.inc_ref().ptr();
  g_types.io = new_error_type(m, "IoError",
                              "Reading or writing a file failed (code 'io').",
                              {g_types.base, PyExc_OSError});
  g_types.missing = new_error_type(
      m, "MissingFileError",
      "A file or directory does not exist (code 'io', errno ENOENT).",
      {g_types.io, PyExc_FileNotFoundError});
  g_types.access = new_error_type(
      m, "AccessError",
      "The operating system refused access (code 'io', errno EACCES, EPERM "
      "or EROFS).",
      {g_types.io, PyExc_PermissionError});
  g_types.format = new_error_type(
      m, "FormatError",
      "The bytes are not what the format requires: truncated or corrupt "
      "(code 'format').",
      {g_types.base, PyExc_ValueError});
  g_types.unsupported = new_error_type(
      m, "UnsupportedError",
      "Well-formed input outside what libpkg handles (code 'unsupported').",
      {g_types.base, PyExc_ValueError});
  g_types.usage = new_error_type(
      m, "UsageError", "An impossible or inconsistent request (code 'usage').",
      {g_types.base, PyExc_ValueError});
  g_types.not_found = new_error_type(
      m, "NotFoundError",
      "A requested thing (section, entry, library, table) does not exist "
      "(code 'not_found').",
      {g_types.base, PyExc_LookupError});

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const libpkg::Error& e) {
      PyObject* type = type_for(e);
      py::object exc = py::reinterpret_borrow<py::object>(type)(e.what());
      exc.attr("code") = libpkg::errc_name(e.code());
      exc.attr("file") = e.file();
      exc.attr("message") = e.message();
      exc.attr("offset") = e.offset() ? py::object(py::int_(*e.offset()))
                                      : py::object(py::none());
      if (e.code() == libpkg::Errc::io) {
        // OSError's own fields, so code written for the standard library
        // (e.errno, e.strerror, e.filename) works. With them set, str(e) is
        // OSError's "[Errno N] message: 'file'", which still names both.
        if (e.sys_errno() != 0 && !e.file().empty()) {
          exc.attr("errno") = py::int_(e.sys_errno());
          exc.attr("strerror") = e.message();
          exc.attr("filename") = e.file();
        }
      }
      PyErr_SetObject(type, exc.ptr());
    }
  });
}

}  // namespace libpkg_py
