// The model repository: one folder per model, each with a config.json (model_config.hpp). Every
// model loads at start; one that fails is kept, unavailable, with the reason, and every other
// model serves as usual.
//
// The repository is untrusted too: a model folder or config.json that is a symbolic link leading
// outside the repository, or a relative model-file path climbing out of it, is refused (unless
// allowed), a config is read only up to
// max_model_config_bytes and only from a regular file, and a folder whose name holds a control
// character is skipped (logged escaped). A model's reason for being unavailable is what clients
// see (the repository index, a 503): it names the problem but never shows a file's contents or
// an absolute path; the startup log gives the whole story.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "serve/execution_platform.hpp"
#include "serve/model_config.hpp"
#include "serve/model_scheduler.hpp"
#include "serve/model_signature.hpp"
#include "serve/model_statistics.hpp"

namespace ferry::serve {

inline constexpr std::string_view model_version = "1";  // every model has this one version

struct served_model {
  model_config config;
  std::string failure;  // why the model is unavailable (public_reason); empty when it is ready
  std::string platform;
  std::string automatic;  // why "auto" settings became what they are; empty when none was auto
  model_signature signature;
  std::unique_ptr<model_statistics> stats = std::make_unique<model_statistics>();
  std::unique_ptr<model_scheduler> scheduler;  // set when ready

  [[nodiscard]] bool ready() const noexcept { return failure.empty(); }
};

// What a failure's message may show to clients: absolute paths cut to their last component,
// control characters escaped, at most a few hundred characters.
[[nodiscard]] std::string public_reason(std::string_view message);

class model_repository {
 public:
  // Loads every sub-folder of `directory` (sorted by name), logging one line per model. Throws
  // invalid_argument when the directory itself cannot be read. `follow_outside_links`: serve
  // model folders, configs and relative model files that lead outside `directory`.
  model_repository(const std::filesystem::path& directory, const execution_platform& platform, std::ostream& log,
                   bool follow_outside_links = false);

  [[nodiscard]] const served_model* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::vector<std::unique_ptr<served_model>>& models() const noexcept { return models_; }

 private:
  std::vector<std::unique_ptr<served_model>> models_;
};

}  // namespace ferry::serve
