// libtorch AOTInductor backend: runs a .pt2 package made by torch._inductor.aoti_compile_and_package
// (see scripts/export_model.py). Built only where Torch is found (FERRY_HAVE_TORCH).
//
// Inputs are ferry's device addresses wrapped as tensors without a copy; the package writes its
// outputs into memory of its own, which one device-to-device copy on the slot's stream moves into
// the strategy's output buffers (AOTInductor has no way to take caller-provided outputs). The
// package is loaded once with one model runner per concurrent context, so slots really overlap.
//
// A plain stream capture cannot take a package's run (it allocates while it runs), so a context
// refuses one (capture_refusal) and captures graphs of its own when asked (use_own_graphs):
// engines/torch/aoti_graphs.hpp.
#pragma once

#include <memory>
#include <string>

#include "ferry/engines/engine.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry {

[[nodiscard]] std::unique_ptr<engine> load_aoti_engine(const std::string& path, const model_engine_options& options);

}  // namespace ferry
