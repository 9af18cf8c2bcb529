# Project-wide helpers: every meTile target gets the same warnings and include root.

# METILE_WARNINGS_AS_ERRORS (the root CMakeLists.txt's option) adds -Werror.
set(METILE_WARNINGS -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(METILE_WARNINGS_AS_ERRORS)
  list(APPEND METILE_WARNINGS -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 at -O3 reports -Wrestrict inside std::string's own inlined copies (GCC bug
  # 105329), so a Release build would fail on library code, not ours.
  list(APPEND METILE_WARNINGS -Wno-restrict)
endif()

# metile_library(NAME SOURCES ... DEPS ...): a static library of one stage folder. The
# libraries under metile/ are the core that `cmake --install` exports (metileConfig.cmake);
# they are collected in the global property METILE_CORE_LIBRARIES.
function(metile_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                            $<INSTALL_INTERFACE:include>)
  target_compile_options(${name} PRIVATE ${METILE_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  cmake_path(IS_PREFIX METILE_CORE_DIR "${CMAKE_CURRENT_SOURCE_DIR}" in_core)
  if(in_core)
    set_property(GLOBAL APPEND PROPERTY METILE_CORE_LIBRARIES ${name})
  endif()
endfunction()

# metile_executable(NAME SOURCES ... DEPS ...): a tool or example program.
function(metile_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${METILE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
endfunction()

# metile_gtest(NAME SOURCES ... DEPS ...): a GoogleTest binary registered with CTest.
function(metile_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  find_package(GTest REQUIRED)
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${METILE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  # The host emulator checks threadgroup memory for races in every test.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT
                       "METILE_SOURCE_DIR=${PROJECT_SOURCE_DIR}" ENVIRONMENT_MODIFICATION
                       "METILE_HOST_RACECHECK=set:1")
endfunction()
