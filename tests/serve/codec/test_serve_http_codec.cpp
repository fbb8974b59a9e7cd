// The KServe v2 HTTP inference body with the binary tensor data extension, both ways, and every
// error path of the parser.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/codec/http_infer_codec.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;
using json = nlohmann::json;

std::string with_binary(const json& header, const std::string& blobs, std::string& length) {
  const std::string text = header.dump();
  length = std::to_string(text.size());
  return text + blobs;
}

std::string floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// Runs `call`, expects request_error with `status`, returns its message.
using ferry::serve::testing::error_of;

TEST(ServeHttpCodec, ParsesJsonData) {
  const std::string body = R"({"id": "r1", "inputs": [
      {"name": "a", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3.5, -4]]},
      {"name": "b", "shape": [3], "datatype": "BOOL", "data": [true, false, true]},
      {"name": "c", "shape": [2], "datatype": "INT64", "data": [-9007199254740993, 7]}],
      "outputs": [{"name": "y", "parameters": {"binary_data": true}}, {"name": "z"}]})";
  const auto parsed = parse_http_infer_request(body, std::nullopt, {});
  const auto& r = parsed.request;
  EXPECT_EQ(r.id, "r1");
  ASSERT_EQ(r.inputs.size(), 3U);
  EXPECT_EQ(r.inputs[0].shape, (std::vector<std::int64_t>{2, 2}));
  ASSERT_EQ(r.inputs[0].data.size(), 16U);
  float a[4];
  std::memcpy(a, r.inputs[0].data.data(), 16);
  EXPECT_EQ(a[2], 3.5F);
  EXPECT_EQ(a[3], -4.0F);
  EXPECT_EQ(r.inputs[1].type, ferry::dtype::boolean);
  EXPECT_EQ(static_cast<int>(r.inputs[1].data[1]), 0);
  std::int64_t c0 = 0;
  std::memcpy(&c0, r.inputs[2].data.data(), 8);
  EXPECT_EQ(c0, -9007199254740993LL);  // exact, not through a double
  ASSERT_EQ(r.outputs.size(), 2U);
  EXPECT_EQ(parsed.binary_outputs, (std::vector<bool>{true, false}));
}

TEST(ServeHttpCodec, ParsesBinaryDataInInputOrder) {
  std::string length;
  const json header = {
      {"inputs",
       {{{"name", "a"}, {"shape", {2}}, {"datatype", "FP32"}, {"parameters", {{"binary_data_size", 8}}}},
        {{"name", "b"}, {"shape", {1}}, {"datatype", "FP32"}, {"data", {5}}},
        {{"name", "c"}, {"shape", {1}}, {"datatype", "FP32"}, {"parameters", {{"binary_data_size", 4}}}}}},
      {"parameters", {{"binary_data_output", true}}}};
  const std::string body = with_binary(header, floats({1, 2}) + floats({3}), length);
  const auto parsed = parse_http_infer_request(body, length, {});
  const auto& in = parsed.request.inputs;
  EXPECT_TRUE(parsed.binary_by_default);
  float v = 0;
  std::memcpy(&v, in[0].data.data() + 4, 4);
  EXPECT_EQ(v, 2.0F);
  std::memcpy(&v, in[2].data.data(), 4);
  EXPECT_EQ(v, 3.0F);
  // Binary inputs point into the body: no copy.
  EXPECT_EQ(reinterpret_cast<const char*>(in[0].data.data()), body.data() + std::stoul(length));
}

TEST(ServeHttpCodec, RefusesBadBodies) {
  std::string length;
  const json one_binary = {
      {"inputs", {{{"name", "a"}, {"shape", {2}}, {"datatype", "FP32"}, {"parameters", {{"binary_data_size", 8}}}}}}};
  const auto parse = [](const std::string& body, std::optional<std::string> len, http_limits limits = {}) {
    return [=] {
      (void)parse_http_infer_request(body, len ? std::optional<std::string_view>(*len) : std::nullopt, limits);
    };
  };
  const auto bad = error_status::bad_request;
  std::string body = with_binary(one_binary, floats({1}), length);
  EXPECT_NE(error_of(parse(body, length), bad).find("truncated binary data: input 'a' needs 8 bytes"),
            std::string::npos);
  body = with_binary(one_binary, floats({1, 2, 3}), length);
  EXPECT_NE(error_of(parse(body, length), bad).find("4 bytes after"), std::string::npos);
  EXPECT_NE(error_of(parse(body, "x12"), bad).find("not a byte count"), std::string::npos);
  EXPECT_NE(error_of(parse(body, std::to_string(body.size() + 1)), bad).find("the body has only"), std::string::npos);
  EXPECT_NE(
      error_of(parse(body, length, http_limits{.max_inference_header_bytes = 10}), error_status::payload_too_large)
          .find("exceeds the server's limit of 10"),
      std::string::npos);
  EXPECT_NE(error_of(parse(body, std::nullopt), bad).find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of(parse(one_binary.dump(), std::nullopt), bad).find("no Inference-Header-Content-Length"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": []})", std::nullopt), bad).find("non-empty \"inputs\""), std::string::npos);
  EXPECT_NE(
      error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "BYTES", "data": ["x"]}]})", std::nullopt),
               bad)
          .find("datatype 'BYTES'"),
      std::string::npos);
  EXPECT_NE(
      error_of(parse(R"({"inputs": [{"name": "a", "shape": [-1], "datatype": "FP32", "data": [1]}]})", std::nullopt),
               bad)
          .find("non-negative"),
      std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32"}]})", std::nullopt), bad)
                .find("input 'a' has no data"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [2], "datatype": "INT8", "data": [1, 300]}]})",
                           std::nullopt),
                     bad)
                .find("element 1 (300) is out of range"),
            std::string::npos);
  EXPECT_NE(
      error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "INT32", "data": [1.5]}]})", std::nullopt),
               bad)
          .find("not an integer"),
      std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1],
                                "parameters": {"unknown": 1}}]})",
                           std::nullopt),
                     bad)
                .find("parameter \"unknown\""),
            std::string::npos);
  EXPECT_NE(
      error_of(parse(R"({"inputs": [{"name": "a", "shape": [4294967296, 4294967296, 4294967296], "datatype": "FP32",
                                "data": [1]}]})",
                     std::nullopt),
               bad)
          .find("too many elements"),
      std::string::npos);
}

TEST(ServeHttpCodec, RefusesDeepNestingAnywhereWithoutRecursing) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const auto parse = [](std::string body) {
    return [body] { (void)parse_http_infer_request(body, std::nullopt, {}); };
  };
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": )" + deep + "}]}"))
                .find("nested deeper than 64 levels"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"id": )" + deep + R"(, "inputs": [{"name": "a", "shape": [1], "datatype": "FP32",
                           "data": [1]}]})"))
                .find("nested deeper than 64 levels"),
            std::string::npos);
  // Within the limit, an "id" of the wrong kind is named without being dumped whole.
  const std::string message = error_of(parse(R"({"id": [[[[[")" + std::string(10'000, '7') + R"("]]]]], "inputs": [
      {"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}]})"));
  EXPECT_NE(message.find("\"id\" must be a string, got an array of 1 elements"), std::string::npos) << message;
  EXPECT_LT(message.size(), 200U);
}

// Tensor data may be as long as the body limit allows (it becomes no document); anything else is
// a handful of values, and a document of junk is refused before it grows.
TEST(ServeHttpCodec, BoundsTheDocumentButNotTheTensorData) {
  std::string many = "[0";
  for (int i = 1; i < 200'000; ++i) many += ",1";
  many += "]";
  const auto parsed = parse_http_infer_request(
      R"({"inputs": [{"name": "a", "shape": [200000], "datatype": "INT8", "data": )" + many + "}]}", std::nullopt, {});
  EXPECT_EQ(parsed.request.inputs[0].data.size(), 200'000U);
  EXPECT_NE(error_of([&] {
              (void)parse_http_infer_request(R"({"id": )" + many + R"(, "inputs": [{"name": "a", "shape": [1],
                                             "datatype": "INT8", "data": [1]}]})",
                                             std::nullopt, {});
            }).find("more than 65536 values"),
            std::string::npos);
}

TEST(ServeHttpCodec, RefusesNumbersBeyondADoubleAsBadRequests) {
  const std::string body = R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1e999]}]})";
  EXPECT_NE(error_of([&] { (void)parse_http_infer_request(body, std::nullopt, {}); }).find("a number out of range"),
            std::string::npos);
}

TEST(ServeHttpCodec, RefusesFloatsBeyondTheirTypeInsteadOfStoringInfinity) {
  const auto body = [](const char* type, const std::string& data) {
    return R"({"inputs": [{"name": "a", "shape": [2], "datatype": ")" + std::string(type) + R"(", "data": [0, )" +
           data + "]}]}";
  };
  const auto parse = [](const std::string& text) {
    return [text] { (void)parse_http_infer_request(text, std::nullopt, {}); };
  };
  EXPECT_NE(error_of(parse(body("FP32", "1e300"))).find("input 'a': element 1 (1e300) is out of range for FP32"),
            std::string::npos);
  EXPECT_NE(error_of(parse(body("FP32", "-3.5e38"))).find("out of range for FP32"), std::string::npos);
  EXPECT_NE(error_of(parse(body("FP16", "65520"))).find("element 1 (65520) is out of range for FP16"),
            std::string::npos);
  EXPECT_NE(error_of(parse(body("BF16", "3.4e38"))).find("out of range for BF16"), std::string::npos);

  // The largest finite values as printed (they round to the type's maximum) are taken.
  const auto second = [](const std::string& text) {
    const auto parsed = parse_http_infer_request(text, std::nullopt, {});
    const auto bytes = parsed.request.inputs[0].data;
    return std::vector<std::byte>(bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2), bytes.end());
  };
  float f = 0;
  std::memcpy(&f, second(body("FP32", "3.4028235e38")).data(), 4);
  EXPECT_EQ(f, std::numeric_limits<float>::max());
  std::uint16_t half_bits = 0;
  std::memcpy(&half_bits, second(body("FP16", "65519")).data(), 2);
  EXPECT_EQ(half_bits, 0x7BFF);  // 65504
  std::memcpy(&half_bits, second(body("BF16", "-3.38e38")).data(), 2);
  EXPECT_EQ(half_bits, 0xFF7E);
}

// Each input is checked (against the model, in the server) before any of its data is decoded: a
// wrong tensor costs its header, not a decode of what may be megabytes of numbers.
TEST(ServeHttpCodec, ChecksEachInputBeforeDecodingItsData) {
  std::vector<std::string> checked;
  const input_check refuse_b = [&](const input_tensor& in) {
    checked.push_back(in.name + " " + std::string(ferry::to_string(in.type)) + " " + shape_text(in.shape));
    EXPECT_TRUE(in.data.empty());
    if (in.name == "b") throw bad_request("the model has no input 'b'");
  };
  // "b"'s data is not even numbers: the check's refusal shows it was never decoded.
  const std::string body = R"({"inputs": [{"name": "a", "shape": [2], "datatype": "INT32", "data": [1, 2]},
      {"name": "b", "shape": [2], "datatype": "FP32", "data": ["x", "y"]}]})";
  EXPECT_NE(error_of([&] { (void)parse_http_infer_request(body, std::nullopt, {}, refuse_b); }).find("no input 'b'"),
            std::string::npos);
  EXPECT_EQ(checked, (std::vector<std::string>{"a INT32 [2]", "b FP32 [2]"}));

  // With "data" before "datatype" and "shape" (a C++ client's std::map sorts keys), the data is
  // read in a second pass, still after the check.
  checked.clear();
  const std::string data_first = R"({"inputs": [{"data": ["x"], "datatype": "FP32", "name": "b", "shape": [1]}]})";
  EXPECT_NE(
      error_of([&] { (void)parse_http_infer_request(data_first, std::nullopt, {}, refuse_b); }).find("no input 'b'"),
      std::string::npos);
  EXPECT_EQ(checked, (std::vector<std::string>{"b FP32 [1]"}));
}

TEST(ServeHttpCodec, DecodesDataWhereverItStandsInTheInput) {
  const std::string body = R"({"inputs": [
      {"data": [[1, 2], [3, 4]], "datatype": "INT32", "name": "a", "shape": [2, 2]},
      {"name": "b", "data": 7, "shape": [], "datatype": "INT64"},
      {"name": "c", "shape": [3], "datatype": "BOOL", "data": [true, false, true]}]})";
  const auto parsed = parse_http_infer_request(body, std::nullopt, {});
  const auto& in = parsed.request.inputs;
  ASSERT_EQ(in.size(), 3U);
  std::int32_t a[4];
  ASSERT_EQ(in[0].data.size(), sizeof a);
  std::memcpy(a, in[0].data.data(), sizeof a);
  EXPECT_EQ(a[3], 4);
  std::int64_t b = 0;
  ASSERT_EQ(in[1].data.size(), sizeof b);
  std::memcpy(&b, in[1].data.data(), sizeof b);
  EXPECT_EQ(b, 7);
  EXPECT_EQ(static_cast<int>(in[2].data[2]), 1);
}

TEST(ServeHttpCodec, RefusesDataThatDoesNotFitItsShapeWithoutAllocatingTheShape) {
  const auto parse = [](std::string body) {
    return [body] { (void)parse_http_infer_request(body, std::nullopt, {}); };
  };
  // 2^40 elements claimed by a request of a hundred bytes: room for them is never reserved.
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1099511627776], "datatype": "FP32", "data": [1]}]})"))
                .find("its shape has 1099511627776 elements but \"data\" holds 1"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"data": [1], "name": "a", "shape": [65536, 65536], "datatype": "INT8"}]})"))
                .find("its shape has 4294967296 elements but \"data\" holds 1"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "data": [1, 2, 3]}]})"))
                .find("its shape has 2 elements but \"data\" holds more"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [3], "datatype": "FP32", "data": [[1], [2]]}]})"))
                .find("its shape has 3 elements but \"data\" holds 2"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "data": [1, {"b": 2}]}]})"))
                .find("element 1 (an object) is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"data": [1, {"b": [2]}], "name": "a", "shape": [2], "datatype": "FP32"}]})"))
                .find("element 1 (an object) is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [null]}]})"))
                .find("element 0 (null) is not a number"),
            std::string::npos);
  EXPECT_NE(
      error_of(
          parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "INT64", "data": [99999999999999999999]}]})"))
          .find("element 0 (99999999999999999999) is out of range for INT64"),
      std::string::npos);
  EXPECT_NE(error_of(parse(R"({"inputs": [{"name": "a", "shape": [1], "datatype": "BOOL", "data": [1]}]})"))
                .find("element 0 (1) is not true or false"),
            std::string::npos);
  const std::string long_name(10'000, 'n');
  const std::string message = error_of(
      parse(R"({"inputs": [{"name": ")" + long_name + R"(", "shape": [1], "datatype": "FP32", "data": ["x"]}]})"));
  EXPECT_NE(message.find("is not a number"), std::string::npos);
  EXPECT_LT(message.size(), 200U);
}

TEST(ServeHttpCodec, ParsesSharedMemoryReferences) {
  const std::string body = R"({"inputs": [{"name": "a", "shape": [4], "datatype": "FP32",
      "parameters": {"shared_memory_region": "in", "shared_memory_offset": 64, "shared_memory_byte_size": 16}}],
      "outputs": [{"name": "y", "parameters": {"shared_memory_region": "out", "shared_memory_byte_size": 16}}]})";
  const auto parsed = parse_http_infer_request(body, std::nullopt, {});
  ASSERT_TRUE(parsed.request.inputs[0].shared_memory.has_value());
  EXPECT_EQ(parsed.request.inputs[0].shared_memory->region, "in");
  EXPECT_EQ(parsed.request.inputs[0].shared_memory->offset, 64U);
  EXPECT_EQ(parsed.request.inputs[0].shared_memory->byte_size, 16U);
  ASSERT_TRUE(parsed.request.outputs[0].shared_memory.has_value());
  EXPECT_EQ(parsed.request.outputs[0].shared_memory->offset, 0U);
}

TEST(ServeHttpCodec, AcceptsTheEmptyFinalResponseParameterTritonClientsSend) {
  const std::string body = R"({"parameters": {"triton_enable_empty_final_response": true},
      "inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1.0]}]})";
  EXPECT_EQ(parse_http_infer_request(body, std::nullopt, {}).request.inputs.size(), 1U);
}

TEST(ServeHttpCodec, EncodesJsonAndBinaryOutputs) {
  infer_response response{"m", "1", "r7", {}};
  const std::string y = floats({1.5F, -2});
  response.outputs.push_back({"y", ferry::dtype::f32, {2}, {}, std::nullopt});
  response.outputs[0].data.resize(8);
  std::memcpy(response.outputs[0].data.data(), y.data(), 8);
  response.outputs.push_back(response.outputs[0]);
  response.outputs[1].name = "z";

  const auto plain = encode_http_infer_response(response, {false, false});
  EXPECT_FALSE(plain.header_length.has_value());
  const json doc = json::parse(plain.body);
  EXPECT_EQ(doc["id"], "r7");
  EXPECT_EQ(doc["model_name"], "m");
  EXPECT_EQ(doc["outputs"][0]["data"], json({1.5, -2.0}));
  EXPECT_EQ(doc["outputs"][0]["shape"], json({2}));

  const auto binary = encode_http_infer_response(response, {false, true});
  ASSERT_TRUE(binary.header_length.has_value());
  const json header = json::parse(binary.body.substr(0, *binary.header_length));
  EXPECT_EQ(header["outputs"][1]["parameters"]["binary_data_size"], 8);
  EXPECT_FALSE(header["outputs"][1].contains("data"));
  EXPECT_EQ(binary.body.substr(*binary.header_length), y);

  // An output written into the client's shared memory is described by name, datatype and shape
  // only, as Triton's server does (its C++ client reads any output "parameters" as binary data).
  response.outputs[0].shared_memory = shm_ref{"out", 0, 8};
  const json in_shm = json::parse(encode_http_infer_response(response, {false, false}).body);
  EXPECT_FALSE(in_shm["outputs"][0].contains("parameters"));
  EXPECT_FALSE(in_shm["outputs"][0].contains("data"));
  EXPECT_EQ(in_shm["outputs"][0]["shape"], json({2}));
  response.outputs[0].shared_memory.reset();

  EXPECT_EQ(binary_choices({"z"}, {true}, false, response), (std::vector<bool>{false, true}));
  EXPECT_EQ(binary_choices({}, {}, true, response), (std::vector<bool>{true, true}));
}

// KServe's "timeout" request parameter (microseconds, as Triton's client sends it).
TEST(ServeHttpCodec, ReadsTheTimeoutParameter) {
  const auto with = [](const std::string& parameters) {
    return R"({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}], "parameters": )" + parameters +
           "}";
  };
  EXPECT_FALSE(parse_http_infer_request(with("{}"), std::nullopt, {}).request.timeout.has_value());
  EXPECT_EQ(parse_http_infer_request(with(R"({"timeout": 1500})"), std::nullopt, {}).request.timeout,
            std::chrono::microseconds(1500));
  // More than a duration holds: the longest one, never a negative overflow.
  EXPECT_EQ(parse_http_infer_request(with(R"({"timeout": 18446744073709551615})"), std::nullopt, {}).request.timeout,
            std::chrono::microseconds::max());
  EXPECT_NE(error_of([&] {
              (void)parse_http_infer_request(with(R"({"timeout": -5})"), std::nullopt, {});
            }).find("\"timeout\" must be a non-negative integer"),
            std::string::npos);
}

TEST(ServeHttpCodec, EachInputIsCheckedOnceWhereverItsDataComes) {
  // Data after the header (decoded as it is read), data before it (a second pass), and binary.
  const std::string json_part =
      R"({"inputs": [{"name": "a", "datatype": "FP32", "shape": [2], "data": [1, 2]},)"
      R"( {"data": [3], "name": "b", "datatype": "FP32", "shape": [1]},)"
      R"( {"name": "c", "datatype": "FP32", "shape": [1], "parameters": {"binary_data_size": 4}}]})";
  const std::string body = json_part + std::string(4, '\0');
  const std::string length = std::to_string(json_part.size());
  std::vector<std::string> checked;
  const auto parsed =
      parse_http_infer_request(body, length, {}, [&](const input_tensor& t) { checked.push_back(t.name); });
  EXPECT_EQ(checked, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(parsed.request.inputs.size(), 3U);
  EXPECT_EQ(parsed.request.inputs[1].data.size(), sizeof(float));
}

}  // namespace
