// The other side of the plugin boundary, for backends written in C++ against ferry's engine seam
// (the torch and TensorRT backends): backend_export.cpp, compiled into the backend, implements the
// C ABI of ferry/engines/backend_api.h over a ferry::engine. The backend defines backend_to_export() and
// links nothing else of this. Everything stays inside the backend's own library: ferry only ever
// sees the C functions, so the two may be built by different compilers and standard libraries.
// (A backend that computes on the CPU as well writes ferry_backend_model_run_host itself, in C, as
// examples/backend does; engines exported this way run on a GPU only.)
#pragma once

#include <memory>
#include <string>

#include "ferry/engines/model_engine.hpp"

namespace ferry::plugin {

struct exported_backend {
  const char* name;     // the spec prefix it serves: "torch"
  const char* version;  // its own version and what it runs on
  // Loads a model file for options.device. Throws ferry errors: invalid_argument for a bad file,
  // unsupported for what cannot be done here.
  std::unique_ptr<engine> (*load)(const std::string& path, const model_engine_options& options);
};

// Defined once by each backend built on this file.
[[nodiscard]] const exported_backend& backend_to_export();

}  // namespace ferry::plugin
