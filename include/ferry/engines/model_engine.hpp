// Engines loaded from model files by backend plugins: a spec "<NAME>:<PATH>" whose NAME is no
// built-in workload (touch, reduce, sparse, mlp) is loaded by the backend NAME, the shared library
// libferry_backend_<NAME>.so found as ferry/engines/backend.hpp says: `torch:resnet50.pt2` by the libtorch
// AOTInductor backend, `trt:model.plan` by the TensorRT backend, `affine:m.affine` by the example
// backend. Neither ferry nor a program linking ferry::ferry links libtorch or TensorRT.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "ferry/engines/builtin.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry {

// A bound for a model's integer input that its file does not say (a package exported bare, a
// plan built without one): the input's valid values are [0, bound). ferry checks requests against
// it and draws benchmark values inside it (ferry/session/index_check.hpp, ferry/session/input_data.hpp).
struct index_bound_override {
  std::string input;
  std::int64_t bound = 0;
};

// "input_ids=30522" -> {"input_ids", 30522}; throws invalid_argument for anything else.
[[nodiscard]] index_bound_override parse_index_bound(std::string_view text);

struct model_engine_options {
  // The CUDA device the model runs on; -1 loads it for the CPU only (host_reference_engine's
  // run_on_host), which only backends that compute on the host accept.
  int device = 0;
  // How many contexts may run at the same time (slots x clients). AOTInductor makes one model
  // runner per concurrent context so slots really run concurrently; TensorRT needs no hint.
  int max_concurrency = 1;
  // Where backends are looked for, in order; empty: backend_directories() (ferry/engines/backend.hpp).
  std::vector<std::filesystem::path> backend_directories;
  // Bounds of integer inputs the model file does not give (or gives otherwise): each names an
  // int32/int64 input, or the load throws invalid_argument naming it.
  std::vector<index_bound_override> index_bounds = {};
};

// True for "<NAME>:<PATH>" specs whose NAME (lower-case letters, digits, '_') is no built-in
// workload: "trt:...", "torch:...".
[[nodiscard]] bool is_model_engine_spec(std::string_view spec) noexcept;

// Checks a model spec without loading anything, so that a mistyped path is named before a GPU
// or a backend is looked for: BACKEND:PATH whose file exists (a relative path from the working
// directory, as load_model_engine reads it). Throws invalid_argument naming the spec and the file.
void check_model_engine_spec(std::string_view spec);

// Loads the model named by the spec with its backend. Throws unsupported when the backend is
// missing (naming the folders searched), cannot be loaded (the loader's text), speaks another
// API version (both numbers) or lacks a function (its name); the backend's own errors (a missing,
// unreadable or corrupt file, a file built for another GPU or library version) come as the ferry
// error of their kind, prefixed with the backend's name.
[[nodiscard]] std::unique_ptr<engine> load_model_engine(std::string_view spec, const model_engine_options& options);

// Loads the model for the CPU (device -1, whatever options.device says), for a server without a
// GPU: its outputs come from run_on_host. Throws unsupported, saying so, when the backend cannot
// compute on the host, and as load_model_engine does otherwise.
[[nodiscard]] std::unique_ptr<host_reference_engine> load_model_engine_on_host(std::string_view spec,
                                                                               model_engine_options options);

}  // namespace ferry
