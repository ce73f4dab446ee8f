// SPDX-License-Identifier: BSD-3-Clause
// libpkg.repair: analyse a wheel (show), plan its repair (an inspectable,
// JSON-serialisable plan) and apply the plan.
#include "libpkg/bundle/repair.hpp"

#include <fmt/format.h>

#include "bindings.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/bundle/analyze.hpp"
#include "libpkg/deps/policy.hpp"

namespace libpkg_py {

namespace {

namespace bd = libpkg::bundle;
namespace dp = libpkg::deps;
using libpkg::Errc;
using libpkg::Error;

// An analysis shared by the plans made from it (apply streams from its
// scratch directory, so it must outlive them).
struct Analysis {
  std::shared_ptr<bd::WheelAnalysis> analysis;
  std::shared_ptr<dp::PolicySet> policies;  // from policy_file, if any
};

struct Plan {
  Analysis analysis;
  bd::RepairPlan plan;
};

struct Binary {
  std::string member;
  bool extension = false;
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath;
};

struct External {
  std::string soname;
  std::filesystem::path path;
  std::vector<std::string> needed_by, needed;
  bool system = false, would_graft = false;
};

Analysis analyze(const std::filesystem::path& wheel,
                 const py::object& lib_paths,
                 const std::optional<std::string>& ldpaths,
                 const py::object& exclude, const py::object& include,
                 const std::optional<std::filesystem::path>& policy_file,
                 const py::object& ld_library_path, unsigned threads,
                 const std::optional<std::string>& libc,
                 const std::optional<std::filesystem::path>& root,
                 bool disable_isa_ext_check) {
  bd::AnalyzeOptions o;
  apply_search_args(o.search, lib_paths, ldpaths, ld_library_path, root);
  o.libc = libc_arg(libc);
  o.isa_ext_check = !disable_isa_ext_check;
  o.exclude = string_list(exclude, "exclude");
  o.include = string_list(include, "include");
  o.threads = threads;
  Analysis a;
  py::gil_scoped_release release;
  if (policy_file) {
    a.policies =
        std::make_shared<dp::PolicySet>(dp::PolicySet::load(*policy_file));
    o.policies = a.policies.get();
  }
  a.analysis = std::make_shared<bd::WheelAnalysis>(bd::analyze_wheel(wheel, o));
  return a;
}

std::string best_tag(const bd::WheelAnalysis& a, const dp::Evaluation& e) {
  if (!e.best) return "linux_" + a.arch;
  return e.best->tag(a.arch);
}

}  // namespace

void bind_repair(py::module_& m) {
  py::class_<Binary>(m, "Binary", "An ELF member of the wheel")
      .def_readonly("member", &Binary::member)
      .def_readonly("extension", &Binary::extension)
      .def_readonly("needed", &Binary::needed)
      .def_readonly("rpath", &Binary::rpath)
      .def_readonly("runpath", &Binary::runpath)
      .def("__repr__",
           [](const Binary& b) { return "<Binary " + b.member + ">"; });

  py::class_<External>(m, "External", "A library resolved outside the wheel")
      .def_readonly("soname", &External::soname)
      .def_readonly("path", &External::path)
      .def_readonly("needed_by", &External::needed_by)
      .def_readonly("needed", &External::needed)
      .def_readonly("system", &External::system)
      .def_readonly("would_graft", &External::would_graft)
      .def("__repr__",
           [](const External& e) { return "<External " + e.soname + ">"; });

  py::class_<Analysis>(m, "Analysis",
                       "What a wheel needs and which platform tag it meets "
                       "(what `pkgtool show` reports)")
      .def_property_readonly(
          "wheel", [](const Analysis& a) { return a.analysis->wheel; })
      .def_property_readonly("arch",
                             [](const Analysis& a) { return a.analysis->arch; })
      .def_property_readonly(
          "tag",
          [](const Analysis& a) {
            return best_tag(*a.analysis, a.analysis->as_is);
          },
          "the most compatible platform tag the wheel meets as it is")
      .def_property_readonly(
          "repaired_tag",
          [](const Analysis& a) {
            return best_tag(*a.analysis, a.analysis->after_repair);
          },
          "the most compatible tag reachable by grafting libraries")
      .def_property_readonly(
          "blockers",
          [](const Analysis& a) {
            // Policy name → why the wheel as it is does not meet it.
            std::vector<std::pair<std::string, std::vector<std::string>>> out;
            for (const auto& v : a.analysis->as_is.verdicts) {
              if (!v.policy || v.satisfied) continue;
              std::vector<std::string> why;
              for (const auto& b : v.blockers) why.push_back(b.message());
              out.emplace_back(v.policy->name, std::move(why));
            }
            return out;
          })
      .def_property_readonly("binaries",
                             [](const Analysis& a) {
                               std::vector<Binary> out;
                               for (const auto& b : a.analysis->binaries)
                                 out.push_back({b.member, b.extension, b.needed,
                                                b.rpath, b.runpath});
                               return out;
                             })
      .def_property_readonly(
          "externals",
          [](const Analysis& a) {
            std::vector<External> out;
            for (const auto& e : a.analysis->externals)
              out.push_back({e.soname,
                             e.path,
                             {e.needed_by.begin(), e.needed_by.end()},
                             e.needed,
                             e.system,
                             a.analysis->would_graft(e)});
            return out;
          })
      .def_property_readonly(
          "missing",
          [](const Analysis& a) {
            std::map<std::string, std::vector<std::string>> out;
            for (const auto& [so, by] : a.analysis->missing)
              out[so] = {by.begin(), by.end()};
            return out;
          })
      .def(
          "to_json",
          [](const Analysis& a, int indent) {
            return bd::show_json(*a.analysis, indent);
          },
          "indent"_a = 2, "The libpkg-show/1 document.")
      .def("to_dict",
           [](const Analysis& a) {
             return json_loads(bd::show_json(*a.analysis, -1));
           })
      .def(
          "explain",
          [](const Analysis& a) { return bd::show_text(*a.analysis); },
          "The `pkgtool show` report: the tag and what blocks better ones.")
      .def("__str__",
           [](const Analysis& a) { return bd::show_text(*a.analysis); })
      .def("__repr__", [](const Analysis& a) {
        return fmt::format("<Analysis {} {}>", a.analysis->wheel.string(),
                           best_tag(*a.analysis, a.analysis->as_is));
      });

  py::class_<bd::Graft>(m, "Graft", "A library copied into the wheel")
      .def_readonly("soname", &bd::Graft::soname)
      .def_readonly("source", &bd::Graft::source)
      .def_readonly("member", &bd::Graft::member)
      .def_readonly("new_soname", &bd::Graft::new_soname)
      .def_readonly("keep_name", &bd::Graft::keep_name)
      .def_readonly("reason", &bd::Graft::reason)
      .def_readonly("sha256", &bd::Graft::sha256)
      .def_readonly("needed_by", &bd::Graft::needed_by)
      .def("__repr__", [](const bd::Graft& g) {
        return "<Graft " + g.soname + " -> " + g.member + ">";
      });

  py::class_<bd::FileEdit>(m, "FileEdit", "The ELF edits of one member")
      .def_readonly("member", &bd::FileEdit::member)
      .def_readonly("graft", &bd::FileEdit::graft)
      .def_readonly("replace_needed", &bd::FileEdit::replace_needed)
      .def_readonly("remove_needed", &bd::FileEdit::remove_needed)
      .def_readonly("set_soname", &bd::FileEdit::set_soname)
      .def_readonly("rpath", &bd::FileEdit::rpath)
      .def_readonly("why", &bd::FileEdit::why)
      .def("__repr__",
           [](const bd::FileEdit& e) { return "<FileEdit " + e.member + ">"; });

  py::class_<Plan>(m, "Plan",
                   "A repair plan: grafts, edits, tags and why. Nothing is "
                   "written until apply().")
      .def_property_readonly("analysis",
                             [](const Plan& p) { return p.analysis; })
      .def_property_readonly("wheel",
                             [](const Plan& p) { return p.plan.wheel; })
      .def_property_readonly("output_name",
                             [](const Plan& p) { return p.plan.output_name; })
      .def_property_readonly("policy",
                             [](const Plan& p) { return p.plan.policy; })
      .def_property_readonly("platform_tags",
                             [](const Plan& p) { return p.plan.platform_tags; })
      .def_property_readonly("graft_dir",
                             [](const Plan& p) { return p.plan.graft_dir; })
      .def_property_readonly("grafts",
                             [](const Plan& p) { return p.plan.grafts; })
      .def_property_readonly("edits",
                             [](const Plan& p) { return p.plan.edits; })
      .def_property_readonly("excluded",
                             [](const Plan& p) { return p.plan.excluded; })
      .def_property_readonly("notes",
                             [](const Plan& p) { return p.plan.notes; })
      .def(
          "to_json",
          [](const Plan& p, int indent) { return p.plan.to_json(indent); },
          "indent"_a = 2, "The libpkg-repair-plan/1 document.")
      .def("to_dict",
           [](const Plan& p) { return json_loads(p.plan.to_json(-1)); })
      .def("to_text", [](const Plan& p) { return p.plan.to_text(); })
      .def("__str__", [](const Plan& p) { return p.plan.to_text(); })
      .def("__repr__", [](const Plan& p) {
        return fmt::format("<Plan {} grafts={}>", p.plan.output_name,
                           p.plan.grafts.size());
      });

  py::class_<bd::RepairResult>(m, "RepairResult",
                               "What apply() wrote (the `result` object of "
                               "`pkgtool repair --json`)")
      .def_readonly("path", &bd::RepairResult::path)
      .def_readonly("members", &bd::RepairResult::members)
      .def_readonly("raw_copies", &bd::RepairResult::raw_copies)
      .def_readonly("compressed", &bd::RepairResult::compressed)
      .def_readonly("spliced", &bd::RepairResult::spliced,
                    "edited members written by splicing the input's deflate "
                    "data (counted in `compressed` too)")
      .def_readonly("spliced_reused_bytes",
                    &bd::RepairResult::spliced_reused_bytes,
                    "compressed bytes of the input the spliced members "
                    "re-use")
      .def_readonly("grafted_bytes", &bd::RepairResult::grafted_bytes)
      .def_readonly("size", &bd::RepairResult::size,
                    "bytes of the wheel written")
      .def("__repr__", [](const bd::RepairResult& r) {
        return fmt::format(
            "<RepairResult {} members={} compressed={} spliced={}>",
            r.path.string(), r.members, r.compressed, r.spliced);
      });

  m.def("show", &analyze, "wheel"_a, py::kw_only(), "lib_paths"_a = py::tuple(),
        "ldpaths"_a = py::none(), "exclude"_a = py::tuple(),
        "include"_a = py::tuple(), "policy_file"_a = py::none(),
        "ld_library_path"_a = py::none(), "threads"_a = 0,
        "libc"_a = py::none(), "root"_a = py::none(),
        "disable_isa_ext_check"_a = false,
        "Analyses a wheel: its platform tag and what blocks a better one.");

  m.def(
      "analyze",
      [](const std::filesystem::path& wheel, const std::string& plat,
         const py::object& lib_paths, const std::optional<std::string>& ldpaths,
         const py::object& exclude, const py::object& include,
         const std::optional<py::object>& keep_names,
         const std::string& lib_sdir, const std::optional<std::string>& lib_dir,
         const std::string& rpath_tag, bool only_plat, bool ignore_missing,
         bool strip, const std::optional<std::filesystem::path>& policy_file,
         const py::object& ld_library_path, unsigned threads,
         const std::optional<std::string>& libc,
         const std::optional<std::filesystem::path>& root,
         bool disable_isa_ext_check,
         const std::optional<std::filesystem::path>& cache_dir) {
        bd::RepairOptions ro;
        ro.plat = plat;
        ro.lib_sdir = lib_sdir;
        ro.lib_dir = lib_dir;
        if (keep_names) ro.keep_names = string_list(*keep_names, "keep_names");
        if (rpath_tag == "rpath")
          ro.rpath_tag = libpkg::elf::RpathTag::rpath;
        else if (rpath_tag == "runpath")
          ro.rpath_tag = libpkg::elf::RpathTag::runpath;
        else
          throw Error(Errc::usage, "",
                      "rpath_tag must be 'rpath' or 'runpath', not '" +
                          rpath_tag + "'");
        ro.only_plat = only_plat;
        ro.ignore_missing = ignore_missing;
        ro.strip = strip;
        ro.threads = threads;
        ro.cache = chunk_cache(cache_dir, std::nullopt);
        Plan p;
        p.analysis = analyze(wheel, lib_paths, ldpaths, exclude, include,
                             policy_file, ld_library_path, threads, libc, root,
                             disable_isa_ext_check);
        py::gil_scoped_release release;
        p.plan = bd::plan_repair(*p.analysis.analysis, ro);
        return p;
      },
      "wheel"_a, py::kw_only(), "plat"_a = "auto", "lib_paths"_a = py::tuple(),
      "ldpaths"_a = py::none(), "exclude"_a = py::tuple(),
      "include"_a = py::tuple(), "keep_names"_a = py::none(),
      "lib_sdir"_a = ".libs", "lib_dir"_a = py::none(), "rpath_tag"_a = "rpath",
      "only_plat"_a = false, "ignore_missing"_a = false, "strip"_a = false,
      "policy_file"_a = py::none(), "ld_library_path"_a = py::none(),
      "threads"_a = 0, "libc"_a = py::none(), "root"_a = py::none(),
      "disable_isa_ext_check"_a = false, "cache_dir"_a = py::none(),
      "Analyses a wheel and plans its repair (keep_names None = the default "
      "dlopen'd names; `cache_dir`: the chunk cache apply() will use, where "
      "the grafts' SHA-256 (their names) are memoized; none when None).");

  m.def(
      "apply",
      [](const Plan& plan, const std::filesystem::path& out_dir, int level,
         unsigned threads, std::optional<libpkg::i64> timestamp,
         std::optional<std::filesystem::path> cache_dir,
         std::optional<libpkg::u64> cache_max) {
        bd::ApplyOptions o;
        o.cache = chunk_cache(cache_dir, cache_max);
        o.level = level;
        o.threads = threads;
        o.timestamp = timestamp;
        py::gil_scoped_release release;
        return bd::apply_repair(*plan.analysis.analysis, plan.plan, out_dir, o);
      },
      "plan"_a, "out_dir"_a, py::kw_only(), "level"_a = 6, "threads"_a = 0,
      "timestamp"_a = py::none(), "cache_dir"_a = py::none(),
      "cache_max"_a = py::none(),
      "Writes out_dir/plan.output_name in one streaming pass (`cache_dir`: "
      "the chunk cache of the grafted libraries; none when None).");
  m.def("default_keep_names", &bd::default_keep_names);
}

}  // namespace libpkg_py
