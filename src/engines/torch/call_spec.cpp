#include "engines/torch/call_spec.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"

namespace ferry::aoti {
namespace {

using json = nlohmann::json;

[[noreturn]] void not_a_spec(const std::string& why) {
  throw invalid_argument("the package's call spec is not a pytree TreeSpec: " + why);
}

// A dict node's keys: its context is a JSON text of the key list.
std::vector<std::string> dict_keys(const json& node) {
  const json& context = node.at("context");
  const json keys = context.is_string() ? json::parse(context.get<std::string>()) : context;
  if (!keys.is_array()) not_a_spec("a dict's context is not a list of keys");
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.is_string() ? k.get<std::string>() : k.dump());
  return out;
}

// Appends one name per leaf under `node`; `prefix` empty and `named` false for positional parts.
void walk(const json& node, const std::string& prefix, bool named, std::vector<std::string>& names) {
  const json& children = node.at("children_spec");
  if (!children.is_array()) not_a_spec("children_spec is not a list");
  if (node.at("type").is_null()) {  // a leaf: one input (an empty container holds none)
    names.push_back(named ? prefix : std::string());
    return;
  }
  const std::string type = node.at("type").is_string() ? node.at("type").get<std::string>() : "";
  const bool is_dict = type == "builtins.dict" || type == "collections.OrderedDict";
  const auto keys = is_dict ? dict_keys(node) : std::vector<std::string>{};
  for (std::size_t i = 0; i < children.size(); ++i) {
    const std::string part = is_dict && i < keys.size() ? keys[i] : std::to_string(i);
    walk(children[i], prefix.empty() ? part : prefix + "." + part, named, names);
  }
}

}  // namespace

std::vector<std::string> caller_input_names(std::string_view in_spec_json) {
  std::vector<std::string> names;
  try {
    const json doc = json::parse(in_spec_json);
    const json& root = doc.is_array() && doc.size() == 2 ? doc[1] : doc;  // [version, node]
    const json& top = root.at("children_spec");
    // An exported function's arguments: (args, kwargs). Keyword arguments carry their names;
    // positional ones do not (their leaves get "").
    if (root.at("type") == "builtins.tuple" && top.is_array() && top.size() == 2 &&
        top[1].at("type") == "builtins.dict") {
      walk(top[0], "", false, names);
      const auto keys = dict_keys(top[1]);
      const json& kwargs = top[1].at("children_spec");
      for (std::size_t i = 0; i < kwargs.size(); ++i) walk(kwargs[i], i < keys.size() ? keys[i] : "", true, names);
      return names;
    }
    walk(root, "", false, names);
  } catch (const json::exception& e) {
    not_a_spec(e.what());
  }
  return names;
}

bool apply_caller_names(compiled_io& io, std::span<const std::string> names) {
  if (names.size() != io.inputs.size()) return false;
  std::set<std::string> seen;
  for (const auto& n : names)
    if (n.empty() || !seen.insert(n).second) return false;
  for (std::size_t i = 0; i < names.size(); ++i) io.inputs[i].name = names[i];
  return true;
}

}  // namespace ferry::aoti
