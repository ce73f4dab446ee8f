// SPDX-License-Identifier: BSD-3-Clause
#include "workflow_recipes.hpp"

#include "libpkg/base/error.hpp"
#include "libpkg/config/cuda_table.hpp"

namespace libpkg::nightly {

using nlohmann::ordered_json;
namespace cfg = config;

namespace {

// The tag of PyTorch's builder images for an accelerator: cpu, cuda12.4,
// rocm6.1, xpu (builder-scripts.md §6.3: manylinux-cpu, manylinux-cudaXY).
std::string image_tag(const cfg::Accelerator& a) {
  switch (a.kind) {
    case cfg::AcceleratorKind::cuda:
      return "cuda" + a.version();
    case cfg::AcceleratorKind::rocm:
      return "rocm" + a.version();
    case cfg::AcceleratorKind::xpu:
      return "xpu";
    case cfg::AcceleratorKind::cpu:
      break;
  }
  return "cpu";
}

// GitHub-hosted runners: building needs no GPU, so every Linux job runs on
// a plain runner of its architecture; macOS by architecture.
std::string runner_of(const cfg::BuildConfig& c) {
  if (c.os == "macos") return c.arch == "x86_64" ? "macos-13" : "macos-14";
  return c.arch == "aarch64" ? "ubuntu-22.04-arm" : "ubuntu-22.04";
}

std::string image_of(const cfg::BuildConfig& c) {
  std::string tag = image_tag(c.accelerator);
  switch (recipe_of(c)) {
    case Recipe::manywheel:
      if (c.arch == "aarch64")
        return c.accelerator.kind == cfg::AcceleratorKind::cpu
                   ? "pytorch/manylinux2_28_aarch64-builder:cpu-aarch64"
                   : "pytorch/manylinuxaarch64-builder:" + tag;
      return "pytorch/manylinux2_28-builder:" + tag;
    case Recipe::conda:
      return "pytorch/conda-builder:" + tag;
    case Recipe::libtorch:
      // cxx11 needs a toolchain that honours _GLIBCXX_USE_CXX11_ABI
      // (devtoolset7 did not: pytorch#17492), hence its own image.
      return c.cxx_abi == abi::CxxAbi::cxx11
                 ? "pytorch/libtorch-cxx11-builder:" + tag
                 : "pytorch/manylinux-builder:" + tag;
    case Recipe::wheel_macos:
    case Recipe::libtorch_macos:
      break;
  }
  return tools_image();
}

// The driver's JSON summary goes through a temporary: a driver that stops
// on bad input (exit 2) prints no JSON, and an empty summary/*.json would
// make the final job's `stats ingest` refuse the whole batch.
std::string with_summary(const std::string& driver_call) {
  return "mkdir -p summary\n"
         "status=0\n" +
         driver_call +
         " --json > \"$RUNNER_TEMP/summary.json\" || status=$?\n"
         "if [ -s \"$RUNNER_TEMP/summary.json\" ]; then\n"
         "  mv \"$RUNNER_TEMP/summary.json\" "
         "\"summary/$NIGHTLY_BUILD_NAME.json\"\n"
         "fi\n"
         "exit \"$status\"\n";
}

ordered_json step(const std::string& name, const std::string& run) {
  return {{"name", name}, {"run", run}};
}

}  // namespace

const char* tools_image() { return "pytorch/manylinux2_28-builder:cpu"; }

Recipe recipe_of(const cfg::BuildConfig& c) {
  switch (c.type) {
    case cfg::PackageType::manywheel:
      return Recipe::manywheel;
    case cfg::PackageType::conda:
      return Recipe::conda;
    case cfg::PackageType::wheel_macos:
      return Recipe::wheel_macos;
    case cfg::PackageType::libtorch:
      return c.os == "macos" ? Recipe::libtorch_macos : Recipe::libtorch;
  }
  throw Error(Errc::unsupported, "workflow", "unknown package type");
}

std::string job_id(Recipe r) {
  switch (r) {
    case Recipe::manywheel:
      return "manywheel";
    case Recipe::conda:
      return "conda";
    case Recipe::libtorch:
      return "libtorch";
    case Recipe::wheel_macos:
      return "wheel-macos";
    case Recipe::libtorch_macos:
      return "libtorch-macos";
  }
  return "build";
}

bool built_on_macos(Recipe r) {
  return r == Recipe::wheel_macos || r == Recipe::libtorch_macos;
}

void add_recipe_fields(const cfg::BuildConfig& c, ordered_json& e) {
  Recipe r = recipe_of(c);
  if (built_on_macos(r)) {
    // Built on macOS, packaged on Linux in the tools image.
    e["build_runs_on"] = runner_of(c);
    e["runs_on"] = "ubuntu-22.04";
    e["image"] = tools_image();
  } else {
    e["runs_on"] = runner_of(c);
    e["image"] = image_of(c);
  }
  switch (r) {
    case Recipe::manywheel:
      // The manylinux images' interpreters: /opt/python/cp311-cp311.
      e["python_dir"] = c.python->python_tag() + "-" + c.python->abi_tag();
      break;
    case Recipe::conda:
      break;
    case Recipe::libtorch: {
      e["cxx11_abi"] = c.cxx_abi == abi::CxxAbi::cxx11 ? "1" : "0";
      // Static variants really built static (pain point §7.2: the old
      // -DTORCH_STATIC=1 never reached the build).
      bool shared = !c.variant || c.variant->name().rfind("shared", 0) == 0;
      e["shared_libs"] = shared ? "ON" : "OFF";
      std::string arch_list;
      if (c.accelerator.kind == cfg::AcceleratorKind::cuda) {
        try {
          arch_list = cfg::cuda_table(c.accelerator).arch_list(c.arch, true);
        } catch (const Error&) {
          // No table for it: PyTorch's CMake picks the toolkit's default.
        }
      }
      e["cuda_arch_list"] = arch_list;
      break;
    }
    case Recipe::wheel_macos:
      // The driver's default floor (arm64 never below 11.0): the build
      // must target what the tag will say.
      e["macosx_deployment_target"] = c.arch == "arm64" ? "11.0" : "10.15";
      break;
    case Recipe::libtorch_macos:
      e["macosx_deployment_target"] = c.arch == "arm64" ? "11.0" : "10.15";
      e["macos_arch"] = c.arch;
      break;
  }
}

ordered_json build_steps(Recipe r) {
  ordered_json steps = ordered_json::array();
  switch (r) {
    case Recipe::manywheel:
      // The driver runs the build itself (with the CUDA table's
      // TORCH_CUDA_ARCH_LIST and build settings); only the interpreter of
      // the configuration's Python is put first on PATH.
      steps.push_back(step("python",
                           "echo \"/opt/python/$NIGHTLY_PYTHON_DIR/bin\" >> "
                           "\"$GITHUB_PATH\"\n"));
      break;
    case Recipe::conda:
      // What the recipe's build.sh installed into $PREFIX, staged as its
      // own prefix (lib/pythonX.Y/site-packages/torch): the driver packs a
      // whole prefix, so the interpreter's environment stays out of it.
      steps.push_back(step(
          "build",
          "conda create -y -q -p \"$RUNNER_TEMP/python\" "
          "\"python=$NIGHTLY_PYTHON\"\n"
          "\"$RUNNER_TEMP/python/bin/python\" -m pip install -r "
          "pytorch/requirements.txt\n"
          "\"$RUNNER_TEMP/python/bin/python\" -m pip install --no-deps "
          "--no-build-isolation --prefix \"$GITHUB_WORKSPACE/conda-prefix\" "
          "./pytorch\n"));
      break;
    case Recipe::libtorch:
      // libtorch needs no Python: CMake builds and installs the C++ tree
      // (lib/ include/ share/ bin/) the driver takes with --tree.
      steps.push_back(step(
          "build",
          "if [ -n \"$NIGHTLY_CUDA_ARCH_LIST\" ]; then\n"
          "  export TORCH_CUDA_ARCH_LIST=\"$NIGHTLY_CUDA_ARCH_LIST\"\n"
          "fi\n"
          "cmake -S pytorch -B \"$RUNNER_TEMP/build\" -G Ninja "
          "-DCMAKE_BUILD_TYPE=Release -DBUILD_PYTHON=OFF -DBUILD_TEST=OFF "
          "-DUSE_CUSPARSELT=OFF -DBUILD_SHARED_LIBS=\"$NIGHTLY_SHARED_LIBS\" "
          "-DGLIBCXX_USE_CXX11_ABI=\"$NIGHTLY_CXX11_ABI\" "
          "-DCMAKE_INSTALL_PREFIX=\"$GITHUB_WORKSPACE/libtorch-install\"\n"
          "cmake --build \"$RUNNER_TEMP/build\"\n"
          "cmake --install \"$RUNNER_TEMP/build\"\n"));
      break;
    case Recipe::wheel_macos:
      // On the macOS runner (libpkg's tools run on Linux): the wheel as
      // setup.py leaves it, packaged by wheel_macos in the next job.
      steps.push_back(
          step("build",
               "cd pytorch\n"
               "python -m pip install -r requirements.txt\n"
               "python setup.py bdist_wheel -d \"$GITHUB_WORKSPACE/built\"\n"));
      break;
    case Recipe::libtorch_macos:
      // The C++ tree, carried to Linux as a tar (artifacts lose symlinks).
      steps.push_back(
          step("build",
               "python -m pip install -r pytorch/requirements.txt\n"
               "cmake -S pytorch -B \"$RUNNER_TEMP/build\" -G Ninja "
               "-DCMAKE_BUILD_TYPE=Release -DBUILD_PYTHON=OFF -DBUILD_TEST=OFF "
               "-DCMAKE_OSX_ARCHITECTURES=\"$NIGHTLY_MACOS_ARCH\" "
               "-DCMAKE_INSTALL_PREFIX=\"$GITHUB_WORKSPACE/libtorch-install\"\n"
               "cmake --build \"$RUNNER_TEMP/build\"\n"
               "cmake --install \"$RUNNER_TEMP/build\"\n"
               "mkdir -p built\n"
               "tar -C libtorch-install -cf built/libtorch-install.tar .\n"));
      break;
  }
  return steps;
}

std::string package_script(Recipe r) {
  switch (r) {
    case Recipe::manywheel:
      return with_summary(
          "\"$LIBPKG_BIN/manywheel\" --build-env \"$BUILD_ENVIRONMENT\" "
          "--version "
          "\"$PYTORCH_BUILD_VERSION\" "
          "--build-command \"python -m pip install -r requirements.txt && "
          "python setup.py bdist_wheel\" --source pytorch -o dist");
    case Recipe::conda:
      return with_summary(
          "\"$LIBPKG_BIN/conda\" --build-env \"$BUILD_ENVIRONMENT\" --version "
          "\"$PYTORCH_BUILD_VERSION\" --prefix "
          "conda-prefix -o dist");
    case Recipe::libtorch:
      return with_summary(
          "\"$LIBPKG_BIN/libtorch\" --build-env \"$BUILD_ENVIRONMENT\" "
          "--version "
          "\"$PYTORCH_BUILD_VERSION\" --tree "
          "libtorch-install --build-hash \"$SOURCE_SHA\" -o dist");
    case Recipe::wheel_macos:
      return with_summary(
          "\"$LIBPKG_BIN/wheel_macos\" --build-env \"$BUILD_ENVIRONMENT\" "
          "--version "
          "\"$PYTORCH_BUILD_VERSION\" "
          "--wheel built/*.whl -o dist");
    case Recipe::libtorch_macos:
      // No driver: the libtorch driver bundles ELF trees only. The zip is
      // packed as the old build_wheel.sh named it and checked; its
      // libpkg-check/1 report travels with the package (it is not a
      // driver summary, so it stays out of summary/). Mach-O does not load
      // on Linux: the runtime checks (link, import) are left out.
      return "mkdir -p libtorch-install dist\n"
             "tar -C libtorch-install -xf built/libtorch-install.tar\n"
             "\"$LIBPKG_BIN/pkgtool\" libtorch pack libtorch-install --macos "
             "--arch \"$NIGHTLY_MACOS_ARCH\" --version "
             "\"$PYTORCH_BUILD_VERSION\" "
             "--build-hash \"$SOURCE_SHA\" -o dist\n"
             "\"$LIBPKG_BIN/check_binary\" "
             "\"dist/"
             "libtorch-macos-$NIGHTLY_MACOS_ARCH-$PYTORCH_BUILD_VERSION.zip\" "
             "--no-runtime --json > \"dist/check-$NIGHTLY_BUILD_NAME.json\"\n";
  }
  return "";
}

}  // namespace libpkg::nightly
