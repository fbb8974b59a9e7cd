// The model repository: one folder per model, each with a config.json (model_config.hpp), and the
// models loaded from it. Which models load, and when, is the model control mode (Triton's
// repository extension):
//   none      every model loads at start, and the API may not load or unload;
//   explicit  only the models named at start (--load-model) load; then load() and unload();
//   poll      every model loads at start, and rescan() (every --repository-poll-secs) loads added
//             folders, reloads changed ones (config.json or any file's size or time) and unloads
//             removed ones; load() and unload() are allowed too.
// A model that fails to load is kept, unavailable, with the reason, and every other model serves
// as usual. Reloading a model that serves builds the new one first and swaps it in; if that fails
// the old one keeps serving. Unloading refuses the model's new requests, answers every request it
// had admitted, then releases its executor (sessions, buffers, engines): model_scheduler::stop.
// Lookups hand out shared_ptrs, so a request that found a model keeps it alive while it is queued.
//
// The repository is untrusted too: a model folder or config.json that is a symbolic link leading
// outside the repository, or a relative model-file path climbing out of it, is refused (unless
// allowed), a config is read only up to
// max_model_config_bytes and only from a regular file, and a folder whose name holds a control
// character is skipped (logged escaped). A model's reason for being unavailable is what clients
// see (the repository index, a 503): it names the problem but never shows a file's contents or
// an absolute path; the log gives the whole story.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "serve/config/load_check.hpp"
#include "serve/config/model_config.hpp"
#include "serve/control/model_control.hpp"
#include "serve/execution/execution_platform.hpp"
#include "serve/observability/model_statistics.hpp"
#include "serve/scheduling/model_scheduler.hpp"
#include "serve/vocabulary/model_signature.hpp"

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
  std::size_t threads = 0;                     // the scheduler's, while it is set (load_check.hpp)

  [[nodiscard]] bool ready() const noexcept { return failure.empty(); }
};

enum class model_control_mode { none, explicit_load, poll };

// "none", "explicit" or "poll"; nullopt for anything else.
[[nodiscard]] std::optional<model_control_mode> parse_model_control_mode(std::string_view text);
[[nodiscard]] std::string_view to_string(model_control_mode mode);

struct repository_options {
  // Serve model folders, configs and relative model files that lead outside the repository.
  bool follow_outside_links = false;
  model_control_mode mode = model_control_mode::none;
  std::vector<std::string> startup_models;  // explicit: the models loaded at start
  // What one model, and all of them, may take when they load (load_check.hpp).
  load_limits limits;
  // How long a caller of load() or unload() through control() waits for the outcome.
  std::chrono::milliseconds control_timeout{30'000};
};

// One model of the repository index: READY, UNAVAILABLE, LOADING or UNLOADING, and why.
struct model_index_entry {
  std::string name;
  std::string state;
  std::string reason;
};

class model_repository {
 public:
  // Reads the sub-folders of `directory` (sorted by name) and loads those the mode loads at start,
  // logging one line per model. Throws invalid_argument when the directory itself cannot be read,
  // or when a startup model (explicit) has no folder.
  model_repository(const std::filesystem::path& directory, const execution_platform& platform, std::ostream& log,
                   repository_options options = {});
  ~model_repository();
  model_repository(const model_repository&) = delete;
  model_repository& operator=(const model_repository&) = delete;

  // The model named so, loaded or not (then not ready, saying why); null when the repository has
  // no such model.
  [[nodiscard]] std::shared_ptr<const served_model> find(std::string_view name) const;
  // Every model of the repository, by name.
  [[nodiscard]] std::vector<std::shared_ptr<const served_model>> models() const;
  [[nodiscard]] std::vector<model_index_entry> index() const;
  // The models meant to be loaded (at start, by the API, by polling) and those of them that are
  // not ready, for strict readiness. A load the API asked for that failed is answered with its
  // error and not counted: the server does not turn unready for a caller's failed request.
  struct wanted_models {
    std::size_t count = 0;
    std::vector<std::string> not_ready;
  };
  [[nodiscard]] wanted_models wanted() const;
  [[nodiscard]] model_control_mode mode() const noexcept { return options_.mode; }
  // Where the front ends run load() and unload(): a thread of their own (model_control.hpp).
  [[nodiscard]] model_control& control() noexcept { return control_; }

  // Loads (or reloads) the model of folder `name`. Throws request_error: not_found without such a
  // folder, bad_request with the reason when it fails to load (a model that served keeps serving).
  void load(std::string_view name);
  // Unloads the model: waits for its requests in flight, then frees its memory. Unloading a model
  // that is not loaded does nothing; throws request_error(not_found) for an unknown name.
  void unload(std::string_view name);
  // Poll mode's pass: loads added folders, reloads changed ones, unloads removed ones.
  void rescan();

  // One folder of the repository and what became of it (private to the implementation).
  struct entry {
    std::filesystem::path folder;
    std::shared_ptr<served_model> model;  // always set: loaded, failed, or a "not loaded" record
    bool wanted = false;                  // meant to be loaded (strict readiness counts it)
    std::string state;                    // LOADING or UNLOADING while that runs; else empty
    std::string reason;                   // a failed reload of a model that still serves
    std::string stamp;                    // what poll mode compares (folder_stamp)
  };

 private:
  enum class origin { startup, api, poll };
  [[nodiscard]] std::vector<std::filesystem::path> folders() const;
  void load_locked(const std::string& name, origin from);
  void unload_locked(const std::string& name, std::string_view reason, bool forget);
  void set_state(const std::string& name, std::string_view state);
  void log_line(const std::string& line) const;

  std::filesystem::path directory_, root_;
  const execution_platform& platform_;
  std::ostream& log_;
  repository_options options_;
  mutable std::mutex log_mutex_;
  std::mutex control_mutex_;         // one load, unload or rescan at a time
  mutable std::shared_mutex mutex_;  // the table below
  std::map<std::string, entry, std::less<>> entries_;
  model_control control_;  // stopped first when the repository goes, before its models
};

}  // namespace ferry::serve
