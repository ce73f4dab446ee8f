# SPDX-License-Identifier: BSD-3-Clause
# Code signatures: the library on lld-linked files (gtest) and the CLI with
# the independent verifier tests/tools/macho_cs_verify.py (script), and
# signing on `macho edit` (edit_sign.sh).
libpkg_add_gtest(macho_codesign_test codesign_test.cpp)
libpkg_add_script_test(macho_codesign_cli codesign_cli.sh)
libpkg_add_script_test(macho_edit_sign edit_sign.sh)
# Peak RSS of re-signing on edit a 210 MB signed dylib, thin and fat.
# Peak-RSS bounds: label slow keeps them out of the sanitizer pass, whose
# shadow memory and quarantine would break any RSS bound (as writer_peak_rss).
libpkg_add_script_test(macho_edit_sign_large edit_sign_large.sh LABELS integration slow)
