#include "serve/codec/client_json.hpp"

#include <algorithm>
#include <utility>

#include "serve/codec/safe_name.hpp"
#include "serve/request_error.hpp"

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

std::string quote_text(std::string_view text, std::size_t limit) {
  std::string quoted;
  const std::string_view cut = text.substr(0, limit);
  quoted.reserve(cut.size() + 3);
  static constexpr char hex[] = "0123456789abcdef";
  const auto escape = [&quoted](char c) {
    const auto byte = static_cast<unsigned char>(c);
    quoted += "\\x";
    quoted.push_back(hex[byte >> 4]);
    quoted.push_back(hex[byte & 15]);
  };
  for (std::size_t at = 0; at < cut.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(cut, at, c);
    // A control character would end a C string (NUL), split a log line (newline) or move a
    // terminal's cursor, and bytes that are not UTF-8 would make the message unreadable as text
    // (a gRPC status, a JSON document): they are shown, not sent.
    if (length == 0) {
      escape(cut[at++]);
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      for (std::size_t i = 0; i < length; ++i) escape(cut[at + i]);
    } else {
      quoted.append(cut.substr(at, length));
    }
    at += length;
  }
  if (text.size() > limit) quoted += "...";
  return quoted;
}

bool has_control_character(std::string_view text) noexcept {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

std::string quote_json(const json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " elements";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " members";
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    // Cut first, then escape: a cut inside a UTF-8 sequence is replaced, not rejected.
    const std::string quoted = json(s.substr(0, max_quoted_chars)).dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > max_quoted_chars ? quoted + "..." : quoted;
  }
  return value.dump();  // a number, true, false or null: short
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
