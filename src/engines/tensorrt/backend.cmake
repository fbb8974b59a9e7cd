# The TensorRT 10+ backend, a plugin: libferry_backend_trt.so (`trt:PATH.plan`), included from
# src/engines/CMakeLists.txt.
#
# - trt_mapping.cpp (pure logic, no TensorRT header) is also part of ferry_engines, so CPU tests cover it.
# - Where NvInfer.h (TensorRT >= 10) and libnvinfer are found, the plugin is built; ferry never
#   links TensorRT.
# - FERRY_TENSORRT_COMPILE_ONLY=ON with headers but no library compiles the plugin's sources with
#   -Werror and links nothing (target ferry_backend_trt_compile_check): a check against TensorRT's
#   public headers for machines (like CI) that cannot install TensorRT itself.

target_sources(ferry_engines PRIVATE ${CMAKE_CURRENT_LIST_DIR}/trt_mapping.cpp)

set(FERRY_TENSORRT_ROOT "$ENV{FERRY_TENSORRT_ROOT}" CACHE PATH
    "TensorRT prefix holding include/NvInfer.h and lib/libnvinfer.so (searched first)")
option(FERRY_TENSORRT_COMPILE_ONLY
       "Headers without libnvinfer: compile-check the TensorRT backend as an object library" OFF)

# find_path/find_library cache their answers; a new root must search again.
if(NOT "${FERRY_TENSORRT_ROOT}" STREQUAL "${_FERRY_TENSORRT_ROOT_SEARCHED}")
  unset(FERRY_TENSORRT_INCLUDE_DIR CACHE)
  unset(FERRY_TENSORRT_LIBRARY CACHE)
  set(_FERRY_TENSORRT_ROOT_SEARCHED "${FERRY_TENSORRT_ROOT}" CACHE INTERNAL "")
endif()

find_path(FERRY_TENSORRT_INCLUDE_DIR NvInfer.h
  HINTS ${FERRY_TENSORRT_ROOT}
  PATH_SUFFIXES include
  PATHS /usr/include/x86_64-linux-gnu /usr/local/tensorrt /opt/tensorrt
  DOC "Folder of TensorRT's NvInfer.h")
find_library(FERRY_TENSORRT_LIBRARY nvinfer
  HINTS ${FERRY_TENSORRT_ROOT}
  PATH_SUFFIXES lib lib64 targets/x86_64-linux-gnu/lib
  PATHS /usr/lib/x86_64-linux-gnu /usr/local/tensorrt /opt/tensorrt
  DOC "TensorRT's libnvinfer")
mark_as_advanced(FERRY_TENSORRT_INCLUDE_DIR FERRY_TENSORRT_LIBRARY)

# NV_TENSORRT_MAJOR is a number up to 10.x's early releases and a macro name (TRT_MAJOR_ENTERPRISE)
# after; follow one level of indirection.
function(_ferry_tensorrt_macro header name out)
  file(STRINGS "${header}" line REGEX "^#define ${name}[ \t]+[A-Za-z0-9_]+")
  string(REGEX REPLACE "^#define ${name}[ \t]+([A-Za-z0-9_]+).*$" "\\1" value "${line}")
  if(value AND NOT value MATCHES "^[0-9]+$")
    file(STRINGS "${header}" line REGEX "^#define ${value}[ \t]+[0-9]+")
    string(REGEX REPLACE "^#define ${value}[ \t]+([0-9]+).*$" "\\1" value "${line}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

set(_ferry_trt_version "")
if(FERRY_TENSORRT_INCLUDE_DIR AND EXISTS "${FERRY_TENSORRT_INCLUDE_DIR}/NvInferVersion.h")
  set(_ferry_trt_header "${FERRY_TENSORRT_INCLUDE_DIR}/NvInferVersion.h")
  _ferry_tensorrt_macro("${_ferry_trt_header}" NV_TENSORRT_MAJOR _ferry_trt_major)
  _ferry_tensorrt_macro("${_ferry_trt_header}" NV_TENSORRT_MINOR _ferry_trt_minor)
  _ferry_tensorrt_macro("${_ferry_trt_header}" NV_TENSORRT_PATCH _ferry_trt_patch)
  set(_ferry_trt_version "${_ferry_trt_major}.${_ferry_trt_minor}.${_ferry_trt_patch}")
endif()

set(_ferry_trt_sources
  ${CMAKE_CURRENT_LIST_DIR}/tensorrt_engine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_logger.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_mapping_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_shapes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trt_backend.cpp)
set(_ferry_trt_backend_args
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/trt_mapping.cpp
  FRAMEWORK_SOURCES ${_ferry_trt_sources}
  FRAMEWORK_INCLUDES ${FERRY_TENSORRT_INCLUDE_DIR}
  DEFINITIONS FERRY_TENSORRT_VERSION="${_ferry_trt_version}")

if(NOT FERRY_TENSORRT_INCLUDE_DIR)
  message(STATUS "TensorRT backend: off (NvInfer.h not found; set FERRY_TENSORRT_ROOT)")
elseif(NOT _ferry_trt_major OR _ferry_trt_major LESS 10)
  message(STATUS "TensorRT backend: off (${FERRY_TENSORRT_INCLUDE_DIR} has TensorRT '${_ferry_trt_version}'; "
                 "ferry needs 10 or newer)")
elseif(FERRY_TENSORRT_LIBRARY)
  # A plain path, not an imported target: the plugin links it, ferry itself never does.
  ferry_add_engine_backend(trt ${_ferry_trt_backend_args} FRAMEWORK_LIBRARIES ${FERRY_TENSORRT_LIBRARY})
  message(STATUS "TensorRT backend: plugin libferry_backend_trt.so (TensorRT ${_ferry_trt_version}, "
                 "${FERRY_TENSORRT_INCLUDE_DIR}, ${FERRY_TENSORRT_LIBRARY})")
elseif(FERRY_TENSORRT_COMPILE_ONLY)
  ferry_add_engine_backend(trt ${_ferry_trt_backend_args} COMPILE_ONLY)
  message(STATUS "TensorRT backend: compile check only (TensorRT ${_ferry_trt_version} headers in "
                 "${FERRY_TENSORRT_INCLUDE_DIR}, no libnvinfer): target ferry_backend_trt_compile_check")
else()
  message(STATUS "TensorRT backend: off (TensorRT ${_ferry_trt_version} headers in ${FERRY_TENSORRT_INCLUDE_DIR} "
                 "but no libnvinfer; -DFERRY_TENSORRT_COMPILE_ONLY=ON compile-checks the backend)")
endif()
