#include "serve/transport/grpc/grpc_message_stream.hpp"

#include <algorithm>

namespace ferry::serve {
namespace {

// Lets go of slices inside a gRPC execution context: a ByteBuffer takes a reference to each, the
// caller's go, and the ByteBuffer's destruction (grpc_byte_buffer_destroy, which makes a context)
// drops the last ones.
void release(grpc::Slice* slices, std::size_t count) {
  const grpc::ByteBuffer last(slices, count);
  for (std::size_t i = 0; i < count; ++i) slices[i] = grpc::Slice();
}

}  // namespace

consuming_message_stream::consuming_message_stream(grpc::ByteBuffer& message) {
  ok_ = message.Dump(&slices_).ok();
  message.Clear();  // the slices are held here alone now
  if (!ok_) {
    release(slices_.data(), slices_.size());
    slices_.clear();
  }
}

consuming_message_stream::~consuming_message_stream() { release(slices_.data(), slices_.size()); }

bool consuming_message_stream::Next(const void** data, int* size) {
  if (backed_up_ > 0) {
    const grpc::Slice& last = slices_[next_ - 1];
    *data = last.begin() + (last.size() - backed_up_);
    *size = static_cast<int>(backed_up_);
    read_ += static_cast<std::int64_t>(backed_up_);
    backed_up_ = 0;
    return true;
  }
  // The slice handed out before has been read past: its bytes go now.
  if (next_ > 0) release(&slices_[next_ - 1], 1);
  while (next_ < slices_.size() && slices_[next_].size() == 0) ++next_;
  if (next_ == slices_.size()) return false;
  // A message is smaller than INT32_MAX (gRPC's receive limit), and so is each of its slices.
  const grpc::Slice& slice = slices_[next_++];
  *data = slice.begin();
  *size = static_cast<int>(slice.size());
  read_ += static_cast<std::int64_t>(slice.size());
  return true;
}

void consuming_message_stream::BackUp(int count) {
  backed_up_ += static_cast<std::size_t>(count);
  read_ -= count;
}

bool consuming_message_stream::Skip(int count) {
  while (count > 0) {
    const void* data = nullptr;
    int size = 0;
    if (!Next(&data, &size)) return false;
    if (size > count) {
      BackUp(size - count);
      return true;
    }
    count -= size;
  }
  return true;
}

std::optional<std::string> peek_model_name(const grpc::ByteBuffer& message) {
  constexpr std::size_t longest = 2 + 255;  // the tag, a one- or two-byte length, a name of at most 255 bytes
  std::vector<grpc::Slice> slices;
  if (!message.Dump(&slices).ok()) return std::nullopt;
  std::string head;
  for (const auto& slice : slices) {
    head.append(reinterpret_cast<const char*>(slice.begin()), std::min(slice.size(), longest + 1 - head.size()));
    if (head.size() > longest) break;
  }
  // Tag 0x0a: field 1, length-delimited; then the length as a varint of one or two bytes.
  if (head.size() < 2 || head[0] != 0x0a) return std::nullopt;
  std::size_t length = static_cast<unsigned char>(head[1]);
  std::size_t at = 2;
  if (length & 0x80) {
    if (head.size() < 3 || (static_cast<unsigned char>(head[2]) & 0x80)) return std::nullopt;
    length = (length & 0x7f) | (static_cast<std::size_t>(static_cast<unsigned char>(head[2])) << 7);
    at = 3;
  }
  if (at + length > head.size()) return std::nullopt;
  return head.substr(at, length);
}

}  // namespace ferry::serve
