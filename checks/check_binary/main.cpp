// SPDX-License-Identifier: BSD-3-Clause
// check_binary: one smoke test for every package type (docs/check.md).
// Everything is in the library (libpkg/check) and the shared command line
// (frontends/common/check_binary_cli.hpp); this is the entry point.
#include <string>
#include <vector>

#include "check_binary_cli.hpp"

int main(int argc, char** argv) {
  return check_binary::main(std::vector<std::string>(argv + 1, argv + argc),
                            "check_binary");
}
