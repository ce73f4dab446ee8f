# SPDX-License-Identifier: BSD-3-Clause
# The stats store: document mapping and SQLite transactions (gtest), and
# `pkgtool stats` cross-checked with Python's sqlite3 (two writers at once).
libpkg_add_gtest(nightly_stats_test ${CMAKE_CURRENT_LIST_DIR}/stats_store_test.cpp)
libpkg_add_script_test(nightly_stats_cli stats_cli.py LABELS integration TIMEOUT 300)
# Configurations told apart only by a variant field (libtorch variant, ABI):
# distinct rows in the store and the report; an old store upgraded.
libpkg_add_script_test(nightly_stats_variant stats_variant_cli.py LABELS integration TIMEOUT 300)
