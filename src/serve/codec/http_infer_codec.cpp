#include "serve/codec/http_infer_codec.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>

#include <nlohmann/json.hpp>

#include "serve/codec/client_json.hpp"
#include "serve/codec/datatype.hpp"
#include "serve/codec/http_infer_json.hpp"
#include "serve/codec/json_tensor.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

// More elements than any host could hold: refuse before multiplying further can overflow.
constexpr std::size_t max_elements = std::size_t{1} << 40;

std::size_t parse_header_length(std::string_view text, std::size_t body_bytes, const http_limits& limits) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size())
    throw bad_request("Inference-Header-Content-Length '" + std::string(text) + "' is not a byte count");
  if (n > limits.max_inference_header_bytes)
    throw request_error(error_status::payload_too_large,
                        "inference header of " + std::to_string(n) + " bytes exceeds the server's limit of " +
                            std::to_string(limits.max_inference_header_bytes) + " bytes");
  if (n > body_bytes)
    throw bad_request("Inference-Header-Content-Length is " + std::to_string(n) + " but the body has only " +
                      std::to_string(body_bytes) + " bytes");
  return n;
}

const json* member(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string string_member(const json& object, const char* key, const std::string& where) {
  const json* v = member(object, key);
  if (v == nullptr) throw bad_request(where + ": \"" + key + "\" is missing");
  if (!v->is_string()) throw bad_request(where + ": \"" + key + "\" must be a string, got " + quote_json(*v));
  return v->get<std::string>();
}

std::size_t size_member(const json& object, const char* key, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw bad_request(where + ": \"" + key + "\" must be a non-negative integer, got " + quote_json(v));
  return v.get<std::size_t>();
}

bool bool_member(const json& object, const char* key, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_boolean()) throw bad_request(where + ": \"" + key + "\" must be true or false, got " + quote_json(v));
  return v.get<bool>();
}

std::vector<std::int64_t> parse_shape(const json& input, const std::string& where, std::size_t& elements) {
  const json* shape = member(input, "shape");
  if (shape == nullptr) throw bad_request(where + ": \"shape\" is missing");
  if (!shape->is_array()) throw bad_request(where + ": \"shape\" must be an array, got " + quote_json(*shape));
  std::vector<std::int64_t> dims;
  elements = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
      throw bad_request(where + ": \"shape\" dim " + std::to_string(dims.size()) + " (" + quote_json(d) +
                        ") is not a non-negative integer");
    dims.push_back(d.get<std::int64_t>());
    const auto extent = static_cast<std::size_t>(dims.back());
    if (extent != 0 && elements > max_elements / extent)
      throw bad_request(where + ": \"shape\" has too many elements (" + quote_text(shape_text(dims)) +
                        " is already beyond 2^40)");
    elements *= extent;
  }
  return dims;
}

std::optional<shm_ref> parse_shm(const json* parameters, const std::string& where) {
  if (parameters == nullptr || member(*parameters, "shared_memory_region") == nullptr) return std::nullopt;
  shm_ref ref;
  ref.region = string_member(*parameters, "shared_memory_region", where);
  if (member(*parameters, "shared_memory_byte_size") == nullptr)
    throw bad_request(where + ": \"shared_memory_byte_size\" is missing next to \"shared_memory_region\"");
  ref.byte_size = size_member(*parameters, "shared_memory_byte_size", where);
  if (member(*parameters, "shared_memory_offset") != nullptr)
    ref.offset = size_member(*parameters, "shared_memory_offset", where);
  return ref;
}

void refuse_unknown_parameters(const json* parameters, const std::string& where,
                               std::initializer_list<std::string_view> known) {
  if (parameters == nullptr) return;
  if (!parameters->is_object()) throw bad_request(where + ": \"parameters\" must be an object");
  for (const auto& [key, value] : parameters->items()) {
    bool ok = false;
    for (auto k : known) ok = ok || k == key;
    if (!ok) throw bad_request(where + ": parameter \"" + quote_text(key) + "\" is not supported by this server");
  }
}

// An input's name, datatype and shape, and the elements the shape holds.
struct input_header {
  input_tensor tensor;  // without data
  std::string where;    // "input 'name'", for messages
  std::size_t elements = 0;
};

input_header parse_input_header(const json& in) {
  input_header h;
  h.tensor.name = string_member(in, "name", "input");
  h.where = "input '" + quote_text(h.tensor.name) + "'";
  const std::string type_name = string_member(in, "datatype", h.where);
  const auto type = parse_datatype(type_name);
  if (!type) throw bad_request(h.where + ": datatype '" + quote_text(type_name) + "' is not supported by this server");
  h.tensor.type = *type;
  h.tensor.shape = parse_shape(in, h.where, h.elements);
  return h;
}

// The JSON header's bytes: all of the body, or the Inference-Header-Content-Length announced.
std::size_t header_bytes(std::string_view body, std::optional<std::string_view> header_length,
                         const http_limits& limits) {
  if (header_length) return parse_header_length(*header_length, body.size(), limits);
  if (body.size() > limits.max_inference_header_bytes)
    throw request_error(error_status::payload_too_large, "inference request JSON of " + std::to_string(body.size()) +
                                                             " bytes exceeds the server's limit of " +
                                                             std::to_string(limits.max_inference_header_bytes) +
                                                             " bytes");
  return body.size();
}

// One inference body read in steps: the JSON (tensor data decoded as the parser meets it), the
// request's parameters, each input (its header checked once, its data from binary, the JSON or
// shared memory), the data that came before its input's datatype or shape, and the outputs.
class http_infer_parser {
 public:
  http_infer_parser(std::string_view body, std::optional<std::string_view> header_length, const http_limits& limits,
                    const input_check& check)
      : body_(body),
        has_header_length_(header_length.has_value()),
        json_bytes_(header_bytes(body, header_length, limits)),
        check_(check) {}

  http_infer_request parse() {
    const json doc = read_json();
    if (!doc.is_object()) throw bad_request("the inference request must be a JSON object");
    read_parameters(doc);
    read_inputs(doc);
    read_late_data();
    read_outputs(doc);
    return std::move(parsed_);
  }

 private:
  [[nodiscard]] std::string_view header() const { return body_.substr(0, json_bytes_); }

  json read_json() {
    // nlohmann's parser stops at a NUL byte, which would let binary data pass for the end of the
    // JSON; refuse it by name instead.
    if (const auto nul = header().find('\0'); nul != std::string_view::npos)
      throw bad_request(
          "malformed JSON in the inference request: a NUL byte at offset " + std::to_string(nul) +
          (has_header_length_ ? std::string() : " (binary data without an Inference-Header-Content-Length header?)"));
    // JSON data is decoded as the parser meets it, by decoders made once an input's datatype and
    // shape are known and checked (usually before its "data"; otherwise in a second pass).
    return read_infer_json(header(), "the inference request",
                           [this](std::size_t index, const json& in) -> json_tensor_decoder* {
                             if (!in.contains("name") || !in.contains("datatype") || !in.contains("shape"))
                               return nullptr;
                             input_header h = parse_input_header(in);
                             checked(index, h.tensor);
                             return make_decoder(index, h);
                           });
  }

  // Each input is checked once, the first time its header is read (here or in read_inputs).
  void checked(std::size_t index, const input_tensor& tensor) {
    if (was_checked_.size() <= index) was_checked_.resize(index + 1, false);
    if (was_checked_[index]) return;
    if (check_) check_(tensor);
    was_checked_[index] = true;
  }

  json_tensor_decoder* make_decoder(std::size_t index, const input_header& h) {
    // Every element takes two bytes of text at least ("1,"): room for more than that is never
    // reserved, whatever a shape claims.
    const std::size_t most_elements = (json_bytes_ + 1) / 2;
    if (decoders_.size() <= index) decoders_.resize(index + 1);
    decoders_[index] =
        std::make_unique<json_tensor_decoder>(h.tensor.type, h.elements, most_elements, quote_text(h.tensor.name));
    return decoders_[index].get();
  }

  void read_parameters(const json& doc) {
    infer_request& request = parsed_.request;
    if (const json* id = member(doc, "id")) {
      if (!id->is_string()) throw bad_request("\"id\" must be a string, got " + quote_json(*id));
      request.id = id->get<std::string>();
    }
    const json* parameters = member(doc, "parameters");
    refuse_unknown_parameters(parameters, "request", {"binary_data_output", "timeout", empty_final_response_parameter});
    if (parameters == nullptr) return;
    if (member(*parameters, "binary_data_output") != nullptr)
      parsed_.binary_by_default = bool_member(*parameters, "binary_data_output", "request parameters");
    if (member(*parameters, "timeout") != nullptr)
      request.timeout = timeout_microseconds(size_member(*parameters, "timeout", "request parameters"));
  }

  void read_inputs(const json& doc) {
    const json* inputs = member(doc, "inputs");
    if (inputs == nullptr || !inputs->is_array() || inputs->empty())
      throw bad_request("the inference request needs a non-empty \"inputs\" array");
    cursor_ = json_bytes_;  // binary data starts right after the JSON header
    for (const auto& in : *inputs) {
      if (!in.is_object()) throw bad_request("every entry of \"inputs\" must be an object");
      read_input(in);
    }
    if (cursor_ != body_.size())
      throw bad_request("the body has " + std::to_string(body_.size() - cursor_) +
                        " bytes after the JSON header and the binary inputs it announces");
  }

  void read_input(const json& in) {
    infer_request& request = parsed_.request;
    const std::size_t index = request.inputs.size();
    input_header h = parse_input_header(in);
    checked(index, h.tensor);
    const json* parameters = member(in, "parameters");
    refuse_unknown_parameters(
        parameters, h.where,
        {"binary_data_size", "shared_memory_region", "shared_memory_offset", "shared_memory_byte_size"});
    const bool has_binary = parameters != nullptr && member(*parameters, "binary_data_size") != nullptr;
    h.tensor.shared_memory = parse_shm(parameters, h.where);
    const json* data = member(in, "data");
    const int sources = (has_binary ? 1 : 0) + (h.tensor.shared_memory ? 1 : 0) + (data != nullptr ? 1 : 0);
    if (sources == 0)
      throw bad_request(h.where + " has no data: give \"data\", binary_data_size or a shared-memory region");
    if (sources > 1) throw bad_request(h.where + " has more than one source of data");
    if (has_binary) {
      h.tensor.data = binary_data(size_member(*parameters, "binary_data_size", h.where), h.where);
    } else if (data != nullptr && index < decoders_.size() && decoders_[index] != nullptr) {
      request.storage.push_back(decoders_[index]->release());
      h.tensor.data = request.storage.back();
    } else if (data != nullptr) {
      data_unread_.push_back(index);
      (void)make_decoder(index, h);
    }
    request.inputs.push_back(std::move(h.tensor));
  }

  std::span<const std::byte> binary_data(std::size_t size, const std::string& where) {
    if (!has_header_length_)
      throw bad_request(where + " has binary_data_size but the request has no Inference-Header-Content-Length header");
    if (size > body_.size() - cursor_)
      throw bad_request("truncated binary data: " + where + " needs " + std::to_string(size) + " bytes at offset " +
                        std::to_string(cursor_) + " but the body ends at " + std::to_string(body_.size()));
    const auto bytes = std::as_bytes(std::span(body_.data() + cursor_, size));
    cursor_ += size;
    return bytes;
  }

  // The "data" of inputs whose datatype or shape came after it: a second pass over the JSON.
  void read_late_data() {
    if (data_unread_.empty()) return;
    (void)read_infer_json(
        header(), "the inference request", [this](std::size_t index, const json&) -> json_tensor_decoder* {
          const bool unread = std::find(data_unread_.begin(), data_unread_.end(), index) != data_unread_.end();
          return unread ? decoders_[index].get() : nullptr;
        });
    infer_request& request = parsed_.request;
    for (const std::size_t index : data_unread_) {
      request.storage.push_back(decoders_[index]->release());
      request.inputs[index].data = request.storage.back();
    }
  }

  void read_outputs(const json& doc) {
    const json* outputs = member(doc, "outputs");
    if (outputs == nullptr) return;
    if (!outputs->is_array()) throw bad_request("\"outputs\" must be an array");
    for (const auto& out : *outputs) {
      if (!out.is_object()) throw bad_request("every entry of \"outputs\" must be an object");
      requested_output requested;
      requested.name = string_member(out, "name", "output");
      const std::string where = "output '" + quote_text(requested.name) + "'";
      const json* parameters = member(out, "parameters");
      refuse_unknown_parameters(
          parameters, where,
          {"binary_data", "shared_memory_region", "shared_memory_offset", "shared_memory_byte_size"});
      bool binary = parsed_.binary_by_default;
      if (parameters != nullptr && member(*parameters, "binary_data") != nullptr)
        binary = bool_member(*parameters, "binary_data", where);
      requested.shared_memory = parse_shm(parameters, where);
      parsed_.binary_outputs.push_back(binary);
      parsed_.request.outputs.push_back(std::move(requested));
    }
  }

  std::string_view body_;
  bool has_header_length_;
  std::size_t json_bytes_;
  const input_check& check_;
  http_infer_request parsed_;
  std::vector<std::unique_ptr<json_tensor_decoder>> decoders_;  // by input index, once made
  std::vector<bool> was_checked_;                               // by input index
  std::vector<std::size_t> data_unread_;  // inputs whose "data" came before their datatype or shape
  std::size_t cursor_ = 0;                // the next binary input's offset in the body
};

}  // namespace

http_infer_request parse_http_infer_request(std::string_view body, std::optional<std::string_view> header_length,
                                            const http_limits& limits, const input_check& check) {
  return http_infer_parser(body, header_length, limits, check).parse();
}

std::vector<bool> binary_choices(const std::vector<std::string>& requested, const std::vector<bool>& binary,
                                 bool by_default, const infer_response& response) {
  std::vector<bool> choices;
  for (const auto& out : response.outputs) {
    bool choice = by_default;
    for (std::size_t i = 0; i < requested.size() && i < binary.size(); ++i)
      if (requested[i] == out.name) choice = binary[i];
    choices.push_back(choice && !out.shared_memory);
  }
  return choices;
}

http_infer_body encode_http_infer_response(const infer_response& response, const std::vector<bool>& binary) {
  json doc;
  doc["model_name"] = response.model;
  doc["model_version"] = response.version;
  if (!response.id.empty()) doc["id"] = response.id;
  json outputs = json::array();
  std::size_t binary_bytes = 0;
  for (std::size_t i = 0; i < response.outputs.size(); ++i) {
    const output_tensor& out = response.outputs[i];
    json o;
    o["name"] = out.name;
    o["datatype"] = std::string(to_string(out.type));
    o["shape"] = out.shape;
    if (out.shared_memory) {
      // Name, datatype and shape only, as Triton's server answers: the data is in the client's
      // region, and Triton's C++ client (perf_analyzer) takes any output "parameters" to hold a
      // binary_data_size, failing on the region's parameters.
    } else if (binary.at(i)) {
      o["parameters"] = {{"binary_data_size", out.data.size()}};
      binary_bytes += out.data.size();
    } else {
      o["data"] = encode_json_data(out.data, out.type);
    }
    outputs.push_back(std::move(o));
  }
  doc["outputs"] = std::move(outputs);

  http_infer_body encoded;
  encoded.body = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  const bool any_binary = std::find(binary.begin(), binary.end(), true) != binary.end();
  if (any_binary) {
    encoded.header_length = encoded.body.size();
    encoded.body.reserve(encoded.body.size() + binary_bytes);
    for (std::size_t i = 0; i < response.outputs.size(); ++i)
      if (binary[i] && !response.outputs[i].shared_memory)
        encoded.body.append(reinterpret_cast<const char*>(response.outputs[i].data.data()),
                            response.outputs[i].data.size());
  }
  return encoded;
}

}  // namespace ferry::serve
