// One backend plugin, opened: the shared library (dlopen'd with RTLD_LOCAL, so two backends never
// see each other's symbols) and its functions, checked once. Engines made from it hold it shared,
// so the library stays loaded while any of its models or contexts lives, and is closed after.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "ferry/engines/backend_api.h"

namespace ferry::plugin {

// The functions of the C ABI; the optional ones are null when the backend leaves them out.
struct backend_functions {
  uint32_t (*api_version)();
  const char* (*name)();
  const char* (*version)();
  ferry_backend_error_kind (*error_kind_of)(const ferry_backend_error*);
  const char* (*error_message)(const ferry_backend_error*);
  void (*error_release)(ferry_backend_error*);
  ferry_backend_error* (*model_load)(const char*, const ferry_backend_load_options*, ferry_backend_model**);
  void (*model_unload)(ferry_backend_model*);
  const char* (*model_name)(const ferry_backend_model*);
  size_t (*model_tensor_count)(const ferry_backend_model*);
  void (*model_tensor)(const ferry_backend_model*, size_t, ferry_backend_tensor*);
  ferry_backend_error* (*model_resolve)(const ferry_backend_model*, const ferry_backend_shape*, size_t, int64_t*,
                                        size_t);
  ferry_backend_error* (*context_create)(ferry_backend_model*, const int64_t*, size_t, ferry_backend_context**);
  void (*context_destroy)(ferry_backend_context*);
  ferry_backend_error* (*context_bind)(ferry_backend_context*, size_t, void*);
  ferry_backend_error* (*context_enqueue)(ferry_backend_context*, struct CUstream_st*);
  // Optional.
  uint64_t (*model_input_bytes_read)(const ferry_backend_model*, size_t, const int64_t*);
  ferry_backend_error* (*model_run_host)(const ferry_backend_model*, const int64_t*, size_t, const void* const*,
                                         const size_t*, void* const*, const size_t*);
  ferry_backend_error* (*context_signal_inputs_consumed)(ferry_backend_context*, struct CUevent_st*, int32_t*);
  const char* (*context_capture_refusal)(const ferry_backend_context*);
  // Optional, API version 2.
  ferry_backend_error* (*context_use_graphs)(ferry_backend_context*, int32_t, const char**);
  const char* (*context_graph_failure)(const ferry_backend_context*);
  // Optional, API version 3.
  ferry_backend_error* (*context_reshape)(ferry_backend_context*, const int64_t*, size_t, int32_t*);
};

class backend_library {
 public:
  // Opens the backend in `file`. Throws unsupported, naming the file, when it cannot be loaded
  // (with dlerror's text), reports an API version this ferry does not speak (the numbers) or lacks
  // a required function (its name). A backend of an older version this ferry still speaks loads
  // without the optional functions added since.
  [[nodiscard]] static std::shared_ptr<const backend_library> open(const std::filesystem::path& file);

  backend_library(const backend_library&) = delete;
  backend_library& operator=(const backend_library&) = delete;
  ~backend_library();

  [[nodiscard]] const backend_functions& functions() const noexcept { return functions_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& version() const noexcept { return version_; }
  [[nodiscard]] std::uint32_t api_version() const noexcept { return api_version_; }
  [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }
  [[nodiscard]] bool computes_on_host() const noexcept { return functions_.model_run_host != nullptr; }

  // Throws the error a backend call returned (null: nothing to do), as the ferry error type of
  // its kind, with `what` and the backend's message; releases it through the backend.
  void check(ferry_backend_error* error, const std::string& what) const;

 private:
  backend_library(void* handle, std::filesystem::path file);

  void* handle_;
  std::filesystem::path file_;
  backend_functions functions_{};
  std::string name_, version_;
  std::uint32_t api_version_ = 0;
};

}  // namespace ferry::plugin
