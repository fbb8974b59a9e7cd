// The median of a series, for every layer that summarises repeated measurements (a bench cell's
// samples, a link's copies, a session's graph trial): one definition, so they all agree on what
// the middle of an even count is.
#pragma once

#include <span>

namespace ferry::core {

// The middle value; for an even count, the mean of the two middle ones; 0 for none. A copy is
// partly ordered (nth_element), not sorted: bench's stopping rule calls this every iteration.
[[nodiscard]] double median(std::span<const double> samples);

}  // namespace ferry::core
