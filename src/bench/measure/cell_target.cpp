#include "bench/measure/cell_target.hpp"

namespace ferry::bench {

std::size_t io_bytes(const std::vector<tensor_spec>& io) {
  std::size_t total = 0;
  for (const auto& t : io) total += t.bytes();
  return total;
}

cell_target single_session_target(session& measured, session& reference, int device) {
  return {.acquire = [&measured] { return measured.acquire(); },
          .acquire_on = [&measured](int) { return measured.acquire(); },
          .devices = {device},
          .total_slots = measured.slots(),
          .strategy = measured.options().strategy,
          .references = {{device, &reference}},
          .request_bytes = io_bytes(measured.io())};
}

}  // namespace ferry::bench
