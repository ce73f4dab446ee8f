// SPDX-License-Identifier: BSD-3-Clause
// libpkg.conda: pack a staged prefix into .conda / .tar.bz2, extract,
// verify, transmute.
#include "bindings.hpp"
#include "conda_args.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/conda/metadata.hpp"
#include "libpkg/conda/package.hpp"

namespace libpkg_py {

namespace {

namespace cd = libpkg::conda;
using libpkg::Errc;
using libpkg::Error;

// The package metadata from a dict (checked by the library's own JSON
// parser, so an unknown key is an error rather than silently dropped) or a
// JSON file.
cd::CondaMetadata metadata_from(const py::object& meta) {
  if (py::isinstance<py::dict>(meta)) {
    std::string text =
        py::module_::import("json").attr("dumps")(meta).cast<std::string>();
    return cd::parse_metadata_json(text, "<metadata dict>");
  }
  if (py::isinstance<py::str>(meta) || py::hasattr(meta, "__fspath__")) {
    auto path = meta.cast<std::filesystem::path>();
    py::gil_scoped_release release;
    return cd::load_metadata(path);
  }
  throw py::type_error(
      "metadata must be a dict or the path of a JSON file, not " +
      std::string(py::str(py::type::of(meta).attr("__name__"))));
}

}  // namespace

cd::PackageFormat parse_conda_format(const std::string& text) {
  if (text == "conda" || text == ".conda") return cd::PackageFormat::conda;
  if (text == "tar.bz2" || text == ".tar.bz2")
    return cd::PackageFormat::tar_bz2;
  throw Error(Errc::usage, "",
              "unknown conda package format '" + text +
                  "' (expected 'conda' or 'tar.bz2')");
}

void bind_conda(py::module_& m) {
  py::class_<cd::Finding>(m, "Finding")
      .def_readonly("where", &cd::Finding::where)
      .def_readonly("message", &cd::Finding::message)
      .def("__str__",
           [](const cd::Finding& f) { return f.where + ": " + f.message; })
      .def("__repr__", [](const cd::Finding& f) {
        return "<Finding " + f.where + ": " + f.message + ">";
      });

  m.def(
      "pack",
      [](const std::filesystem::path& prefix, const py::object& metadata,
         const std::filesystem::path& out_dir, const py::object& formats,
         int zstd_level, int bzip2_level, unsigned threads,
         libpkg::i64 timestamp_ms, const std::string& placeholder,
         std::optional<py::function> progress) {
        cd::PackOptions o;
        o.formats.clear();
        for (const auto& f : string_list(formats, "formats"))
          o.formats.push_back(parse_conda_format(f));
        if (o.formats.empty())
          throw Error(Errc::usage, "", "formats must name at least one format");
        o.zstd_level = zstd_level;
        o.bzip2_level = bzip2_level;
        o.threads = threads;
        o.timestamp_ms = timestamp_ms;
        o.placeholder = placeholder;
        o.out_dir = out_dir;
        cd::CondaMetadata meta = metadata_from(metadata);
        Callback report(std::move(progress));
        if (!report.empty())
          o.progress = [&report](libpkg::u64 done, libpkg::u64 total) {
            report(done, total);
          };
        std::vector<std::filesystem::path> outputs;
        {
          py::gil_scoped_release release;
          outputs = cd::pack(prefix, cd::complete_metadata(meta), o).outputs;
        }
        report.rethrow();
        return outputs;
      },
      "prefix"_a, "metadata"_a, "out_dir"_a = ".", py::kw_only(),
      "formats"_a = std::vector<std::string>{"conda"}, "zstd_level"_a = 19,
      "bzip2_level"_a = 9, "threads"_a = 0, "timestamp_ms"_a = 0,
      "placeholder"_a = "", "progress"_a = py::none(),
      "Packs the staged tree at `prefix`; returns the written paths in "
      "`formats` order ('conda', 'tar.bz2'). `progress(done, total)` is "
      "called with the tar bytes of the .conda's pkg part compressed so far; "
      "an exception it raises is re-raised after packing.");
  m.def(
      "extract",
      [](const std::filesystem::path& package,
         const std::filesystem::path& dest) {
        py::gil_scoped_release release;
        cd::extract(package, dest);
        return dest;
      },
      "package"_a, "dest"_a, "Safely extracts either format into `dest`.");
  m.def(
      "verify",
      [](const std::filesystem::path& package) {
        py::gil_scoped_release release;
        return cd::verify(package);
      },
      "package"_a,
      "Checks a package against its own metadata; [] when consistent.");
  m.def(
      "transmute",
      [](const std::filesystem::path& package,
         const std::filesystem::path& out_dir, const std::string& to,
         unsigned threads) {
        cd::TransmuteOptions o;
        o.threads = threads;
        auto format = parse_conda_format(to);
        py::gil_scoped_release release;
        return cd::transmute(package, out_dir, format, o);
      },
      "package"_a, "out_dir"_a, "to"_a, py::kw_only(), "threads"_a = 0);
  m.def("stem", &cd::stem_of, "package"_a,
        "name-version-build of a package file name");
}

}  // namespace libpkg_py
