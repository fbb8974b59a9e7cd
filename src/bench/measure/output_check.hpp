// Compares an output with the device-resident reference, element by element, by dtype.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "ferry/engines/engine.hpp"

namespace ferry::bench {

struct check_outcome {
  bool matches = true;
  std::size_t compared = 0;
  std::string first_mismatch;  // "output 'sums'[17]: 3.5 vs reference 3.25"
};

// The reference ran the same engine on the same input with device-resident buffers, so a
// correct transfer strategy reproduces it: exactly for integers, within a few ulps for floats
// (libraries may pick other kernels per context), NaN where the reference has NaN.
[[nodiscard]] check_outcome compare_output(std::span<const std::byte> got, std::span<const std::byte> reference,
                                           const tensor_spec& spec);

}  // namespace ferry::bench
