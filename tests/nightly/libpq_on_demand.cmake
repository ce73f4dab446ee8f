# SPDX-License-Identifier: BSD-3-Clause
# libpq is loaded on demand (libpkg/src/nightly/libpq_loader.hpp): no libpkg
# program NEEDS it (readelf and LIEF), start-up does not map it (LD_DEBUG),
# and without a usable libpq.so.5 (hidden in a private mount namespace) the
# programs start and the PostgreSQL store fails with one line, exit 2. The
# store itself on a real server: nightly_stats_postgresql.
libpkg_add_script_test(nightly_libpq_on_demand libpq_on_demand.py LABELS integration TIMEOUT 300)
set(LIBPQ_ON_DEMAND_PROGRAMS
  "LIBPKG_PROGRAMS=$<TARGET_FILE:pkgtool>:$<TARGET_FILE:check_binary>:$<TARGET_FILE:manywheel>:$<TARGET_FILE:conda_driver>:$<TARGET_FILE:libtorch_driver>:$<TARGET_FILE:wheel_macos>")
if(TARGET _libpkg)
  list(APPEND LIBPQ_ON_DEMAND_PROGRAMS "LIBPKG_PYTHON_MODULE=$<TARGET_FILE:_libpkg>")
elseif(NOT LIBPKG_PYTHON_BINDINGS)
  list(APPEND LIBPQ_ON_DEMAND_PROGRAMS "LIBPKG_PYTHON_BINDINGS=OFF")
endif()
if(TARGET lief_dump)
  list(APPEND LIBPQ_ON_DEMAND_PROGRAMS "LIEF_DUMP=$<TARGET_FILE:lief_dump>")
endif()
set_property(TEST nightly_libpq_on_demand APPEND PROPERTY ENVIRONMENT ${LIBPQ_ON_DEMAND_PROGRAMS})
