// Byte sizes as people write them on command lines and in model configs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ferry {

// "0.6MB", "19MB", "64MiB", "4096", "1.5GB" -> bytes (KB/MB/GB are 10^3.., KiB/MiB/GiB 2^10..).
// Throws invalid_argument for text that is not a positive size with a known unit.
[[nodiscard]] std::size_t parse_byte_size(std::string_view text);

// The one way ferry writes a size: decimal units, as parse_byte_size reads "MB", to three
// significant digits: 600000 -> "600 KB", 19000000 -> "19 MB", 19922944 -> "19.9 MB", 512 -> "512 B".
[[nodiscard]] std::string format_byte_size(std::size_t bytes);

}  // namespace ferry
