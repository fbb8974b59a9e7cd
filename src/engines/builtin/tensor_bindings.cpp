#include "engines/builtin/tensor_bindings.hpp"

#include <cstdint>
#include <utility>

#include "ferry/device_alignment.hpp"
#include "ferry/error.hpp"

namespace ferry::builtin {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    if (!text.empty()) text += ", ";
    text += '\'' + name + '\'';
  }
  return text;
}

}  // namespace

tensor_bindings::tensor_bindings(std::string engine_name, std::vector<std::string> tensor_names)
    : engine_name_(std::move(engine_name)),
      names_(std::move(tensor_names)),
      addresses_(names_.size(), nullptr) {}

void tensor_bindings::bind(std::string_view tensor, void* device_address) {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] != tensor) continue;
    if (device_address == nullptr)
      throw invalid_argument(engine_name_ + ": cannot bind '" + names_[i] + "' to a null address");
    if (reinterpret_cast<std::uintptr_t>(device_address) % device_alignment != 0)
      throw invalid_argument(engine_name_ + ": device address for '" + names_[i] + "' is not " +
                             std::to_string(device_alignment) + "-byte aligned");
    addresses_[i] = device_address;
    return;
  }
  throw invalid_argument(engine_name_ + ": no tensor named '" + std::string(tensor) +
                         "'; valid names are " + quoted_list(names_));
}

void tensor_bindings::require_all_bound() const {
  std::vector<std::string> unbound;
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (addresses_[i] == nullptr) unbound.push_back(names_[i]);
  if (!unbound.empty())
    throw invalid_argument(engine_name_ + ": enqueue before binding " + quoted_list(unbound));
}

}  // namespace ferry::builtin
