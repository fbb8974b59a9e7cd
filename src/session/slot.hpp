// One slot of a session: its tensors (buffers and per-request caller memory), its stream, events,
// engine context and (optionally) the CUDA graph of its pipeline. Internal to src/session.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_stream.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/session/caller_memory.hpp"
#include "ferry/session/session.hpp"
#include "session/slot_tensors.hpp"

namespace ferry::detail {

// Owning cudaGraphExec_t.
class graph_exec {
 public:
  explicit graph_exec(cudaGraphExec_t exec) noexcept : exec_(exec) {}
  ~graph_exec();
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  void launch(stream_ref s) const;

 private:
  cudaGraphExec_t exec_;
};

// Which event says a request's inputs are consumed (pending_slot::wait_inputs_consumed).
enum class consumed_mark {
  h2d_event,      // the copies' own stage event: every input copies and the request is timed
  compute_event,  // the engine's stage event: the engine reads host memory, the request is timed
  own_event,      // inputs_consumed, recorded by the slot where no stage event marks the point
  engine_event,   // inputs_consumed, recorded by the engine once it has read its inputs
};

struct slot {
  // Made on caps.ordinal (the calling thread's current device is left as it was).
  static std::unique_ptr<slot> make(int index, engine& eng, const std::vector<tensor_spec>& io,
                                    const session_options& options, const device_caps& caps);
  slot(int index, engine& eng, const std::vector<tensor_spec>& io, const session_options& options,
       const device_caps& caps);
  ~slot();
  slot(const slot&) = delete;
  slot& operator=(const slot&) = delete;

  // Enqueues the whole pipeline: directly, or as the captured graph when there is one.
  void enqueue_pipeline(bool timed);
  // Tries to capture the pipeline into a graph; returns why not when capture fails.
  [[nodiscard]] std::optional<std::string> capture_graph();
  void wait_blocking();
  // Checks on the CPU, before anything is enqueued, the index inputs the request reads from the
  // slot's own host views and that are small enough (host_index_check_bytes): a scan of a few KB
  // costs less than a kernel launch. Throws index_out_of_range for a value out of its bound.
  void check_indices_on_host() const;
  // Throws index_out_of_range for the first input whose GPU check found a value out of its bound
  // in the request that just finished (wait_blocking first).
  void throw_index_violations() const;
  [[nodiscard]] stage_times times() const;
  [[nodiscard]] const event& consumed_marker() const noexcept;
  // Forgets the last request's caller memory (acquire): the engine is bound to the buffers again.
  void reset_tensors();
  [[nodiscard]] int ordinal() const noexcept { return work.ordinal(); }

  // Caller memory for the current request (filling_slot; slot_caller_memory.cpp).
  [[nodiscard]] std::optional<in_place_refusal> input_in_place_refusal(std::size_t i,
                                                                       std::span<const std::byte> memory) const;
  [[nodiscard]] std::optional<in_place_refusal> output_in_place_refusal(std::size_t i,
                                                                        std::span<const std::byte> memory) const;
  void use_caller_input(std::size_t i, std::span<const std::byte> memory);
  void gather_input(std::size_t i, std::span<const gather_piece> pieces);
  void bind_caller_output(std::size_t i, std::span<std::byte> memory);
  void deliver_output(std::size_t i, const output_delivery& delivery, bool host_view_wanted);

  int index;
  std::vector<slot_input> inputs;
  std::vector<slot_output> outputs;
  std::unique_ptr<engine_context> context;
  // One stream for the whole request: its stages run in order anyway, and requests overlap
  // across slots, each on its own stream. A second stream per slot would add two cross-stream
  // waits and four events per request (docs/RESULTS.md has the cost).
  core::device_stream work;
  std::optional<graph_exec> graph;

 private:
  // The steps of enqueue_stages, in stream order.
  void issue_prefetches(stream_ref s);
  void copy_in(stream_ref s);
  void check_indices(stream_ref s);
  void copy_out(stream_ref s);
  // Where the inputs count as consumed for this request, and marking that point in stream order.
  [[nodiscard]] consumed_mark plan_consumed(bool after_copies, bool timed) const noexcept;
  void mark_consumed(stream_ref s);
  void enqueue_stages(bool timed);
  // What CUDA says caller memory is, asked on the slot's GPU, for a tensor going by `strategy`.
  [[nodiscard]] caller_memory describe(const void* data, std::size_t bytes, strategy_kind strategy,
                                       bool as_output) const;
  [[nodiscard]] slot_facts facts(strategy_kind strategy) const noexcept;
  [[nodiscard]] bool reads_caller_memory_in_place() const noexcept;
  // This request moves bytes in copies of its own (gathers, deliveries) beside the strategy's.
  [[nodiscard]] bool moves_caller_bytes() const noexcept;

  // Decided once from each buffer's strategy (tensors may go by different ones):
  bool copies_ = false;         // some buffer's to_device or to_host moves bytes on the stream
  bool inputs_copied_ = false;  // every input copies: the engine never reads their host memory
  bool prefetches_ = false;     // some buffer is managed-prefetch's
  bool engine_signals_consumed_ = false;
  // Timing events: the request's start and end, and the ends of its first two stages where there
  // is something to time apart (copies in, the engine). In graph mode only start and end.
  event start_{event_timing::enabled}, after_h2d_{event_timing::enabled};
  event after_compute_{event_timing::enabled}, end_{event_timing::enabled};
  event inputs_consumed_;
  // The last request enqueued:
  consumed_mark consumed_ = consumed_mark::own_event;
  bool timed_ = true;
  bool stage_events_ = false;  // its copies were timed apart
  bool capturing_ = false;     // it is being captured into the slot's graph
  float enqueue_us_ = 0;       // host time of enqueue_pipeline()
  float prefetch_us_ = 0;      // host time of its managed prefetches (managed-prefetch's h2d stage)
};

}  // namespace ferry::detail
