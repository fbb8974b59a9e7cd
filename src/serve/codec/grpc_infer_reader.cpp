#include "serve/codec/grpc_infer_reader.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <string>

namespace ferry::serve {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr int raw_input_contents_field = 7;

}  // namespace

raw_tensor_bytes::raw_tensor_bytes(std::size_t size) : data_(new std::byte[size]), size_(size) {}

std::vector<std::span<const std::byte>> received_infer_request::raw_views() const {
  std::vector<std::span<const std::byte>> views;
  views.reserve(raw_inputs.size());
  for (const auto& raw : raw_inputs) views.push_back(raw.bytes());
  return views;
}

bool read_infer_request(google::protobuf::io::ZeroCopyInputStream& stream, std::size_t message_bytes,
                        received_infer_request& into) {
  if (message_bytes > static_cast<std::size_t>(INT_MAX)) return false;
  std::string rest;  // every other field, as it came
  {
    google::protobuf::io::CodedInputStream in(&stream);
    in.SetTotalBytesLimit(INT_MAX);
    // The message's end as a limit: reaching it is the message's end, and what is left before it
    // bounds every length the message gives.
    (void)in.PushLimit(static_cast<int>(message_bytes));
    google::protobuf::io::StringOutputStream rest_stream(&rest);
    google::protobuf::io::CodedOutputStream rest_out(&rest_stream);
    for (;;) {
      const std::uint32_t tag = in.ReadTag();
      if (tag == 0) {
        if (!in.ConsumedEntireMessage()) return false;
        break;
      }
      if (WireFormatLite::GetTagFieldNumber(tag) != raw_input_contents_field ||
          WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        if (!WireFormatLite::SkipField(&in, tag, &rest_out)) return false;
        continue;
      }
      std::uint32_t size = 0;
      if (!in.ReadVarint32(&size) || size > static_cast<std::uint32_t>(INT_MAX)) return false;
      // Never more than is left of the message: a length past its end is refused before any buffer.
      if (static_cast<std::int64_t>(size) > in.BytesUntilLimit()) return false;
      auto& raw = into.raw_inputs.emplace_back(size);
      if (size > 0 && !in.ReadRaw(raw.bytes().data(), static_cast<int>(size))) return false;
    }
  }
  return into.message.ParseFromString(rest);
}

}  // namespace ferry::serve
