// SPDX-License-Identifier: BSD-3-Clause
// libpkg.macho: the Mach-O reader (slices, arch, minos, id, dylibs, rpaths,
// signature), install_name_tool's edits, signing and verification, lipo
// -create/-thin and the `nm -g` symbol listing, over the calls `pkgtool
// inspect / macho edit / macho verify / macho lipo / symbols` make. Results
// are plain dicts and lists (copied out of the mapping, so they outlive the
// file); errors are libpkg.Error subclasses like everywhere else.
#include <fmt/format.h>

#include "bindings.hpp"
#include "libpkg/abi/macho_symbols.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/lipo.hpp"
#include "libpkg/macho/sign_file.hpp"
#include "libpkg/macho/symbols.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg_py {

namespace {

namespace macho = libpkg::macho;

py::object version_or_none(std::optional<macho::PlatformVersion> v,
                           bool minos) {
  if (!v) return py::none();
  return py::str(macho::version_string(minos ? v->minos : v->sdk));
}

// The signature of a 64-bit slice: where it is, who signed it and whether
// every page hash still matches (None when unsigned).
py::object signature_dict(const macho::Slice& s) {
  const auto& b = s.bytes();
  libpkg::ByteView slice(b.span(), s.where(), s.offset());
  macho::SliceLayout layout = macho::find_slice_layout(slice);
  if (!layout.signed_()) return py::none();
  macho::VerifyReport r = macho::verify_signature(slice, layout);
  py::list problems;
  for (const auto& p : r.problems)
    problems.append(fmt::format("CodeDirectory {}: {}", p.cd, p.what));
  const auto& cds = r.signature.code_directories;
  py::dict d;
  d["offset"] = layout.sig_offset;
  d["size"] = layout.sig_size;
  d["identifier"] = cds.empty() ? std::string() : cds.front().identifier;
  d["adhoc"] = !cds.empty() && (cds.front().flags & macho::kFlagAdhoc);
  d["code_directories"] = cds.size();
  d["verified"] = r.ok();
  d["problems"] = problems;
  return d;
}

py::dict slice_dict(const macho::Slice& s) {
  py::dict d;
  d["arch"] = s.arch();
  d["offset"] = s.offset();
  d["size"] = s.size();
  d["parsed"] = s.parsed();
  if (!s.parsed()) return d;
  d["filetype"] = macho::filetype_name(s.filetype());
  auto v = s.platform_version();
  d["minos"] = version_or_none(v, true);
  d["sdk"] = version_or_none(v, false);
  auto id = s.id();
  d["id"] = id ? py::object(py::str(std::string(*id))) : py::none();
  py::list dylibs;
  for (const auto& l : s.dylibs()) {
    py::dict x;
    x["name"] = std::string(l.name);
    x["kind"] = macho::dylib_kind_name(l.kind);
    x["ordinal"] = l.ordinal;
    dylibs.append(x);
  }
  d["dylibs"] = dylibs;
  py::list rpaths;
  for (const auto& r : s.rpaths()) rpaths.append(std::string(r.path));
  d["rpaths"] = rpaths;
  d["fixup_format"] = macho::fixup_format_name(s.fixup_format());
  d["free_padding"] = s.free_padding();
  d["signature"] = signature_dict(s);
  return d;
}

const char* signing_name(macho::SliceReport::Signing s) {
  switch (s) {
    case macho::SliceReport::Signing::resigned:
      return "resigned";
    case macho::SliceReport::Signing::adhoc_signed:
      return "adhoc_signed";
    case macho::SliceReport::Signing::stale:
      return "stale";
    default:
      return "none";
  }
}

std::vector<std::pair<std::string, std::string>> pairs(const py::object& o,
                                                       const char* what) {
  std::vector<std::pair<std::string, std::string>> out;
  if (o.is_none()) return out;
  for (const auto& item : o) {
    auto t = py::reinterpret_borrow<py::object>(item);
    auto v = string_list(t, what);
    if (v.size() != 2)
      throw libpkg::Error(libpkg::Errc::usage, what,
                          "expects (old, new) pairs");
    out.emplace_back(v[0], v[1]);
  }
  return out;
}

std::vector<std::string> strings(const py::object& o, const char* what) {
  if (o.is_none()) return {};
  return string_list(o, what);
}

}  // namespace

void bind_macho(py::module_& m) {
  m.def(
      "inspect",
      [](const std::filesystem::path& path) {
        auto file = macho::MachOFile::open(path);
        py::list slices;
        for (const auto& s : file.slices()) slices.append(slice_dict(s));
        py::dict d;
        d["file"] = path.string();
        d["fat"] = file.is_fat();
        d["slices"] = slices;
        return d;
      },
      "path"_a,
      "Every slice of a thin or fat Mach-O file: arch, offset, size, parsed "
      "and, for 64-bit slices, filetype, minos, sdk, id, dylibs (name, kind, "
      "ordinal), rpaths, fixup_format, free_padding and signature (None or "
      "offset, size, identifier, adhoc, code_directories, verified, "
      "problems).");

  m.def(
      "edit",
      [](const std::filesystem::path& path, std::optional<std::string> id,
         const py::object& change, const py::object& rpath,
         const py::object& add_rpath, const py::object& prepend_rpath,
         const py::object& delete_rpath, bool delete_all_rpaths,
         const py::object& arch, bool sign,
         std::optional<std::filesystem::path> output) {
        macho::EditOptions o;
        o.id = std::move(id);
        o.changes = pairs(change, "change");
        o.rename_rpaths = pairs(rpath, "rpath");
        o.add_rpaths = strings(add_rpath, "add_rpath");
        o.prepend_rpaths = strings(prepend_rpath, "prepend_rpath");
        o.delete_rpaths = strings(delete_rpath, "delete_rpath");
        o.delete_all_rpaths = delete_all_rpaths;
        o.archs = strings(arch, "arch");
        o.sign = sign;
        std::vector<macho::SliceReport> reports;
        bool changed = false;
        {
          py::gil_scoped_release release;
          auto file = macho::MachOFile::open(path);
          auto plan = macho::plan_edit(file, o);
          changed =
              macho::apply_edit(file, plan, output.value_or(path)).changed;
          reports = plan.slices;
        }
        py::list slices;
        for (const auto& r : reports) {
          py::dict d;
          d["arch"] = r.arch;
          d["edited"] = r.edited;
          d["changed"] = r.changed;
          d["signing"] = signing_name(r.signing);
          slices.append(d);
        }
        py::dict d;
        d["changed"] = changed;
        d["slices"] = slices;
        return d;
      },
      "path"_a, py::kw_only(), "id"_a = py::none(), "change"_a = py::none(),
      "rpath"_a = py::none(), "add_rpath"_a = py::none(),
      "prepend_rpath"_a = py::none(), "delete_rpath"_a = py::none(),
      "delete_all_rpaths"_a = false, "arch"_a = py::none(), "sign"_a = true,
      "output"_a = py::none(),
      "install_name_tool's edits (id, change=[(old, new)], rpath=[(old, "
      "new)], add_rpath, prepend_rpath, delete_rpath, delete_all_rpaths) "
      "planned for every slice (or `arch`) before anything is written; "
      "changed slices are re-signed unless sign=False. In place, or to "
      "`output`. Returns {changed, slices: [{arch, edited, changed, "
      "signing}]}.");

  m.def(
      "verify",
      [](const std::filesystem::path& path) {
        auto file = macho::MachOFile::open(path);
        py::list out;
        for (const auto& s : file.slices()) {
          if (!s.parsed()) continue;
          py::dict d;
          d["arch"] = s.arch();
          d["signature"] = signature_dict(s);
          out.append(d);
        }
        return out;
      },
      "path"_a,
      "Recomputes every page hash of every CodeDirectory of each 64-bit "
      "slice: [{arch, signature}] with signature None when unsigned.");

  m.def(
      "sign",
      [](const std::filesystem::path& path) {
        macho::SignFileResult r;
        {
          py::gil_scoped_release release;
          r = macho::sign_file(path);
        }
        py::list slices;
        for (const auto& s : r.slices) {
          py::dict d;
          d["name"] = s.name;
          d["signed"] = s.is_64;
          slices.append(d);
        }
        py::dict d;
        d["rewritten"] = r.rewritten;
        d["slices"] = slices;
        return d;
      },
      "path"_a,
      "Signs the file in place as `pkgtool macho sign`: signed slices are "
      "re-signed keeping their fields, unsigned 64-bit ones get an ad-hoc "
      "signature named after the file. Returns {rewritten, slices: [{name, "
      "signed}]}.");

  m.def(
      "lipo_create",
      [](const std::vector<std::filesystem::path>& inputs,
         const std::filesystem::path& output) {
        py::gil_scoped_release release;
        std::vector<macho::MachOFile> files;
        for (const auto& p : inputs) files.push_back(macho::MachOFile::open(p));
        std::vector<const macho::MachOFile*> ptrs;
        for (const auto& f : files) ptrs.push_back(&f);
        macho::write_fat(ptrs, output);
      },
      "inputs"_a, "output"_a,
      "A fat file of every slice of `inputs`, laid out byte for byte as "
      "llvm-lipo -create does.");

  m.def(
      "lipo_thin",
      [](const std::filesystem::path& path, const std::string& arch,
         const std::filesystem::path& output) {
        py::gil_scoped_release release;
        macho::write_thin(macho::MachOFile::open(path), arch, output);
      },
      "path"_a, "arch"_a, "output"_a,
      "The `arch` slice of a fat file, as llvm-lipo -thin.");

  m.def(
      "symbols",
      [](const std::filesystem::path& path, std::optional<std::string> arch,
         bool defined_only, bool undefined_only) {
        std::string text;
        {
          py::gil_scoped_release release;
          text = libpkg::abi::macho_symbols_json(
              macho::MachOFile::open(path),
              {arch.value_or(""), !undefined_only, !defined_only}, -1);
        }
        return py::object(json_loads(text)["slices"]);
      },
      "path"_a, "arch"_a = py::none(), py::kw_only(), "defined_only"_a = false,
      "undefined_only"_a = false,
      "The external symbols of each 64-bit slice as nm -g lists them "
      "(symbol table plus exports trie; defined_only: nm -gU, "
      "undefined_only: nm -u): [{arch, symbols: [{name, demangled, value, "
      "type, defined, weak, reexport, exports_trie_only, and for undefined "
      "symbols weak_import, lookup, library_ordinal, library}]}] (schema in "
      "libpkg/abi/macho_symbols.hpp).");
}

}  // namespace libpkg_py
