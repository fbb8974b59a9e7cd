// Reads a ModelInferRequest so that each tensor of raw_input_contents is copied once, into a
// buffer of exactly its size, straight from the bytes as they arrive. Protobuf's own parser
// reserves at most 50 MB for a bytes field and grows the string from there, doubling it: a 1000
// MiB tensor was copied five times and held at its peak the 800 MB buffer being given up and the
// 1600 MB one replacing it. Here every other field is parsed by protobuf as usual (they are
// small), and raw_input_contents (field 7) is read field by field past it.
//
// Read from a stream that lets go of its bytes as they are read (grpc_message_stream.hpp), a
// message of N bytes takes N and the stream's slice while it is read: the one contiguous copy a
// tensor needs (an engine reads it whole), and nothing more. Each buffer is aligned as an
// allocation is (__STDCPP_DEFAULT_NEW_ALIGNMENT__), so an engine on the host reads it in place.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <google/protobuf/io/zero_copy_stream.h>

#include "kserve_v2.pb.h"

namespace ferry::serve {

// One tensor's bytes, owned.
class raw_tensor_bytes {
 public:
  explicit raw_tensor_bytes(std::size_t size);  // uninitialised: filled by the reader
  [[nodiscard]] std::span<std::byte> bytes() noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_.get(), size_}; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_;
};

struct received_infer_request {
  inference::ModelInferRequest message;      // every field but raw_input_contents
  std::vector<raw_tensor_bytes> raw_inputs;  // raw_input_contents, in order
  // The raw inputs' bytes, in order, as from_grpc takes them.
  [[nodiscard]] std::vector<std::span<const std::byte>> raw_views() const;
};

// Reads one ModelInferRequest of `message_bytes` bytes from `stream`. False for bytes that are no
// such message, or a tensor said to be longer than what is left of them (refused before its
// buffer is allocated); `into` then holds what was read. Throws std::bad_alloc when a tensor's
// buffer cannot be had.
[[nodiscard]] bool read_infer_request(google::protobuf::io::ZeroCopyInputStream& stream, std::size_t message_bytes,
                                      received_infer_request& into);

}  // namespace ferry::serve
