#include "serve/service/index_values.hpp"

#include <algorithm>
#include <vector>

#include "ferry/session/index_check.hpp"
#include "serve/shm/shm_guarded_copy.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

// The first violation in a client's shared-memory range, read through a small buffer by the
// guarded copy: the client can shrink its object under the read (shm_guarded_copy.hpp).
std::optional<index_violation> violation_in_shared_memory(std::span<const std::byte> data, const tensor_spec& spec,
                                                          std::span<const std::int64_t> shape) {
  constexpr std::size_t chunk_bytes = std::size_t{64} << 10;  // a multiple of every element size
  thread_local std::vector<std::byte> chunk(chunk_bytes);
  const std::size_t element = size_of(spec.type);
  for (std::size_t offset = 0; offset < data.size(); offset += chunk_bytes) {
    const auto piece = data.subspan(offset, std::min(chunk_bytes, data.size() - offset));
    const std::span<std::byte> copy(chunk.data(), piece.size());
    if (!copy_from_client_memory(copy, piece))
      throw bad_request("input '" + spec.name + "': its shared-memory region shrank while it was read");
    if (auto v = find_index_violation(copy, spec, {})) {
      // Found in this piece: its position in the whole tensor.
      const auto flat = static_cast<std::uint64_t>(v->position.front()) + offset / element;
      v->position = unravel(flat, shape);
      v->count = 1;  // counted in this piece only: the message claims no total
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

void check_index_values(const model_signature& sig, const infer_request& request) {
  for (std::size_t i = 0; i < sig.inputs.size() && i < request.inputs.size(); ++i) {
    const tensor_spec& spec = sig.inputs[i];
    const input_tensor& in = request.inputs[i];
    if (!spec.index_bound || in.cuda_device) continue;  // CUDA shared memory: checked on the GPU
    const auto found = in.shared_memory ? violation_in_shared_memory(in.data, spec, in.shape)
                                        : find_index_violation(in.data, spec, in.shape);
    if (found) throw bad_request("model '" + request.model + "': " + describe(*found));
  }
}

}  // namespace ferry::serve
