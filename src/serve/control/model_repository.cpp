#include "serve/control/model_repository.hpp"

#include <algorithm>
#include <fstream>

#include "ferry/core/error.hpp"
#include "ferry/engines/model_engine.hpp"
#include "serve/admission/memory_release.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/control/model_choice.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "serve/vocabulary/safe_name.hpp"

namespace ferry::serve {
namespace {

namespace fs = std::filesystem;

// Whether `path`, with every link resolved, lies inside `root` (itself resolved).
bool inside(const fs::path& path, const fs::path& root) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(path, ec);
  if (ec) return false;
  const auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  return root_end == root.end();
}

// A Triton model folder has config.pbtxt and numbered version folders; ferry reads one JSON file.
constexpr const char* triton_layout_hint =
    " is missing: this folder has a Triton config.pbtxt, and ferry reads config.json instead, e.g. "
    "{\"engine\": \"torch:model.pt2\", \"max_batch\": 16} with the model file beside it (docs/USAGE.md, Serving)";

// The config's text: a regular file, no larger than a config can be, read only that far.
std::string read_config(const served_model& model, const fs::path& file) {
  const std::string where = "model '" + model.config.name + "': " + std::string(model_config_file);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw invalid_argument(where + (fs::exists(file, ec) ? " is not a regular file"
                                    : fs::exists(file.parent_path() / "config.pbtxt", ec)
                                        ? triton_layout_hint
                                        : " is missing from its folder"));
  const auto size = fs::file_size(file, ec);
  if (ec) throw invalid_argument(where + " cannot be read: " + ec.message());
  if (size > max_model_config_bytes)
    throw invalid_argument(where + " has " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(max_model_config_bytes) + " a config may have");
  std::ifstream in(file, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw invalid_argument(where + " cannot be read");
  return text;
}

// A model file named by a relative path ("affine:model.affine") lives in the model's folder, as in
// Triton's repositories; absolute paths stay as written. Unless links may be followed out of the
// repository, a relative path must stay inside it ("affine:../../x" must not reach any file).
std::string in_model_folder(const served_model& model, const fs::path& folder, const fs::path& root,
                            bool follow_outside_links) {
  const std::string& engine = model.config.engine;
  if (!is_model_engine_spec(engine)) return engine;
  const auto colon = engine.find(':');
  const fs::path file = engine.substr(colon + 1);
  if (file.empty() || file.is_absolute()) return engine;
  const fs::path resolved = (folder / file).lexically_normal();
  if (!follow_outside_links && !inside(resolved, root))
    throw invalid_argument("model '" + model.config.name + "': its model file '" + quote_text(file.string()) +
                           "' leads outside the model repository (start the server with "
                           "--allow-repository-symlinks to follow it, or name it by an absolute path)");
  return engine.substr(0, colon + 1) + resolved.string();
}

// The warm-up's data file, as the model file: in the model's folder, and inside the repository
// unless links may be followed out of it. The named kinds (auto, zero, random) stay as written.
std::string warmup_data_in_folder(const served_model& model, const fs::path& folder, const fs::path& root,
                                  bool follow_outside_links) {
  const std::string& spec = model.config.warmup_data;
  if (spec == "auto" || spec == "zero" || spec == "zeros" || spec == "random") return spec;
  const fs::path file(spec);
  if (file.is_absolute()) return spec;
  const fs::path resolved = (folder / file).lexically_normal();
  if (!follow_outside_links && !inside(resolved, root))
    throw invalid_argument("model '" + model.config.name + "': its warmup_data '" + quote_text(spec) +
                           "' leads outside the model repository");
  return resolved.string();
}

// The name a folder's model goes by: the folder's name, printable (safe_name.hpp) when it is not
// a safe name, so that such a folder is listed, unavailable, and its name never reaches a client
// or a log raw.
std::string model_name_of(const fs::path& folder) { return printable_name(folder.filename().string()); }

// Builds the model of `folder`. `others`: the threads the other loaded models run.
// The batcher's rules: the config's bounds, and the buckets the executor runs with their measured
// run times (what a latency target is weighed against).
batching_rules batching_rules_of(const model_config& config, const executor& exec) {
  batching_rules rules{.max_batch = config.max_batch,
                       .delay = config.batch_delay,
                       .latency_target = config.latency_target,
                       .buckets = {},
                       .bucket_run_times = {}};
  for (const batch_bucket& b : exec.buckets()) {
    rules.buckets.push_back(b.rows);
    rules.bucket_run_times.push_back(b.run_time);
  }
  return rules;
}

void build(served_model& model, const fs::path& folder, const fs::path& root, const execution_platform& platform,
           bool follow_outside_links, const load_limits& limits, std::size_t others) {
  if (const auto why = name_problem(folder.filename().string()))
    throw invalid_argument("model '" + model.config.name + "': its folder's name " + *why +
                           "; model names must be printable UTF-8 without / \\ \" (rename the folder)");
  const auto file = folder / model_config_file;
  if (!follow_outside_links) {
    if (!inside(folder, root))
      throw invalid_argument("model '" + model.config.name +
                             "': its folder is a symbolic link leading outside the model repository (start the "
                             "server with --allow-repository-symlinks to follow it)");
    if (!inside(file, root))
      throw invalid_argument("model '" + model.config.name + "': " + std::string(model_config_file) +
                             " is a symbolic link leading outside the model repository (start the server with "
                             "--allow-repository-symlinks to follow it)");
  }
  model.config = parse_model_config(read_config(model, file), model.config.name);
  model.config.engine = in_model_folder(model, folder, root, follow_outside_links);
  model.config.warmup_data = warmup_data_in_folder(model, folder, root, follow_outside_links);
  model.automatic = choose_automatic(model.config, platform);
  // What the config asks for, before any of it is made.
  const std::size_t threads = model_threads(model.config, platform.gpus.size());
  check_model_threads(model.config, threads, others, limits);
  const std::size_t weights = model_weight_bytes(model.config);
  check_host_memory(model.config, weights, available_host_memory(), "weights");
  check_device_memory(model.config, weights, platform.gpus, "weights");
  std::shared_ptr<executor> exec = make_executor(model.config, platform);
  model.signature = make_signature(exec->io(), model.config.max_batch, model.config.name);
  model.platform = exec->platform();
  // Bounded by default (Triton's is not): an unbounded queue is the one place a flood of
  // requests would wait in memory without limit. 0 in the config keeps it unbounded.
  if (!model.config.max_queue_size) model.config.max_queue_size = default_max_queue_size(exec->workers());
  model.scheduler = std::make_unique<model_scheduler>(model.config.name, std::string(model_version), exec,
                                                      model.signature, batching_rules_of(model.config, *exec),
                                                      *model.stats, *model.config.max_queue_size);
  model.threads = threads;
}

}  // namespace

std::optional<model_control_mode> parse_model_control_mode(std::string_view text) {
  if (text == "none") return model_control_mode::none;
  if (text == "explicit") return model_control_mode::explicit_load;
  if (text == "poll") return model_control_mode::poll;
  return std::nullopt;
}

std::string_view to_string(model_control_mode mode) {
  switch (mode) {
    case model_control_mode::none:
      return "none";
    case model_control_mode::explicit_load:
      return "explicit";
    case model_control_mode::poll:
      return "poll";
  }
  return "none";
}

namespace {

// What poll mode compares to notice a changed model: every file of the folder (a model folder
// is small: config.json and its model files) by path, size and modification time.
std::string folder_stamp(const fs::path& folder) {
  std::string stamp;
  std::error_code ec;
  constexpr int max_files = 4096;  // a folder with more is compared by its first ones
  int files = 0;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end && files < max_files; it.increment(ec)) {
    std::error_code file_ec;
    const auto target = fs::status(it->path(), file_ec);  // a linked file changes with its target
    if (file_ec || !fs::is_regular_file(target)) continue;
    const auto time = fs::last_write_time(it->path(), file_ec).time_since_epoch().count();
    const auto size = fs::file_size(it->path(), file_ec);
    stamp += it->path().lexically_relative(folder).string() + '\0' + std::to_string(size) + '\0' +
             std::to_string(time) + '\n';
    ++files;
  }
  return stamp;
}

std::shared_ptr<served_model> not_loaded(const std::string& name, std::string reason) {
  auto model = std::make_shared<served_model>();
  model->config.name = name;
  model->failure = std::move(reason);
  return model;
}

model_repository::entry unloaded_entry(const fs::path& folder, const std::string& name) {
  model_repository::entry e;
  e.folder = folder;
  e.model = not_loaded(name, "not loaded");
  return e;
}

// Stops a model that no longer serves: its requests are answered, then its memory goes.
void retire(const std::shared_ptr<served_model>& model) {
  if (model && model->scheduler) model->scheduler->stop();
}

}  // namespace

model_repository::model_repository(const std::filesystem::path& directory, const execution_platform& platform,
                                   std::ostream& log, repository_options options)
    : directory_(directory),
      platform_(platform),
      log_(log),
      options_(std::move(options)),
      control_(options_.control_timeout) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    throw invalid_argument("model repository '" + directory.string() + "' is not a directory");
  root_ = fs::canonical(directory);
  const std::lock_guard control(control_mutex_);
  for (const auto& folder : folders()) {
    const std::string name = model_name_of(folder);
    entries_[name] = unloaded_entry(folder, name);
  }
  std::vector<std::string> startup;
  if (options_.mode == model_control_mode::explicit_load) {
    for (const auto& name : options_.startup_models)
      if (entries_.find(name) == entries_.end())
        throw invalid_argument("--load-model '" + quote_text(name) +
                               "': the model repository has no such model folder");
    startup = options_.startup_models;
    std::sort(startup.begin(), startup.end());
    startup.erase(std::unique(startup.begin(), startup.end()), startup.end());
  } else {
    for (const auto& [name, e] : entries_) startup.push_back(name);
  }
  for (const auto& name : startup) load_locked(name, origin::startup);
  if (options_.mode == model_control_mode::explicit_load)
    log_line("ferry serve: model control explicit: " + std::to_string(startup.size()) + " of " +
             std::to_string(entries_.size()) + " models loaded at start; the others load by the API");
  log.flush();
}

model_repository::~model_repository() {
  control_.stop();  // no load or unload runs from here on
  // Each model's requests are answered before the model goes (the server drained them already).
  for (auto& [name, e] : entries_) retire(e.model);
}

std::vector<fs::path> model_repository::folders() const {
  std::vector<fs::path> list;
  std::error_code ec;
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    // A name that is not a safe one is listed under its printable form, and fails to load.
    list.push_back(it->path());
  }
  std::sort(list.begin(), list.end());
  return list;
}

void model_repository::log_line(const std::string& line) const {
  const std::lock_guard lock(log_mutex_);
  log_ << line << '\n';
  log_.flush();
}

void model_repository::set_state(const std::string& name, std::string_view state) {
  const std::unique_lock lock(mutex_);
  if (const auto it = entries_.find(name); it != entries_.end()) it->second.state = state;
}

void model_repository::load_locked(const std::string& name, origin from) {
  fs::path folder;
  std::shared_ptr<served_model> previous;
  std::size_t others = 0;  // threads of the other loaded models
  {
    const std::unique_lock lock(mutex_);
    entry& e = entries_.at(name);
    e.state = "LOADING";
    folder = e.folder;
    previous = e.model;
    for (const auto& [other, o] : entries_)
      if (other != name) others += o.model->threads;
  }
  auto fresh = std::make_shared<served_model>();
  fresh->config.name = name;
  const std::string stamp = folder_stamp(folder);
  try {
    build(*fresh, folder, root_, platform_, options_.follow_outside_links, options_.limits, others);
    log_line("ferry serve: model '" + name + "' ready (" + quote_text(fresh->config.engine, 256) + " on " +
             fresh->platform + "; queue " + std::to_string(*fresh->config.max_queue_size) + ")");
    if (!fresh->automatic.empty()) log_line("ferry serve: model '" + name + "' " + fresh->automatic);
  } catch (...) {
    // Whatever a model's load throws, only that model is unavailable.
    std::string detail = "unknown error";
    try {
      throw;
    } catch (const std::exception& e) {
      detail = e.what();
    } catch (...) {
    }
    fresh->scheduler.reset();
    const std::string prefix = "model '" + name + "'";
    if (detail.rfind(prefix, 0) != 0) detail = prefix + ": " + detail;
    fresh->failure = public_reason(detail);
    const bool keeps_serving = previous && previous->ready();
    log_line("ferry serve: model '" + name + "' UNAVAILABLE: " + quote_text(detail, 4096) +
             (keeps_serving ? " (the model loaded before keeps serving)" : ""));
    {
      const std::unique_lock lock(mutex_);
      entry& e = entries_.at(name);
      e.state.clear();
      e.stamp = stamp;  // polling retries once the folder changes again
      if (keeps_serving) {
        e.reason = fresh->failure;
      } else {
        e.model = fresh;
        e.reason.clear();
        e.wanted = from != origin::api;
      }
    }
    if (from == origin::api) throw request_error(error_status::bad_request, "failed to load " + fresh->failure);
    return;
  }
  {
    const std::unique_lock lock(mutex_);
    entry& e = entries_.at(name);
    e.model = fresh;
    e.wanted = true;
    e.state.clear();
    e.reason.clear();
    e.stamp = stamp;
  }
  // The new model serves already; the old one answers what it had, then goes.
  retire(previous);
}

void model_repository::unload_locked(const std::string& name, std::string_view reason, bool forget) {
  std::shared_ptr<served_model> previous;
  {
    const std::unique_lock lock(mutex_);
    entry& e = entries_.at(name);
    previous = e.model;
    e.model = not_loaded(name, std::string(reason));
    e.wanted = false;
    e.state = "UNLOADING";
    e.reason.clear();
  }
  retire(previous);
  const bool was_loaded = previous && previous->ready();
  previous.reset();
  {
    const std::unique_lock lock(mutex_);
    if (forget)
      entries_.erase(name);
    else
      entries_.at(name).state.clear();
  }
  // The model's sessions and buffers were freed: give the pages back to the system now.
  release_free_memory();
  if (was_loaded || forget) log_line("ferry serve: model '" + name + "' " + std::string(reason));
}

void model_repository::load(std::string_view name) {
  const std::lock_guard control(control_mutex_);
  const std::string key(name);
  // A model the repository lists is loaded from its folder (a folder whose name is not a safe one
  // goes by its printable name); otherwise only a folder of the repository itself: a name that is
  // not one safe path component never reaches the file system.
  fs::path folder;
  bool known = false;
  {
    const std::shared_lock lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) {
      known = true;
      folder = it->second.folder;
    }
  }
  if (!known && !name_problem(key) && key != "." && key != "..") folder = directory_ / key;
  std::error_code ec;
  if (folder.empty() || !fs::is_directory(folder, ec)) {
    if (known) unload_locked(key, "removed from the repository", true);
    throw request_error(error_status::not_found,
                        "failed to load '" + quote_text(key) + "': the model repository has no such model folder");
  }
  {
    const std::unique_lock lock(mutex_);
    if (entries_.find(key) == entries_.end()) entries_[key] = unloaded_entry(folder, key);
  }
  load_locked(key, origin::api);
}

void model_repository::unload(std::string_view name) {
  const std::lock_guard control(control_mutex_);
  const std::string key(name);
  {
    const std::shared_lock lock(mutex_);
    if (entries_.find(key) == entries_.end())
      throw request_error(error_status::not_found, "failed to unload '" + quote_text(key) + "': unknown model");
  }
  unload_locked(key, "unloaded", false);
}

void model_repository::rescan() {
  const std::lock_guard control(control_mutex_);
  std::map<std::string, fs::path> present;
  for (const auto& folder : folders()) present[model_name_of(folder)] = folder;
  std::vector<std::string> removed, added, changed;
  {
    const std::shared_lock lock(mutex_);
    for (const auto& [name, e] : entries_)
      if (present.find(name) == present.end()) removed.push_back(name);
    for (const auto& [name, folder] : present) {
      const auto it = entries_.find(name);
      if (it == entries_.end())
        added.push_back(name);
      else if (folder_stamp(folder) != it->second.stamp && !it->second.stamp.empty())
        changed.push_back(name);
    }
  }
  for (const auto& name : removed) unload_locked(name, "removed from the repository", true);
  for (const auto& name : added) {
    {
      const std::unique_lock lock(mutex_);
      entries_[name] = unloaded_entry(present.at(name), name);
    }
    log_line("ferry serve: model folder '" + name + "' added");
    load_locked(name, origin::poll);
  }
  for (const auto& name : changed) {
    log_line("ferry serve: model folder '" + name + "' changed: reloading");
    load_locked(name, origin::poll);
  }
}

std::shared_ptr<const served_model> model_repository::find(std::string_view name) const {
  const std::shared_lock lock(mutex_);
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.model;
}

std::vector<std::shared_ptr<const served_model>> model_repository::models() const {
  const std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<const served_model>> list;
  for (const auto& [name, e] : entries_) list.push_back(e.model);
  return list;
}

std::vector<model_index_entry> model_repository::index() const {
  const std::shared_lock lock(mutex_);
  std::vector<model_index_entry> list;
  for (const auto& [name, e] : entries_) {
    const std::string state = !e.state.empty() ? e.state : e.model->ready() ? "READY" : "UNAVAILABLE";
    list.push_back({name, state, e.model->ready() ? e.reason : e.model->failure});
  }
  return list;
}

model_repository::wanted_models model_repository::wanted() const {
  const std::shared_lock lock(mutex_);
  wanted_models w;
  for (const auto& [name, e] : entries_)
    if (e.wanted) {
      ++w.count;
      if (!e.model->ready()) w.not_ready.push_back(name);
    }
  return w;
}

}  // namespace ferry::serve
