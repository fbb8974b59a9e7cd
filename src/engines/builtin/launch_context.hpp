// The execution context of a built-in workload that is one kernel launch over its bound
// tensors (touch, reduce, sparse): checks bindings, makes its device current, and calls the
// workload's launcher with the addresses in concrete-I/O order. Holds no per-request state, so
// enqueue is capturable into a CUDA graph.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engines/builtin/tensor_bindings.hpp"
#include "ferry/engine.hpp"

namespace ferry::builtin {

class launch_context final : public engine_context {
 public:
  // Enqueues the workload: addresses of every tensor (in concrete-I/O order) and the stream.
  using launcher = std::function<void(std::span<void* const> addresses, cudaStream_t stream)>;

  // Made on the current device, which enqueue makes current again.
  launch_context(std::string engine_name, std::vector<std::string> tensor_names, launcher launch);

  void bind(std::string_view tensor, void* device_address) override;
  void enqueue(stream_ref stream) override;

 private:
  tensor_bindings bindings_;
  launcher launch_;
  int device_;
};

}  // namespace ferry::builtin
