# SPDX-License-Identifier: BSD-3-Clause
# Code signatures: the library on lld-linked files (gtest) and the CLI with
# the independent verifier tests/tools/macho_cs_verify.py (script).
libpkg_add_gtest(macho_codesign_test codesign_test.cpp)
libpkg_add_script_test(macho_codesign_cli codesign_cli.sh)
# The gtest runs the Python verifier too (paths compiled in: the gtest
# discovery's ENVIRONMENT carries only the first entry of LIBPKG_TEST_ENV).
target_compile_definitions(macho_codesign_test PRIVATE
  LIBPKG_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LIBPKG_PYTHON="${LIBPKG_PYTHON}")
