# The libtorch AOTInductor backend, a plugin: libferry_backend_torch.so (`torch:PATH.pt2`). The
# package checks, the I/O description and the reading of a package's generated code are pure
# logic, also built into ferry_engines so CPU tests cover them; the plugin only where Torch is
# found. Code that links libtorch must be built
# against the PyTorch it runs with: on the GPU host, scripts/gpu_build_torch.sh builds this target
# alone (-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')).
target_sources(ferry_engines PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../io_description.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aoti_package.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compiled_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/call_spec.cpp)

option(FERRY_WITH_TORCH "Build the libtorch AOTInductor backend plugin when Torch is found" ON)
if(FERRY_WITH_TORCH)
  find_package(Torch QUIET)
endif()
if(Torch_FOUND)
  message(STATUS "ferry: libtorch AOTInductor backend plugin ON (Torch ${Torch_VERSION})")
  # libtorch's include folders carry their own fmt headers: only the framework sources see them.
  ferry_add_engine_backend(torch
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/../io_description.cpp ${CMAKE_CURRENT_LIST_DIR}/aoti_package.cpp
            ${CMAKE_CURRENT_LIST_DIR}/compiled_io.cpp ${CMAKE_CURRENT_LIST_DIR}/call_spec.cpp
    FRAMEWORK_SOURCES ${CMAKE_CURRENT_LIST_DIR}/aoti_engine.cpp ${CMAKE_CURRENT_LIST_DIR}/aoti_graphs.cpp
                      ${CMAKE_CURRENT_LIST_DIR}/torch_backend.cpp
    FRAMEWORK_LIBRARIES ${TORCH_LIBRARIES})
else()
  message(STATUS "ferry: libtorch AOTInductor backend plugin OFF (Torch not found)")
endif()
