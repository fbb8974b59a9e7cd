// ModelInferRequest / ModelInferResponse conversions: raw_input_contents matched to inputs in
// order (shared-memory inputs take none), typed contents, and every refusal.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "serve/codec/grpc_infer_codec.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;

using ferry::serve::testing::error_of;

inference::InferParameter string_param(const std::string& s) {
  inference::InferParameter p;
  p.set_string_param(s);
  return p;
}
inference::InferParameter int_param(std::int64_t v) {
  inference::InferParameter p;
  p.set_int64_param(v);
  return p;
}

TEST(ServeGrpcCodec, MatchesRawContentsToInputsInOrderSkippingSharedMemory) {
  inference::ModelInferRequest m;
  m.set_model_name("m");
  m.set_id("7");
  auto* a = m.add_inputs();
  a->set_name("a");
  a->set_datatype("FP32");
  a->add_shape(1);
  auto* s = m.add_inputs();
  s->set_name("s");
  s->set_datatype("INT64");
  s->add_shape(2);
  (*s->mutable_parameters())["shared_memory_region"] = string_param("r");
  (*s->mutable_parameters())["shared_memory_byte_size"] = int_param(16);
  (*s->mutable_parameters())["shared_memory_offset"] = int_param(32);
  auto* b = m.add_inputs();
  b->set_name("b");
  b->set_datatype("INT32");
  b->add_shape(2);
  b->mutable_contents();  // empty contents: raw data
  const float one = 1.0F;
  m.add_raw_input_contents(reinterpret_cast<const char*>(&one), 4);
  m.add_raw_input_contents(std::string(8, '\x01'));
  m.add_outputs()->set_name("y");

  const infer_request r = from_grpc(m);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.id, "7");
  ASSERT_EQ(r.inputs.size(), 3U);
  EXPECT_EQ(r.inputs[0].data.data(), reinterpret_cast<const std::byte*>(m.raw_input_contents(0).data()));  // no copy
  ASSERT_TRUE(r.inputs[1].shared_memory.has_value());
  EXPECT_EQ(r.inputs[1].shared_memory->offset, 32U);
  EXPECT_EQ(r.inputs[2].data.size(), 8U);
  ASSERT_EQ(r.outputs.size(), 1U);
  EXPECT_EQ(r.outputs[0].name, "y");
}

TEST(ServeGrpcCodec, ConvertsTypedContents) {
  inference::ModelInferRequest m;
  auto* in = m.add_inputs();
  in->set_name("i");
  in->set_datatype("INT8");
  in->add_shape(3);
  for (int v : {-1, 0, 127}) in->mutable_contents()->add_int_contents(v);
  const infer_request r = from_grpc(m);
  ASSERT_EQ(r.inputs[0].data.size(), 3U);
  EXPECT_EQ(static_cast<std::int8_t>(r.inputs[0].data[0]), -1);
  EXPECT_EQ(static_cast<std::int8_t>(r.inputs[0].data[2]), 127);

  in->mutable_contents()->set_int_contents(2, 300);
  EXPECT_NE(error_of([&] { (void)from_grpc(m); }).find("(300) is out of range"), std::string::npos);
  in->mutable_contents()->add_int_contents(1);
  EXPECT_NE(error_of([&] { (void)from_grpc(m); }).find("holds 4"), std::string::npos);
}

TEST(ServeGrpcCodec, RefusesBadRequests) {
  const auto base = [] {
    inference::ModelInferRequest m;
    auto* in = m.add_inputs();
    in->set_name("x");
    in->set_datatype("FP32");
    in->add_shape(1);
    m.add_raw_input_contents(std::string(4, '\0'));
    return m;
  };
  const auto refused = [&](const std::function<void(inference::ModelInferRequest&)>& spoil) {
    auto m = base();
    spoil(m);
    return error_of([&] { (void)from_grpc(m); });
  };
  EXPECT_NE(refused([](auto& m) {
              m.clear_inputs();
              m.clear_raw_input_contents();
            }).find("no inputs"),
            std::string::npos);
  EXPECT_NE(refused([](auto& m) { m.mutable_inputs(0)->set_datatype("FP64"); }).find("'FP64'"), std::string::npos);
  EXPECT_NE(refused([](auto& m) { m.mutable_inputs(0)->set_shape(0, -2); }).find("negative"), std::string::npos);
  EXPECT_NE(refused([](auto& m) { m.clear_raw_input_contents(); }).find("no data"), std::string::npos);
  EXPECT_NE(refused([](auto& m) { m.add_raw_input_contents("x"); }).find("2 entries"), std::string::npos);
  EXPECT_NE(refused([](auto& m) { (*m.mutable_parameters())["priority"] = int_param(1); }).find("\"priority\""),
            std::string::npos);
  // perf_analyzer asks every gRPC request for an empty final response: accepted, one response as always
  auto asks_final = base();
  inference::InferParameter yes;
  yes.set_bool_param(true);
  (*asks_final.mutable_parameters())["triton_enable_empty_final_response"] = yes;
  EXPECT_EQ(from_grpc(asks_final).inputs.size(), 1U);
  EXPECT_NE(refused([](auto& m) {
              (*m.add_outputs()->mutable_parameters())["classification"] = int_param(2);
            }).find("\"classification\""),
            std::string::npos);
  EXPECT_NE(refused([](auto& m) {
              (*m.mutable_inputs(0)->mutable_parameters())["shared_memory_region"] = string_param("r");
            }).find("shared_memory_byte_size\" is missing"),
            std::string::npos);
  EXPECT_NE(refused([](auto& m) {
              m.mutable_inputs(0)->set_datatype("FP16");
              m.clear_raw_input_contents();
              m.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1);
            }).find("send it in raw_input_contents"),
            std::string::npos);
}

TEST(ServeGrpcCodec, ResponseHasOneRawEntryPerOutput) {
  infer_response response{"m", "1", "id", {}};
  response.outputs.push_back({"y", ferry::dtype::f32, {1}, std::vector<std::byte>(4, std::byte{7}), std::nullopt});
  response.outputs.push_back({"z", ferry::dtype::f32, {2}, {}, shm_ref{"out", 64, 8}});
  inference::ModelInferResponse m;
  to_grpc(response, m);
  EXPECT_EQ(m.model_name(), "m");
  EXPECT_EQ(m.id(), "id");
  ASSERT_EQ(m.outputs_size(), 2);
  ASSERT_EQ(m.raw_output_contents_size(), 2);
  EXPECT_EQ(m.raw_output_contents(0), std::string(4, '\x07'));
  EXPECT_TRUE(m.raw_output_contents(1).empty());
  EXPECT_EQ(m.outputs(1).parameters().at("shared_memory_region").string_param(), "out");
  EXPECT_EQ(m.outputs(1).parameters().at("shared_memory_offset").uint64_param(), 64U);
  EXPECT_EQ(m.outputs(1).shape(0), 2);
}

// KServe's "timeout" request parameter (microseconds, as Triton's client sends it).
TEST(ServeGrpcCodec, ReadsTheTimeoutParameter) {
  inference::ModelInferRequest m;
  auto* in = m.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  in->add_shape(1);
  m.add_raw_input_contents(std::string(4, '\0'));
  EXPECT_FALSE(from_grpc(m).timeout.has_value());
  (*m.mutable_parameters())["timeout"] = int_param(250000);
  EXPECT_EQ(from_grpc(m).timeout, std::chrono::microseconds(250000));
  (*m.mutable_parameters())["timeout"] = int_param(-1);
  EXPECT_NE(error_of([&] { (void)from_grpc(m); }).find("parameter \"timeout\" must be a non-negative integer"),
            std::string::npos);
  (*m.mutable_parameters())["timeout"] = string_param("soon");
  EXPECT_NE(error_of([&] { (void)from_grpc(m); }).find("\"timeout\""), std::string::npos);
}

}  // namespace
