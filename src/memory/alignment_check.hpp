// The alignment check for device addresses a strategy hands to engines.
#pragma once

namespace ferry::memory {

// Throws unsupported when a device address breaks the 256-byte alignment engines require.
void require_device_alignment(const void* device_ptr, const char* what);

}  // namespace ferry::memory
