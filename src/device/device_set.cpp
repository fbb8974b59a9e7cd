#include "ferry/device/device_set.hpp"

#include <algorithm>
#include <charconv>

#include "ferry/core/error.hpp"

namespace ferry {

namespace {
int parse_ordinal(std::string_view token, std::string_view text) {
  if (token.empty())
    throw invalid_argument("--devices '" + std::string(text) +
                           "': empty item; expected GPU ordinals like 0,1 or 'all'");
  int value = -1;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size() || value < 0)
    throw invalid_argument("--devices: '" + std::string(token) +
                           "' is not a GPU ordinal (a number 0 or more, or 'all')");
  return value;
}
}  // namespace

std::vector<int> parse_device_set(std::string_view text, int device_count) {
  if (device_count <= 0)
    throw no_device("no CUDA device: --devices '" + std::string(text) + "' names GPUs, but the driver reports none");
  if (text == "all") {
    std::vector<int> all(static_cast<std::size_t>(device_count));
    for (int i = 0; i < device_count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  if (text.empty()) throw invalid_argument("--devices is empty; expected GPU ordinals like 0,1 or 'all'");
  std::vector<int> devices;
  std::string_view rest = text;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view token = rest.substr(0, comma);
    const int ordinal = parse_ordinal(token, text);
    if (ordinal >= device_count)
      throw invalid_argument("--devices: GPU " + std::string(token) + " does not exist (this machine has " +
                             std::to_string(device_count) +
                             (device_count == 1 ? " GPU: 0)" : " GPUs: 0-" + std::to_string(device_count - 1) + ")"));
    if (std::find(devices.begin(), devices.end(), ordinal) != devices.end())
      throw invalid_argument("--devices '" + std::string(text) + "': GPU " + std::to_string(ordinal) +
                             " is listed twice");
    devices.push_back(ordinal);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
    if (rest.empty()) (void)parse_ordinal(rest, text);  // trailing comma: the empty-item error
  }
  return devices;
}

std::string format_device_set(std::span<const int> devices) {
  std::string out;
  for (const int d : devices) {
    if (!out.empty()) out += ',';
    out += std::to_string(d);
  }
  return out;
}

}  // namespace ferry
