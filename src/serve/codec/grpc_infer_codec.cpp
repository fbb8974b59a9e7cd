#include "serve/codec/grpc_infer_codec.hpp"

#include <cstring>
#include <limits>

#include "serve/codec/client_json.hpp"
#include "serve/codec/datatype.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

using parameter_map = google::protobuf::Map<std::string, inference::InferParameter>;

constexpr std::size_t max_elements = std::size_t{1} << 40;

std::size_t size_parameter(const inference::InferParameter& p, const std::string& key, const std::string& where) {
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param) return p.uint64_param();
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0)
    return static_cast<std::size_t>(p.int64_param());
  throw bad_request(where + ": parameter \"" + key + "\" must be a non-negative integer");
}

std::optional<shm_ref> shm_parameters(const parameter_map& parameters, const std::string& where) {
  for (const auto& [key, value] : parameters)
    if (key != "shared_memory_region" && key != "shared_memory_offset" && key != "shared_memory_byte_size")
      throw bad_request(where + ": parameter \"" + quote_text(key) + "\" is not supported by this server");
  const auto region = parameters.find("shared_memory_region");
  if (region == parameters.end()) return std::nullopt;
  if (region->second.parameter_choice_case() != inference::InferParameter::kStringParam)
    throw bad_request(where + ": parameter \"shared_memory_region\" must be a string");
  shm_ref ref;
  ref.region = region->second.string_param();
  const auto size = parameters.find("shared_memory_byte_size");
  if (size == parameters.end())
    throw bad_request(where + ": \"shared_memory_byte_size\" is missing next to \"shared_memory_region\"");
  ref.byte_size = size_parameter(size->second, "shared_memory_byte_size", where);
  if (const auto offset = parameters.find("shared_memory_offset"); offset != parameters.end())
    ref.offset = size_parameter(offset->second, "shared_memory_offset", where);
  return ref;
}

template <typename T, typename Source>
std::vector<std::byte> pack(const Source& values, std::size_t elements, const std::string& where, const char* field) {
  if (static_cast<std::size_t>(values.size()) != elements)
    throw bad_request(where + ": its shape has " + std::to_string(elements) + " elements but contents." + field +
                      " holds " + std::to_string(values.size()));
  std::vector<std::byte> bytes(elements * sizeof(T));
  for (std::size_t i = 0; i < elements; ++i) {
    const auto v = values[static_cast<int>(i)];
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v < static_cast<decltype(v)>(std::numeric_limits<T>::min()) ||
          v > static_cast<decltype(v)>(std::numeric_limits<T>::max()))
        throw bad_request(where + ": element " + std::to_string(i) + " (" + std::to_string(v) + ") is out of range");
    }
    const T t = static_cast<T>(v);
    std::memcpy(bytes.data() + i * sizeof(T), &t, sizeof(T));
  }
  return bytes;
}

std::vector<std::byte> from_contents(const inference::InferTensorContents& c, dtype type, std::size_t elements,
                                     const std::string& where) {
  switch (type) {
    case dtype::boolean:
      return pack<std::uint8_t>(c.bool_contents(), elements, where, "bool_contents");
    case dtype::i8:
      return pack<std::int8_t>(c.int_contents(), elements, where, "int_contents");
    case dtype::i32:
      return pack<std::int32_t>(c.int_contents(), elements, where, "int_contents");
    case dtype::u8:
      return pack<std::uint8_t>(c.uint_contents(), elements, where, "uint_contents");
    case dtype::i64:
      return pack<std::int64_t>(c.int64_contents(), elements, where, "int64_contents");
    case dtype::f32:
      return pack<float>(c.fp32_contents(), elements, where, "fp32_contents");
    case dtype::f16:
    case dtype::bf16:
      break;
  }
  throw bad_request(where + ": datatype " + std::string(to_string(type)) +
                    " has no typed contents field; send it in raw_input_contents");
}

bool has_contents(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
             c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size() >
         0;
}

}  // namespace

infer_request from_grpc(const inference::ModelInferRequest& message) {
  std::vector<std::span<const std::byte>> raw;
  raw.reserve(static_cast<std::size_t>(message.raw_input_contents_size()));
  for (const std::string& bytes : message.raw_input_contents())
    raw.push_back(std::as_bytes(std::span(bytes.data(), bytes.size())));
  return from_grpc(message, raw);
}

namespace {

// The request-level parameters: the client's timeout, and what is accepted and changes nothing.
void read_request_parameters(const parameter_map& parameters, infer_request& request) {
  for (const auto& [key, value] : parameters) {
    if (key == "timeout")
      request.timeout = timeout_microseconds(size_parameter(value, key, "request"));
    else if (key != empty_final_response_parameter)
      throw bad_request("request parameter \"" + quote_text(key) + "\" is not supported by this server");
  }
}

// The tensor's shape, checked; returns its element count.
std::size_t read_shape(const inference::ModelInferRequest::InferInputTensor& in, const std::string& where,
                       input_tensor& tensor) {
  std::size_t elements = 1;
  for (const auto d : in.shape()) {
    if (d < 0) throw bad_request(where + ": shape has a negative dim");
    const auto extent = static_cast<std::size_t>(d);
    if (extent != 0 && elements > max_elements / extent) throw bad_request(where + ": shape has too many elements");
    elements *= extent;
    tensor.shape.push_back(d);
  }
  return elements;
}

// One input: its type, shape and the one source of its data (a region, typed contents, or the
// next of the raw inputs, `raw` counting those taken).
input_tensor read_input(const inference::ModelInferRequest::InferInputTensor& in,
                        std::span<const std::span<const std::byte>> raw_inputs, std::size_t& raw,
                        infer_request& request) {
  input_tensor tensor;
  tensor.name = in.name();
  const std::string where = "input '" + quote_text(tensor.name) + "'";
  const auto type = parse_datatype(in.datatype());
  if (!type)
    throw bad_request(where + ": datatype '" + quote_text(in.datatype()) + "' is not supported by this server");
  tensor.type = *type;
  const std::size_t elements = read_shape(in, where, tensor);
  tensor.shared_memory = shm_parameters(in.parameters(), where);
  const bool contents = in.has_contents() && has_contents(in.contents());
  if (tensor.shared_memory && contents) throw bad_request(where + " has more than one source of data");
  if (tensor.shared_memory) return tensor;  // looked up in the registry later
  if (contents) {
    if (!raw_inputs.empty())
      throw bad_request(where + " has typed contents, but the request also uses raw_input_contents; use one");
    request.storage.push_back(from_contents(in.contents(), tensor.type, elements, where));
    tensor.data = request.storage.back();
    return tensor;
  }
  if (raw >= raw_inputs.size())
    throw bad_request(where + " has no data: raw_input_contents has only " + std::to_string(raw_inputs.size()) +
                      " entries");
  tensor.data = raw_inputs[raw++];
  return tensor;
}

}  // namespace

infer_request from_grpc(const inference::ModelInferRequest& message,
                        std::span<const std::span<const std::byte>> raw_inputs) {
  infer_request request;
  request.model = message.model_name();
  request.version = message.model_version();
  request.id = message.id();
  read_request_parameters(message.parameters(), request);
  if (message.inputs_size() == 0) throw bad_request("the inference request has no inputs");
  std::size_t raw = 0;
  for (const auto& in : message.inputs()) request.inputs.push_back(read_input(in, raw_inputs, raw, request));
  if (raw != raw_inputs.size())
    throw bad_request("raw_input_contents has " + std::to_string(raw_inputs.size()) + " entries but only " +
                      std::to_string(raw) + " inputs take raw data");
  for (const auto& out : message.outputs()) {
    requested_output requested;
    requested.name = out.name();
    requested.shared_memory = shm_parameters(out.parameters(), "output '" + quote_text(out.name()) + "'");
    request.outputs.push_back(std::move(requested));
  }
  return request;
}

void to_grpc_head(const infer_response& response, inference::ModelInferResponse& message) {
  message.set_model_name(response.model);
  message.set_model_version(response.version);
  message.set_id(response.id);
  for (const auto& out : response.outputs) {
    auto* tensor = message.add_outputs();
    tensor->set_name(out.name);
    tensor->set_datatype(std::string(to_string(out.type)));
    for (const auto d : out.shape) tensor->add_shape(d);
    if (out.shared_memory) {
      auto& p = *tensor->mutable_parameters();
      p["shared_memory_region"].set_string_param(out.shared_memory->region);
      p["shared_memory_offset"].set_uint64_param(out.shared_memory->offset);
      p["shared_memory_byte_size"].set_uint64_param(out.shared_memory->byte_size);
    }
  }
}

void to_grpc(const infer_response& response, inference::ModelInferResponse& message) {
  to_grpc_head(response, message);
  for (const auto& out : response.outputs)
    message.add_raw_output_contents(reinterpret_cast<const char*>(out.data.data()), out.data.size());
}

}  // namespace ferry::serve
