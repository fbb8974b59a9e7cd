// libFuzzer target: a model's config.json as the model repository reads it.
//
// Input: the file's text. parse_model_config may refuse only with ferry::invalid_argument, and
// what it accepts must lie inside the ranges it promises to enforce.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ferry/core/error.hpp"
#include "serve/config/model_config.hpp"

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ferry::serve::model_config config = ferry::serve::parse_model_config(text, "fuzzed");
    FUZZ_REQUIRE(config.name == "fuzzed");
    FUZZ_REQUIRE(!config.engine.empty());
    FUZZ_REQUIRE(config.inflight >= 1 && config.inflight <= 64);
    FUZZ_REQUIRE(config.instances_per_gpu >= 1 && config.instances_per_gpu <= 64);
    FUZZ_REQUIRE(config.max_batch >= 0);
    FUZZ_REQUIRE(config.batch_delay.count() >= 0 && config.batch_delay.count() <= 10'000'000);
    FUZZ_REQUIRE(config.input_bytes >= 1);
  } catch (const ferry::invalid_argument&) {
    // A refusal naming the model and the key: what a bad config must get.
  }
  return 0;
}
