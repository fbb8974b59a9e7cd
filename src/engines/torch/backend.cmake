# libtorch AOTInductor backend. The package checks and the I/O description are pure logic and
# always built (CPU tests cover them); the loader itself only where Torch is found: on the GPU
# host, configure with -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)').
target_sources(ferry PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../io_description.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aoti_package.cpp)

option(FERRY_WITH_TORCH "Build the libtorch AOTInductor backend when Torch is found" ON)
if(FERRY_WITH_TORCH)
  find_package(Torch QUIET)
endif()
if(Torch_FOUND)
  message(STATUS "ferry: libtorch AOTInductor backend ON (Torch ${Torch_VERSION})")
  target_sources(ferry PRIVATE ${CMAKE_CURRENT_LIST_DIR}/aoti_engine.cpp)
  target_compile_definitions(ferry PRIVATE FERRY_HAVE_TORCH)
  target_link_libraries(ferry PRIVATE ${TORCH_LIBRARIES})
else()
  message(STATUS "ferry: libtorch AOTInductor backend OFF (Torch not found)")
endif()
