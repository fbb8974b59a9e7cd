// A gRPC message's bytes as protobuf's input stream, letting go of each slice of them once the
// parser has read past it. Parsing a ModelInferRequest copies its tensors out of the message
// (raw_input_contents): read from the ByteBuffer as it is, a message of N bytes took 2N while it
// was parsed; read through this stream it takes N and a slice.
//
// It runs on any thread, gRPC's or not: the last reference to a slice gRPC received goes back to
// gRPC's memory quota, which may schedule work on the calling thread's gRPC execution context, and
// a thread of the server's own has none (gRPC 1.51 dereferences the missing context: SIGSEGV). So
// the stream never drops a last reference itself; it hands it to a ByteBuffer, whose destruction
// makes a context first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/io/zero_copy_stream.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

namespace ferry::serve {

class consuming_message_stream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  // Takes the message's bytes out of `message`, which is left empty.
  explicit consuming_message_stream(grpc::ByteBuffer& message);
  ~consuming_message_stream() override;
  consuming_message_stream(const consuming_message_stream&) = delete;
  consuming_message_stream& operator=(const consuming_message_stream&) = delete;

  // False when the bytes could not be taken out of the message (then nothing is read).
  [[nodiscard]] bool ok() const noexcept { return ok_; }

  bool Next(const void** data, int* size) override;
  void BackUp(int count) override;
  bool Skip(int count) override;
  [[nodiscard]] std::int64_t ByteCount() const override { return read_; }

 private:
  std::vector<grpc::Slice> slices_;
  std::size_t next_ = 0;       // the slice Next() hands out next
  std::size_t backed_up_ = 0;  // bytes at the end of slice next_ - 1 handed back (BackUp)
  std::int64_t read_ = 0;
  bool ok_ = false;
};

// The model a ModelInferRequest names, read from its first bytes without parsing it: model_name
// is field 1, which encoders write first. For counting a request refused before it is parsed
// (its size did not fit the in-flight budget) against its model; nothing when the message does
// not start with it.
[[nodiscard]] std::optional<std::string> peek_model_name(const grpc::ByteBuffer& message);

}  // namespace ferry::serve
