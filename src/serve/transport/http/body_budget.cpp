#include "serve/transport/http/body_budget.hpp"

#include <algorithm>

namespace ferry::serve {

std::size_t body_bytes_to_hold(std::size_t received, std::size_t held, std::optional<std::uint64_t> announced,
                               std::size_t max_step) noexcept {
  const std::size_t most = announced ? static_cast<std::size_t>(*announced) : SIZE_MAX;
  const std::size_t ahead = std::max<std::size_t>(1, std::min(std::max(read_chunk_bytes, received / 8), max_step));
  if (received + std::min(read_chunk_bytes, ahead) <= held || held >= most) return held;
  return std::min(most, received + ahead);
}

}  // namespace ferry::serve
