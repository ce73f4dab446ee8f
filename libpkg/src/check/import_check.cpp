// SPDX-License-Identifier: BSD-3-Clause
// import: the Python package imports — from a fresh venv for a wheel
// (pip install --no-deps --no-index), from its site directory for installed
// trees and conda packages — what smoke_test.sh's `python -c 'import torch'`
// did, for every top-level module and extension module of the package.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <variant>

#include "check/runtime_util.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

bool is_module_name(std::string_view s) {
  while (true) {
    auto dot = s.find('.');
    if (!is_identifier(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

std::string top_of(std::string_view module) {
  return std::string(module.substr(0, module.find('.')));
}

struct Python {
  std::string executable;              // sys.executable
  std::string version;                 // "3.11"
  std::vector<std::string> site_dirs;  // site.getsitepackages()
};

// Asks the interpreter who it is. A skip reason when it can't answer.
std::variant<Python, std::string> probe_python(const CheckOptions& options) {
  RunResult r = run_process(
      {options.python, "-I", "-c",
       "import os, site, sys\n"
       "print('libpkg-version:', '%d.%d' % sys.version_info[:2])\n"
       "print('libpkg-executable:', sys.executable)\n"
       "print('libpkg-sites:', os.pathsep.join(site.getsitepackages()))\n"},
      run_options(options, std::min(options.timeout_seconds, 60u)));
  if (r.not_found)
    return fmt::format("no Python interpreter: {} not found (pass --python)",
                       options.python);
  Python py;
  std::string sites;
  for (const auto& line : lines_of(r.output)) {
    if (line.starts_with("libpkg-version: ")) py.version = line.substr(16);
    if (line.starts_with("libpkg-executable: "))
      py.executable = line.substr(19);
    if (line.starts_with("libpkg-sites: ")) sites = line.substr(14);
  }
  if (!r.ok() || py.version.empty())
    return fmt::format("{} does not run ({}): {}", options.python,
                       r.describe(options.timeout_seconds), tail(r.output, 2));
  if (py.executable.empty()) py.executable = options.python;
  for (std::size_t pos = 0; pos < sites.size();) {
    auto colon = std::min(sites.find(':', pos), sites.size());
    if (colon > pos) py.site_dirs.push_back(sites.substr(pos, colon - pos));
    pos = colon + 1;
  }
  return py;
}

// "python3.11" → "3.11"; "" when `name` is not such a directory name.
std::string version_of_dir(const std::string& name) {
  if (!name.starts_with("python3.")) return "";
  std::string v = name.substr(6);
  bool digits = v.size() > 2 && std::all_of(v.begin() + 2, v.end(), [](char c) {
                  return c >= '0' && c <= '9';
                });
  return digits ? v : "";
}

// The Python version a site-packages directory is for, from its parent
// (lib/python3.11/site-packages) or from the CPython tag of an extension
// module in it ("_C.cpython-311-x86_64-linux-gnu.so"); "" when unknown.
std::string site_python_version(const Package& pkg, const fs::path& site) {
  if (auto v = version_of_dir(site.parent_path().filename().string());
      !v.empty())
    return v;
  for (const auto& e : pkg.elfs) {
    if (!e.extension) continue;
    std::string name = e.file.filename().string();
    auto at = name.find(".cpython-3");
    if (at == std::string::npos) continue;
    std::string minor;
    for (std::size_t i = at + 10;
         i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
      minor += name[i];
    if (!minor.empty()) return "3." + minor;
  }
  return "";
}

// A conda package's site-packages: lib/pythonX.Y/site-packages, or the
// site-packages/ of a noarch: python package (relocated at install time).
std::optional<fs::path> conda_site_dir(const Package& pkg) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(pkg.root / "lib", ec))
    if (!version_of_dir(e.path().filename().string()).empty() &&
        fs::is_directory(e.path() / "site-packages", ec))
      found.push_back(e.path() / "site-packages");
  std::sort(found.begin(), found.end());
  if (!found.empty()) return found.back();
  if (fs::is_directory(pkg.root / "site-packages", ec))
    return pkg.root / "site-packages";
  return std::nullopt;
}

// What a top-level entry of site-packages provides as a module: a regular
// package (dir with __init__.py), a .py module, an extension module;
// "" for anything else (metadata, grafted .libs, namespace directories,
// __pycache__, .pth files, data).
std::string module_of_entry(const fs::directory_entry& e) {
  std::error_code ec;
  std::string name = e.path().filename().string();
  if (e.is_directory(ec)) {
    if (!is_identifier(name) || name == "__pycache__") return "";
    return fs::exists(e.path() / "__init__.py", ec) ? name : "";
  }
  auto dot = name.find('.');
  if (dot == std::string::npos) return "";
  std::string stem = name.substr(0, dot);
  if (!is_identifier(stem) || stem == "__init__") return "";
  if (name.ends_with(".py") && dot == name.size() - 3) return stem;
  if (name.ends_with(".so") || name.ends_with(".pyd")) return stem;
  return "";
}

// The directories a wheel installs into site-packages: its root, and the
// purelib/platlib trees of its .data directory.
std::vector<fs::path> install_dirs(const fs::path& site) {
  std::vector<fs::path> dirs = {site};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(site, ec))
    if (e.path().extension() == ".data")
      for (const char* sub : {"purelib", "platlib"})
        if (fs::is_directory(e.path() / sub, ec))
          dirs.push_back(e.path() / sub);
  return dirs;
}

bool provides_module(const fs::path& site, const std::string& top) {
  std::error_code ec;
  for (const auto& dir : install_dirs(site)) {
    if (fs::is_directory(dir / top, ec)) return true;  // regular or namespace
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (module_of_entry(e) == top) return true;
  }
  return false;
}

// The top-level modules of the package: the top_level.txt files of its
// dist-info (all of them for a site-packages tree or a conda package),
// keeping the names present on disk; without any top_level.txt, every
// regular package, .py module and extension module at the top of `site`,
// leaving out private names (leading '_') unless nothing else is there.
std::vector<std::string> top_level_modules(const Package& pkg,
                                           const fs::path& site,
                                           std::vector<std::string>& notes) {
  if (pkg.kind == ArtifactKind::python_package) return {pkg.content_dir};
  std::vector<fs::path> infos;
  std::error_code ec;
  if (pkg.kind == ArtifactKind::wheel && !pkg.dist_info.empty()) {
    infos.push_back(site / pkg.dist_info);
  } else {
    for (const auto& e : fs::directory_iterator(site, ec)) {
      auto ext = e.path().extension();
      if (ext == ".dist-info" || ext == ".egg-info") infos.push_back(e.path());
    }
    std::sort(infos.begin(), infos.end());
  }
  std::set<std::string> names;
  bool any_top_level = false;
  for (const auto& info : infos) {
    if (!fs::exists(fs::symlink_status(info / "top_level.txt", ec))) continue;
    std::istringstream in(read_regular_file(info / "top_level.txt"));
    any_top_level = true;
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
        line.pop_back();
      std::replace(line.begin(), line.end(), '/', '.');
      if (line.empty()) continue;
      if (!is_module_name(line)) {
        notes.push_back(
            fmt::format("{}/top_level.txt: '{}' is not a module name",
                        info.filename().string(), line));
        continue;
      }
      if (!provides_module(site, top_of(line))) {
        notes.push_back(fmt::format(
            "{}/top_level.txt names {}, which the package does not contain",
            info.filename().string(), line));
        continue;
      }
      names.insert(line);
    }
  }
  if (any_top_level) return {names.begin(), names.end()};

  std::set<std::string> found;
  for (const auto& e : fs::directory_iterator(site, ec))
    if (auto m = module_of_entry(e); !m.empty()) found.insert(m);
  std::vector<std::string> pub, priv;
  for (const auto& m : found) (m[0] == '_' ? priv : pub).push_back(m);
  return pub.empty() ? priv : pub;
}

// The extension modules (ELF files defining PyInit_*) inside the given
// top-level packages, as dotted names: importing each one proves its
// dependencies load, even those the package's __init__ doesn't import.
std::vector<std::string> extension_modules(
    const Package& pkg, const fs::path& site,
    const std::vector<std::string>& tops) {
  std::vector<std::string> out;
  for (const auto& e : pkg.elfs) {
    if (!e.extension) continue;
    fs::path rel = e.file.lexically_relative(site);
    if (rel.empty() || *rel.begin() == "..") continue;
    // pkg-1.0.data/platlib/x/_C.so installs as x/_C.so.
    if (auto first = rel.begin(); first->extension() == ".data") {
      auto second = std::next(first);
      if (second == rel.end() || (*second != "purelib" && *second != "platlib"))
        continue;
      fs::path inner;
      for (auto it = std::next(second); it != rel.end(); ++it) inner /= *it;
      rel = inner;
      if (rel.empty()) continue;
    }
    std::string name = rel.filename().string();
    if (!name.ends_with(".so")) continue;  // versioned: a library
    std::string module;
    for (auto it = rel.begin(); it != rel.end(); ++it) {
      std::string part = it->string();
      if (std::next(it) == rel.end()) part = part.substr(0, part.find('.'));
      module += (module.empty() ? "" : ".") + part;
    }
    if (!is_module_name(module)) continue;
    if (std::find(tops.begin(), tops.end(), top_of(module)) == tops.end())
      continue;
    out.push_back(module);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The import runner: inserts the site directory (if any) first on
// sys.path, appends the fallback directories, imports the module and says
// where it came from.
constexpr const char* kImportScript =
    "import importlib, sys\n"
    "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
    "sys.path.extend(sys.argv[3:])\n"
    "m = importlib.import_module(sys.argv[2])\n"
    "print('libpkg-import-file:', getattr(m, '__file__', None) or '')\n";

constexpr std::string_view kFileMarker = "libpkg-import-file: ";

struct ImportOutcome {
  bool ok = false;
  std::string file;     // where the module was loaded from
  std::string message;  // failure: last line of the traceback
  std::string missing;  // ModuleNotFoundError: the module named
};

ImportOutcome import_module(const std::string& python, const std::string& site,
                            const std::string& module,
                            const std::vector<std::string>& fallback,
                            const RunOptions& ro) {
  std::vector<std::string> argv = {python,        "-I", "-c",
                                   kImportScript, site, module};
  argv.insert(argv.end(), fallback.begin(), fallback.end());
  RunResult r = run_process(argv, ro);
  ImportOutcome out;
  for (const auto& line : lines_of(r.output))
    if (line.starts_with(kFileMarker))
      out.file = line.substr(kFileMarker.size());
  if (r.ok()) {
    out.ok = true;
    return out;
  }
  std::string last = last_line(r.output);
  if (r.signal != 0 || r.timed_out || last.empty())
    out.message = fmt::format("the import {}{}", r.describe(ro.timeout_seconds),
                              last.empty() ? "" : ": " + last);
  else
    out.message = last;
  constexpr std::string_view kNoModule =
      "ModuleNotFoundError: No module named '";
  if (last.starts_with(kNoModule)) {
    std::string name = last.substr(kNoModule.size());
    out.missing = name.substr(0, name.find('\''));
  }
  return out;
}

// A pointer to the likely cause, after the traceback's last line.
std::string import_hint(const ImportOutcome& o, const std::string& module,
                        const std::set<std::string>& own_tops) {
  const std::string& m = o.message;
  if (m.find("cannot open shared object file") != std::string::npos)
    return "a library it needs is neither in the package nor on this system "
           "(see the dependencies check)";
  if (m.find("undefined symbol") != std::string::npos)
    return "a library it loads lacks this symbol: built against another "
           "version or C++ ABI of that library (see cxx-abi, dependencies)";
  if (m.find("version `") != std::string::npos &&
      m.find("not found") != std::string::npos)
    return "it needs newer system libraries than this machine has (see "
           "symbol-versions)";
  if (m.find("wrong ELF class") != std::string::npos ||
      m.find("invalid ELF header") != std::string::npos)
    return "a binary for another architecture, or a corrupt file";
  if (!o.missing.empty() && own_tops.count(top_of(o.missing)))
    return o.missing == module || top_of(o.missing) == top_of(module)
               ? "the package does not contain this module"
               : "the package does not contain a module it imports";
  if (m.find("killed by signal") != std::string::npos)
    return "the module crashed the interpreter while loading";
  return "";
}

void import_check(const Package& pkg, const CheckOptions& options,
                  CheckResult& result) {
  const unsigned timeout = options.timeout_seconds;
  auto probed = probe_python(options);
  if (auto* why = std::get_if<std::string>(&probed)) {
    set_result(result, Status::skip, *why);
    return;
  }
  const Python py = std::get<Python>(probed);
  const std::string who = fmt::format("{} {}", py.executable, py.version);

  // Where the package's modules are, and the interpreter to import them.
  const bool venv = pkg.kind == ArtifactKind::wheel;
  fs::path site;
  if (venv) {
    site = pkg.root;
  } else if (pkg.kind == ArtifactKind::conda ||
             pkg.kind == ArtifactKind::conda_tree) {
    auto dir = conda_site_dir(pkg);
    if (!dir) {
      set_result(result, Status::skip,
                 "no Python modules: the conda package has no "
                 "lib/pythonX.Y/site-packages");
      return;
    }
    site = *dir;
  } else {
    site = pkg.root;
  }
  if (!venv) {
    std::string wanted = site_python_version(pkg, site);
    if (!wanted.empty() && wanted != py.version) {
      set_result(
          result, Status::skip,
          fmt::format("the package is for Python {}, {} is Python {} (pass "
                      "--python)",
                      wanted, py.executable, py.version));
      return;
    }
  }

  std::vector<std::string> modules;
  std::set<std::string> own_tops;
  if (!options.import_modules.empty()) {
    for (const auto& m : options.import_modules) {
      if (!is_module_name(m))
        throw Error(Errc::usage, "",
                    fmt::format("--import: '{}' is not a module name", m));
      modules.push_back(m);
      own_tops.insert(top_of(m));
    }
  } else {
    std::vector<std::string> tops = top_level_modules(pkg, site, result.notes);
    if (tops.empty()) {
      set_result(result, Status::skip,
                 fmt::format("no Python module found in {} (pass --import)",
                             site.string()));
      return;
    }
    own_tops.insert(tops.begin(), tops.end());
    modules = tops;
    for (auto& m : extension_modules(pkg, site, tops))
      if (std::find(modules.begin(), modules.end(), m) == modules.end())
        modules.push_back(std::move(m));
  }

  ScratchDir scratch = make_scratch(options, "import");
  const fs::path cwd = scratch.path() / "cwd";  // empty: supplies nothing
  fs::create_directories(cwd);
  std::string python = options.python;
  std::string import_site = site.string();
  std::string where = fmt::format("from {}", site.string());
  if (venv) {
    const fs::path env_dir = scratch.path() / "venv";
    log_step(options, fmt::format("import: creating a venv with {}", who));
    RunResult made = run_process({options.python, "-I", "-m", "venv", env_dir},
                                 run_options(options, timeout, cwd));
    if (!made.ok()) {
      set_result(result, Status::skip,
                 fmt::format("cannot create a venv with {} ({}): {}", who,
                             made.describe(timeout), tail(made.output, 2)));
      return;
    }
    python = (env_dir / "bin" / "python").string();
    const fs::path wheel = fs::absolute(pkg.artifact);
    log_step(options,
             fmt::format("import: installing {}", wheel.filename().string()));
    RunOptions pip_ro = run_options(options, timeout, cwd);
    // pip reads PIP_* settings (PIP_TARGET, PIP_USER, PIP_PREFIX...) that
    // would install elsewhere than the venv.
    for (char** e = environ; *e != nullptr; ++e)
      if (std::string_view(*e).starts_with("PIP_")) {
        std::string_view entry(*e);
        pip_ro.env_unset.emplace_back(entry.substr(0, entry.find('=')));
      }
    RunResult pip = run_process(
        {python, "-I", "-m", "pip", "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", "--no-cache-dir", wheel.string()},
        pip_ro);
    if (!pip.ok()) {
      std::string why = tail(pip.output, 3);
      if (pip.output.find("is not a supported wheel on this platform") !=
          std::string::npos) {
        set_result(
            result, Status::skip,
            fmt::format("{} is not a supported wheel for {} (tags {}-{})",
                        wheel.filename().string(), who,
                        pkg.wheel_name ? pkg.wheel_name->python_tag() : "?",
                        pkg.wheel_name ? pkg.wheel_name->abi_tag() : "?"));
        return;
      }
      set_result(result, Status::fail,
                 fmt::format("pip install into a fresh venv failed ({})",
                             pip.describe(timeout)));
      result.problems.push_back({wheel.filename().string(), why});
      return;
    }
    import_site = "";
    where = "in a fresh venv";
  }

  const RunOptions ro = run_options(options, timeout, cwd);
  // Where imported modules must come from (canonical: __file__ follows
  // sys.path as written, which may go through a symlink).
  const fs::path root = fs::weakly_canonical(venv ? scratch.path() : site);
  auto from_package = [&](const std::string& file) {
    fs::path rel = fs::weakly_canonical(file).lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
  };
  std::vector<std::string> imported, unverified;
  std::set<std::string> failed;
  for (const auto& module : modules) {
    // Importing a.b imports a first: when a failed, a.b fails the same way
    // and a second problem would only repeat the first.
    if (module.find('.') != std::string::npos && failed.count(top_of(module))) {
      result.notes.push_back(fmt::format("{} not tried: {} does not import",
                                         module, top_of(module)));
      continue;
    }
    log_step(options, fmt::format("import: {}", module));
    ImportOutcome o = import_module(python, import_site, module, {}, ro);
    // The venv gets no dependencies (--no-index). When a third-party
    // module is missing, try again with the interpreter's own
    // site-packages appended (after the package's, so they can't shadow
    // it).
    if (!o.ok && venv && !o.missing.empty() &&
        !own_tops.count(top_of(o.missing)) && !py.site_dirs.empty()) {
      std::string missing = o.missing;
      ImportOutcome again =
          import_module(python, import_site, module, py.site_dirs, ro);
      if (again.ok) {
        result.notes.push_back(fmt::format(
            "{} needs {}, not installed in the venv (no dependencies are "
            "installed): taken from {}'s site-packages",
            module, missing, py.executable));
        o = again;
      } else if (!again.missing.empty() &&
                 !own_tops.count(top_of(again.missing))) {
        unverified.push_back(module);
        result.notes.push_back(fmt::format(
            "{} could not be imported: it needs {}, which is not installed "
            "for {}",
            module, again.missing, py.executable));
        continue;
      } else {
        o = again;
      }
    }
    if (o.ok && !o.file.empty() && !from_package(o.file)) {
      failed.insert(module);
      result.problems.push_back(
          {module,
           fmt::format("imported from {}, not from the package", o.file)});
      continue;
    }
    if (!o.ok) {
      failed.insert(module);
      std::string hint = import_hint(o, module, own_tops);
      result.problems.push_back(
          {module, hint.empty() ? o.message : o.message + " — " + hint});
      continue;
    }
    imported.push_back(module);
  }

  if (!result.problems.empty()) {
    set_result(result, Status::fail,
               fmt::format("{} of {} module(s) failed to import with {} {}",
                           result.problems.size(), modules.size(), who, where));
  } else if (!unverified.empty()) {
    set_result(
        result, Status::skip,
        fmt::format("cannot import {}: dependencies missing for {} (install "
                    "them, or pass --import){}",
                    fmt::join(unverified, ", "), who,
                    imported.empty() ? ""
                                     : fmt::format("; imported {}",
                                                   fmt::join(imported, ", "))));
  } else {
    set_result(result, Status::pass,
               fmt::format("imported {} with {} {}", fmt::join(imported, ", "),
                           who, where));
  }
}

}  // namespace

void check_import(const Package& pkg, const CheckOptions& options,
                  CheckResult& result) {
  if (pkg.kind == ArtifactKind::libtorch_zip ||
      pkg.kind == ArtifactKind::libtorch_tree) {
    set_result(result, Status::skip, "not a Python package (libtorch)");
    return;
  }
  import_check(pkg, options, result);
}

}  // namespace libpkg::check::detail
