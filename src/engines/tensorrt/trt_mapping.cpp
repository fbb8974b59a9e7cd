#include "engines/tensorrt/trt_mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <utility>

#include "engines/builtin/tensor_checks.hpp"
#include "ferry/core/error.hpp"

namespace ferry::trt {
namespace {

using builtin::format_shape;

std::string in_quotes(std::string_view name) {
  std::string text;
  text.reserve(name.size() + 2);
  text += '\'';
  text += name;
  text += '\'';
  return text;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    if (!text.empty()) text += ", ";
    text += in_quotes(name);
  }
  return text.empty() ? "(none)" : text;
}

std::string ferry_dtype_list() {
  std::string text;
  for (const auto& entry : trt_dtypes) {
    if (!entry.ferry) continue;
    if (!text.empty()) text += ", ";
    text += to_string(*entry.ferry);
  }
  return text;
}

const trt_dtype_entry* find_dtype(std::int32_t code) {
  for (const auto& entry : trt_dtypes)
    if (entry.code == code) return &entry;
  return nullptr;
}

template <typename Decl>
const Decl* find_by_name(std::span<const Decl> decls, std::string_view name, auto name_of) {
  for (const auto& d : decls)
    if (name_of(d) == name) return &d;
  return nullptr;
}

// Rank, positive extents, static dims and profile 0's range for one device input.
void check_device_shape(const std::string& engine, const input_decl& decl, std::span<const std::int64_t> given) {
  const std::string& name = decl.spec.name;
  const auto& declared = decl.spec.shape;
  const std::string got = format_shape(given);
  if (given.size() != declared.size())
    throw invalid_argument(engine + ": input '" + name + "' has rank " + std::to_string(declared.size()) + " " +
                           format_shape(declared) + ", got " + got);
  const bool has_profile = decl.min.size() == declared.size() && decl.max.size() == declared.size();
  for (std::size_t d = 0; d < given.size(); ++d) {
    if (given[d] <= 0) throw invalid_argument(engine + ": input '" + name + "' needs positive extents, got " + got);
    if (declared[d] != dynamic_dim && declared[d] != given[d])
      throw invalid_argument(engine + ": input '" + name + "' must have shape " + format_shape(declared) + ", got " +
                             got);
    if (has_profile && (given[d] < decl.min[d] || given[d] > decl.max[d]))
      throw invalid_argument(engine + ": input '" + name + "' dim " + std::to_string(d) + " is " +
                             std::to_string(given[d]) + ", outside optimization profile 0's range [" +
                             std::to_string(decl.min[d]) + ", " + std::to_string(decl.max[d]) + "] (profile min " +
                             format_shape(decl.min) + ", max " + format_shape(decl.max) + "); got " + got);
  }
}

void check_shape_values(const std::string& engine, const shape_tensor_decl& decl,
                        std::span<const std::int64_t> values) {
  const std::int64_t wanted = volume(decl.shape);
  if (static_cast<std::int64_t>(values.size()) != wanted)
    throw invalid_argument(engine + ": host shape tensor '" + decl.name + "' " + format_shape(decl.shape) + " takes " +
                           std::to_string(wanted) + " value(s), got " + std::to_string(values.size()) + " " +
                           format_shape(values));
  if (decl.type != dtype::i32) return;
  for (const auto v : values)
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      throw invalid_argument(engine + ": host shape tensor '" + decl.name + "' is INT32, and " + std::to_string(v) +
                             " does not fit");
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool mentions_any(const std::string& lowered, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return lowered.find(n) != std::string::npos; });
}

// The category one line points at, if any. Substrings of TensorRT's own wording since 8.x:
// "The engine plan file is generated on an incompatible device, expecting compute 8.9 got
// compute 8.6", "Version tag does not match. Note: Current Version: 237, Serialized Engine
// Version: 239", "not compatible with this version of TensorRT, expecting library version",
// "Magic tag does not match", "plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed".
std::optional<plan_problem> line_problem(const std::string& line) {
  const std::string l = lower(line);
  if (mentions_any(l, {"incompatible device", "expecting compute"})) return plan_problem::wrong_architecture;
  if (mentions_any(l, {"version tag does not match", "serialized engine version", "kserialization_version",
                       "expecting library version", "not compatible with this version of tensorrt"}))
    return plan_problem::version_mismatch;
  if (mentions_any(l,
                   {"magic tag", "magictag", "serialization assertion", "serialization error", "truncated", "corrupt"}))
    return plan_problem::corrupt;
  return std::nullopt;
}

}  // namespace

dtype to_ferry_dtype(std::string_view engine, std::string_view tensor, std::int32_t code) {
  const trt_dtype_entry* entry = find_dtype(code);
  if (entry != nullptr && entry->ferry) return *entry->ferry;
  throw unsupported(std::string(engine) + ": tensor " + in_quotes(tensor) + " has TensorRT data type " +
                    trt_dtype_name(code) + ", which ferry has no dtype for (ferry has " + ferry_dtype_list() + ")");
}

std::string trt_dtype_name(std::int32_t code) {
  const trt_dtype_entry* entry = find_dtype(code);
  return entry != nullptr ? std::string(entry->trt_name) : "DataType(" + std::to_string(code) + ")";
}

std::vector<std::int64_t> to_ferry_shape(std::string_view tensor, std::int32_t nb_dims,
                                         std::span<const std::int64_t> d) {
  if (nb_dims < 0)
    throw error("TensorRT reports no shape for tensor " + in_quotes(tensor) + " (nbDims " + std::to_string(nb_dims) +
                ")");
  if (static_cast<std::size_t>(nb_dims) > d.size())
    throw error("TensorRT reports " + std::to_string(nb_dims) + " dims for tensor " + in_quotes(tensor) +
                ", more than the " + std::to_string(d.size()) + " a Dims holds");
  std::vector<std::int64_t> shape(d.begin(), d.begin() + nb_dims);
  for (auto& extent : shape) {
    if (extent == -1)
      extent = dynamic_dim;
    else if (extent < 0)
      throw error("TensorRT reports extent " + std::to_string(extent) + " for tensor " + in_quotes(tensor));
  }
  return shape;
}

std::int64_t volume(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (const auto extent : shape) n *= extent;
  return n;
}

io_kind classify_io(std::string_view tensor, std::int32_t io_mode, std::int32_t location) {
  const bool input = io_mode == static_cast<std::int32_t>(trt_io_mode::input);
  if (!input && io_mode != static_cast<std::int32_t>(trt_io_mode::output))
    throw error("TensorRT reports tensor " + in_quotes(tensor) + " as neither input nor output (TensorIOMode " +
                std::to_string(io_mode) + ")");
  if (location == static_cast<std::int32_t>(trt_location::device))
    return input ? io_kind::device_input : io_kind::device_output;
  if (location == static_cast<std::int32_t>(trt_location::host))
    return input ? io_kind::host_shape_input : io_kind::host_shape_output;
  throw error("TensorRT reports tensor " + in_quotes(tensor) + " in an unknown location (TensorLocation " +
              std::to_string(location) + ")");
}

void require_linear_format(std::string_view engine, std::string_view tensor, std::int32_t format) {
  if (format == trt_format_linear) return;
  throw unsupported(std::string(engine) + ": tensor " + in_quotes(tensor) + " uses TensorRT format " +
                    std::to_string(format) +
                    ", a vectorized layout whose padded size ferry does not allocate; rebuild the plan "
                    "with linear I/O formats (trtexec --inputIOFormats/--outputIOFormats ...:chw)");
}

shape_tensor_decl make_shape_tensor_decl(std::string_view engine, std::string name, dtype type,
                                         std::vector<std::int64_t> shape) {
  const std::string prefix = std::string(engine) + ": host shape tensor " + in_quotes(name);
  if (type != dtype::i32 && type != dtype::i64)
    throw unsupported(prefix + " is " + std::string(to_string(type)) + "; shape tensors are INT32 or INT64");
  if (shape.size() > 1)
    throw unsupported(prefix + " has rank " + std::to_string(shape.size()) + " " + format_shape(shape) +
                      "; shape tensors have rank 0 or 1");
  for (const auto extent : shape)
    if (extent == dynamic_dim)
      throw unsupported(prefix + " has a dynamic length " + format_shape(shape) +
                        "; ferry takes shape tensors of fixed length only");
  return {std::move(name), type, std::move(shape)};
}

input_request check_input_request(std::string_view engine_name, std::span<const input_decl> inputs,
                                  std::span<const shape_tensor_decl> shape_tensors,
                                  std::span<const shape_binding> bindings) {
  const std::string engine(engine_name);
  const auto input_name = [](const input_decl& d) -> std::string_view { return d.spec.name; };
  const auto tensor_name = [](const shape_tensor_decl& d) -> std::string_view { return d.name; };

  for (std::size_t b = 0; b < bindings.size(); ++b) {
    const std::string& name = bindings[b].name;
    for (std::size_t earlier = 0; earlier < b; ++earlier)
      if (bindings[earlier].name == name) throw invalid_argument(engine + ": input '" + name + "' is given twice");
    if (find_by_name(inputs, name, input_name) == nullptr &&
        find_by_name(shape_tensors, name, tensor_name) == nullptr) {
      std::vector<std::string> input_names;
      std::vector<std::string> shape_names;
      for (const auto& d : inputs) input_names.push_back(d.spec.name);
      for (const auto& d : shape_tensors) shape_names.push_back(d.name);
      std::string message = engine + ": no input named '" + name + "'; inputs are " + quoted_list(input_names);
      if (!shape_names.empty()) message += "; host shape tensors are " + quoted_list(shape_names);
      throw invalid_argument(message);
    }
  }

  input_request request;
  for (const auto& decl : inputs) {
    const shape_binding* given = builtin::find_binding(bindings, decl.spec.name);
    if (given == nullptr) {
      if (decl.spec.is_dynamic())
        throw invalid_argument(engine + ": input '" + decl.spec.name + "' has dynamic dims " +
                               format_shape(decl.spec.shape) + "; give its shape");
      request.device_shapes.push_back({decl.spec.name, decl.spec.shape});
      continue;
    }
    check_device_shape(engine, decl, given->dims);
    request.device_shapes.push_back(*given);
  }
  for (const auto& decl : shape_tensors) {
    const shape_binding* given = builtin::find_binding(bindings, decl.name);
    if (given == nullptr)
      throw invalid_argument(engine + ": host shape tensor '" + decl.name + "' needs its " +
                             std::to_string(volume(decl.shape)) + " value(s): give a shape binding named '" +
                             decl.name + "' whose dims are the values");
    check_shape_values(engine, decl, given->dims);
    request.shape_values.push_back(*given);
  }
  return request;
}

void require_static_output(std::string_view engine, std::string_view tensor, std::span<const std::int64_t> shape) {
  for (const auto extent : shape)
    if (extent == dynamic_dim)
      throw unsupported(std::string(engine) + ": output " + in_quotes(tensor) + " has shape " + format_shape(shape) +
                        " even with every input shape given: its size depends on the data, and ferry "
                        "allocates outputs before enqueue (TensorRT's IOutputAllocator is not supported)");
}

std::vector<char> read_plan_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw invalid_argument("plan file '" + path + "' does not exist");
  if (!fs::is_regular_file(status)) throw invalid_argument("plan file '" + path + "' is not a regular file");

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw invalid_argument("plan file '" + path + "' cannot be opened: " + std::strerror(errno));
  const auto size = fs::file_size(path, ec);
  if (ec) throw invalid_argument("plan file '" + path + "' cannot be read: " + ec.message());
  if (size == 0) throw invalid_argument("plan file '" + path + "' is empty");

  std::vector<char> bytes(size);
  const std::size_t read = std::fread(bytes.data(), 1, bytes.size(), file.get());
  if (read != bytes.size())
    throw invalid_argument("plan file '" + path + "' cannot be read: got " + std::to_string(read) + " of " +
                           std::to_string(bytes.size()) + " bytes" +
                           (std::ferror(file.get()) != 0 ? std::string(" (") + std::strerror(errno) + ")" : ""));
  return bytes;
}

plan_problem classify_plan_errors(std::span<const std::string> errors) {
  std::optional<plan_problem> best;
  for (const auto& line : errors) {
    const auto problem = line_problem(line);
    // The enum is ordered most specific first.
    if (problem && (!best || *problem < *best)) best = problem;
  }
  return best.value_or(plan_problem::other);
}

std::string describe_plan_failure(std::string_view path, std::span<const std::string> errors,
                                  const plan_load_context& context) {
  const plan_problem problem = classify_plan_errors(errors);
  std::string said = errors.empty() ? std::string("TensorRT logged no error") : errors.front();
  for (const auto& line : errors)
    if (line_problem(line) == problem) {
      said = line;
      break;
    }

  const std::string file = "plan file '" + std::string(path) + "'";
  std::string text;
  switch (problem) {
    case plan_problem::wrong_architecture:
      text = file + " was built for another GPU architecture than " + context.device +
             "; rebuild it on this GPU (or build it with a hardware compatibility level)";
      break;
    case plan_problem::version_mismatch:
      text = file + " was built by another TensorRT version than the one loaded here (" + context.trt_version +
             "); rebuild it with this TensorRT, or run ferry against the TensorRT that built it";
      break;
    case plan_problem::corrupt:
      text = file +
             " is not a valid TensorRT plan: it is damaged, truncated or another kind of file "
             "(an ONNX model is not a plan: build one with trtexec --saveEngine)";
      break;
    case plan_problem::other:
      text = "TensorRT " + context.trt_version + " could not deserialize " + file + " on " + context.device;
      break;
  }
  return text + ". TensorRT: " + said;
}

std::string format_trt_version(std::int32_t encoded) {
  return std::to_string(encoded / 10000) + "." + std::to_string(encoded / 100 % 100) + "." +
         std::to_string(encoded % 100);
}

trt_verbosity verbosity_from_env(const char* value) noexcept {
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0) return trt_verbosity::quiet;
  return trt_verbosity::verbose;
}

log_route route_log(std::int32_t severity, trt_verbosity verbosity) noexcept {
  const bool verbose = verbosity == trt_verbosity::verbose;
  switch (static_cast<trt_severity>(severity)) {
    case trt_severity::internal_error:
    case trt_severity::error:
      return verbose ? log_route::keep_and_print_error : log_route::keep_error;
    case trt_severity::warning:
      return log_route::print;
    case trt_severity::info:
    case trt_severity::verbose:
      return verbose ? log_route::print : log_route::drop;
  }
  return log_route::print;  // a severity newer than this table: better seen than lost
}

std::string log_line(std::string_view message) { return "ferry: TensorRT: " + std::string(message); }

void error_history::add(std::string message) {
  if (messages_.size() == capacity) messages_.erase(messages_.begin());
  messages_.push_back(std::move(message));
}

std::string error_history::last_or(std::string_view fallback) const {
  return messages_.empty() ? std::string(fallback) : messages_.back();
}

}  // namespace ferry::trt
