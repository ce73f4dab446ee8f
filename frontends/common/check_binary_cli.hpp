// SPDX-License-Identifier: BSD-3-Clause
// The check_binary command line, shared by `check_binary` and
// `pkgtool check`: flags and the old environment variables → one
// libpkg::check::run → the report; exit 0 (all pass), 1 (a check failed),
// 2 (bad input or usage).
#pragma once

#include <string>
#include <vector>

namespace check_binary {

int main(const std::vector<std::string>& args, const std::string& program);

}  // namespace check_binary
