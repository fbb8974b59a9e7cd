// The I/O of an AOTInductor package that carries no ferry.io/1 description, read from the package
// itself. AOTInductor generates C++ (data/aotinductor/model/*.wrapper.cpp, kept in the package)
// whose input checks spell out each input's name, dtype, static dims and dynamic dims' bounds:
//
//   inputs_info_[0].name = "arg4_1";
//   int32_t arg4_1_expected_dtype = aoti_torch_dtype_float32();
//   if (arg4_1_size[0] < 2) {        if (arg4_1_size[0] > 64) {        if (256 != arg4_1_size[1]) {
//   int64_t s31 = arg4_1_size[0];    (the dim's symbol, shared by every input dim that has it)
//
// Outputs are not written down there: they are found by running the package twice on zeros, at
// values of each symbol that differ between the runs and between symbols. An output dim that took
// one symbol's value both times follows that symbol; one that did not change is static; anything
// else (2 * batch) has no ferry.io/1 form and is refused. Pure logic (no libtorch): the engine runs
// the probes, CPU tests cover the rest.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/io_description.hpp"

namespace ferry::aoti {

// The inputs as the package checks them: tensors with dynamic dims as dynamic_dim, and the symbol
// of each dim ("" for a static one), as in io_description.
struct compiled_io {
  std::map<std::string, symbol_range> symbols;
  std::vector<tensor_spec> inputs;
  std::vector<std::vector<std::string>> dim_symbols;
};

// Reads the inputs from the generated wrapper's text. `origin` names the package, for messages.
// Throws invalid_argument when the text holds no input checks or an input's dtype or a dim cannot
// be read from it.
[[nodiscard]] compiled_io parse_compiled_io(std::string_view wrapper_cpp, std::string_view origin);

// One value per symbol for each of the two probe runs: within the symbol's range, as small as
// possible (cheap runs), different between the runs (unless the range holds one value) and
// different between symbols within a run (so an output dim names one symbol).
using symbol_values = std::map<std::string, std::int64_t>;
[[nodiscard]] std::vector<symbol_values> probe_values(const compiled_io& io);

// The input shapes of one probe run.
[[nodiscard]] std::vector<shape_binding> probe_shapes(const compiled_io& io, const symbol_values& values);

// What one probe run produced, output by output.
struct probed_output {
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;
};
struct probe_run {
  symbol_values values;
  std::vector<probed_output> outputs;
};

// The description: the package's inputs, and outputs (output0, output1, ...) whose dims follow a
// symbol or are static, from two probe runs. Throws invalid_argument naming the output and dim
// whose extent follows no one symbol, or when the runs disagree on the outputs' count or dtypes.
[[nodiscard]] io_description describe_compiled(std::string name, const compiled_io& io,
                                               std::span<const probe_run> runs);

}  // namespace ferry::aoti
