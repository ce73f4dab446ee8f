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
