// The CUDA error types: what they carry and which type a failure maps to.
#include <gtest/gtest.h>

#include <string>

#include "ferry/core/error.hpp"

namespace {

TEST(CudaError, MessageCarriesCallNameStringAndLocation) {
  const ferry::cuda_error e(cudaErrorInvalidValue, "cudaMemcpy(dst, src, n, kind)", "copy.cpp", 42);
  const std::string msg = e.what();
  EXPECT_NE(msg.find("cudaMemcpy(dst, src, n, kind) failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cudaErrorInvalidValue"), std::string::npos) << msg;
  EXPECT_NE(msg.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << msg;
  EXPECT_NE(msg.find("copy.cpp:42"), std::string::npos) << msg;
  EXPECT_EQ(e.code(), cudaErrorInvalidValue);
  EXPECT_EQ(e.line(), 42);
  EXPECT_EQ(e.file(), "copy.cpp");
}

TEST(CudaError, OutOfMemoryHasItsOwnType) {
  EXPECT_THROW(ferry::detail::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "a.cpp", 1),
               ferry::out_of_memory);
  try {
    ferry::detail::throw_cuda_error(cudaErrorInvalidDevice, "cudaSetDevice(9)", "a.cpp", 2);
    FAIL() << "expected a throw";
  } catch (const ferry::out_of_memory&) {
    FAIL() << "an invalid device is not out of memory";
  } catch (const ferry::cuda_error& e) {
    EXPECT_EQ(e.code(), cudaErrorInvalidDevice);
  }
}

TEST(CudaError, MacroThrowsOnFailureAndPassesOnSuccess) {
  EXPECT_NO_THROW(FERRY_CUDA_TRY(cudaSuccess));
  try {
    FERRY_CUDA_TRY(cudaErrorNotReady);
    FAIL() << "expected a throw";
  } catch (const ferry::cuda_error& e) {
    EXPECT_EQ(std::string(e.call()), "cudaErrorNotReady");
    EXPECT_NE(std::string(e.file()).find("test_errors.cpp"), std::string::npos);
  }
}

TEST(CudaError, AllFerryErrorsShareOneBase) {
  EXPECT_THROW(throw ferry::unsupported("x"), ferry::error);
  EXPECT_THROW(throw ferry::invalid_argument("x"), ferry::error);
  EXPECT_THROW(throw ferry::no_device("x"), ferry::error);
  EXPECT_THROW(ferry::detail::throw_cuda_error(cudaErrorMemoryAllocation, "c", "f", 1), ferry::error);
}

}  // namespace
