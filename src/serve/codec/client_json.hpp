// JSON from clients: parsed with bounded nesting, every failure of the JSON library answered as
// a bad request (clients' values quoted briefly in error messages: vocabulary/client_text.hpp).
//
// Client JSON never reaches nlohmann::json::parse: its DOM parser accepts any depth, and the
// library's recursive functions (dump(), comparisons) then overflow the stack on a document a
// few hundred kilobytes deep. Documents are built from SAX events instead, by
// json_document_builder, which refuses nesting beyond max_json_depth as it reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/vocabulary/client_text.hpp"

namespace ferry::serve {

// The deepest nesting of arrays and objects a client's JSON may have. The protocol's documents
// need three levels (request, "inputs", an input) plus a tensor's rank for nested "data"; 64
// leaves room for any real tensor and keeps every walk over a document shallow.
inline constexpr std::size_t max_json_depth = 64;

// The most values (numbers, strings, booleans, nulls, arrays and objects) a client's document may
// hold, tensor data aside (http_infer_json.hpp reads that without a document). The protocol's
// documents hold tens; a document node takes 16 to ~100 bytes against the 2 to 5 of its text, so
// without a bound a body of junk would take ~20 times its size. Bounded, a document takes a few
// megabytes beyond its strings.
inline constexpr std::size_t max_json_values = std::size_t{1} << 16;

// Parses `text` (a whole document) into a value. Throws request_error(bad_request), its message
// starting with `what`, for malformed JSON, a NUL byte, a number beyond a double's range (1e999),
// nesting deeper than max_json_depth, more than max_json_values values, or a key repeated within
// one object.
[[nodiscard]] nlohmann::json parse_client_json(std::string_view text, std::string_view what);

// Builds a document from nlohmann::json::sax_parse events, refusing what parse_client_json
// refuses. Readers that take part of a document elsewhere (see http_infer_json.hpp) forward the
// other events to it.
class json_document_builder {
 public:
  using json = nlohmann::json;

  // `what` starts every error message; `root` receives the document.
  json_document_builder(json& root, std::string what);

  bool null();
  bool boolean(bool value);
  bool number_integer(std::int64_t value);
  bool number_unsigned(std::uint64_t value);
  bool number_float(double value, const std::string& token);
  bool string(std::string& value);
  bool binary(json::binary_t& value);
  bool start_object(std::size_t elements);
  bool key(std::string& name);
  bool end_object();
  bool start_array(std::size_t elements);
  bool end_array();
  // Throws request_error(bad_request) naming the library's complaint.
  [[noreturn]] bool parse_error(std::size_t position, const std::string& last_token, const json::exception& problem);

  // Arrays and objects open around the next value.
  [[nodiscard]] std::size_t depth() const noexcept { return open_.size(); }
  // The innermost open array or object.
  [[nodiscard]] const json& innermost() const { return *open_.back(); }
  // Throws request_error(bad_request) for nesting deeper than max_json_depth, were `depth`
  // arrays and objects open.
  void check_depth(std::size_t depth) const;
  [[nodiscard]] const std::string& what() const noexcept { return what_; }

 private:
  json* add(json&& value);
  bool open(json&& container);

  json& root_;
  std::string what_;
  std::vector<json*> open_;  // the arrays and objects being filled, outermost first
  json* member_ = nullptr;   // the object member the next value fills (after key())
  std::size_t values_ = 0;   // values added so far
};

}  // namespace ferry::serve
