#include "engines/builtin/launch_context.hpp"

#include <utility>

namespace ferry::builtin {

launch_context::launch_context(std::string engine_name, std::vector<std::string> tensor_names, launcher launch)
    : engine_context(std::move(engine_name), std::move(tensor_names)), launch_(std::move(launch)) {}

void launch_context::do_enqueue(stream_ref stream) { launch_(device_addresses(), stream.get()); }

}  // namespace ferry::builtin
