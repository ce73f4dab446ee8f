// SPDX-License-Identifier: BSD-3-Clause
// libpkg.wheel: open a wheel (name, tags, members, verify, retag), pack a
// tree, unpack, and the name helpers.
#include "libpkg/wheel/wheel.hpp"

#include <fmt/format.h>

#include "bindings.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg_py {

namespace {

namespace wh = libpkg::wheel;
using libpkg::u64;

struct Member {
  std::string name;
  u64 size = 0, compressed_size = 0;
  unsigned crc32 = 0, mode = 0;
  bool is_dir = false, is_symlink = false;
  libpkg::i64 mtime = 0;
};

struct VerifyFinding {
  std::string kind, member, expected, actual, message;
};

struct VerifyReport {
  std::filesystem::path wheel;
  u64 members = 0, hashed_bytes = 0;
  std::vector<VerifyFinding> findings;
  bool ok() const { return findings.empty(); }
};

VerifyReport convert(const wh::VerifyReport& r) {
  VerifyReport out;
  out.wheel = r.wheel;
  out.members = r.members;
  out.hashed_bytes = r.hashed_bytes;
  for (const auto& f : r.findings)
    out.findings.push_back({wh::finding_kind_name(f.kind), f.member, f.expected,
                            f.actual, f.message()});
  return out;
}

std::vector<std::string> tag_strings(const std::vector<wh::WheelTag>& tags) {
  std::vector<std::string> out;
  for (const auto& t : tags) out.push_back(t.str());
  return out;
}

class Wheel {
 public:
  explicit Wheel(std::filesystem::path path) : path_(std::move(path)) {
    py::gil_scoped_release release;
    name_ = wh::WheelName::parse(path_.filename().string());
    zip_ = std::make_shared<libpkg::archive::ZipReader>(
        libpkg::archive::ZipReader::open(path_));
    dist_info_ = wh::find_dist_info(*zip_, name_);
    if (const auto* e = zip_->find(dist_info_ + "/WHEEL"))
      wheel_file_ = wh::WheelFile::parse(
          zip_->read_text(*e), zip_->name() + ":" + dist_info_ + "/WHEEL");
  }

  const std::filesystem::path& path() const { return path_; }
  const wh::WheelName& name() const { return name_; }
  const std::string& dist_info() const { return dist_info_; }
  const std::optional<wh::WheelFile>& wheel_file() const { return wheel_file_; }

  const libpkg::archive::ZipReader& zip() const {
    if (!zip_)
      throw py::value_error("I/O operation on a closed wheel: " +
                            path_.string());
    return *zip_;
  }
  void close() { zip_.reset(); }

  std::vector<Member> members() const {
    std::vector<Member> out;
    for (const auto& e : zip().entries())
      out.push_back({e.name, e.uncompressed_size, e.compressed_size, e.crc32,
                     e.unix_mode() & 07777, e.is_directory(), e.is_symlink(),
                     e.mtime()});
    return out;
  }

  py::bytes read(const std::string& member) const {
    const auto& z = zip();
    const auto* e = z.find(member);
    if (!e) throw py::key_error(member);
    std::vector<libpkg::u8> data;
    {
      py::gil_scoped_release release;
      data = z.read_all(*e);
    }
    return py::bytes(reinterpret_cast<const char*>(data.data()), data.size());
  }

  VerifyReport verify(unsigned threads) const {
    const auto& z = zip();
    py::gil_scoped_release release;
    wh::VerifyOptions o;
    o.threads = threads;
    return convert(wh::verify(z, o));
  }

 private:
  std::filesystem::path path_;
  wh::WheelName name_;
  std::shared_ptr<libpkg::archive::ZipReader> zip_;
  std::string dist_info_;
  std::optional<wh::WheelFile> wheel_file_;
};

std::filesystem::path retag(
    const std::filesystem::path& wheel, std::optional<std::string> python,
    std::optional<std::string> abi, std::optional<std::string> platform,
    std::optional<std::string> build, bool strip_local_version,
    std::optional<std::filesystem::path> out_dir, bool in_place,
    bool remove_original, unsigned threads) {
  wh::RetagOptions o;
  o.python_tags = std::move(python);
  o.abi_tags = std::move(abi);
  o.platform_tags = std::move(platform);
  o.build = std::move(build);
  o.strip_local_version = strip_local_version;
  o.in_place = in_place;
  o.remove_original = remove_original;
  o.threads = threads;
  py::gil_scoped_release release;
  if (out_dir) o.out_dir = *out_dir;  // created by retag(), as by pack()
  return wh::retag(wheel, o).path;
}

}  // namespace

void bind_wheel(py::module_& m) {
  py::class_<wh::WheelName>(m, "WheelName", "A parsed wheel file name")
      .def_readonly("distribution", &wh::WheelName::distribution)
      .def_readonly("version", &wh::WheelName::version)
      .def_readonly("build", &wh::WheelName::build)
      .def_readonly("python_tags", &wh::WheelName::python_tags)
      .def_readonly("abi_tags", &wh::WheelName::abi_tags)
      .def_readonly("platform_tags", &wh::WheelName::platform_tags)
      .def_property_readonly("local_version", &wh::WheelName::local_version)
      .def_property_readonly(
          "tags", [](const wh::WheelName& n) { return tag_strings(n.tags()); })
      .def_property_readonly("filename", &wh::WheelName::format)
      .def_property_readonly("dist_info_dir", &wh::WheelName::dist_info_dir)
      .def("without_local_version", &wh::WheelName::without_local_version)
      .def("__str__", &wh::WheelName::format)
      .def("__repr__",
           [](const wh::WheelName& n) {
             return fmt::format("<WheelName {}>", n.format());
           })
      .def(py::self == py::self);

  py::class_<Member>(m, "Member", "One zip member of a wheel")
      .def_readonly("name", &Member::name)
      .def_readonly("size", &Member::size)
      .def_readonly("compressed_size", &Member::compressed_size)
      .def_readonly("crc32", &Member::crc32)
      .def_readonly("mode", &Member::mode)
      .def_readonly("is_dir", &Member::is_dir)
      .def_readonly("is_symlink", &Member::is_symlink)
      .def_readonly("mtime", &Member::mtime)
      .def("__repr__", [](const Member& mb) {
        return fmt::format("<Member {} {}>", mb.name, mb.size);
      });

  py::class_<VerifyFinding>(m, "VerifyFinding")
      .def_readonly("kind", &VerifyFinding::kind)
      .def_readonly("member", &VerifyFinding::member)
      .def_readonly("expected", &VerifyFinding::expected)
      .def_readonly("actual", &VerifyFinding::actual)
      .def_readonly("message", &VerifyFinding::message)
      .def("__str__", [](const VerifyFinding& f) { return f.message; })
      .def("__repr__", [](const VerifyFinding& f) {
        return fmt::format("<VerifyFinding {}>", f.message);
      });

  py::class_<VerifyReport>(m, "VerifyReport")
      .def_readonly("wheel", &VerifyReport::wheel)
      .def_readonly("members", &VerifyReport::members)
      .def_readonly("hashed_bytes", &VerifyReport::hashed_bytes)
      .def_readonly("findings", &VerifyReport::findings)
      .def_property_readonly("ok", &VerifyReport::ok)
      .def("__bool__", &VerifyReport::ok);

  py::class_<wh::PackResult>(m, "PackResult")
      .def_readonly("path", &wh::PackResult::path)
      .def_readonly("members", &wh::PackResult::members)
      .def_readonly("reused", &wh::PackResult::reused)
      .def_readonly("bytes", &wh::PackResult::bytes);

  py::class_<Wheel>(m, "Wheel", "An open wheel (the zip stays mapped)")
      .def_property_readonly("path", &Wheel::path)
      .def_property_readonly("filename",
                             [](const Wheel& w) { return w.name().format(); })
      .def_property_readonly(
          "name", [](const Wheel& w) { return w.name().distribution; })
      .def_property_readonly("version",
                             [](const Wheel& w) { return w.name().version; })
      .def_property_readonly("build",
                             [](const Wheel& w) { return w.name().build; })
      .def_property_readonly(
          "local_version",
          [](const Wheel& w) { return w.name().local_version(); })
      .def_property_readonly(
          "tags", [](const Wheel& w) { return tag_strings(w.name().tags()); })
      .def_property_readonly(
          "python_tags", [](const Wheel& w) { return w.name().python_tags; })
      .def_property_readonly("abi_tags",
                             [](const Wheel& w) { return w.name().abi_tags; })
      .def_property_readonly(
          "platform_tags",
          [](const Wheel& w) { return w.name().platform_tags; })
      .def_property_readonly("parsed_name",
                             [](const Wheel& w) { return w.name(); })
      .def_property_readonly("dist_info", &Wheel::dist_info)
      .def_property_readonly(
          "wheel_tags",
          [](const Wheel& w) {
            return w.wheel_file() ? tag_strings(w.wheel_file()->tags())
                                  : std::vector<std::string>{};
          },
          "the Tag lines of the WHEEL file")
      .def_property_readonly("generator",
                             [](const Wheel& w) -> std::optional<std::string> {
                               if (!w.wheel_file()) return std::nullopt;
                               return w.wheel_file()->generator();
                             })
      .def_property_readonly("root_is_purelib",
                             [](const Wheel& w) -> std::optional<bool> {
                               if (!w.wheel_file()) return std::nullopt;
                               return w.wheel_file()->root_is_purelib();
                             })
      .def_property_readonly("members", &Wheel::members)
      .def_property_readonly("names",
                             [](const Wheel& w) {
                               std::vector<std::string> out;
                               for (const auto& e : w.zip().entries())
                                 out.push_back(e.name);
                               return out;
                             })
      .def("read", &Wheel::read, "member"_a,
           "The decompressed content of a member (KeyError when absent).")
      .def("verify", &Wheel::verify, py::kw_only(), "threads"_a = 0,
           "Checks every member against RECORD and the name against "
           ".dist-info and WHEEL.")
      .def(
          "retag",
          [](const Wheel& w, std::optional<std::string> python,
             std::optional<std::string> abi,
             std::optional<std::string> platform,
             std::optional<std::string> build, bool strip_local_version,
             std::optional<std::filesystem::path> out_dir, bool in_place,
             bool remove_original, unsigned threads) {
            return retag(w.path(), std::move(python), std::move(abi),
                         std::move(platform), std::move(build),
                         strip_local_version, std::move(out_dir), in_place,
                         remove_original, threads);
          },
          py::kw_only(), "python"_a = py::none(), "abi"_a = py::none(),
          "platform"_a = py::none(), "build"_a = py::none(),
          "strip_local_version"_a = false, "out_dir"_a = py::none(),
          "in_place"_a = false, "remove_original"_a = false, "threads"_a = 0,
          "Writes a retagged copy and returns its path. Tag arguments: "
          "'a.b' replaces, '+a.b' adds, '-a.b' removes; build '' removes.")
      .def(
          "strip_local_version",
          [](const Wheel& w, std::optional<std::filesystem::path> out_dir,
             unsigned threads) {
            return retag(w.path(), {}, {}, {}, {}, true, std::move(out_dir),
                         false, false, threads);
          },
          py::kw_only(), "out_dir"_a = py::none(), "threads"_a = 0,
          "Writes a copy without the local version (2.5.0+cu124 → 2.5.0).")
      .def("close", &Wheel::close)
      .def(
          "__enter__", [](Wheel& w) -> Wheel& { return w; },
          py::return_value_policy::reference_internal)
      .def("__exit__",
           [](Wheel& w, const py::object&, const py::object&,
              const py::object&) {
             w.close();
             return false;
           })
      .def("__repr__", [](const Wheel& w) {
        return fmt::format("<Wheel {}>", w.name().format());
      });

  m.def(
      "open", [](const std::filesystem::path& path) { return Wheel(path); },
      "path"_a, "Opens a wheel: parses its name and central directory.");
  m.def(
      "verify",
      [](const std::filesystem::path& path, unsigned threads) {
        py::gil_scoped_release release;
        wh::VerifyOptions o;
        o.threads = threads;
        return convert(wh::verify(path, o));
      },
      "path"_a, py::kw_only(), "threads"_a = 0);
  m.def(
      "pack",
      [](const std::filesystem::path& dir, const std::filesystem::path& out_dir,
         int level, unsigned threads, std::optional<libpkg::i64> timestamp,
         std::optional<std::string> build_tag,
         std::optional<std::filesystem::path> reuse,
         std::optional<py::function> progress,
         std::optional<std::filesystem::path> cache_dir,
         std::optional<libpkg::u64> cache_max) {
        wh::PackOptions o;
        o.cache = chunk_cache(cache_dir, cache_max);
        o.level = level;
        o.threads = threads;
        o.timestamp = timestamp;
        o.build_tag = std::move(build_tag);
        o.reuse = std::move(reuse);
        Callback report(std::move(progress));
        if (!report.empty())
          o.progress = [&report](libpkg::u64 done, libpkg::u64 total) {
            report(done, total);
          };
        std::optional<wh::PackResult> result;
        {
          py::gil_scoped_release release;
          result = wh::pack(dir, out_dir, o);
        }
        report.rethrow();
        return *result;
      },
      "dir"_a, "out_dir"_a, py::kw_only(), "level"_a = 6, "threads"_a = 0,
      "timestamp"_a = py::none(), "build_tag"_a = py::none(),
      "reuse"_a = py::none(), "progress"_a = py::none(),
      "cache_dir"_a = py::none(), "cache_max"_a = py::none(),
      "Packs an unpacked wheel tree like `wheel pack`. `progress(done, "
      "total)` is called with the content bytes written so far; an "
      "exception it raises is re-raised after packing. `cache_dir`: the "
      "chunk cache of deflated large members (none when None; "
      "`cache_max` bytes, default 20 GiB).");
  m.def(
      "unpack",
      [](const std::filesystem::path& wheel, const std::filesystem::path& dest,
         bool verify, unsigned threads) {
        wh::UnpackOptions o;
        o.verify = verify;
        o.threads = threads;
        py::gil_scoped_release release;
        return wh::unpack(wheel, dest, o);
      },
      "wheel"_a, "dest"_a, py::kw_only(), "verify"_a = true, "threads"_a = 0,
      "Extracts into dest/<name>-<version> and returns that directory.");
  m.def("retag", &retag, "wheel"_a, py::kw_only(), "python"_a = py::none(),
        "abi"_a = py::none(), "platform"_a = py::none(), "build"_a = py::none(),
        "strip_local_version"_a = false, "out_dir"_a = py::none(),
        "in_place"_a = false, "remove_original"_a = false, "threads"_a = 0);
  m.def("parse_name", &wh::WheelName::parse, "filename"_a);
  m.def("canonicalize_name", &wh::canonicalize_name, "name"_a);
  m.def("escape_distribution", &wh::escape_distribution, "name"_a);
  m.def("is_valid_version", &wh::is_valid_version, "version"_a);
}

}  // namespace libpkg_py
