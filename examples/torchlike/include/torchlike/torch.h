// SPDX-License-Identifier: BSD-3-Clause
// torch:: front end of torchlike (libtorchlike.so): the op registry.
#pragma once

#include <list>
#include <string>

#include "torchlike/aten.h"
#include "torchlike/c10.h"
#include "torchlike/ops.h"

namespace torch {

std::string version();
bool compiled_with_cxx11_abi();

// Qualified names of every registered op ("at::ops::op_000", ...), sorted.
std::list<std::string> registered_ops();

// Calls the op named QUALNAME. Throws std::out_of_range for an unknown name.
std::string call_op(const std::string& qualname, const std::string& self,
                    const std::list<std::string>& args);

std::string describe(const at::Tensor& t);

}  // namespace torch
