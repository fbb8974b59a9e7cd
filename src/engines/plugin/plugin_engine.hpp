// A model loaded by a backend plugin, seen as a ferry engine: the C ABI of ferry/engines/backend_api.h on
// one side, ferry/engines/engine.hpp on the other. Every backend error becomes the ferry error of its kind,
// prefixed with the backend's name and the call; a declaration the engine seam cannot take (an
// unknown dtype, a negative dim, two tensors of one name) is refused at load.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry::plugin {

class backend_library;

// An engine that can also compute on the CPU where its backend exports
// ferry_backend_model_run_host (run_on_host throws unsupported, saying so, where it does not).
class plugin_engine : public host_reference_engine {
 public:
  [[nodiscard]] virtual bool computes_on_host() const noexcept = 0;
  [[nodiscard]] virtual const backend_library& library() const noexcept = 0;
};

// Loads `model_file` with the backend in `library`, on options.device (-1: for the CPU only).
[[nodiscard]] std::unique_ptr<plugin_engine> load_plugin_engine(std::shared_ptr<const backend_library> library,
                                                                const std::filesystem::path& model_file,
                                                                const model_engine_options& options);

}  // namespace ferry::plugin
