# SPDX-License-Identifier: BSD-3-Clause
# The HTML escaper shared by the report and the channel pages.
libpkg_add_gtest(nightly_html_test ${CMAKE_CURRENT_LIST_DIR}/html_test.cpp)
