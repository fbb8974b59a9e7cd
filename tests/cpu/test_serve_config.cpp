// `ferry serve` model configs: what parses, and that every mistake names the model and the key.
#include <gtest/gtest.h>

#include <string>

#include "ferry/error.hpp"
#include "serve/model_config.hpp"

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
          "max_batch": 16, "batch_delay_us": 500, "max_queue_size": 32, "input_size": "4KiB"})",
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
}

TEST(ServeConfig, DefaultsAndIntegerSizes) {
  const auto c = parse_model_config(R"({"engine": "touch", "input_size": 8000})", "t");
  EXPECT_EQ(c.strategy, ferry::strategy_kind::pinned);
  EXPECT_EQ(c.inflight, 2);
  EXPECT_EQ(c.instances_per_gpu, 1);
  EXPECT_EQ(c.max_batch, 0);
  EXPECT_EQ(c.batch_delay.count(), 0);
  EXPECT_EQ(c.max_queue_size, 0U);  // no limit, as in Triton
  EXPECT_EQ(c.input_bytes, 8000U);
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
  EXPECT_EQ(failure(R"({"engine": "touch", "inflight": 0})").rfind("model 'm': config.json: ", 0), 0U);
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
  EXPECT_NE(not_object.find(R"(got ["indices","mapped"])"), std::string::npos) << not_object;
  const std::string not_string = failure(R"({"engine": "sparse:0.01", "tensor_strategies": {"indices": 3}})");
  EXPECT_NE(not_string.find("'tensor_strategies': 'indices' must be a strategy name, got 3"), std::string::npos)
      << not_string;
  // Which tensors exist is the engine's to say, when the model loads (test_serve_auto.cpp).
  EXPECT_NO_THROW((void)parse_model_config(R"({"engine": "touch", "tensor_strategies": {"nope": "mapped"}})", "m"));
}

}  // namespace
