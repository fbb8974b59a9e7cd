# Backend plugins (ferry/engines/backend_api.h): MODULE libraries named libferry_backend_<NAME>.so.
# In the build tree they land in build/<libdir>/ferry/backends and the CLI in build/<bindir>, the
# layout of an installation, so ferry finds them "beside the installed library" either way
# (src/engines/plugin/backend_search.cpp looks in <program's folder>/FERRY_BACKEND_DIR_FROM_BIN).
include(GNUInstallDirs)
set(FERRY_BACKEND_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/ferry/backends)
set(FERRY_BACKEND_BUILD_DIR ${PROJECT_BINARY_DIR}/${FERRY_BACKEND_INSTALL_DIR})
file(RELATIVE_PATH FERRY_BACKEND_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_LIBDIR}/ferry/backends)

# Places a MODULE library as a backend: its folder in the build tree and when installed, and only
# the ferry_backend_* functions exported (everything it links statically stays its own).
function(ferry_place_backend target)
  set_target_properties(${target} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${FERRY_BACKEND_BUILD_DIR}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE LINKER:--exclude-libs,ALL)
  # Every symbol resolved at link time, so a missing library fails the build, not the dlopen.
  # Not under a sanitizer: there the runtime's symbols come from the program that loads the module.
  if(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION ${FERRY_BACKEND_INSTALL_DIR})
endfunction()

# ferry_add_engine_backend(<name> FRAMEWORK_SOURCES <files> [FRAMEWORK_INCLUDES <dirs>]
#                          [FRAMEWORK_LIBRARIES <libs>] [SOURCES <files>] [DEFINITIONS <defs>]
#                          [COMPILE_ONLY])
# A backend written in C++ on ferry's engine seam (src/engines/plugin/backend_export.cpp turns it
# into the C ABI): libferry_backend_<name>.so. FRAMEWORK_SOURCES see the framework's headers
# (libtorch, TensorRT); SOURCES and the seam do not, so a framework's bundled copies of fmt or
# JSON never meet ferry's. COMPILE_ONLY builds the objects with -Werror and links nothing: a check
# against a framework's headers where its libraries are absent.
function(ferry_add_engine_backend name)
  cmake_parse_arguments(B "COMPILE_ONLY" "" "FRAMEWORK_SOURCES;FRAMEWORK_INCLUDES;FRAMEWORK_LIBRARIES;SOURCES;DEFINITIONS" ${ARGN})
  set(seam ferry_backend_${name}_seam)
  set(framework ferry_backend_${name}_framework)
  add_library(${seam} OBJECT
    ${PROJECT_SOURCE_DIR}/src/engines/plugin/backend_export.cpp
    ${PROJECT_SOURCE_DIR}/src/engines/engine_context.cpp
    ${PROJECT_SOURCE_DIR}/src/engines/tensor_spec.cpp
    ${B_SOURCES})
  # engine_context.cpp: the backend's contexts get the checks and NVTX ranges of the seam too.
  target_link_libraries(${seam} PRIVATE CUDA::cudart CUDA::nvtx3 fmt::fmt nlohmann_json::nlohmann_json)
  add_library(${framework} OBJECT ${B_FRAMEWORK_SOURCES})
  target_include_directories(${framework} SYSTEM PRIVATE ${B_FRAMEWORK_INCLUDES})
  target_link_libraries(${framework} PRIVATE CUDA::cudart ${B_FRAMEWORK_LIBRARIES})
  foreach(part IN ITEMS ${seam} ${framework})
    target_include_directories(${part} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
    target_compile_definitions(${part} PRIVATE FERRY_VERSION="${PROJECT_VERSION}" ${B_DEFINITIONS})
    target_compile_features(${part} PRIVATE cxx_std_20)
    set_target_properties(${part} PROPERTIES POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    target_compile_options(${part} PRIVATE -Wall -Wextra -Wpedantic $<$<BOOL:${B_COMPILE_ONLY}>:-Werror>)
  endforeach()
  if(B_COMPILE_ONLY)
    add_custom_target(ferry_backend_${name}_compile_check)
    add_dependencies(ferry_backend_${name}_compile_check ${seam} ${framework})
    return()
  endif()
  add_library(ferry_backend_${name} MODULE $<TARGET_OBJECTS:${seam}> $<TARGET_OBJECTS:${framework}>)
  target_link_libraries(ferry_backend_${name} PRIVATE ferry_core fmt::fmt nlohmann_json::nlohmann_json
    ${B_FRAMEWORK_LIBRARIES})
  ferry_place_backend(ferry_backend_${name})
endfunction()
