// SPDX-License-Identifier: BSD-3-Clause
// The conda driver's metadata: configuration defaults, a JSON file, flags,
// and the requirement lines conda/build_pytorch.sh injected into the recipe.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/cuda/toolkit.hpp"
#include "libpkg/driver/conda.hpp"

namespace libpkg::driver {
namespace {

// The package a match spec names: "pytorch-cuda >=12.4,<12.5" →
// "pytorch-cuda", "python>=3.11" → "python".
std::string spec_name(const std::string& spec) {
  std::size_t end = spec.find_first_of(" <>=!~[");
  return spec.substr(0, end);
}

bool names_package(const std::vector<std::string>& specs,
                   const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const std::string& s) {
    return spec_name(s) == name;
  });
}

void append_unique(std::vector<std::string>& to,
                   const std::vector<std::string>& from) {
  for (const std::string& s : from)
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
}

// Keys present in the metadata file, so a field given as 0 or "" there is
// told apart from one left out.
nlohmann::json read_keys(const std::filesystem::path& file) {
  std::string text = read_regular_file(file);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json::object();  // load_metadata already reported it
  }
}

}  // namespace

std::string conda_package_name(const config::BuildConfig& config) {
  return config.package_name == "torch" ? "pytorch" : config.package_name;
}

std::optional<ToolkitCudnn> toolkit_cudnn(const CondaDriverOptions& options) {
  const config::BuildConfig& c = options.common.config;
  if (c.accelerator.kind != config::AcceleratorKind::cuda) return std::nullopt;
  std::vector<std::filesystem::path> roots = options.common.cuda_roots;
  if (roots.empty()) roots.push_back("/usr/local/cuda");
  for (const auto& root : roots) {
    std::optional<cuda::Toolkit> t = cuda::probe_toolkit(root);
    if (!t || !t->cudnn || t->major != c.accelerator.major ||
        t->minor != c.accelerator.minor)
      continue;
    const std::string& v = *t->cudnn;
    auto first = v.find('.');
    auto second = first == std::string::npos ? v.npos : v.find('.', first + 1);
    return ToolkitCudnn{v.substr(0, second), root};
  }
  return std::nullopt;
}

conda::CondaMetadata resolve_conda_metadata(const CondaDriverOptions& options) {
  const config::BuildConfig& config = options.common.config;
  if (config.type != config::PackageType::conda)
    throw Error(Errc::usage, "configuration",
                fmt::format("the conda driver needs a conda configuration, "
                            "not {}",
                            config::package_type_name(config.type)));
  conda::CondaMetadata meta;
  nlohmann::json keys = nlohmann::json::object();
  if (options.metadata_file) {
    meta = conda::load_metadata(*options.metadata_file);
    keys = read_keys(*options.metadata_file);
  }
  auto has = [&keys](const char* key) {
    return keys.is_object() && keys.contains(key);
  };
  if (!has("name")) meta.name = conda_package_name(config);
  if (!has("version")) meta.version = config.version;
  if (!has("build_number"))
    meta.build_number = static_cast<u64>(config.build_number);

  const conda::CondaMetadata& cli = options.metadata;
  conda::overlay_text_fields(meta, cli);
  if (cli.build_number != 0) meta.build_number = cli.build_number;
  append_unique(meta.depends, cli.depends);
  append_unique(meta.constrains, cli.constrains);
  // The build string follows the configuration unless given, ending in
  // the package's build number; a CUDA build without a cuDNN version fails
  // here.
  if (meta.build.empty()) {
    config::BuildConfig numbered = config;
    numbered.build_number = static_cast<int>(meta.build_number);
    if (!numbered.cudnn_version)
      if (auto from_toolkit = toolkit_cudnn(options))
        numbered.cudnn_version = from_toolkit->version;
    meta.build = config::conda_build_string(numbered);
  }

  if (options.inject_depends && config.python) {
    // conda-build pins `python` in run to the host's minor version.
    const config::PythonVersion& py = *config.python;
    std::vector<std::string> injected;
    injected.push_back(fmt::format("python >={}.{},<{}.{}.0a0", py.major,
                                   py.minor, py.major, py.minor + 1));
    if (py.free_threaded)
      injected.push_back(fmt::format("python_abi {}.{}.* *_{}t", py.major,
                                     py.minor, py.python_tag()));
    // The recipe's CONDA_CUDATOOLKIT_CONSTRAINT (a run requirement); the
    // MAGMA_PACKAGE line went into host requirements (magma is linked
    // statically), so it is not a dependency of the package.
    std::string cuda = config::conda_cuda_constraint(config);
    if (!cuda.empty()) injected.push_back(cuda);
    for (const std::string& spec : injected)
      if (!names_package(meta.depends, spec_name(spec)))
        meta.depends.push_back(spec);
  }
  return meta;
}

}  // namespace libpkg::driver
