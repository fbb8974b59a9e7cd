// libFuzzer target: a model file's ferry.io/1 I/O description, and the shapes resolved from it.
//
// Input: the description's JSON text, optionally followed by a NUL byte and one byte per input
// dim giving the shape a caller asks for (255 asks for -1; missing bytes leave the dim at its
// static extent, or 1 where it is dynamic).
//
// Parsing and resolving may refuse only with ferry::invalid_argument. A resolved I/O must have
// every dim concrete and positive and every input at the shape that was asked for.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engines/io_description.hpp"
#include "ferry/core/error.hpp"

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view dims;
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    dims = text.substr(nul + 1);
    text = text.substr(0, nul);
  }
  try {
    const ferry::io_description d = ferry::parse_io_description(text, "fuzzed.io.json");
    FUZZ_REQUIRE(d.tensors.size() == d.dim_symbols.size());
    std::vector<ferry::shape_binding> bindings;
    std::size_t next = 0;
    for (const auto& t : d.tensors) {
      if (t.role != ferry::tensor_role::input) continue;
      ferry::shape_binding b{t.name, {}};
      for (const auto extent : t.shape) {
        if (next < dims.size()) {
          const auto byte = static_cast<std::uint8_t>(dims[next++]);
          b.dims.push_back(byte == 255 ? -1 : byte);
        } else {
          b.dims.push_back(extent == ferry::dynamic_dim ? 1 : extent);
        }
      }
      bindings.push_back(std::move(b));
    }
    const std::vector<ferry::tensor_spec> io = ferry::resolve_io(d, bindings);
    FUZZ_REQUIRE(io.size() == d.tensors.size());
    std::size_t input = 0;
    for (const auto& t : io) {
      for (const auto extent : t.shape) FUZZ_REQUIRE(extent >= 1);
      if (t.role == ferry::tensor_role::input) FUZZ_REQUIRE(t.shape == bindings[input++].dims);
    }
  } catch (const ferry::invalid_argument&) {
    // A refusal naming the problem: what a bad description or shape must get.
  }
  return 0;
}
