# Every dependency comes from a Debian package (scripts/setup.sh installs them) or the CUDA
# toolkit; nothing is downloaded or vendored at configure time.
find_package(CUDAToolkit 13 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# NumPy's .npz input data files are zip archives; without libzip they are refused with a message.
# Through pkg-config: Debian's libzip CMake config requires its command-line tools to be installed.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)
endif()
if(FERRY_BUILD_APPS)
  find_package(CLI11 REQUIRED)
endif()
if(FERRY_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FERRY_BUILD_SERVE)
  # `ferry serve`: Boost.Beast for HTTP (libboost-dev; header-only, Boost.System included since
  # 1.69), gRPC and protobuf (libgrpc++-dev, libprotobuf-dev, protobuf-compiler,
  # protobuf-compiler-grpc) and POSIX threads.
  find_package(Boost 1.74 REQUIRED CONFIG)  # BoostConfig.cmake: Boost::headers
  find_package(Protobuf REQUIRED)
  find_package(gRPC CONFIG REQUIRED)
  find_package(Threads REQUIRED)
endif()
