// The device address of host memory that was allocated or registered as mapped.
#pragma once

namespace ferry::core {

[[nodiscard]] void* mapped_device_pointer(void* host);

}  // namespace ferry::core
