#include "serve/scheduling/request_placement.hpp"

#include <algorithm>
#include <string>

#include "ferry/device/device_set.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

// "input 'x' (CUDA shared-memory region 'r') on GPU 1", for messages.
std::string where(const input_tensor& in) {
  return "input '" + in.name + "' (CUDA shared-memory region '" +
         (in.shared_memory ? in.shared_memory->region : std::string{}) + "') on GPU " + std::to_string(*in.cuda_device);
}

}  // namespace

std::optional<int> required_gpu(const infer_request& request, std::span<const int> model_gpus, std::string_view model) {
  const input_tensor* first = nullptr;
  for (const auto& in : request.inputs) {
    if (!in.cuda_device) continue;
    if (first == nullptr) {
      first = &in;
    } else if (*in.cuda_device != *first->cuda_device) {
      throw bad_request("model '" + std::string(model) + "': the request's CUDA inputs are on two GPUs, " +
                        where(*first) + " and " + where(in) +
                        "; one run reads its inputs on one GPU, so register those regions on the same GPU");
    }
  }
  if (first == nullptr) return std::nullopt;
  const int gpu = *first->cuda_device;
  if (std::find(model_gpus.begin(), model_gpus.end(), gpu) == model_gpus.end()) {
    const std::string runs_on = model_gpus.empty()       ? "runs on the CPU, on no GPU"
                                : model_gpus.size() == 1 ? "runs on GPU " + format_device_set(model_gpus) + " only"
                                                         : "runs on GPUs " + format_device_set(model_gpus) + " only";
    throw bad_request(where(*first) + ", but model '" + std::string(model) + "' " + runs_on +
                      " (ferry serve --devices); register the region on a GPU the model runs on");
  }
  return gpu;
}

}  // namespace ferry::serve
