// SPDX-License-Identifier: BSD-3-Clause
// BuildConfig: validation, the BUILD_ENVIRONMENT string, the old scripts'
// environment variables and command-line overrides. All three paths end in
// the same `assemble` (apply overrides, resolve the version, validate), so
// a value means the same thing however it arrived.
#include <fmt/format.h>

#include <charconv>
#include <sstream>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/config/version.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::config {
namespace {

using abi::CxxAbi;

[[noreturn]] void refuse(const std::string& message) {
  throw Error(Errc::usage, "", message);
}

// Re-throws a parse error with the name of where the value came from.
template <class F>
auto named(std::string_view where, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Error(Errc::usage, "", fmt::format("{}: {}", where, e.message()));
  }
}

bool is_devtoolset(std::string_view t) {
  return t.starts_with("devtoolset") || t.starts_with("gcc") ||
         t.find("cxx11-abi") != std::string_view::npos || t == "pre-cxx11";
}

bool is_variant(std::string_view t) {
  return t == "shared-with-deps" || t == "shared-without-deps" ||
         t == "static-with-deps" || t == "static-without-deps";
}

bool is_arch(std::string_view t) {
  return t == "x86_64" || t == "aarch64" || t == "arm64" || t == "s390x";
}

// A python token: "3.11", "2.7mu", "cp311-cp311". CUDA has no 2.x/3.x
// versions the scripts ever built, so the leading digit decides.
bool looks_like_python(std::string_view t) {
  if (t.starts_with("2.") || t.starts_with("3.")) return true;
  return t.size() > 2 && t.starts_with("cp") && t[2] >= '0' && t[2] <= '9';
}

std::string accelerator_token(const Accelerator& a) {
  // cuXY is ambiguous for a two-digit minor (cu1210); spell those out.
  if (a.kind == AcceleratorKind::cuda && a.minor >= 10)
    return "cuda" + a.version();
  return a.tag();
}

struct Overrides : ConfigOverrides {
  std::optional<std::string> devtoolset;    // DESIRED_DEVTOOLSET semantics
  std::optional<std::string> build_python;  // libtorch's interpreter
};

BuildConfig assemble(BuildConfig c, const Overrides& o) {
  if (o.package_type) {
    PackageType old = c.type;
    c.type = parse_package_type(*o.package_type);
    // Moving between pythonless and python builds keeps the interpreter.
    if (c.type == PackageType::libtorch && old != PackageType::libtorch) {
      if (!c.build_python) c.build_python = c.python;
      c.python.reset();
    } else if (c.type != PackageType::libtorch &&
               old == PackageType::libtorch) {
      if (!c.python) c.python = c.build_python;
      c.build_python.reset();
      c.variant.reset();
    }
    if (c.type == PackageType::wheel_macos) c.os = "macos";
  }
  if (o.python) c.python = PythonVersion::parse(*o.python);
  if (o.build_python) c.build_python = PythonVersion::parse(*o.build_python);
  if (o.accelerator) c.accelerator = parse_accelerator(*o.accelerator);
  if (o.os) {
    if (*o.os != "linux" && *o.os != "macos")
      refuse(fmt::format("unknown OS '{}' (accepted: linux, macos)", *o.os));
    c.os = *o.os;
  }
  if (o.arch) {
    if (!is_arch(*o.arch))
      refuse(fmt::format(
          "unknown architecture '{}' (accepted: x86_64, aarch64, arm64, "
          "s390x)",
          *o.arch));
    c.arch = *o.arch;
  }
  if (o.abi)
    c.cxx_abi = parse_cxx_abi(*o.abi);
  else if (o.devtoolset)
    c.cxx_abi = *o.devtoolset == "pre-cxx11"
                    ? CxxAbi::pre_cxx11
                    : abi_from_devtoolset(*o.devtoolset, c.accelerator);
  else if (o.accelerator && c.accelerator.kind == AcceleratorKind::rocm)
    c.cxx_abi = CxxAbi::cxx11;
  if (c.os == "macos") {
    if (o.abi || o.devtoolset)
      refuse(fmt::format(
          "a C++ ABI ('{}') on a macOS build: libc++ has no dual ABI",
          o.abi ? *o.abi : *o.devtoolset));
    c.cxx_abi = CxxAbi::none;
  } else if (c.cxx_abi == CxxAbi::none) {
    c.cxx_abi = abi_from_devtoolset("", c.accelerator);
  }
  if (o.variant) c.variant = cppdist::LibtorchVariant::parse(*o.variant);
  if (c.type == PackageType::libtorch && c.os == "linux" && !c.variant)
    c.variant = cppdist::LibtorchVariant{};
  if (o.debug) c.debug = *o.debug;
  if (o.package_name) c.package_name = *o.package_name;
  if (o.cudnn_version) c.cudnn_version = *o.cudnn_version;
  if (o.base_version) {
    c.base_version = *o.base_version;
    c.version_overridden = false;
  }
  if (o.build_number) c.build_number = *o.build_number;
  if (o.override_version) {
    c.version = *o.override_version;
    c.version_overridden = true;
  }
  if (c.version_overridden)
    c.build_number = 0;  // OVERRIDE_PACKAGE_VERSION: the version, exactly
  else
    c.version = with_build_number(c.base_version, c.build_number);
  validate(c);
  return c;
}

std::optional<std::string> from(const Getenv& getenv,
                                std::initializer_list<const char*> names,
                                std::string* which = nullptr) {
  for (const char* n : names) {
    auto v = getenv(n);
    if (v && !v->empty()) {
      if (which) *which = n;
      return v;
    }
  }
  return std::nullopt;
}

// GPU_ARCH_TYPE (+ GPU_ARCH_VERSION) → accelerator spelling, arch and
// devtoolset hints, as manywheel/build.sh dispatched on it.
struct GpuArch {
  std::string accelerator;
  std::optional<std::string> arch, devtoolset;
};

GpuArch gpu_arch(const std::string& type,
                 const std::optional<std::string>& version) {
  GpuArch g;
  if (type == "cpu" || type.starts_with("cpu-")) {
    g.accelerator = "cpu";
    if (type == "cpu-cxx11-abi") g.devtoolset = "cxx11-abi";
    if (type == "cpu-s390x") g.arch = "s390x";
    if (type == "cpu-aarch64") g.arch = "aarch64";
    if (type != "cpu" && !g.devtoolset && !g.arch)
      refuse(fmt::format("GPU_ARCH_TYPE: unknown value '{}'", type));
  } else if (type == "xpu") {
    g.accelerator = "xpu";
  } else if (type == "cuda" || type == "rocm" || type == "cuda-aarch64") {
    if (!version)
      refuse(fmt::format(
          "GPU_ARCH_TYPE={} needs DESIRED_CUDA or GPU_ARCH_VERSION", type));
    g.accelerator = (type == "rocm" ? "rocm" : "") + *version;
    // PyTorch's sbsa (Grace/aarch64) CUDA builds.
    if (type == "cuda-aarch64") g.arch = "aarch64";
  } else {
    refuse(fmt::format(
        "GPU_ARCH_TYPE: unknown value '{}' (accepted: cuda, rocm, cpu, "
        "cuda-aarch64, cpu-cxx11-abi, cpu-s390x, cpu-aarch64, xpu)",
        type));
  }
  return g;
}

AcceleratorKind gpu_arch_kind(const std::string& type) {
  if (type == "cuda" || type == "cuda-aarch64") return AcceleratorKind::cuda;
  if (type == "rocm") return AcceleratorKind::rocm;
  if (type == "xpu") return AcceleratorKind::xpu;
  return AcceleratorKind::cpu;
}

int parse_build_number(const std::string& name, const std::string& text) {
  int n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0)
    refuse(fmt::format("{}: '{}' is not a non-negative integer", name, text));
  return n;
}

}  // namespace

const char* cxx_abi_option(abi::CxxAbi abi) {
  switch (abi) {
    case CxxAbi::cxx11:
      return "cxx11";
    case CxxAbi::pre_cxx11:
      return "pre-cxx11";
    default:
      return "none";
  }
}

void validate(const BuildConfig& c) {
  const char* type = package_type_name(c.type);
  const Accelerator& a = c.accelerator;
  if (c.type == PackageType::libtorch) {
    if (c.python)
      refuse(fmt::format(
          "libtorch is pythonless: python {} does not apply (use the build "
          "interpreter, or a wheel package type)",
          c.python->str()));
  } else if (!c.python) {
    refuse(fmt::format("a {} build needs a python version (DESIRED_PYTHON)",
                       type));
  }
  if (c.variant && !(c.type == PackageType::libtorch && c.os == "linux"))
    refuse(fmt::format(
        "libtorch variant '{}' applies to Linux libtorch only, not {} on {}",
        c.variant->name(), type, c.os));
  if (c.type == PackageType::wheel_macos && c.os != "macos")
    refuse(fmt::format("package type wheel is the macOS wheel, not {}", c.os));
  if (c.type == PackageType::manywheel && c.os != "linux")
    refuse("package type manywheel is Linux only (use 'wheel' for macOS)");
  if (c.os == "macos") {
    if (a.kind != AcceleratorKind::cpu)
      refuse(fmt::format("accelerator '{}' on macOS (only cpu)", a.tag()));
    if (c.arch != "x86_64" && c.arch != "arm64")
      refuse(
          fmt::format("architecture '{}' on macOS (x86_64 or arm64)", c.arch));
    if (c.cxx_abi != abi::CxxAbi::none)
      refuse("a macOS build has no C++ ABI choice (libc++)");
  } else {
    if (c.arch == "arm64")
      refuse("architecture 'arm64' on Linux is spelled aarch64");
    if (c.cxx_abi != abi::CxxAbi::cxx11 && c.cxx_abi != abi::CxxAbi::pre_cxx11)
      refuse("a Linux build is cxx11 or pre-cxx11");
  }
  if (c.type == PackageType::conda &&
      (a.kind == AcceleratorKind::rocm || a.kind == AcceleratorKind::xpu))
    refuse(fmt::format(
        "accelerator '{}' on conda: conda builds are cpu or CUDA only",
        a.tag()));
  if (a.kind == AcceleratorKind::rocm && c.cxx_abi != abi::CxxAbi::cxx11)
    refuse(fmt::format("{} with the pre-cxx11 ABI: ROCm builds are cxx11",
                       a.tag()));
  if (c.python && c.type == PackageType::conda && !c.python->abi_suffix.empty())
    refuse(fmt::format(
        "python '{}' on conda: conda pythons are plain M.m (e.g. {}.{})",
        c.python->str(), c.python->major, c.python->minor));
  if (c.build_number < 0)
    refuse(fmt::format("build number {} is negative", c.build_number));
  if (!wheel::is_valid_version(c.version))
    refuse(fmt::format("version '{}' is not a PEP 440 version", c.version));
  if (c.type == PackageType::conda && c.version.find('+') != std::string::npos)
    refuse(fmt::format(
        "conda version '{}' has a local part: conda versions never carry "
        "+cuXX",
        c.version));
  if (c.package_name.empty()) refuse("the package name is empty");
}

std::string BuildConfig::build_environment() const {
  std::vector<std::string> t{package_type_name(type)};
  if (python) t.push_back(python->str());
  if (build_python) t.push_back(build_python->str());
  t.push_back(accelerator_token(accelerator));
  if (cxx_abi == abi::CxxAbi::cxx11 &&
      accelerator.kind != AcceleratorKind::rocm)
    t.push_back("cxx11-abi");
  if (variant) t.push_back(variant->name());
  if (os == "macos" && type != PackageType::wheel_macos) t.push_back("macos");
  if (arch != "x86_64") t.push_back(arch);
  if (debug) t.push_back("debug");
  std::string out;
  for (const auto& s : t) out += (out.empty() ? "" : " ") + s;
  return out;
}

namespace {

// The tokens of a BUILD_ENVIRONMENT string as overrides: only what the
// string says (no variant unless it names one, no debug unless "debug" or
// "release"). `where` prefixes the errors.
Overrides string_overrides(std::string_view text, const std::string& where) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  if (tokens.empty())
    refuse(
        fmt::format("{}: empty (expected '<type> [<python>] <accelerator> "
                    "[<devtoolset>|debug|release]')",
                    where));
  Overrides o;
  o.package_type = tokens[0];
  named(where, [&] { return parse_package_type(tokens[0]); });
  auto once = [&](std::optional<std::string>& slot, const std::string& tok,
                  const char* what) {
    if (slot)
      refuse(
          fmt::format("{}: two {} ('{}' and '{}')", where, what, *slot, tok));
    slot = tok;
  };
  std::optional<std::string> python, debug;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    if (tok == "debug" || tok == "release")
      once(debug, tok, "build modes");
    else if (tok == "linux" || tok == "macos")
      once(o.os, tok, "operating systems");
    else if (is_arch(tok))
      once(o.arch, tok, "architectures");
    else if (is_variant(tok))
      once(o.variant, tok, "libtorch variants");
    else if (is_devtoolset(tok))
      once(o.devtoolset, tok, "devtoolsets");
    else if (!python && !o.accelerator && looks_like_python(tok))
      once(python, tok, "pythons");
    else if (!o.accelerator)
      once(o.accelerator, tok, "accelerators");
    else
      refuse(fmt::format(
          "{}: unexpected '{}' (after the accelerator only a devtoolset, "
          "debug|release, a libtorch variant, an OS or an arch)",
          where, tok));
  }
  if (!o.accelerator)
    refuse(fmt::format("{}: no accelerator (cpu, cu124, 12.4, rocm6.1, xpu)",
                       where));
  if (debug) o.debug = *debug == "debug";
  bool libtorch = tokens[0] == "libtorch";
  (libtorch ? o.build_python : o.python) = python;
  return o;
}

// The old scripts' variables as overrides (all but the package type, which
// decides where DESIRED_PYTHON goes: `kind`), with the variable each
// restating field came from, for the messages that cite it.
struct EnvOverrides {
  Overrides o;
  // "DESIRED_CUDA 'cu126'", "GPU_ARCH_TYPE 'cpu-aarch64'": the variable and
  // the value behind the field.
  std::string python_src, accelerator_src, arch_src, devtoolset_src;
};

std::string source(const std::string& var, const std::string& value) {
  return fmt::format("{} '{}'", var, value);
}

EnvOverrides read_environment(const Getenv& getenv, PackageType kind) {
  EnvOverrides e;
  Overrides& o = e.o;
  std::string which;
  if (auto py = from(
          getenv,
          {"DESIRED_PYTHON", "MATRIX_DESIRED_PYTHON", "MATRIX_PYTHON_VERSION"},
          &which)) {
    named(which, [&] { return PythonVersion::parse(*py); });
    (kind == PackageType::libtorch ? o.build_python : o.python) = py;
    e.python_src = source(which, *py);
  }

  std::string cuda_var;
  auto cuda = from(getenv, {"DESIRED_CUDA", "MATRIX_DESIRED_CUDA"}, &cuda_var);
  if (cuda) {
    named(cuda_var, [&] { return parse_accelerator(*cuda); });
    o.accelerator = cuda;
    e.accelerator_src = source(cuda_var, *cuda);
  }
  if (auto gpu = from(getenv, {"GPU_ARCH_TYPE"})) {
    GpuArch g;
    if (cuda) {
      AcceleratorKind got = parse_accelerator(*cuda).kind;
      g = gpu_arch(*gpu, cuda);  // validates the value
      if (got != gpu_arch_kind(*gpu))
        refuse(fmt::format("{} '{}' contradicts GPU_ARCH_TYPE '{}'", cuda_var,
                           *cuda, *gpu));
    } else {
      g = gpu_arch(*gpu, from(getenv, {"GPU_ARCH_VERSION"}));
      o.accelerator = g.accelerator;
      named("GPU_ARCH_VERSION",
            [&] { return parse_accelerator(g.accelerator); });
      e.accelerator_src = source("GPU_ARCH_TYPE", *gpu);
      if (auto v = from(getenv, {"GPU_ARCH_VERSION"}))
        e.accelerator_src += " with " + source("GPU_ARCH_VERSION", *v);
    }
    if (g.arch) {
      o.arch = g.arch;
      e.arch_src = source("GPU_ARCH_TYPE", *gpu);
    }
    if (g.devtoolset) {
      o.devtoolset = g.devtoolset;
      e.devtoolset_src = source("GPU_ARCH_TYPE", *gpu);
    }
  }
  if (auto dt =
          from(getenv, {"DESIRED_DEVTOOLSET", "MATRIX_DESIRED_DEVTOOLSET"},
               &which)) {
    o.devtoolset = dt;
    e.devtoolset_src = source(which, *dt);
  }
  if (auto v = from(getenv, {"LIBTORCH_VARIANT"})) {
    named("LIBTORCH_VARIANT",
          [&] { return cppdist::LibtorchVariant::parse(*v); });
    o.variant = v;
  }
  if (auto v = from(getenv, {"LIBTORCH_CONFIG"})) {
    if (*v != "debug" && *v != "release")
      refuse(
          fmt::format("LIBTORCH_CONFIG: '{}' (accepted: debug, release)", *v));
    o.debug = *v == "debug";
  }
  if (auto v = from(getenv, {"TORCH_PACKAGE_NAME"})) o.package_name = v;
  if (auto v = from(getenv, {"PYTORCH_BUILD_VERSION"})) o.base_version = v;
  if (auto v = from(getenv, {"PYTORCH_BUILD_NUMBER"}))
    o.build_number = parse_build_number("PYTORCH_BUILD_NUMBER", *v);
  if (auto v = from(getenv, {"OVERRIDE_PACKAGE_VERSION"}))
    o.override_version = v;
  if (auto v = from(getenv, {"CUDNN_VERSION"})) o.cudnn_version = v;
  return e;
}

// The same accelerator: "cu124", "12.4" and "cuda12.4" agree; a patch
// level counts only when both name one.
bool same_accelerator(const Accelerator& a, const Accelerator& b) {
  return a.kind == b.kind && a.major == b.major && a.minor == b.minor &&
         (!a.patch || !b.patch || a.patch == b.patch);
}

// The C++ ABI a devtoolset value means, as assemble() reads it.
CxxAbi devtoolset_abi(const std::string& devtoolset, const Accelerator& a) {
  return devtoolset == "pre-cxx11" ? CxxAbi::pre_cxx11
                                   : abi_from_devtoolset(devtoolset, a);
}

}  // namespace

BuildConfig parse_build_environment(std::string_view text) {
  std::string where = fmt::format("BUILD_ENVIRONMENT '{}'", text);
  Overrides o = string_overrides(text, where);
  return named(where, [&] { return assemble(BuildConfig{}, o); });
}

BuildConfig from_build_environment(std::string_view text, const Getenv& getenv,
                                   std::string_view origin) {
  const std::string where = fmt::format("BUILD_ENVIRONMENT '{}'", text);
  Overrides o = string_overrides(text, where);
  const BuildConfig base =
      named(where, [&] { return assemble(BuildConfig{}, o); });
  const std::string named_string = fmt::format("{} '{}'", origin, text);
  // `src` is "VARIABLE 'value'".
  auto contradiction = [&](const std::string& src, const std::string& what,
                           const std::string& says) {
    refuse(
        fmt::format("{} contradicts {} ({} {}): unset the variable or "
                    "make them agree",
                    src, named_string, what, says));
  };

  std::string which;
  if (auto type =
          from(getenv, {"PACKAGE_TYPE", "MATRIX_PACKAGE_TYPE"}, &which)) {
    PackageType t = named(which, [&] { return parse_package_type(*type); });
    if (t != base.type)
      contradiction(source(which, *type), "package type",
                    package_type_name(base.type));
  } else if (auto pythonless = from(getenv, {"BUILD_PYTHONLESS"});
             pythonless && base.type != PackageType::libtorch) {
    contradiction(source("BUILD_PYTHONLESS", *pythonless), "package type",
                  package_type_name(base.type));
  }

  EnvOverrides e = read_environment(getenv, base.type);
  // What the string already says, the environment may only restate.
  if (e.o.python) {
    if (!base.python || PythonVersion::parse(*e.o.python) != *base.python)
      contradiction(e.python_src, "python",
                    base.python ? base.python->str() : "none");
  }
  if (e.o.build_python) {
    if (!base.build_python)
      o.build_python = e.o.build_python;
    else if (PythonVersion::parse(*e.o.build_python) != *base.build_python)
      contradiction(e.python_src, "build python", base.build_python->str());
  }
  if (e.o.accelerator &&
      !same_accelerator(parse_accelerator(*e.o.accelerator), base.accelerator))
    contradiction(e.accelerator_src, "accelerator", base.accelerator.tag());
  if (e.o.arch && *e.o.arch != base.arch)
    contradiction(e.arch_src, "architecture", base.arch);
  if (e.o.devtoolset &&
      devtoolset_abi(*e.o.devtoolset, base.accelerator) != base.cxx_abi)
    contradiction(e.devtoolset_src, "C++ ABI", cxx_abi_option(base.cxx_abi));
  // The job's LIBTORCH_VARIANT and LIBTORCH_CONFIG complete the string (the
  // old strings never carried them) unless it names its own.
  if (e.o.variant) {
    if (!o.variant)
      o.variant = e.o.variant;
    else if (!(cppdist::LibtorchVariant::parse(*e.o.variant) ==
               cppdist::LibtorchVariant::parse(*o.variant)))
      contradiction(source("LIBTORCH_VARIANT", *e.o.variant),
                    "libtorch variant", *o.variant);
  }
  if (e.o.debug) {
    if (!o.debug)
      o.debug = e.o.debug;
    else if (*e.o.debug != *o.debug)
      contradiction(source("LIBTORCH_CONFIG", *e.o.debug ? "debug" : "release"),
                    "build mode", *o.debug ? "debug" : "release");
  }
  // What no string carries comes from the environment.
  o.package_name = e.o.package_name;
  o.base_version = e.o.base_version;
  o.build_number = e.o.build_number;
  o.override_version = e.o.override_version;
  o.cudnn_version = e.o.cudnn_version;
  return assemble(BuildConfig{}, o);
}

BuildConfig from_environment(const Getenv& getenv) {
  if (auto env = from(getenv, {"BUILD_ENVIRONMENT"}))
    return from_build_environment(*env, getenv);
  std::string which;
  std::optional<std::string> type =
      from(getenv, {"PACKAGE_TYPE", "MATRIX_PACKAGE_TYPE"}, &which);
  if (type) {
    named(which, [&] { return parse_package_type(*type); });
  } else if (from(getenv, {"BUILD_PYTHONLESS"})) {
    type = "libtorch";
  } else {
    refuse(
        "PACKAGE_TYPE is not set (manywheel, conda, libtorch, wheel), nor "
        "BUILD_PYTHONLESS or BUILD_ENVIRONMENT");
  }
  EnvOverrides e = read_environment(getenv, parse_package_type(*type));
  e.o.package_type = type;
  if (!e.o.accelerator)
    refuse(
        "DESIRED_CUDA is not set (cpu, cu124, 12.4, rocm6.1, xpu), nor "
        "GPU_ARCH_TYPE");
  return assemble(BuildConfig{}, e.o);
}

BuildConfig apply_overrides(BuildConfig config, const ConfigOverrides& o) {
  Overrides all;
  static_cast<ConfigOverrides&>(all) = o;
  return assemble(std::move(config), all);
}

}  // namespace libpkg::config
