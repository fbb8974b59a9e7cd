#include "serve/model_repository.hpp"

#include <algorithm>
#include <fstream>

#include "ferry/error.hpp"
#include "ferry/model_engine.hpp"
#include "serve/client_json.hpp"
#include "serve/model_choice.hpp"

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
    throw invalid_argument(where + (fs::exists(file, ec)                                ? " is not a regular file"
                                    : fs::exists(file.parent_path() / "config.pbtxt", ec) ? triton_layout_hint
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

void load(served_model& model, const fs::path& folder, const fs::path& root, const execution_platform& platform,
          bool follow_outside_links) {
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
  model.automatic = choose_automatic(model.config, platform);
  std::shared_ptr<executor> exec = make_executor(model.config, platform);
  model.signature = make_signature(exec->io(), model.config.max_batch, model.config.name);
  model.platform = exec->platform();
  // Bounded by default (Triton's is not): an unbounded queue is the one place a flood of
  // requests would wait in memory without limit. 0 in the config keeps it unbounded.
  if (!model.config.max_queue_size)
    model.config.max_queue_size = default_max_queue_size(exec->workers());
  model.scheduler = std::make_unique<model_scheduler>(
      model.config.name, std::string(model_version), exec, model.signature,
      batching_rules{model.config.max_batch, model.config.batch_delay}, *model.stats, *model.config.max_queue_size);
}

}  // namespace

std::string public_reason(std::string_view message) {
  // An absolute path starts a token: at the start, or after a space, a quote, a bracket, '=' or
  // ':' ("torch:/models/x.pt2"). It is shown by its last component.
  std::string cut;
  cut.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const bool token_start = i == 0 || std::string_view(" '\"(=:,[").find(message[i - 1]) != std::string_view::npos;
    if (message[i] == '/' && token_start) {
      std::size_t end = i;
      while (end < message.size() && std::string_view(" '\"),]\n").find(message[end]) == std::string_view::npos) ++end;
      const std::string_view path = message.substr(i, end - i);
      const auto last = path.find_last_of('/');
      cut += last + 1 < path.size() ? path.substr(last + 1) : "(a path)";
      i = end;
      continue;
    }
    cut.push_back(message[i++]);
  }
  constexpr std::size_t max_reason_chars = 512;
  return quote_text(cut, max_reason_chars);
}

model_repository::model_repository(const std::filesystem::path& directory, const execution_platform& platform,
                                   std::ostream& log, bool follow_outside_links) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    throw invalid_argument("model repository '" + directory.string() + "' is not a directory");
  const fs::path root = fs::canonical(directory);
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (!entry.is_directory(ec)) continue;
    // A name no request could carry cleanly, and one that would split or forge log lines.
    if (const std::string name = entry.path().filename().string(); has_control_character(name)) {
      log << "ferry serve: folder '" << quote_text(name) << "' skipped: a model name may not hold control characters\n";
      continue;
    }
    folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    auto model = std::make_unique<served_model>();
    model->config.name = folder.filename().string();
    try {
      load(*model, folder, root, platform, follow_outside_links);
      log << "ferry serve: model '" << model->config.name << "' ready (" << quote_text(model->config.engine, 256)
          << " on " << model->platform << "; queue " << *model->config.max_queue_size << ")\n";
      if (!model->automatic.empty())
        log << "ferry serve: model '" << model->config.name << "' " << model->automatic << '\n';
    } catch (...) {
      // Whatever a model's load throws, only that model is unavailable.
      std::string detail = "unknown error";
      try {
        throw;
      } catch (const std::exception& e) {
        detail = e.what();
      } catch (...) {
      }
      model->scheduler.reset();
      const std::string prefix = "model '" + model->config.name + "'";
      if (detail.rfind(prefix, 0) != 0) detail = prefix + ": " + detail;
      model->failure = public_reason(detail);
      log << "ferry serve: model '" << model->config.name << "' UNAVAILABLE: " << quote_text(detail, 4096) << '\n';
    }
    models_.push_back(std::move(model));
  }
  log.flush();
}

const served_model* model_repository::find(std::string_view name) const noexcept {
  for (const auto& m : models_)
    if (m->config.name == name) return m.get();
  return nullptr;
}

}  // namespace ferry::serve
