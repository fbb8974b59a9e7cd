# The Python package (python/): FERRY_BUILD_PYTHON is ON by default where nanobind is found, from
# the Python of build-tools/venv (scripts/setup.sh installs it there) or, under `pip install .`,
# the one scikit-build-core runs. Without nanobind the option is OFF and the build says why.
if(NOT DEFINED Python_EXECUTABLE AND NOT SKBUILD AND EXISTS "${PROJECT_SOURCE_DIR}/build-tools/venv/bin/python")
  set(Python_EXECUTABLE "${PROJECT_SOURCE_DIR}/build-tools/venv/bin/python")
endif()
set(FERRY_PYTHON_FOUND OFF)
find_package(Python 3.9 COMPONENTS Interpreter Development.Module QUIET)
if(Python_FOUND)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE nanobind_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE nanobind_missing)
  if(NOT nanobind_missing)
    find_package(nanobind CONFIG QUIET)
    set(FERRY_PYTHON_FOUND ${nanobind_FOUND})
  endif()
endif()
option(FERRY_BUILD_PYTHON "Build the Python package ferry (nanobind)" ${FERRY_PYTHON_FOUND})
if(FERRY_BUILD_PYTHON AND NOT FERRY_PYTHON_FOUND)
  message(FATAL_ERROR "FERRY_BUILD_PYTHON needs Python's development headers and nanobind "
                      "(scripts/setup.sh installs nanobind into build-tools/venv)")
elseif(NOT FERRY_BUILD_PYTHON)
  message(STATUS "ferry: the Python package is not built (no nanobind for ${Python_EXECUTABLE})")
endif()
