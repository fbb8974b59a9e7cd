// The TensorRT backend as a plugin: libferry_backend_trt.so, for `trt:PATH.plan`.
#include "engines/plugin/backend_export.hpp"
#include "engines/tensorrt/tensorrt_engine.hpp"
#include "ferry/core/error.hpp"

namespace ferry::plugin {

const exported_backend& backend_to_export() {
  static const exported_backend backend{
      .name = "trt",
      .version = FERRY_VERSION " (TensorRT " FERRY_TENSORRT_VERSION ")",  // both from backend.cmake
      .load = [](const std::string& path, const model_engine_options& options) {
        if (options.device < 0)
          throw unsupported("the trt backend runs TensorRT plans on a GPU only; it cannot compute on the CPU");
        return load_tensorrt_engine(path, options);
      }};
  return backend;
}

}  // namespace ferry::plugin
