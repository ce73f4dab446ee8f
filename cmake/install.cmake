# SPDX-License-Identifier: BSD-3-Clause
# install(EXPORT) + package config so a C++ project can find_package(libpkg).
include(CMakePackageConfigHelpers)

install(TARGETS libpkg EXPORT libpkgTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libpkg/include/libpkg
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(LIBPKG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/libpkg)
install(EXPORT libpkgTargets NAMESPACE libpkg:: DESTINATION ${LIBPKG_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/libpkgConfig.cmake.in
  ${PROJECT_BINARY_DIR}/libpkgConfig.cmake
  INSTALL_DESTINATION ${LIBPKG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/libpkgConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/libpkgConfig.cmake
  ${PROJECT_BINARY_DIR}/libpkgConfigVersion.cmake
  DESTINATION ${LIBPKG_CMAKE_DIR})

# pkg-config, for builds that don't use CMake. libpkg is a static library until
# 1.0 (docs/architecture.md), so its dependencies are public Requires: a plain
# `pkg-config --libs libpkg` lists every library the final link needs.
# The prefix is found relative to the .pc file itself, so the file stays right
# for `cmake --install --prefix DIR` and for a moved install tree.
file(RELATIVE_PATH LIBPKG_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
# A sanitized static libpkg needs the sanitizer runtimes in the final link, as
# the CMake package config says through its PUBLIC link options.
set(LIBPKG_PC_LINK_FLAGS "")
if(LIBPKG_SANITIZE)
  set(LIBPKG_PC_LINK_FLAGS " -fsanitize=address,undefined")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/libpkg.pc.in ${PROJECT_BINARY_DIR}/libpkg.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/libpkg.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/libpkg)
