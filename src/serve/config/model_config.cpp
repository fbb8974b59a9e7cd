#include "serve/config/model_config.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/config/config_keys.hpp"
#include "serve/config/config_reader.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

// Builds the document with the client JSON's bounds (nesting, values, repeated keys); a syntax
// error is named by its offset only, since the library's message quotes the text it stopped at,
// and a file that is not JSON at all (a link to another file) must not be shown.
class config_document_builder : public json_document_builder {
 public:
  config_document_builder(json& root, std::string model) : json_document_builder(root, ""), model_(std::move(model)) {}

  [[noreturn]] bool parse_error(std::size_t position, const std::string&, const json::exception& problem) {
    const bool number = dynamic_cast<const json::out_of_range*>(&problem) != nullptr;
    throw invalid_argument("model '" + model_ + "': " + std::string(model_config_file) +
                           " is not valid JSON: " + (number ? "a number out of range" : "a syntax error") +
                           " at byte " + std::to_string(position));
  }

 private:
  std::string model_;
};

json parse_config_json(std::string_view text, const std::string& model) {
  const std::string where = "model '" + model + "': " + std::string(model_config_file);
  if (text.size() > max_model_config_bytes)
    throw invalid_argument(where + " has " + std::to_string(text.size()) + " bytes, more than the " +
                           std::to_string(max_model_config_bytes) + " a config may have");
  // The library reads a NUL byte as the end of the input and would ignore what follows it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw invalid_argument(where + " is not valid JSON: a NUL byte at byte " + std::to_string(nul));
  json doc;
  config_document_builder builder(doc, model);
  try {
    // The parser keeps its own stack; the builder refuses nesting beyond max_json_depth as it
    // reads, so nothing recursive ever meets a deep document.
    (void)json::sax_parse(text.data(), text.data() + text.size(), &builder);
  } catch (const request_error& e) {  // the builder's bounds: its message starts ": ..."
    throw invalid_argument(where + e.what());
  }
  return doc;
}

}  // namespace

std::size_t default_max_queue_size(int workers) {
  return std::clamp<std::size_t>(32 * static_cast<std::size_t>(std::max(1, workers)), 64, 4096);
}

model_config parse_model_config(std::string_view json_text, std::string model_name) {
  model_config config;
  config.name = std::move(model_name);
  const json doc = parse_config_json(json_text, config.name);
  const config_reader read(doc, config.name);
  if (!doc.is_object()) read.fail("expected a JSON object");
  for (const auto& [key, value] : doc.items())
    if (find_config_key(key) == nullptr)
      read.fail("unknown key '" + quote_text(key) + "' (known: " + config_key_names() + ")");
  if (read.find("engine") == nullptr) read.fail("'engine' is missing (e.g. \"mlp:2x256\", \"touch\")");
  for (const config_key& key : config_keys())
    if (read.find(std::string(key.name).c_str()) != nullptr) key.read(read, config);
  check_config_keys(read, config);
  return config;
}

std::string tensor_strategies_text(const std::vector<tensor_strategy>& overrides) {
  std::string text;
  for (const auto& o : overrides)
    text += (text.empty() ? "" : ",") + o.tensor + "=" + std::string(to_string(o.strategy));
  return text;
}

}  // namespace ferry::serve
