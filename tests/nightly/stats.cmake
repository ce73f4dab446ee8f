# SPDX-License-Identifier: BSD-3-Clause
# The stats store: document mapping and SQLite transactions (gtest), and
# `pkgtool stats` cross-checked with Python's sqlite3 (two writers at once).
libpkg_add_gtest(nightly_stats_test ${CMAKE_CURRENT_LIST_DIR}/stats_store_test.cpp)
libpkg_add_script_test(nightly_stats_cli stats_cli.py LABELS integration TIMEOUT 300)
