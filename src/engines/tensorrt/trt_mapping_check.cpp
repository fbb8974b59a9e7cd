// Compile-time proof that trt_mapping.hpp's copies of TensorRT's enum values match the headers
// this build uses. Nothing here runs; a mismatch fails the build, naming the enum.
#include <NvInferRuntime.h>

#include <cstdint>
#include <string_view>

#include "engines/tensorrt/trt_mapping.hpp"

namespace ferry::trt {
namespace {

template <typename E>
constexpr std::int32_t code_of(E value) {
  return static_cast<std::int32_t>(value);
}

constexpr bool table_has(std::string_view trt_name, std::int32_t code) {
  for (const auto& entry : trt_dtypes)
    if (entry.trt_name == trt_name) return entry.code == code;
  return false;
}

using nvinfer1::DataType;
static_assert(table_has("kFLOAT", code_of(DataType::kFLOAT)), "DataType::kFLOAT moved");
static_assert(table_has("kHALF", code_of(DataType::kHALF)), "DataType::kHALF moved");
static_assert(table_has("kINT8", code_of(DataType::kINT8)), "DataType::kINT8 moved");
static_assert(table_has("kINT32", code_of(DataType::kINT32)), "DataType::kINT32 moved");
static_assert(table_has("kBOOL", code_of(DataType::kBOOL)), "DataType::kBOOL moved");
static_assert(table_has("kUINT8", code_of(DataType::kUINT8)), "DataType::kUINT8 moved");
static_assert(table_has("kFP8", code_of(DataType::kFP8)), "DataType::kFP8 moved");
static_assert(table_has("kBF16", code_of(DataType::kBF16)), "DataType::kBF16 moved");
static_assert(table_has("kINT64", code_of(DataType::kINT64)), "DataType::kINT64 moved");
static_assert(table_has("kINT4", code_of(DataType::kINT4)), "DataType::kINT4 moved");

// kFP4 and kE8M0 came in later 10.x releases: checked where these headers have them. A type newer
// than the table is refused at load, naming its code (to_ferry_dtype), rather than failing here.
template <typename D>
constexpr bool fp4_matches() {
  if constexpr (requires { D::kFP4; }) return table_has("kFP4", code_of(D::kFP4));
  return true;
}
template <typename D>
constexpr bool e8m0_matches() {
  if constexpr (requires { D::kE8M0; }) return table_has("kE8M0", code_of(D::kE8M0));
  return true;
}
static_assert(fp4_matches<DataType>(), "DataType::kFP4 moved");
static_assert(e8m0_matches<DataType>(), "DataType::kE8M0 moved");

using nvinfer1::TensorIOMode;
static_assert(code_of(TensorIOMode::kNONE) == code_of(trt_io_mode::none), "TensorIOMode::kNONE moved");
static_assert(code_of(TensorIOMode::kINPUT) == code_of(trt_io_mode::input), "TensorIOMode::kINPUT moved");
static_assert(code_of(TensorIOMode::kOUTPUT) == code_of(trt_io_mode::output), "TensorIOMode::kOUTPUT moved");

using nvinfer1::TensorLocation;
static_assert(code_of(TensorLocation::kDEVICE) == code_of(trt_location::device), "TensorLocation::kDEVICE moved");
static_assert(code_of(TensorLocation::kHOST) == code_of(trt_location::host), "TensorLocation::kHOST moved");

using Severity = nvinfer1::ILogger::Severity;
static_assert(code_of(Severity::kINTERNAL_ERROR) == code_of(trt_severity::internal_error), "kINTERNAL_ERROR moved");
static_assert(code_of(Severity::kERROR) == code_of(trt_severity::error), "Severity::kERROR moved");
static_assert(code_of(Severity::kWARNING) == code_of(trt_severity::warning), "Severity::kWARNING moved");
static_assert(code_of(Severity::kINFO) == code_of(trt_severity::info), "Severity::kINFO moved");
static_assert(code_of(Severity::kVERBOSE) == code_of(trt_severity::verbose), "Severity::kVERBOSE moved");

static_assert(code_of(nvinfer1::TensorFormat::kLINEAR) == trt_format_linear, "TensorFormat::kLINEAR moved");
static_assert(nvinfer1::Dims::MAX_DIMS == trt_max_dims, "Dims::MAX_DIMS changed");

}  // namespace
}  // namespace ferry::trt
