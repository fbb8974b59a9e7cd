// What data-following placement saves: a request whose inputs (and output buffers) already live
// on GPU d, run on GPU d, against the same request run on another GPU, which must copy the
// inputs there and the outputs back (cudaMemcpyPeerAsync, over NVLink or PCIe).
//
// This is the situation of a client that hands ferry CUDA shared memory on one GPU: replica_set's
// acquire_on(d) keeps it local. The probe drives the engine directly on device buffers, one
// request at a time, so the difference between the two runs is the peer traffic alone.
#pragma once

#include <optional>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ferry/bench/result.hpp"
#include "ferry/bench/run_options.hpp"

namespace ferry::bench {

struct placement_cost {
  std::string engine;
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  int data_device = 0;                      // where the inputs and the output buffers live
  int run_device = 0;                       // where the engine ran
  sample_stats total_us;                    // inputs on data_device -> outputs on data_device
  std::optional<sample_stats> peer_in_us;   // the input copies (remote runs only)
  std::optional<sample_stats> peer_out_us;  // the output copies back (remote runs only)
  sample_stats compute_us;
  bool outputs_match = false;  // the remote run's outputs equal the local run's
  std::string check_detail;
};

// Runs `w` with its data on `data_device`, on `run_device`: `iterations` timed requests after a
// warm-up, CUDA events around each stage. Enables peer access between the two GPUs where the
// topology allows (copies work either way; without it the driver stages them through the host).
// Throws invalid_argument for missing devices, cuda_error/out_of_memory from CUDA.
[[nodiscard]] placement_cost measure_placement_cost(const workload& w, int data_device, int run_device,
                                                    int iterations = 200);

// A terminal table: one row per (data GPU, run GPU), the total, its stages and the cost of running
// away from the data (remote median minus the local median of the same data GPU). Pure.
[[nodiscard]] std::string render_placement_table(std::span<const placement_cost> results);

// {"placement_costs": [{"engine", "input_bytes", "output_bytes", "data_device", "run_device",
//   "total_us": stats, "peer_in_us": stats | null, "peer_out_us": stats | null, "compute_us",
//   "outputs_match", "check_detail"}]}. Pure.
[[nodiscard]] nlohmann::json placement_costs_to_json(std::span<const placement_cost> results);

}  // namespace ferry::bench
