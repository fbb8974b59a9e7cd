#include "serve/shm/shm_range.hpp"

#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {

std::span<std::byte> checked_range(const shm_ref& ref, std::span<std::byte> region, const std::string& tensor) {
  // Written as two comparisons so that no sum can overflow.
  if (ref.offset > region.size() || ref.byte_size > region.size() - ref.offset)
    throw bad_request(tensor + ": shared-memory range [" + std::to_string(ref.offset) + ", " +
                      std::to_string(ref.offset) + " + " + std::to_string(ref.byte_size) + ") is outside region '" +
                      ref.region + "' of " + std::to_string(region.size()) + " bytes");
  return region.subspan(ref.offset, ref.byte_size);
}

}  // namespace ferry::serve
