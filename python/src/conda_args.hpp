// SPDX-License-Identifier: BSD-3-Clause
// Conversions libpkg.conda and libpkg.driver.conda share.
#pragma once

#include <string>

#include "libpkg/conda/package.hpp"

namespace libpkg_py {

// 'conda' / '.conda' / 'tar.bz2' / '.tar.bz2'; Errc::usage otherwise.
libpkg::conda::PackageFormat parse_conda_format(const std::string& text);

}  // namespace libpkg_py
