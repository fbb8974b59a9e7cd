// `ferry serve` model configs: what parses, and that every mistake names the model and the key.
#include <gtest/gtest.h>

#include <string>

#include "ferry/core/error.hpp"
#include "serve/config/config_keys.hpp"
#include "serve/config/model_config.hpp"

namespace {

using ferry::serve::parse_model_config;

std::string failure(const std::string& text) {
  try {
    (void)parse_model_config(text, "m");
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

// Found by fuzzing: numbers the JSON library cannot hold, or that read back as another value.
TEST(ServeConfig, NumbersBeyondRangeAreNamedNotThrownThrough) {
  const std::string huge = failure(R"({"engine": "touch", "max_batch": 1e999})");
  EXPECT_NE(huge.find("config.json"), std::string::npos) << huge;
  const std::string unsigned_max = failure(R"({"engine": "touch", "max_batch": 18446744073709551615})");
  EXPECT_NE(unsigned_max.find("got 18446744073709551615"), std::string::npos) << unsigned_max;
}

TEST(ServeConfig, ParsesEveryKey) {
  const auto c = parse_model_config(
      R"({"engine": "mlp:2x256", "strategy": "mapped", "inflight": 3, "instances_per_gpu": 2,
          "max_batch": 16, "batch_delay_us": 500, "max_queue_size": 32, "input_size": "4KiB", "graph": true})",
      "mlp");
  EXPECT_EQ(c.name, "mlp");
  EXPECT_EQ(c.engine, "mlp:2x256");
  EXPECT_EQ(c.strategy, ferry::strategy_kind::mapped);
  EXPECT_EQ(c.inflight, 3);
  EXPECT_EQ(c.instances_per_gpu, 2);
  EXPECT_EQ(c.max_batch, 16);
  EXPECT_EQ(c.batch_delay.count(), 500);
  EXPECT_EQ(c.max_queue_size, 32U);
  EXPECT_EQ(c.input_bytes, 4096U);
  EXPECT_EQ(c.graph, ferry::graph_mode::on);
  EXPECT_EQ(parse_model_config(R"({"engine": "touch", "graph": false})", "t").graph, ferry::graph_mode::off);
  EXPECT_EQ(parse_model_config(R"({"engine": "touch", "graph": "auto"})", "t").graph, ferry::graph_mode::automatic);
}

TEST(ServeConfig, DefaultsAndIntegerSizes) {
  const auto c = parse_model_config(R"({"engine": "touch", "input_size": 8000})", "t");
  EXPECT_EQ(c.strategy, ferry::strategy_kind::pinned);
  EXPECT_EQ(c.inflight, 2);
  EXPECT_EQ(c.instances_per_gpu, 1);
  EXPECT_EQ(c.max_batch, 0);
  EXPECT_EQ(c.batch_delay.count(), 0);
  EXPECT_FALSE(c.max_queue_size.has_value());  // the repository gives it the default of its slots
  EXPECT_EQ(parse_model_config(R"({"engine": "touch", "max_queue_size": 0})", "t").max_queue_size, 0U);  // no limit
  EXPECT_EQ(c.input_bytes, 8000U);
  EXPECT_EQ(c.graph, ferry::graph_mode::off);  // CUDA graphs only when asked for
}

TEST(ServeConfig, RefusesMistakesNamingThem) {
  EXPECT_NE(failure("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(failure("[]").find("JSON object"), std::string::npos);
  EXPECT_NE(failure("{}").find("'engine' is missing"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": 3})").find("'engine' must be a string"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "inflght": 2})").find("unknown key 'inflght'"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "inflight": 0})").find("'inflight' must be in [1, 64]"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "max_batch": -1})").find("'max_batch'"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "max_batch": 1.5})").find("must be an integer"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "strategy": "fast"})").find("fast"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "max_queue_size": -1})").find("'max_queue_size' must be in [0, "),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "input_size": "lots"})").find("'input_size'"), std::string::npos);
  EXPECT_NE(
      failure(R"({"engine": "touch", "graph": "yes"})").find("'graph' must be true, false or \"auto\", got \"yes\""),
      std::string::npos)
      << failure(R"({"engine": "touch", "graph": "yes"})");
  EXPECT_EQ(failure(R"({"engine": "touch", "inflight": 0})").rfind("model 'm': config.json: ", 0), 0U);
}

TEST(ServeConfig, WarmupDataNamesWhatTheWarmUpFeedsTheModel) {
  EXPECT_EQ(parse_model_config(R"({"engine": "touch"})", "t").warmup_data, "auto");
  EXPECT_EQ(parse_model_config(R"({"engine": "touch", "warmup_data": "zero"})", "t").warmup_data, "zero");
  EXPECT_EQ(parse_model_config(R"({"engine": "touch", "warmup_data": "tokens.npz"})", "t").warmup_data, "tokens.npz");
  EXPECT_NE(failure(R"({"engine": "touch", "warmup_data": ""})").find("'warmup_data' is empty"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "touch", "warmup_data": 3})").find("'warmup_data' must be a string"),
            std::string::npos);
}

TEST(ServeConfig, IndexBoundsNameAModelFilesIntegerInputs) {
  const auto c =
      parse_model_config(R"({"engine": "torch:bert.pt2", "index_bounds": {"input_ids": 30522, "mask": 2}})", "bert");
  ASSERT_EQ(c.index_bounds.size(), 2U);
  EXPECT_EQ(c.index_bounds[0].input, "input_ids");
  EXPECT_EQ(c.index_bounds[0].bound, 30522);
  EXPECT_NE(failure(R"({"engine": "torch:b.pt2", "index_bounds": {"input_ids": 0}})").find("at least 1"),
            std::string::npos);
  EXPECT_NE(failure(R"({"engine": "torch:b.pt2", "index_bounds": [1]})").find("must be an object"), std::string::npos);
  EXPECT_NE(failure(R"({"engine": "sparse:0.1", "index_bounds": {"indices": 3}})").find("declares its own"),
            std::string::npos);
}

TEST(ServeConfig, TensorStrategiesNameAStrategyPerTensor) {
  const auto c = parse_model_config(
      R"({"engine": "sparse:0.01", "strategy": "pinned", "tensor_strategies": {"indices": "mapped",
          "rows": "managed-advise"}})",
      "sparse");
  EXPECT_EQ(c.strategy, ferry::strategy_kind::pinned);
  ASSERT_EQ(c.tensor_strategies.size(), 2U);
  EXPECT_EQ(c.tensor_strategies[0], (ferry::tensor_strategy{"indices", ferry::strategy_kind::mapped}));
  EXPECT_EQ(c.tensor_strategies[1], (ferry::tensor_strategy{"rows", ferry::strategy_kind::managed_advise}));
  EXPECT_EQ(ferry::serve::tensor_strategies_text(c.tensor_strategies), "indices=mapped,rows=managed-advise");
  EXPECT_TRUE(parse_model_config(R"({"engine": "touch", "tensor_strategies": {}})", "t").tensor_strategies.empty());
  EXPECT_TRUE(parse_model_config(R"({"engine": "touch"})", "t").tensor_strategies.empty());
  EXPECT_EQ(ferry::serve::tensor_strategies_text({}), "");
}

TEST(ServeConfig, TensorStrategiesMistakesAreNamedByKey) {
  const std::string bad_name = failure(R"({"engine": "sparse:0.01", "tensor_strategies": {"indices": "mappd"}})");
  EXPECT_EQ(bad_name.rfind("model 'm': config.json: 'tensor_strategies': 'indices': unknown strategy 'mappd'", 0), 0U)
      << bad_name;
  EXPECT_NE(bad_name.find("valid: "), std::string::npos) << bad_name;
  const std::string not_object = failure(R"({"engine": "sparse:0.01", "tensor_strategies": ["indices", "mapped"]})");
  EXPECT_NE(not_object.find("'tensor_strategies' must be an object of tensor names to strategies"), std::string::npos)
      << not_object;
  EXPECT_NE(not_object.find("got an array of 2 elements"), std::string::npos) << not_object;
  const std::string not_string = failure(R"({"engine": "sparse:0.01", "tensor_strategies": {"indices": 3}})");
  EXPECT_NE(not_string.find("'tensor_strategies': 'indices' must be a strategy name, got 3"), std::string::npos)
      << not_string;
  // Which tensors exist is the engine's to say, when the model loads (test_serve_auto.cpp).
  EXPECT_NO_THROW((void)parse_model_config(R"({"engine": "touch", "tensor_strategies": {"nope": "mapped"}})", "m"));
}

// A config is untrusted input. A value nested 100,000 levels deep once crashed the server at
// start (its error message dumped the value recursively); sizes that are not finite or overflow
// loaded, or were misreported as 0 bytes; a file that is not JSON was quoted.
TEST(ServeConfig, UntrustedConfigsAreRefusedNamingTheProblemOnly) {
  const std::string deep =
      failure(R"({"engine": "touch", "input_size": )" + std::string(100'000, '[') + std::string(100'000, ']') + "}");
  EXPECT_EQ(deep, "model 'm': config.json: arrays and objects nested deeper than 64 levels");
  for (const char* size : {"nanKiB", "infKiB", "17179869188GiB", "1e30"}) {
    const std::string refused = failure(std::string(R"({"engine": "touch", "input_size": ")") + size + "\"}");
    EXPECT_EQ(refused.rfind(std::string("model 'm': config.json: 'input_size': "), 0), 0U) << refused;
    EXPECT_NE(refused.find(size), std::string::npos) << refused;
  }
  // Not JSON (a link to another file, say): its place, never its text.
  const std::string passwd = failure("root:x:0:0:root:/root:/bin/bash\n");
  EXPECT_EQ(passwd, "model 'm': config.json is not valid JSON: a syntax error at byte 1");
  const std::string long_value = failure(R"({"engine": ")" + std::string(100'000, 'e') + R"(", "inflight": "x"})");
  EXPECT_LT(long_value.size(), 200U) << long_value;
  const std::string long_key = failure(R"({"engine": "touch", ")" + std::string(10'000, 'k') + R"(": 1})");
  // The key's excerpt and the list of known keys, never the whole key.
  EXPECT_LT(long_key.size(), 200U + ferry::serve::config_key_names().size()) << long_key;
  EXPECT_NE(failure(std::string(ferry::serve::max_model_config_bytes + 1, ' ')).find("more than the 1048576"),
            std::string::npos);
}

TEST(ServeConfig, TheDefaultQueueBoundFollowsTheSlots) {
  EXPECT_EQ(ferry::serve::default_max_queue_size(1), 64U);
  EXPECT_EQ(ferry::serve::default_max_queue_size(2), 64U);
  EXPECT_EQ(ferry::serve::default_max_queue_size(8), 256U);
  EXPECT_EQ(ferry::serve::default_max_queue_size(1000), 4096U);
}

}  // namespace
