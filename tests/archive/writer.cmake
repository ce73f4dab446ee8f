# SPDX-License-Identifier: BSD-3-Clause
# Zip writer tests: gtests (unit) that read archives back with ZipReader and
# zlib, and integration scripts that cross-check archives written by
# writer_pack_tool with Python's zipfile, `unzip -t` and `bsdtar -tf`.
find_package(ZLIB REQUIRED)

add_executable(writer_pack_tool writer_pack_tool.cpp)
target_link_libraries(writer_pack_tool PRIVATE libpkg::libpkg fmt::fmt)
target_compile_options(writer_pack_tool PRIVATE ${LIBPKG_WARNINGS})

libpkg_add_gtest(writer_test writer_test.cpp writer_fixtures.cpp incompressible_test.cpp
  sha256_stream_test.cpp fast_deflate_test.cpp)
target_link_libraries(writer_test PRIVATE ZLIB::ZLIB)

# The block scanner make_non_final() runs, cross-checked against zlib.
libpkg_add_gtest(deflate_scan_test deflate_scan_test.cpp writer_fixtures.cpp)
target_link_libraries(deflate_scan_test PRIVATE ZLIB::ZLIB PkgConfig::LIBDEFLATE)

set(WRITER_TOOL_ENV "WRITER_PACK_TOOL=$<TARGET_FILE:writer_pack_tool>")
foreach(t pack_crosscheck zip64_entries raw_copy attrs)
  libpkg_add_script_test(writer_${t} writer_${t}.sh
    LABELS integration TIMEOUT 300)
  set_property(TEST writer_${t} APPEND PROPERTY ENVIRONMENT ${WRITER_TOOL_ENV})
endforeach()
libpkg_add_script_test(writer_peak_rss writer_peak_rss.sh
  LABELS integration slow TIMEOUT 600)
set_property(TEST writer_peak_rss APPEND PROPERTY ENVIRONMENT ${WRITER_TOOL_ENV})
libpkg_add_script_test(writer_big_member writer_big_member.sh
  LABELS integration slow TIMEOUT 300)
set_property(TEST writer_big_member APPEND PROPERTY ENVIRONMENT ${WRITER_TOOL_ENV})

# The chunk cache of deflated chunks (chunk_cache.hpp) and the writer over it.
libpkg_add_gtest(chunk_cache_test chunk_cache_test.cpp chunk_packs_test.cpp
  file_digest_test.cpp member_memo_test.cpp writer_fixtures.cpp)
target_link_libraries(chunk_cache_test PRIVATE ZLIB::ZLIB PkgConfig::LIBDEFLATE)
libpkg_add_script_test(chunk_cache_cli chunk_cache_cli.sh
  LABELS integration TIMEOUT 600)

# Splice: edited members written by re-using the input's deflate data, and
# the restart-point index (reader, writer, member views) it builds on.
libpkg_add_gtest(splice_test splice_test.cpp writer_fixtures.cpp)
target_link_libraries(splice_test PRIVATE ZLIB::ZLIB PkgConfig::LIBDEFLATE)
libpkg_add_script_test(writer_splice writer_splice.sh
  LABELS integration TIMEOUT 600)
set_property(TEST writer_splice APPEND PROPERTY ENVIRONMENT ${WRITER_TOOL_ENV})
# Peak-RSS bound of the splice (label slow: the sanitizer pass's shadow
# memory breaks any RSS bound, as for writer_peak_rss).
libpkg_add_script_test(writer_splice_peak_rss writer_splice_peak_rss.sh
  LABELS integration slow TIMEOUT 900)
set_property(TEST writer_splice_peak_rss APPEND PROPERTY ENVIRONMENT ${WRITER_TOOL_ENV})
