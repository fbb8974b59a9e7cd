// Engines loaded from model files: `trt:PATH.plan` (TensorRT 10+) and `torch:PATH.pt2`
// (libtorch AOTInductor). Each backend is compiled in only where its library is found; a build
// without it refuses the spec with `unsupported`, naming what is missing.
#pragma once

#include <memory>
#include <string_view>

#include "ferry/engine.hpp"

namespace ferry {

struct model_engine_options {
  int device = 0;
  // How many contexts may run at the same time (slots x clients). AOTInductor makes one model
  // runner per concurrent context so slots really run concurrently; TensorRT needs no hint.
  int max_concurrency = 1;
};

// True for "trt:..." and "torch:..." specs.
[[nodiscard]] bool is_model_engine_spec(std::string_view spec) noexcept;

// Loads the model named by the spec. Throws invalid_argument for a missing, unreadable or
// corrupt file, a file built for another GPU architecture or library version (one message each,
// naming the file and the problem), and unsupported when this build lacks the backend.
[[nodiscard]] std::unique_ptr<engine> load_model_engine(std::string_view spec,
                                                        const model_engine_options& options);

}  // namespace ferry
