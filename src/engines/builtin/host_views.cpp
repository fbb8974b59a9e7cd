#include "engines/builtin/host_views.hpp"

#include <string>

#include "ferry/core/error.hpp"

namespace ferry::builtin {

void require_span_counts(std::string_view engine_name, std::size_t inputs_given, std::size_t inputs_expected,
                         std::size_t outputs_given, std::size_t outputs_expected) {
  if (inputs_given == inputs_expected && outputs_given == outputs_expected) return;
  throw invalid_argument(std::string(engine_name) + ": run_on_host needs " + std::to_string(inputs_expected) +
                         " input and " + std::to_string(outputs_expected) + " output spans, got " +
                         std::to_string(inputs_given) + " and " + std::to_string(outputs_given));
}

void throw_bad_host_view(std::string_view engine_name, std::string_view tensor, std::size_t bytes,
                         std::size_t expected_bytes, std::size_t alignment) {
  if (bytes != expected_bytes)
    throw invalid_argument(std::string(engine_name) + ": run_on_host got " + std::to_string(bytes) + " bytes for '" +
                           std::string(tensor) + "', expected " + std::to_string(expected_bytes));
  throw invalid_argument(std::string(engine_name) + ": run_on_host got a host view of '" + std::string(tensor) +
                         "' that is not " + std::to_string(alignment) + "-byte aligned");
}

}  // namespace ferry::builtin
