#include "serve/transport/grpc/grpc_answer_bytes.hpp"

#include <grpcpp/support/slice.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kserve_v2.pb.h"
#include "serve/codec/grpc_infer_codec.hpp"

namespace ferry::serve {
namespace {

// raw_output_contents: field 6, length-delimited.
constexpr char raw_output_tag = (6 << 3) | 2;

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

// A slice over `bytes` that owns them: freed when gRPC lets go of the last reference.
grpc::Slice owning_slice(std::vector<std::byte>&& bytes) {
  auto owned = std::make_unique<std::vector<std::byte>>(std::move(bytes));
  void* data = owned->data();
  const std::size_t size = owned->size();
  return {data, size, [](void* p) { delete static_cast<std::vector<std::byte>*>(p); }, owned.release()};
}

}  // namespace

grpc::ByteBuffer infer_answer_bytes(infer_response&& response) {
  inference::ModelInferResponse head;
  to_grpc_head(response, head);
  std::vector<grpc::Slice> slices;
  std::string framing = head.SerializeAsString();
  for (auto& out : response.outputs) {
    framing += raw_output_tag;
    append_varint(framing, out.data.size());
    if (out.data.empty()) continue;
    slices.emplace_back(framing);
    framing.clear();
    slices.push_back(owning_slice(std::move(out.data)));
  }
  if (!framing.empty()) slices.emplace_back(framing);
  return {slices.data(), slices.size()};
}

}  // namespace ferry::serve
