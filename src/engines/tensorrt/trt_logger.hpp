// TensorRT's ILogger routed into ferry.
//
// TensorRT reports *why* a call failed only through its logger (the call itself returns null or
// false), so errors are kept per thread and read back by the code that made the failing call:
// TensorRT logs a failing call's errors on the calling thread. Warnings go to stderr as
// "ferry: TensorRT: ..."; info and verbose messages are dropped unless FERRY_TRT_VERBOSE is set.
#pragma once

#include <NvInferRuntime.h>

#include <string>
#include <vector>

#include "engines/tensorrt/trt_mapping.hpp"

namespace ferry::trt {

class logger final : public nvinfer1::ILogger {
 public:
  logger();
  void log(Severity severity, nvinfer1::AsciiChar const* message) noexcept override;

  // Forgets this thread's errors; call right before a TensorRT call whose failure is reported.
  static void clear_errors() noexcept;
  // This thread's errors since the last clear, oldest first.
  [[nodiscard]] static std::vector<std::string> errors();
  // This thread's newest error, or a sentence saying TensorRT logged none.
  [[nodiscard]] static std::string last_error();

 private:
  trt_verbosity verbosity_;
};

// The one logger of the process. TensorRT uses the logger given to the first runtime for every
// object made through it and calls it from any thread, so it must outlive them all: it is never
// destroyed.
[[nodiscard]] logger& shared_logger();

}  // namespace ferry::trt
