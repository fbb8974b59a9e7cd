# The TensorRT 10+ backend (`trt:PATH.plan`), included from src/engines/CMakeLists.txt in the
# ferry target's directory scope.
#
# - trt_mapping.cpp (pure logic, no TensorRT header) is always part of ferry, so CPU tests cover it.

target_sources(ferry PRIVATE ${CMAKE_CURRENT_LIST_DIR}/trt_mapping.cpp)
