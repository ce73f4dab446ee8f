# SPDX-License-Identifier: BSD-3-Clause
# Zip reader / safe extraction / `pkgtool zip` tests: gtests over archives
# built in memory (reader_zip_builder.hpp), and integration scripts that
# cross-check against Python's zipfile, Info-ZIP zip/unzip and bsdtar.
find_package(ZLIB REQUIRED)

libpkg_add_gtest(reader_test reader_test.cpp reader_regression_test.cpp)
target_link_libraries(reader_test PRIVATE ZLIB::ZLIB)
libpkg_add_gtest(extract_test extract_test.cpp)
target_link_libraries(extract_test PRIVATE ZLIB::ZLIB)
# open_member: lazy filling in any order, restarts, errors naming the member
libpkg_add_gtest(member_view_test member_view_test.cpp)
target_link_libraries(member_view_test PRIVATE ZLIB::ZLIB)

foreach(t crosscheck hostile)
  libpkg_add_script_test(zipcli_${t} zipcli_${t}.sh
    LABELS integration TIMEOUT 300)
endforeach()
libpkg_add_script_test(zipcli_big_member zipcli_big_member.sh
  LABELS integration slow TIMEOUT 240)
