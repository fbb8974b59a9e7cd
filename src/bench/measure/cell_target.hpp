// Where a cell's requests get their slots, and the sessions their outputs are checked against.
// Private to src/bench.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <vector>

#include "ferry/memory/strategy.hpp"
#include "ferry/session/session.hpp"

namespace ferry::bench {

class gpu_delay;

// One session, or a replica_set over several GPUs. Each GPU has its own device-strategy reference
// session, on that GPU's engine replica, so every output is checked on the GPU that produced it.
struct cell_target {
  std::function<filling_slot()> acquire;               // the slot for the next request
  std::function<filling_slot(int device)> acquire_on;  // a slot on that GPU (per-thread warm-up)
  std::vector<int> devices;
  int total_slots = 1;
  strategy_kind strategy = strategy_kind::pinned;
  std::map<int, session*> references;  // by GPU
  std::size_t request_bytes = 0;       // inputs + outputs: what one check keeps
  // --slowdown's GPU half, in the measured sessions' engines (null without a slowdown): the loops
  // tell it each request's GPU time and take its delay off the host's wait.
  gpu_delay* delay = nullptr;
};

[[nodiscard]] std::size_t io_bytes(const std::vector<tensor_spec>& io);

// The target of a cell on one GPU: `measured` for requests, `reference` for checks.
[[nodiscard]] cell_target single_session_target(session& measured, session& reference, int device);

}  // namespace ferry::bench
