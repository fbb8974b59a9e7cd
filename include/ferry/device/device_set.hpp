// The set of GPUs a session set, a bench run or a server spreads its work over (`--devices`).
//
// Parsing is pure: the caller passes the device count it got from the driver, so every error
// (a bad token, a duplicate, an ordinal the machine does not have) is testable without a GPU.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

// "all" -> 0..device_count-1; "1" -> {1}; "0,1" -> {0, 1} (in the order given). Throws
// invalid_argument naming the offending token for an empty list or item, a token that is not a
// non-negative integer, a repeated ordinal, and an ordinal >= device_count (saying how many GPUs
// there are); throws no_device when device_count is 0.
[[nodiscard]] std::vector<int> parse_device_set(std::string_view text, int device_count);

// "0,1": the canonical spelling, which parse_device_set reads back.
[[nodiscard]] std::string format_device_set(std::span<const int> devices);

}  // namespace ferry
