# SPDX-License-Identifier: BSD-3-Clause
# The segment writers (archive/segment_writer.hpp): the parallel .tar.bz2
# (tar_bz2_test.cpp, decoded with libbz2) and the independent zstd frames
# of a .conda's pkg part (tar_zst_frames_test.cpp, decoded with libzstd),
# with their block rules and the chunk cache. The readers' cross-check
# (bzip2 -t, Python, bsdtar, cph, zstd) is tests/conda/conda_segments.sh.
find_package(BZip2 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SEGMENT_TEST_ZSTD REQUIRED IMPORTED_TARGET libzstd)
libpkg_add_gtest(tar_segments_test tar_bz2_test.cpp tar_zst_frames_test.cpp)
target_link_libraries(tar_segments_test PRIVATE BZip2::BZip2 PkgConfig::SEGMENT_TEST_ZSTD)
