#include "ferry/model_engine.hpp"

#include <string>

#include "ferry/error.hpp"

#ifdef FERRY_HAVE_TENSORRT
#include "engines/tensorrt/tensorrt_engine.hpp"
#endif
#ifdef FERRY_HAVE_TORCH
#include "engines/torch/aoti_engine.hpp"
#endif

namespace ferry {

namespace {
constexpr std::string_view trt_prefix = "trt:";
constexpr std::string_view torch_prefix = "torch:";
}  // namespace

bool is_model_engine_spec(std::string_view spec) noexcept {
  return spec.starts_with(trt_prefix) || spec.starts_with(torch_prefix);
}

std::unique_ptr<engine> load_model_engine(std::string_view spec, const model_engine_options& options) {
  const std::string text(spec);
  if (spec.starts_with(trt_prefix)) {
    const std::string path(spec.substr(trt_prefix.size()));
    if (path.empty()) throw invalid_argument("engine '" + text + "': no plan file after 'trt:'");
#ifdef FERRY_HAVE_TENSORRT
    return load_tensorrt_engine(path, options);
#else
    (void)options;
    throw unsupported("engine '" + text + "': this build of ferry has no TensorRT backend (TensorRT 10 was not found at configure time; set FERRY_TENSORRT_ROOT)");
#endif
  }
  if (spec.starts_with(torch_prefix)) {
    const std::string path(spec.substr(torch_prefix.size()));
    if (path.empty()) throw invalid_argument("engine '" + text + "': no .pt2 file after 'torch:'");
#ifdef FERRY_HAVE_TORCH
    return load_aoti_engine(path, options);
#else
    (void)options;
    throw unsupported("engine '" + text + "': this build of ferry has no libtorch backend (Torch was not found at configure time; pass -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'))");
#endif
  }
  throw invalid_argument("engine '" + text + "' is not a model file spec (expected trt:PATH or torch:PATH)");
}

}  // namespace ferry
