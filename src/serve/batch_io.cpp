#include "serve/batch_io.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "ferry/error.hpp"
#include "ferry/streaming_copy.hpp"
#include "serve/shm_guarded_copy.hpp"

namespace ferry::serve {
namespace {

// Request tensors from this size up are streamed into a slot's input buffer, so the upload or the
// GPU's reads that follow do not wait on dirty lines in the CPU caches. Smaller ones are copied
// normally: a streaming store of a few KB saves the DMA next to nothing and only evicts lines.
constexpr std::size_t streaming_copy_min_bytes = std::size_t{256} << 10;

// A system region is host memory: one memcpy, guarded against the client shrinking the region
// under it (shm_guarded_copy.hpp). A CUDA region is device memory: one blocking
// cudaMemcpy from the output's host view, because a completed slot exposes its outputs only
// there (the session API has no view of its device output buffers), and the copy must have
// landed before the response tells the client the output is ready.
void write_to_destination(const output_destination& destination, std::span<const std::byte> bytes,
                          const std::string& output) {
  if (!destination.cuda_device) {
    if (!copy_to_client_memory(destination.bytes.first(bytes.size()), bytes))
      throw invalid_argument("output '" + output +
                             "': its shared-memory region shrank (the client truncated its object) while the "
                             "output was written to it");
    return;
  }
  FERRY_CUDA_TRY(cudaMemcpy(destination.bytes.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
}

}  // namespace

std::int64_t total_rows(std::span<const batch_item> batch) noexcept {
  std::int64_t rows = 0;
  for (const auto& item : batch) rows += item.plan->rows;
  return rows;
}

std::vector<shape_binding> batch_shapes(std::span<const batch_item> batch, const model_signature& signature,
                                        std::int64_t rows) {
  std::vector<shape_binding> shapes;
  const infer_request& first = *batch.front().request;
  for (const auto& in : first.inputs) {
    shape_binding b{in.name, in.shape};
    if (signature.max_batch > 0) b.dims.front() = rows;
    shapes.push_back(std::move(b));
  }
  return shapes;
}

void gather_input(std::span<const batch_item> batch, std::size_t index, std::span<std::byte> destination,
                  gathered_for reader) {
  std::size_t offset = 0;
  for (const auto& item : batch) {
    const input_tensor& in = item.request->inputs.at(index);
    if (in.cuda_device)
      throw invalid_argument("input '" + in.name + "' is in GPU " + std::to_string(*in.cuda_device) +
                             "'s memory (a CUDA shared-memory region), which a copy on the host cannot read");
    const auto source = in.data;
    if (source.size() > destination.size() - offset)
      throw invalid_argument("batch input '" + item.request->inputs[index].name + "' does not fit the " +
                             std::to_string(destination.size()) + "-byte engine buffer");
    const auto target = destination.subspan(offset, source.size());
    const bool streaming = reader == gathered_for::device && source.size() >= streaming_copy_min_bytes;
    if (in.shared_memory) {
      if (!copy_from_client_memory(target, source, streaming ? copy_method::streaming : copy_method::ordinary))
        throw invalid_argument("input '" + in.name + "': its shared-memory region '" + in.shared_memory->region +
                               "' shrank (the client truncated its object) while the input was read");
    } else if (streaming) {
      copy_streaming(target, source);
    } else {
      std::memcpy(target.data(), source.data(), source.size());
    }
    offset += source.size();
  }
  std::fill(destination.begin() + static_cast<std::ptrdiff_t>(offset), destination.end(), std::byte{0});
}

void scatter_outputs(std::span<batch_item> batch, const model_signature& signature,
                     std::span<const tensor_spec> outputs, std::span<const std::span<const std::byte>> sources) {
  const bool batched = signature.max_batch > 0;
  std::int64_t row = 0;
  for (auto& item : batch) {
    for (std::size_t k = 0; k < item.plan->outputs.size(); ++k) {
      const std::size_t index = item.plan->outputs[k];
      const tensor_spec& spec = outputs[index];
      const auto source = sources[index];
      output_tensor out{spec.name, spec.type, spec.shape, {}, std::nullopt};
      std::span<const std::byte> slice = source;
      if (batched) {
        const auto engine_rows = static_cast<std::size_t>(spec.shape.front());
        const std::size_t row_bytes = source.size() / engine_rows;
        out.shape.front() = item.plan->rows;
        slice = source.subspan(static_cast<std::size_t>(row) * row_bytes,
                               static_cast<std::size_t>(item.plan->rows) * row_bytes);
      }
      const bool to_shm = k < item.output_destinations.size() && !item.output_destinations[k].empty();
      if (to_shm) {
        const output_destination& destination = item.output_destinations[k];
        if (destination.bytes.size() < slice.size())
          throw invalid_argument("output '" + spec.name + "' needs " + std::to_string(slice.size()) +
                                 " bytes; its shared-memory range has " + std::to_string(destination.bytes.size()));
        write_to_destination(destination, slice, spec.name);
        out.shared_memory = item.request->outputs.at(k).shared_memory;
        if (out.shared_memory) out.shared_memory->byte_size = slice.size();
      } else {
        out.data.assign(slice.begin(), slice.end());
      }
      item.response->outputs.push_back(std::move(out));
    }
    row += item.plan->rows;
  }
}

}  // namespace ferry::serve
