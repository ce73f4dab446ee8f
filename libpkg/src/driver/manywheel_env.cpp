// SPDX-License-Identifier: BSD-3-Clause
// The old scripts' environment switches for manywheel, in the library so
// that pkgtool's driver and Python's libpkg.driver.manywheel(env=) agree.
#include <algorithm>

#include "libpkg/driver/manywheel.hpp"

namespace libpkg::driver {

void apply_environment_switches(ManywheelOptions& options,
                                const config::Getenv& getenv) {
  auto value = [&](const char* name) { return getenv(name).value_or(""); };
  if (!value("PYTORCH_EXTRA_INSTALL_REQUIREMENTS").empty())
    options.pypi_cuda = true;
  if (!value("FORCE_RPATH").empty()) options.force_rpath = true;
  auto& enable = options.enable;
  if (value("USE_CUSPARSELT") == "1" &&
      options.common.config.accelerator.kind == config::AcceleratorKind::cuda &&
      std::find(enable.begin(), enable.end(), "cusparselt") == enable.end())
    enable.push_back("cusparselt");
}

}  // namespace libpkg::driver
