# libtorch AOTInductor backend. The package checks and the I/O description are pure logic and
# always built (CPU tests cover them); the loader itself only where Torch is found: on the GPU
# host, configure with -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)').
target_sources(ferry_engines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../io_description.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aoti_package.cpp)

option(FERRY_WITH_TORCH "Build the libtorch AOTInductor backend when Torch is found" ON)
if(FERRY_WITH_TORCH)
  find_package(Torch QUIET)
endif()
if(Torch_FOUND)
  message(STATUS "ferry: libtorch AOTInductor backend ON (Torch ${Torch_VERSION})")
  # The loader compiles on its own: libtorch's include folders carry their own fmt headers,
  # which must not reach the rest of ferry (it links the system's fmt).
  add_library(ferry_torch_backend OBJECT ${CMAKE_CURRENT_LIST_DIR}/aoti_engine.cpp)
  target_include_directories(ferry_torch_backend PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(ferry_torch_backend PRIVATE ${TORCH_LIBRARIES} CUDA::cudart nlohmann_json::nlohmann_json)
  set_target_properties(ferry_torch_backend PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_sources(ferry_engines PRIVATE $<TARGET_OBJECTS:ferry_torch_backend>)
  target_compile_definitions(ferry_engines PRIVATE FERRY_HAVE_TORCH)
  foreach(lib IN LISTS TORCH_LIBRARIES)
    target_link_libraries(ferry_engines PRIVATE $<LINK_ONLY:${lib}>)
  endforeach()
else()
  message(STATUS "ferry: libtorch AOTInductor backend OFF (Torch not found)")
endif()
