// SPDX-License-Identifier: BSD-3-Clause
// The ThreadPool declaration alone, for the options structs that carry a
// shared pool (`ThreadPool* pool`) without pulling in <thread> and <future>.
#pragma once

namespace libpkg {

class ThreadPool;

}  // namespace libpkg
