#include "engines/plugin/backend_library.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"

namespace ferry::plugin {
namespace {

// dlerror's text, or a fallback when the loader left none.
std::string last_dl_error() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dynamic loader error";
}

// Looks `symbol` up and stores it in `slot` (null when absent); returns whether it was found.
template <class Function>
bool look_up(void* handle, const char* symbol, Function& slot) {
  (void)dlerror();
  slot = reinterpret_cast<Function>(dlsym(handle, symbol));
  return slot != nullptr;
}

}  // namespace

backend_library::backend_library(void* handle, std::filesystem::path file) : handle_(handle), file_(std::move(file)) {}

backend_library::~backend_library() {
  // After a device fault the library stays loaded: unloading runs its framework's static cleanup,
  // which calls CUDA in the lost context.
  if (handle_ != nullptr && !device_faulted()) dlclose(handle_);
}

std::shared_ptr<const backend_library> backend_library::open(const std::filesystem::path& file) {
  (void)dlerror();
  // RTLD_NOW: a backend missing a library or a symbol fails here, with the loader's words, rather
  // than at its first call. RTLD_LOCAL: its symbols (and its libtorch or TensorRT) stay its own.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw unsupported(fmt::format("backend file '{}' cannot be loaded: {}", file.string(), last_dl_error()));
  std::shared_ptr<backend_library> library(new backend_library(handle, file));
  backend_functions& f = library->functions_;

  if (!look_up(handle, "ferry_backend_api_version", f.api_version))
    throw unsupported(
        fmt::format("backend file '{}' is not a ferry backend: it has no function "
                    "'ferry_backend_api_version'",
                    file.string()));
  const uint32_t version = f.api_version();
  if (version < FERRY_BACKEND_API_OLDEST_VERSION || version > FERRY_BACKEND_API_VERSION)
    throw unsupported(
        fmt::format("backend file '{}' was built for backend API version {} and this ferry speaks "
                    "versions {} to {}: rebuild it against this ferry's ferry/engines/backend_api.h",
                    file.string(), version, FERRY_BACKEND_API_OLDEST_VERSION, FERRY_BACKEND_API_VERSION));
  library->api_version_ = version;

  std::string missing;
  const auto required = [&](const char* symbol, auto& slot) {
    if (!look_up(handle, symbol, slot)) missing += fmt::format("{}'{}'", missing.empty() ? "" : ", ", symbol);
  };
  required("ferry_backend_name", f.name);
  required("ferry_backend_version", f.version);
  required("ferry_backend_error_kind_of", f.error_kind_of);
  required("ferry_backend_error_message", f.error_message);
  required("ferry_backend_error_release", f.error_release);
  required("ferry_backend_model_load", f.model_load);
  required("ferry_backend_model_unload", f.model_unload);
  required("ferry_backend_model_name", f.model_name);
  required("ferry_backend_model_tensor_count", f.model_tensor_count);
  required("ferry_backend_model_tensor", f.model_tensor);
  required("ferry_backend_model_resolve", f.model_resolve);
  required("ferry_backend_context_create", f.context_create);
  required("ferry_backend_context_destroy", f.context_destroy);
  required("ferry_backend_context_bind", f.context_bind);
  required("ferry_backend_context_enqueue", f.context_enqueue);
  if (!missing.empty())
    throw unsupported(fmt::format("backend file '{}' lacks the required function{} {} of backend API version {}",
                                  file.string(), missing.find(',') != std::string::npos ? "s" : "", missing, version));
  look_up(handle, "ferry_backend_model_input_bytes_read", f.model_input_bytes_read);
  look_up(handle, "ferry_backend_model_run_host", f.model_run_host);
  look_up(handle, "ferry_backend_context_signal_inputs_consumed", f.context_signal_inputs_consumed);
  look_up(handle, "ferry_backend_context_capture_refusal", f.context_capture_refusal);
  // Added by version 2: a version 1 backend has none (and cannot have them by accident of naming).
  if (version >= 2) {
    look_up(handle, "ferry_backend_context_use_graphs", f.context_use_graphs);
    look_up(handle, "ferry_backend_context_graph_failure", f.context_graph_failure);
  }
  if (version >= 3) look_up(handle, "ferry_backend_context_reshape", f.context_reshape);

  const char* name = f.name();
  const char* text = f.version();
  library->name_ = name != nullptr ? name : "";
  library->version_ = text != nullptr ? text : "";
  return library;
}

void backend_library::check(ferry_backend_error* error, const std::string& what) const {
  if (error == nullptr) return;
  const ferry_backend_error_kind kind = functions_.error_kind_of(error);
  const char* text = functions_.error_message(error);
  std::string message = fmt::format("backend '{}': {}: {}", name_, what, text != nullptr ? text : "(no message)");
  functions_.error_release(error);
  switch (kind) {
    case FERRY_BACKEND_ERROR_INVALID_ARGUMENT:
      throw invalid_argument(message);
    case FERRY_BACKEND_ERROR_UNSUPPORTED:
      throw unsupported(message);
    case FERRY_BACKEND_ERROR_OUT_OF_MEMORY:
      throw out_of_memory(cudaErrorMemoryAllocation, message);
    case FERRY_BACKEND_ERROR_DEVICE_FAULT:
      // The backend saw the context die (its kernel's assert, say); ferry's own next call would
      // too. The ABI carries no CUDA code: launch failure is the runtime's generic one for it.
      raise_device_fault(cudaErrorLaunchFailure, message);
    case FERRY_BACKEND_ERROR_RUNTIME:
      break;
  }
  throw ferry::error(message);
}

}  // namespace ferry::plugin
