#include "serve/execution/batch_io.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "ferry/core/error.hpp"
#include "ferry/memory/streaming_copy.hpp"
#include "serve/shm/shm_guarded_copy.hpp"

namespace ferry::serve {
namespace {

// Request tensors from this size up are streamed into a slot's input buffer, so the upload or the
// GPU's reads that follow do not wait on dirty lines in the CPU caches. Smaller ones are copied
// normally: a streaming store of a few KB saves the DMA next to nothing and only evicts lines.
constexpr std::size_t streaming_copy_min_bytes = std::size_t{256} << 10;

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

void answer_outputs(std::span<batch_item> batch, const output_plan& plan, std::span<const tensor_spec> outputs,
                    std::span<const std::span<const std::byte>> host_views, bool batched,
                    std::span<std::vector<std::byte>> movable) {
  for (const output_step& step : plan.steps) {
    batch_item& item = batch[step.item];
    const tensor_spec& spec = outputs[step.output];
    output_tensor out{spec.name, spec.type, spec.shape, {}, std::nullopt};
    if (batched) out.shape.front() = item.plan->rows;
    // A lone request reads each output at most once (an output asked twice is refused), so the
    // buffer it takes is read by no other step.
    const bool whole = batch.size() == 1 && step.output < movable.size() && step.offset == 0 &&
                       step.bytes == movable[step.output].size();
    if (step.route == output_route::response && whole) {
      out.data = std::move(movable[step.output]);
    } else if (step.route == output_route::response) {
      const auto slice = host_views[step.output].subspan(step.offset, step.bytes);
      out.data.assign(slice.begin(), slice.end());
    } else {
      out.shared_memory = item.request->outputs.at(step.k).shared_memory;
      if (out.shared_memory) out.shared_memory->byte_size = step.bytes;
    }
    item.response->outputs.push_back(std::move(out));
  }
}

void scatter_outputs(std::span<batch_item> batch, const model_signature& signature,
                     std::span<const tensor_spec> outputs, std::span<const std::span<const std::byte>> sources,
                     std::span<std::vector<std::byte>> movable) {
  // On the host every output is in host memory: shared-memory steps are CPU copies, guarded
  // against the client shrinking the region under them (shm_guarded_copy.hpp).
  const output_plan plan = plan_outputs(batch, signature, outputs, slot_facts{});
  for (const output_step& step : plan.steps) {
    if (step.route == output_route::response) continue;
    const output_destination& destination = batch[step.item].output_destinations[step.k];
    const std::string& name = outputs[step.output].name;
    if (destination.cuda_device)
      throw invalid_argument("output '" + name + "' is asked into GPU " + std::to_string(*destination.cuda_device) +
                             "'s memory (a CUDA shared-memory region), which a copy on the host cannot write");
    if (!copy_to_client_memory(destination.bytes.first(step.bytes),
                               sources[step.output].subspan(step.offset, step.bytes)))
      throw invalid_argument("output '" + name +
                             "': its shared-memory region shrank (the client truncated its object) while the "
                             "output was written to it");
  }
  answer_outputs(batch, plan, outputs, sources, signature.max_batch > 0, movable);
}

}  // namespace ferry::serve
