#include "engines/builtin/launch_context.hpp"

#include <utility>

#include "core/scoped_device.hpp"
#include "engines/builtin/launch_support.hpp"

namespace ferry::builtin {

launch_context::launch_context(std::string engine_name, std::vector<std::string> tensor_names,
                               launcher launch)
    : bindings_(std::move(engine_name), std::move(tensor_names)),
      launch_(std::move(launch)),
      device_(current_device()) {}

void launch_context::bind(std::string_view tensor, void* device_address) {
  bindings_.bind(tensor, device_address);
}

void launch_context::enqueue(stream_ref stream) {
  bindings_.require_all_bound();
  const core::scoped_device on_device(device_);
  launch_(bindings_.addresses(), stream.get());
}

}  // namespace ferry::builtin
