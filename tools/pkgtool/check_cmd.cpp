// SPDX-License-Identifier: BSD-3-Clause
// pkgtool check: the check_binary command
// (frontends/common/check_binary_cli.hpp).
#include "check_binary_cli.hpp"
#include "commands.hpp"

namespace pkgtool {

int run_check(const std::vector<std::string>& args) {
  return check_binary::main(args, "pkgtool check");
}

}  // namespace pkgtool
