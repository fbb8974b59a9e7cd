#include "bench/measure/recipes/recipe.hpp"

#include <cuda_runtime_api.h>

#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::bench {

recipe::recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io, const device_caps& caps)
    : strategy_(strategy), resident_(properties(strategy).path == data_path::resident) {
  const memory::strategy_type& type = memory::type_of(strategy);
  steps_ = type.recipe_steps();
  for (const auto& spec : io) {
    const bool is_input = spec.role == tensor_role::input;
    auto memory = type.by_hand_tensor(spec.bytes(), is_input ? direction::input : direction::output, caps);
    (is_input ? inputs_ : outputs_).push_back({spec, std::move(memory)});
  }
  context_ = eng.make_context(io);
  for (const auto* group : {&inputs_, &outputs_})
    for (const tensor& t : *group) context_->bind(t.spec.name, t.memory->device());
}

// The engine's context goes first: it is bound to the tensors' memory.
recipe::~recipe() { context_.reset(); }

void recipe::stage_inputs_untimed() {
  if (!resident_) return;
  for (const tensor& t : inputs_) t.memory->stage_untimed(stream_);
  FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
}

void recipe::run_blocking() {
  for (const tensor& t : inputs_) t.memory->before_engine(stream_);
  context_->enqueue(stream_);
  for (const tensor& t : outputs_) t.memory->after_engine(stream_);
  FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
  for (const tensor& t : outputs_) t.memory->after_synchronize();
}

void recipe::fetch_outputs_untimed() {
  if (!resident_) return;
  for (const tensor& t : outputs_) t.memory->fetch_untimed(stream_);
  FERRY_CUDA_TRY(cudaStreamSynchronize(stream_.get()));
}

std::unique_ptr<recipe> make_recipe(strategy_kind strategy, engine& eng, const std::vector<tensor_spec>& io,
                                    const device_caps& caps, oversubscription managed_policy) {
  if (auto reason = unavailable_reason(strategy, caps))
    throw unsupported("recipe '" + std::string(to_string(strategy)) + "' is not available: " + *reason);
  if (properties(strategy).uses_managed_memory) {
    std::size_t bytes = 0;
    for (const auto& t : io) bytes += t.bytes();
    if (auto refusal = managed_request_refusal(bytes, query_free_memory(caps.ordinal), managed_policy))
      throw unsupported("recipe '" + std::string(to_string(strategy)) + "': " + *refusal);
  }
  core::scoped_device on_device(caps.ordinal);
  return std::unique_ptr<recipe>(new recipe(strategy, eng, io, caps));
}

}  // namespace ferry::bench
