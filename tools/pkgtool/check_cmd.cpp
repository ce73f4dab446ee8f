// pkgtool check: the check_binary command (checks/check_binary/cli.hpp).
#include "cli.hpp"
#include "commands.hpp"

namespace pkgtool {

int run_check(const std::vector<std::string>& args) {
  return check_binary::main(args, "pkgtool check");
}

}  // namespace pkgtool
