// SPDX-License-Identifier: BSD-3-Clause
// Artifact names of a build configuration (see names.hpp). Libtorch zip
// names are cppdist's; wheel names go through wheel::WheelName so they get
// the spec's escaping.
#include "libpkg/config/names.hpp"

#include <fmt/format.h>

#include "libpkg/base/error.hpp"

namespace libpkg::config {
namespace {

void require(const BuildConfig& c, PackageType type, const char* what) {
  if (c.type != type)
    throw Error(
        Errc::usage, "",
        fmt::format("{} names are for {} builds, not {}", what,
                    package_type_name(type), package_type_name(c.type)));
}

bool is_cuda(const BuildConfig& c) {
  return c.accelerator.kind == AcceleratorKind::cuda;
}

}  // namespace

std::string wheel_platform_tag(const BuildConfig& c) {
  if (c.os == "macos")
    return c.arch == "arm64" ? "macosx_11_0_arm64" : "macosx_10_9_x86_64";
  return "linux_" + c.arch;
}

wheel::WheelName wheel_name(const BuildConfig& c) {
  if (c.type != PackageType::manywheel && c.type != PackageType::wheel_macos)
    throw Error(Errc::usage, "",
                fmt::format("wheel names are for manywheel and wheel builds, "
                            "not {}",
                            package_type_name(c.type)));
  wheel::WheelName n;
  n.distribution = wheel::escape_distribution(c.package_name);
  n.version = wheel::escape_version(c.version);
  n.python_tags = {c.python->python_tag()};
  n.abi_tags = {c.type == PackageType::wheel_macos ? "none"
                                                   : c.python->abi_tag()};
  n.platform_tags = {wheel_platform_tag(c)};
  return n;
}

std::string conda_build_string(const BuildConfig& c) {
  require(c, PackageType::conda, "conda");
  std::string py = fmt::format("py{}", c.python->dotted());
  if (c.os == "macos") return fmt::format("{}_{}", py, c.build_number);
  if (!is_cuda(c)) return fmt::format("{}_cpu_{}", py, c.build_number);
  if (!c.cudnn_version)
    throw Error(Errc::usage, "",
                fmt::format("the conda build string of a CUDA build needs the "
                            "cuDNN version (CUDNN_VERSION or --cudnn), e.g. "
                            "py{}_cuda{}_cudnn9.1_0",
                            c.python->dotted(), c.accelerator.version()));
  return fmt::format("{}_cuda{}_cudnn{}_{}", py, c.accelerator.version(),
                     *c.cudnn_version, c.build_number);
}

std::string conda_file_name(const BuildConfig& c, std::string_view extension) {
  if (extension != ".tar.bz2" && extension != ".conda")
    throw Error(Errc::usage, "",
                fmt::format("conda extension '{}' (accepted: .tar.bz2, "
                            ".conda)",
                            extension));
  return fmt::format("pytorch-{}-{}{}", c.version, conda_build_string(c),
                     extension);
}

std::string conda_cuda_constraint(const BuildConfig& c) {
  require(c, PackageType::conda, "conda");
  if (!is_cuda(c)) return "";
  const Accelerator& a = c.accelerator;
  return fmt::format("pytorch-cuda >={}.{},<{}.{}", a.major, a.minor, a.major,
                     a.minor + 1);
}

std::string conda_magma_package(const BuildConfig& c) {
  require(c, PackageType::conda, "conda");
  if (!is_cuda(c)) return "";
  return fmt::format("magma-cuda{}{}", c.accelerator.major,
                     c.accelerator.minor);
}

cppdist::LibtorchName libtorch_name(const BuildConfig& c) {
  require(c, PackageType::libtorch, "libtorch");
  cppdist::LibtorchName n;
  n.version = c.version;
  if (c.os == "macos") {
    n.platform = cppdist::DistPlatform::macos;
    n.macos_arch = c.arch;
  } else {
    n.variant = c.variant.value_or(cppdist::LibtorchVariant{});
    n.cxx11_abi = c.cxx_abi == abi::CxxAbi::cxx11;
  }
  return n;
}

std::vector<std::pair<std::string, std::string>> artifact_names(
    const BuildConfig& c, std::optional<u32> crc) {
  std::vector<std::pair<std::string, std::string>> out;
  switch (c.type) {
    case PackageType::manywheel:
    case PackageType::wheel_macos: {
      std::string whl = wheel_name(c).format();
      out.emplace_back("wheel", whl);
      // build_common.sh's debug split (strip + objcopy of libtorch_cpu.so)
      // is an ELF step: the macOS wheel never had a debug zip.
      if (crc && c.os == "linux")
        out.emplace_back("debug-wheel",
                         cppdist::debug_wheel_zip_name(whl, *crc));
      break;
    }
    case PackageType::conda:
      out.emplace_back("conda", conda_file_name(c, ".tar.bz2"));
      out.emplace_back("conda-v2", conda_file_name(c, ".conda"));
      break;
    case PackageType::libtorch: {
      cppdist::LibtorchName n = libtorch_name(c);
      out.emplace_back("libtorch", cppdist::zip_name(n));
      for (auto& latest : cppdist::latest_names(n))
        out.emplace_back("libtorch-latest", latest);
      if (crc && c.os == "linux")
        out.emplace_back("debug-libtorch", cppdist::debug_zip_name(n, *crc));
      break;
    }
  }
  return out;
}

std::string package_dir_suffix(const BuildConfig& c) {
  const Accelerator& a = c.accelerator;
  if (a.kind == AcceleratorKind::cuda)
    return fmt::format("{}{}", a.major, a.minor);
  return a.tag();
}

}  // namespace libpkg::config
