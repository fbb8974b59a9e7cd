// One inference request and its response, as every front end (HTTP, gRPC) hands them to the
// scheduler: protocol-neutral, tensors as typed bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "serve/vocabulary/shm_client.hpp"

namespace ferry::serve {

// Triton's clients ask decoupled models for an empty final response with this request parameter
// (perf_analyzer sets it on every gRPC request). ferry's models are not decoupled: a request gets
// exactly one response, which is its final one, so the parameter is accepted and changes nothing.
inline constexpr const char* empty_final_response_parameter = "triton_enable_empty_final_response";

// A tensor's bytes in a client's registered shared-memory region (the shared-memory extensions).
struct shm_ref {
  std::string region;
  std::size_t offset = 0;
  std::size_t byte_size = 0;
};

struct input_tensor {
  std::string name;
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;
  // The tensor's bytes, row-major. Points into memory the front end keeps alive until the
  // response is ready: the HTTP body, a gRPC message, a shared-memory region, or `storage`.
  std::span<const std::byte> data;
  // Set when the client put the tensor in a shared-memory region; `data` then points there once
  // the region has been looked up and the range checked.
  std::optional<shm_ref> shared_memory;
  // Set when that region is a CUDA shared-memory region: `data` is then device memory on this
  // GPU (the region's opened IPC pointer + offset), which only a GPU executor may read.
  std::optional<int> cuda_device;
};

struct requested_output {
  std::string name;
  // Write the output here instead of returning it in the response.
  std::optional<shm_ref> shared_memory;
};

// Where a requested output goes instead of the response, once its shared-memory region has been
// looked up and the range checked: host memory (a system region) or one GPU's memory (a CUDA
// region).
struct output_destination {
  std::span<std::byte> bytes;      // empty: the output goes in the response
  std::optional<int> cuda_device;  // set: `bytes` is device memory on this GPU
  [[nodiscard]] bool empty() const noexcept { return bytes.empty(); }
};

struct infer_request {
  std::string model;
  std::string version;  // empty: the model's only version
  std::string id;       // echoed in the response
  std::vector<input_tensor> inputs;
  std::vector<requested_output> outputs;  // what to return; empty: every output
  // The longest the client lets the request wait for a worker (KServe's "timeout" parameter, in
  // microseconds); none, or 0: the server's default.
  std::optional<std::chrono::microseconds> timeout;
  // Who sent the request, set by the front end when it names shared-memory regions: they are
  // looked up among that client's own (shm_client.hpp). None: the server's own caller.
  std::optional<shm_client> client;
  // Every input passed check_input against the model's signature as the front end decoded it
  // (HTTP checks each input before its data is read); plan_request then does not check it again.
  bool inputs_checked = false;
  // Bytes decoded from a text form (JSON "data"), owned here; inputs[i].data may point into it.
  // A deque, so growing it never moves what earlier inputs point at.
  std::deque<std::vector<std::byte>> storage;
};

struct output_tensor {
  std::string name;
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;           // empty when written to shared memory
  std::optional<shm_ref> shared_memory;  // where the output was written instead
};

struct infer_response {
  std::string model;
  std::string version;
  std::string id;
  std::vector<output_tensor> outputs;
};

// A client's "timeout" parameter (microseconds) as a duration; beyond what one can hold, the most.
[[nodiscard]] std::chrono::microseconds timeout_microseconds(std::uint64_t microseconds) noexcept;

// Elements of a concrete shape (every dim >= 0).
[[nodiscard]] std::size_t element_count(std::span<const std::int64_t> shape) noexcept;

// "[2,3,4]", for messages.
[[nodiscard]] std::string shape_text(std::span<const std::int64_t> shape);

}  // namespace ferry::serve
