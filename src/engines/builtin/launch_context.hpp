// The execution context of a built-in workload that is one kernel launch over its bound
// tensors (touch, reduce, sparse): calls the workload's launcher with the addresses in
// concrete-I/O order (engine_context checks them and makes the context's GPU current). Holds no
// per-request state, so enqueue is capturable into a CUDA graph.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry::builtin {

class launch_context final : public engine_context {
 public:
  // Enqueues the workload: addresses of every tensor (in concrete-I/O order) and the stream.
  using launcher = std::function<void(std::span<void* const> addresses, cudaStream_t stream)>;

  // Made on the current device, which enqueue makes current again.
  launch_context(std::string engine_name, std::vector<std::string> tensor_names, launcher launch);

 private:
  void do_bind(std::size_t, void*) override {}  // the addresses are read at launch
  void do_enqueue(stream_ref stream) override;

  launcher launch_;
};

}  // namespace ferry::builtin
