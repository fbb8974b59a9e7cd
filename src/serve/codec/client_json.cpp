#include "serve/codec/client_json.hpp"

#include <algorithm>
#include <utility>

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

using json = nlohmann::json;

json parse_client_json(std::string_view text, std::string_view what) {
  // The library reads a NUL byte as the end of the input and would ignore what follows it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw bad_request(std::string(what) + ": malformed JSON: a NUL byte at offset " + std::to_string(nul));
  json document;
  json_document_builder builder(document, std::string(what));
  // The parser keeps its own stack, so no depth recurses here; the builder throws on errors.
  (void)json::sax_parse(text.data(), text.data() + text.size(), &builder);
  return document;
}

json_document_builder::json_document_builder(json& root, std::string what) : root_(root), what_(std::move(what)) {}

json* json_document_builder::add(json&& value) {
  if (++values_ > max_json_values)
    throw bad_request(what_ + ": more than " + std::to_string(max_json_values) +
                      " values (numbers, strings, arrays, objects) outside tensor data");
  if (open_.empty()) {
    root_ = std::move(value);
    return &root_;
  }
  json& parent = *open_.back();
  if (parent.is_array()) {
    auto& elements = parent.get_ref<json::array_t&>();
    elements.push_back(std::move(value));
    return &elements.back();
  }
  *member_ = std::move(value);
  return member_;
}

void json_document_builder::check_depth(std::size_t depth) const {
  if (depth > max_json_depth)
    throw bad_request(what_ + ": arrays and objects nested deeper than " + std::to_string(max_json_depth) + " levels");
}

bool json_document_builder::open(json&& container) {
  check_depth(open_.size() + 1);
  open_.push_back(add(std::move(container)));
  return true;
}

bool json_document_builder::null() { return add(nullptr) != nullptr; }
bool json_document_builder::boolean(bool value) { return add(value) != nullptr; }
bool json_document_builder::number_integer(std::int64_t value) { return add(value) != nullptr; }
bool json_document_builder::number_unsigned(std::uint64_t value) { return add(value) != nullptr; }
bool json_document_builder::number_float(double value, const std::string&) { return add(value) != nullptr; }
bool json_document_builder::string(std::string& value) { return add(std::move(value)) != nullptr; }
bool json_document_builder::binary(json::binary_t& value) { return add(json::binary(std::move(value))) != nullptr; }
bool json_document_builder::start_object(std::size_t) { return open(json::object()); }
bool json_document_builder::start_array(std::size_t) { return open(json::array()); }

bool json_document_builder::key(std::string& name) {
  json& object = *open_.back();
  // A repeated key would silently replace the first value (or, read by another library, be
  // ignored): neither is what the client can have meant.
  if (object.contains(name))
    throw bad_request(what_ + ": the key \"" + quote_text(name) + "\" appears twice in one object");
  member_ = &object[name];
  return true;
}

bool json_document_builder::end_object() {
  open_.pop_back();
  return true;
}

bool json_document_builder::end_array() {
  open_.pop_back();
  return true;
}

bool json_document_builder::parse_error(std::size_t, const std::string&, const json::exception& problem) {
  // The library's message quotes the offending token, which a client can make as long as its
  // body: keep the start, which says what is wrong and where.
  constexpr std::size_t kept = 256;
  if (dynamic_cast<const json::out_of_range*>(&problem) != nullptr)
    throw bad_request(what_ + ": a number out of range: " + quote_text(problem.what(), kept));
  throw bad_request(what_ + ": malformed JSON: " + quote_text(problem.what(), kept));
}

}  // namespace ferry::serve
