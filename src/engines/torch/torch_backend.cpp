// The libtorch AOTInductor backend as a plugin: libferry_backend_torch.so, for `torch:PATH.pt2`.
#include <torch/version.h>

#include "engines/plugin/backend_export.hpp"
#include "engines/torch/aoti_engine.hpp"
#include "ferry/core/error.hpp"

namespace ferry::plugin {

const exported_backend& backend_to_export() {
  static const exported_backend backend{
      .name = "torch",
      .version = FERRY_VERSION " (libtorch " TORCH_VERSION ")",
      .load = [](const std::string& path, const model_engine_options& options) {
        if (options.device < 0)
          throw unsupported("the torch backend runs AOTInductor packages on a GPU only; it cannot compute on the CPU");
        return load_aoti_engine(path, options);
      }};
  return backend;
}

}  // namespace ferry::plugin
