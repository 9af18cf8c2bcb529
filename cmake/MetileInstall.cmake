# `cmake --install build --prefix P` installs the C++ core for outside projects:
# P/include/metile/**.h, the static libraries in P/lib, and P/lib/cmake/metile with
# metileConfig.cmake, so that a project's `find_package(metile)` gives metile::metile (every
# core library; metile::metile_<stage> for one of them). Component "devel"; the wheel
# (pyproject.toml) installs only the "python" component.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

get_property(core_libraries GLOBAL PROPERTY METILE_CORE_LIBRARIES)
add_library(metile INTERFACE)
target_link_libraries(metile INTERFACE ${core_libraries})
# Libraries built with METILE_SANITIZE call the sanitizers' runtimes: a consumer links them.
if(METILE_SANITIZE)
  target_link_options(metile INTERFACE -fsanitize=${METILE_SANITIZE})
endif()
add_library(metile::metile ALIAS metile)

install(TARGETS metile ${core_libraries} EXPORT metileTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${METILE_CORE_DIR} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/metile)
install(EXPORT metileTargets NAMESPACE metile:: DESTINATION ${config_dir} COMPONENT devel)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/metileConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/metileConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/metileConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/metileConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/metileConfigVersion.cmake
        DESTINATION ${config_dir} COMPONENT devel)
