// What a batch of each bucket costs to run, measured when a model loads: the latency target's
// input (scheduling/batching_policy.hpp) and what the model's platform shows.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ferry/engines/engine.hpp"
#include "ferry/session/session.hpp"

namespace ferry::serve {

// Runs a request of each size of `sizes` alone on one slot of `s`, `runs` times, after warm-up
// (its host views hold the warm-up's valid values), and returns the median wall time of a run,
// from acquiring the slot to the answer on the host: what a batch of that size costs on an idle GPU.
[[nodiscard]] std::vector<std::chrono::nanoseconds> measure_run_times(session& s, std::span<const std::int64_t> sizes,
                                                                      int runs = 7);

// The batch sizes a model's sessions run at: `configured` (ascending, ending at max_batch) or,
// when empty, those of default_batch_buckets that `eng` resolves (an engine may take fewer batch
// sizes than its dynamic dim suggests, a TensorRT profile's minimum, say); none when the model does
// not batch. A configured size the engine refuses fails the load where the session resolves it.
[[nodiscard]] std::vector<std::int64_t> session_buckets(std::int64_t max_batch,
                                                        std::span<const std::int64_t> configured, const engine& eng);

// "buckets 1, 4, 16 (0.21, 0.35, 1.4 ms)": the platform's words for them.
[[nodiscard]] std::string describe_buckets(std::span<const std::int64_t> sizes,
                                           std::span<const std::chrono::nanoseconds> run_times);

}  // namespace ferry::serve
