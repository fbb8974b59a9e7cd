#include "serve/model_repository.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ferry/error.hpp"
#include "ferry/model_engine.hpp"
#include "serve/model_choice.hpp"

namespace ferry::serve {
namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw invalid_argument("cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A model file named by a relative path ("affine:model.affine") lives in the model's folder, as in
// Triton's repositories; absolute paths stay as written.
std::string in_model_folder(const std::string& engine, const std::filesystem::path& folder) {
  if (!is_model_engine_spec(engine)) return engine;
  const auto colon = engine.find(':');
  const std::filesystem::path file = engine.substr(colon + 1);
  if (file.empty() || file.is_absolute()) return engine;
  return engine.substr(0, colon + 1) + (folder / file).lexically_normal().string();
}

void load(served_model& model, const std::filesystem::path& folder, const execution_platform& platform) {
  const auto file = folder / model_config_file;
  if (!std::filesystem::is_regular_file(file))
    throw invalid_argument("model '" + model.config.name + "': no " + std::string(model_config_file) + " in " +
                           folder.string());
  model.config = parse_model_config(read_text(file), model.config.name);
  model.config.engine = in_model_folder(model.config.engine, folder);
  model.automatic = choose_automatic(model.config, platform);
  std::shared_ptr<executor> exec = make_executor(model.config, platform);
  model.signature = make_signature(exec->io(), model.config.max_batch, model.config.name);
  model.platform = exec->platform();
  model.scheduler = std::make_unique<model_scheduler>(
      model.config.name, std::string(model_version), exec, model.signature,
      batching_rules{model.config.max_batch, model.config.batch_delay}, *model.stats, model.config.max_queue_size);
}

}  // namespace

model_repository::model_repository(const std::filesystem::path& directory, const execution_platform& platform,
                                   std::ostream& log) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec))
    throw invalid_argument("model repository '" + directory.string() + "' is not a directory");
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    auto model = std::make_unique<served_model>();
    model->config.name = folder.filename().string();
    try {
      load(*model, folder, platform);
      log << "ferry serve: model '" << model->config.name << "' ready (" << model->config.engine << " on "
          << model->platform << ")\n";
      if (!model->automatic.empty())
        log << "ferry serve: model '" << model->config.name << "' " << model->automatic << '\n';
    } catch (const std::exception& e) {
      model->scheduler.reset();
      const std::string prefix = "model '" + model->config.name + "'";
      model->failure = std::string(e.what()).rfind(prefix, 0) == 0 ? e.what() : prefix + ": " + e.what();
      log << "ferry serve: model '" << model->config.name << "' UNAVAILABLE: " << model->failure << '\n';
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
