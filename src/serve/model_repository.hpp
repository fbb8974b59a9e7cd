// The model repository: one folder per model, each with a config.json (model_config.hpp). Every
// model loads at start; one that fails is kept, unavailable, with the reason, and every other
// model serves as usual.
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
  std::string failure;  // why the model is unavailable; empty when it is ready
  std::string platform;
  std::string automatic;  // why "auto" settings became what they are; empty when none was auto
  model_signature signature;
  std::unique_ptr<model_statistics> stats = std::make_unique<model_statistics>();
  std::unique_ptr<model_scheduler> scheduler;  // set when ready

  [[nodiscard]] bool ready() const noexcept { return failure.empty(); }
};

class model_repository {
 public:
  // Loads every sub-folder of `directory` (sorted by name), logging one line per model. Throws
  // invalid_argument when the directory itself cannot be read.
  model_repository(const std::filesystem::path& directory, const execution_platform& platform, std::ostream& log);

  [[nodiscard]] const served_model* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::vector<std::unique_ptr<served_model>>& models() const noexcept { return models_; }

 private:
  std::vector<std::unique_ptr<served_model>> models_;
};

}  // namespace ferry::serve
