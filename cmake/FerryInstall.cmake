# Installs the library so another CMake project can use find_package(ferry) and ferry::ferry (or
# one layer: ferry::core, ferry::engines, ferry::bench, ...). ferry::serve stays in the build tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ferry ferry_core ferry_device ferry_memory ferry_engines ferry_session ferry_bench ferry_info
  EXPORT ferryTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# ferry/frontend/ is what the CLI and the Python package share (ferry::frontend), built for them and
# not installed, so its headers are not either.
install(DIRECTORY include/ferry DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN frontend EXCLUDE)
if(FERRY_BUILD_APPS)
  install(TARGETS ferry_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT ferryTargets NAMESPACE ferry:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
configure_package_config_file(cmake/ferryConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ferryConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ferryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ferryConfig.cmake ${PROJECT_BINARY_DIR}/ferryConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
