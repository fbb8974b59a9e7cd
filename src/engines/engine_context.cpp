// The checks and the NVTX range every backend's context gets (ferry/engines/engine.hpp). Compiled into
// ferry::engines and into each C++ backend's seam (cmake/FerryBackends.cmake).
#include <nvtx3/nvtx3.hpp>

#include <cstdint>
#include <utility>

#include "core/scoped_device.hpp"
#include "ferry/core/device_alignment.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/engine.hpp"

namespace ferry {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

int current_ordinal() noexcept {
  int ordinal = -1;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;  // no GPU: the checks still hold, and the backend's enqueue says what fails
  }
  return ordinal;
}

}  // namespace

std::vector<std::string> tensor_names(std::span<const tensor_spec> io) {
  std::vector<std::string> names;
  names.reserve(io.size());
  for (const auto& t : io) names.push_back(t.name);
  return names;
}

engine_context::engine_context(std::string engine_name, std::vector<std::string> tensor_names)
    : engine_name_(std::move(engine_name)),
      names_(std::move(tensor_names)),
      addresses_(names_.size(), nullptr),
      ordinal_(current_ordinal()) {}

void engine_context::bind(std::string_view tensor, void* device_address) {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] != tensor) continue;
    if (device_address == nullptr)
      throw invalid_argument(engine_name_ + ": cannot bind '" + names_[i] + "' to a null address");
    if (reinterpret_cast<std::uintptr_t>(device_address) % device_alignment != 0)
      throw invalid_argument(engine_name_ + ": device address for '" + names_[i] + "' is not " +
                             std::to_string(device_alignment) + "-byte aligned");
    do_bind(i, device_address);
    addresses_[i] = device_address;
    return;
  }
  throw invalid_argument(engine_name_ + ": no tensor named '" + std::string(tensor) + "'; valid names are " +
                         quoted_list(names_));
}

void engine_context::enqueue(stream_ref stream) {
  std::vector<std::string> unbound;
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (addresses_[i] == nullptr) unbound.push_back(names_[i]);
  if (!unbound.empty()) throw invalid_argument(engine_name_ + ": enqueue before binding " + quoted_list(unbound));
  nvtx3::scoped_range range{"ferry.engine"};
  if (ordinal_ < 0) {
    do_enqueue(stream);
    return;
  }
  const core::scoped_device on_device(ordinal_);
  do_enqueue(stream);
}

bool engine_context::reshape(std::span<const tensor_spec> concrete_io) {
  bool same = concrete_io.size() == names_.size();
  for (std::size_t i = 0; same && i < names_.size(); ++i) same = concrete_io[i].name == names_[i];
  if (!same)
    throw invalid_argument(engine_name_ + ": a reshape names other tensors than the context's " + quoted_list(names_));
  return do_reshape(concrete_io);
}

std::optional<std::string> engine_context::use_own_graphs(int max_graphs) {
  if (max_graphs < 0)
    throw invalid_argument(engine_name_ + ": a context keeps at least 0 graphs of its own, not " +
                           std::to_string(max_graphs));
  // The engine may load or allocate what its captures need here: on the context's GPU, as enqueue.
  if (ordinal_ < 0) return do_use_own_graphs(max_graphs);
  const core::scoped_device on_device(ordinal_);
  return do_use_own_graphs(max_graphs);
}

}  // namespace ferry
