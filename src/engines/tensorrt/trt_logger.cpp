#include "engines/tensorrt/trt_logger.hpp"

#include <cstdio>
#include <cstdlib>

namespace ferry::trt {
namespace {

thread_local error_history this_thread_errors;

}  // namespace

logger::logger() : verbosity_(verbosity_from_env(std::getenv("FERRY_TRT_VERBOSE"))) {}

void logger::log(Severity severity, nvinfer1::AsciiChar const* message) noexcept {
  const char* text = message != nullptr ? message : "";
  try {
    switch (route_log(static_cast<std::int32_t>(severity), verbosity_)) {
      case log_route::keep_and_print_error:
        std::fprintf(stderr, "%s\n", log_line(text).c_str());
        [[fallthrough]];
      case log_route::keep_error:
        this_thread_errors.add(text);
        break;
      case log_route::print:
        std::fprintf(stderr, "%s\n", log_line(text).c_str());
        break;
      case log_route::drop:
        break;
    }
  } catch (...) {
    // Out of memory while keeping a message: TensorRT must not see an exception, and the failing
    // call still reports its failure, with a poorer message.
  }
}

void logger::clear_errors() noexcept { this_thread_errors.clear(); }

std::vector<std::string> logger::errors() { return this_thread_errors.messages(); }

std::string logger::last_error() { return this_thread_errors.last_or("TensorRT logged no error"); }

logger& shared_logger() {
  static logger* const instance = new logger();  // never destroyed, see the header
  return *instance;
}

}  // namespace ferry::trt
