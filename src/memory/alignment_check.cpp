#include "memory/alignment_check.hpp"

#include <cstdint>
#include <string>

#include "ferry/core/device_alignment.hpp"
#include "ferry/core/error.hpp"

namespace ferry::memory {

void require_device_alignment(const void* device_ptr, const char* what) {
  const auto address = reinterpret_cast<std::uintptr_t>(device_ptr);
  if (address % device_alignment != 0) {
    throw unsupported(std::string(what) + ": device address is not " + std::to_string(device_alignment) +
                      "-byte aligned (engines such as TensorRT require it); pass memory that "
                      "starts on a " +
                      std::to_string(device_alignment) + "-byte boundary");
  }
}

}  // namespace ferry::memory
