#include "ferry/core/byte_size.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>

#include "ferry/core/error.hpp"

namespace ferry {

std::size_t parse_byte_size(std::string_view text) {
  const std::string original(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // from_chars reads "nan" and "inf" too: neither is a size, and a NaN would pass every
  // comparison below and convert to an arbitrary count.
  if (ec == std::errc() && !std::isfinite(value))
    throw invalid_argument("bad size '" + original + "': not a finite number");
  if (ec != std::errc() || value <= 0)
    throw invalid_argument("bad size '" + original +
                           "': expected a positive number with an optional unit (KB, MB, GB, KiB, MiB, GiB)");
  std::string unit(end, text.data() + text.size());
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else
    throw invalid_argument("bad size unit in '" + original + "': use B, KB, MB, GB, KiB, MiB or GiB");
  const double bytes = std::round(value * scale);
  if (bytes < 1) throw invalid_argument("size '" + original + "' is less than one byte");
  // Converting a double at or past 2^64 to an integer is undefined (it came back as 0): refuse.
  constexpr double beyond = 18446744073709551616.0;  // 2^64
  static_assert(sizeof(std::size_t) == 8);
  if (bytes >= beyond) throw invalid_argument("size '" + original + "' is beyond what this machine can address");
  return static_cast<std::size_t>(bytes);
}

std::string format_byte_size(std::size_t bytes) {
  static constexpr const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 999.5 && unit + 1 < std::size(units)) {  // 999,700 B is "1 MB", not "1000 KB"
    value /= 1000;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " B";
  char text[32];
  std::snprintf(text, sizeof text, value >= 99.95 ? "%.0f" : value >= 9.995 ? "%.1f" : "%.2f", value);
  std::string number(text);
  if (number.find('.') != std::string::npos) {
    while (number.back() == '0') number.pop_back();
    if (number.back() == '.') number.pop_back();
  }
  return number + " " + units[unit];
}

}  // namespace ferry
