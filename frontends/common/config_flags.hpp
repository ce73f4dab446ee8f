// SPDX-License-Identifier: BSD-3-Clause
// The build-configuration override flags (--python, --cuda, --abi, ...),
// shared by `pkgtool config` and the drivers so both spell them alike.
#pragma once

#include <CLI/CLI.hpp>

#include "cli_parse.hpp"
#include "libpkg/config/build.hpp"

namespace pkgtool {

// Registers --python --cuda --abi --variant --arch --build-version
// --build-number --version --cudnn --package-name; with `type_and_os`
// also --package-type and --os (the drivers fix those themselves).
inline void add_config_override_flags(CLI::App& app,
                                      libpkg::config::ConfigOverrides& o,
                                      bool type_and_os) {
  if (type_and_os) {
    optional_option(app, "--package-type", o.package_type,
                    "manywheel|conda|libtorch|wheel");
    optional_option(app, "--os", o.os, "linux or macos");
  }
  optional_option(app, "--python", o.python, "3.11, 3.13t, 3.7m, cp311-cp311");
  optional_option(app, "--cuda", o.accelerator,
                  "cpu, cu124, 12.4, rocm6.1, xpu");
  optional_option(app, "--abi", o.abi, "cxx11 or pre-cxx11");
  optional_option(app, "--variant", o.variant,
                  "libtorch: {shared,static}-{with,without}-deps");
  optional_option(app, "--arch", o.arch, "x86_64, aarch64, arm64, s390x");
  optional_option(app, "--build-version", o.base_version,
                  "PYTORCH_BUILD_VERSION");
  optional_option(app, "--build-number", o.build_number,
                  "PYTORCH_BUILD_NUMBER");
  optional_option(app, "--version", o.override_version,
                  "OVERRIDE_PACKAGE_VERSION");
  optional_option(app, "--cudnn", o.cudnn_version,
                  "CUDNN_VERSION (conda build string)");
  optional_option(app, "--package-name", o.package_name, "TORCH_PACKAGE_NAME");
}

}  // namespace pkgtool
