// SPDX-License-Identifier: BSD-3-Clause
// libpkg.elf: the lazy ELF view (needed, soname, rpath, symbols, versions)
// and an editor with `pkgtool patchelf`'s operations, written atomically.
#include <fmt/format.h>

#include "bindings.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/editor.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg_py {

namespace {

namespace elf = libpkg::elf;
using libpkg::Errc;
using libpkg::Error;

std::optional<std::string> opt(std::optional<std::string_view> v) {
  if (!v) return std::nullopt;
  return std::string(*v);
}

const char* bind_name(unsigned b) {
  switch (b) {
    case 0:
      return "LOCAL";
    case 1:
      return "GLOBAL";
    case 2:
      return "WEAK";
    case 10:
      return "UNIQUE";
    default:
      return "OTHER";
  }
}

const char* type_name(unsigned t) {
  switch (t) {
    case 0:
      return "NOTYPE";
    case 1:
      return "OBJECT";
    case 2:
      return "FUNC";
    case 3:
      return "SECTION";
    case 4:
      return "FILE";
    case 5:
      return "COMMON";
    case 6:
      return "TLS";
    case 10:
      return "IFUNC";
    default:
      return "OTHER";
  }
}

// A .dynsym entry copied out of the mapping (the Python object may outlive
// the file), demangled on demand.
struct PySymbol {
  std::string name, version, version_file;
  libpkg::u64 value = 0, size = 0;
  std::string binding, type;
  bool defined = false, version_hidden = false;
  unsigned index = 0;
};

struct VersionRequirement {
  std::string file;
  std::vector<std::string> versions;
};

// Iterates .dynsym lazily: nothing is read until the first next(), and each
// Python object is made only when asked for.
class SymbolIterator {
 public:
  explicit SymbolIterator(std::shared_ptr<const elf::ElfFile> file)
      : file_(std::move(file)) {}

  PySymbol next() {
    if (!loaded_) {
      py::gil_scoped_release release;
      file_->for_each_dynamic_symbol(
          [&](const elf::Symbol& s) { symbols_.push_back(s); });
      loaded_ = true;
    }
    if (pos_ >= symbols_.size()) throw py::stop_iteration();
    const elf::Symbol& s = symbols_[pos_++];
    PySymbol out;
    out.name = std::string(s.name);
    out.version = std::string(s.version);
    out.version_file = std::string(s.version_file);
    out.value = s.value;
    out.size = s.size;
    out.binding = bind_name(s.bind);
    out.type = type_name(s.type);
    out.defined = s.is_defined();
    out.version_hidden = s.version_hidden;
    out.index = s.index;
    return out;
  }

 private:
  std::shared_ptr<const elf::ElfFile> file_;  // the symbols view its bytes
  std::vector<elf::Symbol> symbols_;
  std::size_t pos_ = 0;
  bool loaded_ = false;
};

struct EditResult {
  bool changed = false, grew = false, in_place = false;
  libpkg::u64 old_size = 0, new_size = 0;
  std::filesystem::path path;
};

// Collects patchelf-style operations; save() plans them together and
// writes the file once (temporary file + rename).
class Editor {
 public:
  explicit Editor(std::filesystem::path path) : path_(std::move(path)) {}

  Editor& set_soname(const std::string& soname) {
    options_.set_soname = soname;
    return *this;
  }
  Editor& set_interpreter(const std::string& interpreter) {
    options_.set_interpreter = interpreter;
    return *this;
  }
  Editor& rpath_op(elf::RpathOp op, std::string value, bool force_rpath,
                   const char* what) {
    if (options_.rpath_op != elf::RpathOp::none && options_.rpath_op != op)
      throw Error(Errc::usage, path_.string(),
                  fmt::format("{} conflicts with another rpath operation "
                              "on this editor",
                              what));
    options_.rpath_op = op;
    if (op == elf::RpathOp::add && !options_.rpath.empty())
      options_.rpath += ":" + value;
    else
      options_.rpath = std::move(value);
    options_.rpath_tag =
        force_rpath ? elf::RpathTag::rpath : elf::RpathTag::runpath;
    return *this;
  }
  Editor& shrink_rpath(const std::vector<std::string>& allowed) {
    rpath_op(elf::RpathOp::shrink, "", false, "shrink_rpath");
    options_.allowed_rpath_prefixes = allowed;
    return *this;
  }
  Editor& add_needed(const std::string& lib) {
    options_.add_needed.push_back(lib);
    return *this;
  }
  Editor& remove_needed(const std::string& lib) {
    options_.remove_needed.push_back(lib);
    return *this;
  }
  Editor& replace_needed(const std::string& from, const std::string& to) {
    options_.replace_needed.emplace_back(from, to);
    return *this;
  }
  Editor& page_size(libpkg::u64 size) {
    if (size == 0 || (size & (size - 1)) != 0)
      throw Error(Errc::usage, path_.string(),
                  fmt::format("invalid page size {} (a power of two)", size));
    options_.page_size = size;
    return *this;
  }

  bool pending() const { return !options_.empty(); }
  const std::filesystem::path& path() const { return path_; }

  EditResult save(const std::optional<std::filesystem::path>& output) {
    const std::filesystem::path out = output ? *output : path_;
    EditResult r;
    {
      py::gil_scoped_release release;
      elf::EditReport rep =
          elf::edit_file(path_, out, options_, libpkg::WriteMode::atomic);
      r.changed = rep.changed;
      r.grew = rep.grew;
      r.in_place = rep.in_place;
      r.old_size = rep.old_size;
      r.new_size = rep.new_size;
    }
    r.path = out;
    options_ = elf::EditOptions{};
    return r;
  }

 private:
  std::filesystem::path path_;
  elf::EditOptions options_;
};

struct PyElf {
  std::filesystem::path path;
  std::shared_ptr<const elf::ElfFile> file;
};

}  // namespace

void bind_elf(py::module_& m) {
  py::class_<PySymbol>(m, "Symbol", "A dynamic symbol (.dynsym entry)")
      .def_readonly("name", &PySymbol::name, "the mangled name")
      .def_property_readonly(
          "demangled", [](const PySymbol& s) { return elf::demangle(s.name); })
      .def_readonly("version", &PySymbol::version,
                    "version name (GLIBC_2.34), '' when unversioned")
      .def_readonly("version_file", &PySymbol::version_file,
                    "library an undefined symbol's version is needed from")
      .def_readonly("version_hidden", &PySymbol::version_hidden)
      .def_readonly("value", &PySymbol::value)
      .def_readonly("size", &PySymbol::size)
      .def_readonly("binding", &PySymbol::binding)
      .def_readonly("type", &PySymbol::type)
      .def_readonly("defined", &PySymbol::defined)
      .def_readonly("index", &PySymbol::index)
      .def("__repr__", [](const PySymbol& s) {
        return fmt::format("<Symbol {}{}{}>", s.name,
                           s.version.empty() ? "" : "@", s.version);
      });

  py::class_<SymbolIterator>(m, "SymbolIterator")
      .def("__iter__", [](SymbolIterator& it) -> SymbolIterator& { return it; })
      .def("__next__", &SymbolIterator::next);

  py::class_<VersionRequirement>(m, "VersionRequirement",
                                 "Versions needed from one library")
      .def_readonly("file", &VersionRequirement::file)
      .def_readonly("versions", &VersionRequirement::versions)
      .def("__repr__", [](const VersionRequirement& v) {
        return fmt::format("<VersionRequirement {} {}>", v.file,
                           fmt::join(v.versions, ","));
      });

  py::class_<EditResult>(m, "EditResult")
      .def_readonly("path", &EditResult::path)
      .def_readonly("changed", &EditResult::changed)
      .def_readonly("grew", &EditResult::grew)
      .def_readonly("in_place", &EditResult::in_place)
      .def_readonly("old_size", &EditResult::old_size)
      .def_readonly("new_size", &EditResult::new_size);

  py::class_<Editor>(m, "Editor",
                     "patchelf's operations on one file, applied together by "
                     "save() or on leaving a with block without an exception")
      .def_property_readonly("path", &Editor::path)
      .def_property_readonly("pending", &Editor::pending)
      .def("set_soname", &Editor::set_soname, "soname"_a,
           py::return_value_policy::reference_internal)
      .def("set_interpreter", &Editor::set_interpreter, "interpreter"_a,
           py::return_value_policy::reference_internal)
      .def(
          "set_rpath",
          [](Editor& e, const std::string& rpath, bool force) -> Editor& {
            return e.rpath_op(elf::RpathOp::set, rpath, force, "set_rpath");
          },
          "rpath"_a, py::kw_only(), "force_rpath"_a = false,
          py::return_value_policy::reference_internal)
      .def(
          "add_rpath",
          [](Editor& e, const std::string& rpath, bool force) -> Editor& {
            return e.rpath_op(elf::RpathOp::add, rpath, force, "add_rpath");
          },
          "rpath"_a, py::kw_only(), "force_rpath"_a = false,
          py::return_value_policy::reference_internal)
      .def(
          "remove_rpath",
          [](Editor& e) -> Editor& {
            return e.rpath_op(elf::RpathOp::remove, "", false, "remove_rpath");
          },
          py::return_value_policy::reference_internal)
      .def(
          "shrink_rpath",
          [](Editor& e, const py::object& allowed) -> Editor& {
            return e.shrink_rpath(string_list(allowed, "allowed_prefixes"));
          },
          "allowed_prefixes"_a = py::tuple(),
          py::return_value_policy::reference_internal)
      .def("add_needed", &Editor::add_needed, "library"_a,
           py::return_value_policy::reference_internal)
      .def("remove_needed", &Editor::remove_needed, "library"_a,
           py::return_value_policy::reference_internal)
      .def("replace_needed", &Editor::replace_needed, "old"_a, "new"_a,
           py::return_value_policy::reference_internal)
      .def("page_size", &Editor::page_size, "size"_a,
           py::return_value_policy::reference_internal)
      .def("save", &Editor::save, "output"_a = py::none(),
           "Writes every pending edit at once (temporary file + rename) to "
           "`output` or the input file.")
      .def(
          "__enter__", [](Editor& e) -> Editor& { return e; },
          py::return_value_policy::reference_internal)
      .def("__exit__", [](Editor& e, const py::object& type, const py::object&,
                          const py::object&) {
        if (type.is_none() && e.pending()) e.save(std::nullopt);
        return false;
      });

  py::class_<PyElf>(m, "ElfFile", "A lazily read ELF file")
      .def_readonly("path", &PyElf::path)
      .def_property_readonly("needed",
                             [](const PyElf& e) {
                               std::vector<std::string> out;
                               for (auto n : e.file->needed())
                                 out.emplace_back(n);
                               return out;
                             })
      .def_property_readonly(
          "soname", [](const PyElf& e) { return opt(e.file->soname()); })
      .def_property_readonly(
          "rpath", [](const PyElf& e) { return opt(e.file->rpath()); })
      .def_property_readonly(
          "runpath", [](const PyElf& e) { return opt(e.file->runpath()); })
      .def_property_readonly(
          "interpreter",
          [](const PyElf& e) { return opt(e.file->interpreter()); })
      .def_property_readonly(
          "machine", [](const PyElf& e) { return e.file->machine_name(); },
          "'x86_64', 'aarch64', ...")
      .def_property_readonly(
          "machine_id", [](const PyElf& e) { return e.file->machine(); },
          "e_machine")
      .def_property_readonly("is_64",
                             [](const PyElf& e) { return e.file->is_64(); })
      .def_property_readonly(
          "is_little_endian",
          [](const PyElf& e) { return e.file->is_little_endian(); })
      .def_property_readonly("build_id",
                             [](const PyElf& e) { return e.file->build_id(); })
      .def_property_readonly(
          "symbol_count",
          [](const PyElf& e) {
            auto n = e.file->dynamic_symbol_count();
            return n == 0 ? n : n - 1;
          },
          "number of .dynsym entries after the null symbol")
      .def(
          "symbols", [](const PyElf& e) { return SymbolIterator(e.file); },
          "Iterates the dynamic symbols lazily.")
      .def_property_readonly(
          "version_requirements",
          [](const PyElf& e) {
            std::vector<VersionRequirement> out;
            for (const auto& need : e.file->version_needs()) {
              VersionRequirement r;
              r.file = std::string(need.file);
              for (const auto& v : need.versions)
                r.versions.emplace_back(v.name);
              out.push_back(std::move(r));
            }
            return out;
          })
      .def_property_readonly("version_definitions",
                             [](const PyElf& e) {
                               std::vector<std::string> out;
                               for (const auto& d : e.file->version_defs())
                                 if (!d.names.empty())
                                   out.emplace_back(d.names[0]);
                               return out;
                             })
      .def(
          "edit", [](const PyElf& e) { return Editor(e.path); },
          "An editor for this file (see Editor).")
      .def(
          "__enter__", [](PyElf& e) -> PyElf& { return e; },
          py::return_value_policy::reference_internal)
      .def("__exit__", [](PyElf&, const py::object&, const py::object&,
                          const py::object&) { return false; })
      .def("__repr__", [](const PyElf& e) {
        return fmt::format("<ElfFile {} {}>", e.path.string(),
                           e.file->machine_name());
      });

  m.def(
      "open",
      [](const std::filesystem::path& path) {
        PyElf e;
        e.path = path;
        py::gil_scoped_release release;
        e.file = std::make_shared<const elf::ElfFile>(elf::ElfFile::open(path));
        return e;
      },
      "path"_a, "Opens an ELF file (only its header is read now).");
  m.def(
      "edit", [](const std::filesystem::path& path) { return Editor(path); },
      "path"_a, "An editor for `path` (the file is read on save()).");
  m.def(
      "demangle", [](const std::string& name) { return elf::demangle(name); },
      "name"_a);
}

}  // namespace libpkg_py
