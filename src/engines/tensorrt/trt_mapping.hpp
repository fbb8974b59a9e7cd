// The TensorRT backend's pure logic: everything that turns TensorRT's numbers and log lines into
// ferry's types and messages, with no TensorRT header in sight.
//
// Why a seam: neither our machines nor CI can install TensorRT, so the files that call it are
// only compile-checked. Whatever can be decided without calling it (dtype codes, shapes, profile
// ranges, which binding goes where, what a deserialization failure means, alignment) lives here,
// is compiled into ferry always, and is unit-tested on CPU.
//
// The enum values below are copied from TensorRT 10's headers; trt_mapping_check.cpp, which does
// include them, static_asserts that they still match.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry::trt {

// ---- TensorRT enum values --------------------------------------------------------------------

// nvinfer1::DataType, NvInferRuntimeBase.h (TensorRT 10.16): one row per code, with the ferry
// dtype it maps to, or none where ferry has no such type. Codes 10 (kFP4) and 11 (kE8M0) appeared
// in later 10.x releases; older ones never report them.
struct trt_dtype_entry {
  std::int32_t code;
  std::string_view trt_name;
  std::optional<dtype> ferry;
};
inline constexpr std::array<trt_dtype_entry, 12> trt_dtypes{{
    {0, "kFLOAT", dtype::f32},
    {1, "kHALF", dtype::f16},
    {2, "kINT8", dtype::i8},
    {3, "kINT32", dtype::i32},
    {4, "kBOOL", dtype::boolean},
    {5, "kUINT8", dtype::u8},
    {6, "kFP8", std::nullopt},
    {7, "kBF16", dtype::bf16},
    {8, "kINT64", dtype::i64},
    {9, "kINT4", std::nullopt},
    {10, "kFP4", std::nullopt},
    {11, "kE8M0", std::nullopt},
}};

// nvinfer1::TensorIOMode, NvInferRuntimeBase.h.
enum class trt_io_mode : std::int32_t { none = 0, input = 1, output = 2 };
// nvinfer1::TensorLocation, NvInferRuntime.h.
enum class trt_location : std::int32_t { device = 0, host = 1 };
// nvinfer1::ILogger::Severity, NvInferRuntime.h.
enum class trt_severity : std::int32_t { internal_error = 0, error = 1, warning = 2, info = 3, verbose = 4 };
// nvinfer1::TensorFormat::kLINEAR, NvInferRuntime.h: the only layout whose byte size is the
// shape's volume times the element size, which is what ferry allocates.
inline constexpr std::int32_t trt_format_linear = 0;
// nvinfer1::Dims64::MAX_DIMS, NvInferRuntimeBase.h.
inline constexpr std::int32_t trt_max_dims = 8;

// ---- data types ------------------------------------------------------------------------------

// The ferry dtype of a TensorRT DataType code. Throws unsupported naming the engine, `tensor` and
// the TensorRT type for a type ferry lacks (kFP8, kINT4, ...) or a code this table does not know.
[[nodiscard]] dtype to_ferry_dtype(std::string_view engine, std::string_view tensor, std::int32_t code);
// "kFLOAT", ..., or "DataType(42)" for an unknown code.
[[nodiscard]] std::string trt_dtype_name(std::int32_t code);

// ---- shapes ----------------------------------------------------------------------------------

// A TensorRT Dims (nbDims, d[]) as a ferry shape, -1 becoming dynamic_dim. Throws error naming
// `tensor` when TensorRT reports no shape (nbDims < 0: the name is unknown to it), more dims
// than `d` holds, or an extent below -1.
[[nodiscard]] std::vector<std::int64_t> to_ferry_shape(std::string_view tensor, std::int32_t nb_dims,
                                                       std::span<const std::int64_t> d);

// Number of elements of a concrete shape (1 for rank 0).
[[nodiscard]] std::int64_t volume(std::span<const std::int64_t> shape);

// ---- I/O roles -------------------------------------------------------------------------------

// Where a TensorRT I/O tensor lives in ferry's world. Device tensors are ferry I/O buffers; host
// tensors are shape tensors (TensorLocation::kHOST) that the context keeps in its own memory.
enum class io_kind { device_input, device_output, host_shape_input, host_shape_output };

// Classifies a tensor from its TensorIOMode and TensorLocation codes; throws error naming it for
// kNONE or a location this table does not know.
[[nodiscard]] io_kind classify_io(std::string_view tensor, std::int32_t io_mode, std::int32_t location);

// Throws unsupported naming the tensor unless its TensorFormat code is kLINEAR: a vectorized
// layout (kCHW32, kHWC8, ...) pads its channels, so its size is not what ferry would allocate.
void require_linear_format(std::string_view engine, std::string_view tensor, std::int32_t format);

// ---- resolve(): checking what the caller asked for -------------------------------------------

// A device input as the plan declares it, with optimization profile 0's range (min and max are
// empty when the plan gives none, e.g. for a static input).
struct input_decl {
  tensor_spec spec;
  std::vector<std::int64_t> min;
  std::vector<std::int64_t> max;
};

// A host-resident shape tensor input: an INT32 or INT64 vector of fixed length whose *values*
// TensorRT needs on the host before it can size the network.
struct shape_tensor_decl {
  std::string name;
  dtype type = dtype::i32;
  std::vector<std::int64_t> shape;  // rank 0 or 1, static
};

// The declaration of a host shape tensor (input or output), checked: INT32 or INT64, rank 0 or
// 1, fixed length. Throws unsupported naming the tensor otherwise.
[[nodiscard]] shape_tensor_decl make_shape_tensor_decl(std::string_view engine, std::string name, dtype type,
                                                       std::vector<std::int64_t> shape);

// What resolve() was asked, checked: one concrete shape per device input (declaration order)
// and one list of values per shape tensor (declaration order).
struct input_request {
  std::vector<shape_binding> device_shapes;
  std::vector<shape_binding> shape_values;
};

// Checks `bindings` against the plan's inputs and returns the full request. A binding names a
// device input (dims = its shape) or a host shape tensor (dims = its values). Throws
// invalid_argument naming the engine and the tensor for: an unknown name, a name given twice, a
// wrong rank, a non-positive extent, a static dim that differs, a dim outside profile 0's
// [min, max], a dynamic input or a shape tensor left without a binding, a wrong number of shape
// values, or an INT32 shape value that does not fit. Static inputs may be left out.
[[nodiscard]] input_request check_input_request(std::string_view engine, std::span<const input_decl> inputs,
                                                std::span<const shape_tensor_decl> shape_tensors,
                                                std::span<const shape_binding> bindings);

// Throws unsupported naming the output when its shape still has a dynamic dim once every input is
// known: its size depends on data, and ferry must allocate outputs before enqueue.
void require_static_output(std::string_view engine, std::string_view tensor, std::span<const std::int64_t> shape);

// ---- bind(): device addresses ----------------------------------------------------------------

// ---- deserialization failures ----------------------------------------------------------------

// Reads a whole plan file. Throws invalid_argument naming the file when it does not exist, is not
// a regular file, cannot be opened or read, or is empty.
[[nodiscard]] std::vector<char> read_plan_file(const std::string& path);

// What TensorRT's error messages during deserializeCudaEngine say went wrong.
enum class plan_problem {
  wrong_architecture,  // built for another GPU (compute capability)
  version_mismatch,    // built by another TensorRT version (serialization or library version)
  corrupt,             // not a plan at all, truncated or damaged (magic tag, other assertions)
  other,               // anything else (out of memory, plugins, ...): TensorRT's text says
};

// Picks the category from every error line TensorRT logged, the most specific first: a version
// or architecture line wins over the generic "Engine deserialization failed." that follows it.
[[nodiscard]] plan_problem classify_plan_errors(std::span<const std::string> errors);

// What the failing load looked like, for the message.
struct plan_load_context {
  std::string trt_version;  // the loaded library's, e.g. "10.16.1"
  std::string device;       // e.g. "device 0 (NVIDIA H200, compute 9.0)"
};

// One message naming the file, the problem and what to do, ending with TensorRT's own line.
[[nodiscard]] std::string describe_plan_failure(std::string_view path, std::span<const std::string> errors,
                                                const plan_load_context& context);

// "10.16.1" from getInferLibVersion()'s major*10000 + minor*100 + patch.
[[nodiscard]] std::string format_trt_version(std::int32_t encoded);

// ---- logging ---------------------------------------------------------------------------------

enum class trt_verbosity { quiet, verbose };
// FERRY_TRT_VERBOSE's value (null when unset): verbose unless unset, empty or "0".
[[nodiscard]] trt_verbosity verbosity_from_env(const char* value) noexcept;

// What ferry's ILogger does with one message. Errors are kept for the exception that follows the
// failing call rather than printed, so the user reads them once; warnings always reach stderr;
// info and verbose only when FERRY_TRT_VERBOSE is set (which also prints errors as they come).
enum class log_route { keep_error, keep_and_print_error, print, drop };
[[nodiscard]] log_route route_log(std::int32_t severity, trt_verbosity verbosity) noexcept;
// The stderr line for a printed message: "ferry: TensorRT: <message>".
[[nodiscard]] std::string log_line(std::string_view message);

// The last few error messages, oldest first, bounded so a chatty failure cannot grow it forever.
class error_history {
 public:
  static constexpr std::size_t capacity = 16;
  void add(std::string message);
  void clear() noexcept { messages_.clear(); }
  [[nodiscard]] bool empty() const noexcept { return messages_.empty(); }
  [[nodiscard]] const std::vector<std::string>& messages() const noexcept { return messages_; }
  // The newest message, or `fallback` when there is none.
  [[nodiscard]] std::string last_or(std::string_view fallback) const;

 private:
  std::vector<std::string> messages_;
};

}  // namespace ferry::trt
