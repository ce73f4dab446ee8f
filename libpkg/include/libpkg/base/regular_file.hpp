// SPDX-License-Identifier: BSD-3-Clause
// Kept for includers of the old name: open_regular_file and file_kind_name
// now live with the rest of the descriptor handling in fd.hpp.
#pragma once

#include "libpkg/base/fd.hpp"
