// The gRPC inference messages as the server reads and writes them without extra copies: a
// request's raw_input_contents each read into one buffer of exactly its size (the rest of the
// message as protobuf parses it), and an answer whose tensors are the outputs' own buffers, in
// bytes any protobuf parser reads as the same ModelInferResponse.
#include <gtest/gtest.h>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "serve/codec/grpc_infer_codec.hpp"
#include "serve/codec/grpc_infer_reader.hpp"
#include "serve/transport/grpc/grpc_answer_bytes.hpp"

namespace {

using namespace ferry::serve;

inference::ModelInferRequest two_raw_inputs() {
  inference::ModelInferRequest m;
  m.set_model_name("m");
  m.set_id("7");
  for (const char* name : {"a", "b"}) {
    auto* in = m.add_inputs();
    in->set_name(name);
    in->set_datatype("FP32");
    in->add_shape(3);
  }
  m.add_raw_input_contents(std::string(12, '\x11'));
  (*m.mutable_parameters())["timeout"].set_int64_param(5);  // a field after the tensors
  m.add_raw_input_contents(std::string(12, '\x22'));
  m.add_outputs()->set_name("y");
  return m;
}

// Reads `bytes` in pieces of `piece` bytes, as gRPC's slices hand them over.
bool read(const std::string& bytes, received_infer_request& into, int piece = 5) {
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()), piece);
  return read_infer_request(stream, bytes.size(), into);
}

TEST(ServeGrpcReader, ReadsEachRawInputIntoABufferOfItsOwn) {
  const inference::ModelInferRequest m = two_raw_inputs();
  received_infer_request received;
  ASSERT_TRUE(read(m.SerializeAsString(), received));
  EXPECT_EQ(received.message.raw_input_contents_size(), 0);  // the tensors are apart
  EXPECT_EQ(received.message.model_name(), "m");
  EXPECT_EQ(received.message.parameters().at("timeout").int64_param(), 5);
  ASSERT_EQ(received.raw_inputs.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto bytes = received.raw_inputs[i].bytes();
    ASSERT_EQ(bytes.size(), 12U);
    EXPECT_EQ(std::memcmp(bytes.data(), m.raw_input_contents(static_cast<int>(i)).data(), 12), 0);
    // Aligned as an allocation is, so an engine on the host reads it in place.
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes.data()) % __STDCPP_DEFAULT_NEW_ALIGNMENT__, 0U);
  }
  const infer_request request = from_grpc(received.message, received.raw_views());
  ASSERT_EQ(request.inputs.size(), 2U);
  EXPECT_EQ(request.inputs[1].data.data(), received.raw_inputs[1].bytes().data());  // no copy
  EXPECT_EQ(request.outputs.size(), 1U);
}

TEST(ServeGrpcReader, RefusesWhatIsNoSuchMessage) {
  const std::string whole = two_raw_inputs().SerializeAsString();
  received_infer_request cut;
  EXPECT_FALSE(read(whole.substr(0, whole.size() - 3), cut));  // a tensor cut short
  // A tensor said to hold 1 GiB in a message of a few bytes: refused before any buffer is taken.
  std::string claims = "\x3a";
  for (std::uint32_t n = 1U << 30; n != 0; n >>= 7) claims += static_cast<char>((n & 0x7F) | (n >= 0x80 ? 0x80 : 0));
  claims += "abc";
  received_infer_request huge;
  EXPECT_FALSE(read(claims, huge));
  EXPECT_TRUE(huge.raw_inputs.empty());
  received_infer_request garbage;
  EXPECT_FALSE(read(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11), garbage));
  received_infer_request empty;
  EXPECT_TRUE(read("", empty));  // every field is optional
}

TEST(ServeGrpcAnswer, BytesParseAsTheSameResponseWithTheOutputsOwnBuffers) {
  infer_response response{"m", "1", "7", {}};
  output_tensor y{"y", ferry::dtype::f32, {2}, std::vector<std::byte>(8, std::byte{0x33}), std::nullopt};
  output_tensor in_region{"z", ferry::dtype::f32, {2}, {}, shm_ref{"r", 16, 8}};
  output_tensor empty{"e", ferry::dtype::f32, {0}, {}, std::nullopt};
  response.outputs = {y, in_region, empty};
  inference::ModelInferResponse expected;
  to_grpc(response, expected);

  const std::byte* y_buffer = response.outputs[0].data.data();
  const grpc::ByteBuffer bytes = infer_answer_bytes(std::move(response));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(bytes.Dump(&slices).ok());
  std::string flat;
  bool y_in_place = false;
  for (const auto& s : slices) {
    y_in_place = y_in_place || reinterpret_cast<const std::byte*>(s.begin()) == y_buffer;
    flat.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  EXPECT_TRUE(y_in_place);  // sent from the output's own buffer
  inference::ModelInferResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(flat));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, expected)) << parsed.DebugString() << "\n"
                                                                                    << expected.DebugString();
  EXPECT_EQ(parsed.raw_output_contents_size(), 3);
  EXPECT_EQ(parsed.raw_output_contents(0), std::string(8, '\x33'));
}

}  // namespace
