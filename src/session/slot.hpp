// One slot of a session: its buffers, streams, events, engine context and (optionally) the CUDA
// graph of its pipeline. Internal to src/session.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/buffer.hpp"
#include "ferry/caller_memory.hpp"
#include "ferry/engine.hpp"
#include "ferry/session.hpp"
#include "ferry/stream.hpp"
#include "core/device_memory.hpp"

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

struct slot {
  slot(int index, engine& eng, const std::vector<tensor_spec>& io, const session_options& options,
       const device_caps& caps);

  // Enqueues the whole pipeline: directly, or as the captured graph when there is one.
  void enqueue_pipeline(bool timed);
  // Tries to capture the pipeline into a graph; returns why not when capture fails.
  [[nodiscard]] std::optional<std::string> capture_graph();
  void wait_blocking();
  [[nodiscard]] stage_times times() const;

  int index;
  int device;
  std::vector<tensor_spec> input_specs;
  std::vector<tensor_spec> output_specs;
  std::vector<io_buffer> inputs;
  std::vector<io_buffer> outputs;
  std::unique_ptr<engine_context> context;
  // One stream for the whole request: its stages run in order anyway, and requests overlap
  // across slots, each on its own stream. A second stream per slot cost two cross-stream waits
  // and four more events per request, 12-19 us over the hand-written recipe on the H200 host.
  stream work;
  // Timing events: the request's start and end, and the ends of its first two stages where there
  // is something to time apart (copies in, the engine). Untimed in graph mode: there only the
  // start and end around the graph launch are recorded.
  event start{event_timing::enabled}, after_h2d{event_timing::enabled};
  event after_compute{event_timing::enabled}, end{event_timing::enabled};
  // When the host views of the inputs may be written again: after the copy when every input's
  // strategy copies, when the engine has read them otherwise (see pending_slot::wait_inputs_consumed).
  // Recorded only where no timing event already marks that point, or the engine signals it.
  event inputs_consumed;
  const event* consumed_marker = &inputs_consumed;
  bool engine_signals_consumed = false;
  std::optional<graph_exec> graph;
  float enqueue_us = 0;   // host time of the last enqueue_pipeline()
  bool timed = true;      // the last request recorded its timing events
  float prefetch_us = 0;  // host time of the last managed prefetch (managed-prefetch's h2d stage)
  // What the buffers' stream operations do, decided once from each buffer's strategy (tensors may
  // go by different ones, session_options::tensor_strategies).
  // Some buffer's strategy copies: its to_device or to_host moves bytes on the stream, so the
  // request's copies get stage events of their own.
  bool copies = false;
  // Every input's strategy copies: the engine reads device copies of all of them, never their
  // host memory, so they are consumed once the copies are done.
  bool inputs_copied = false;
  // Some buffer is managed-prefetch's: its to_device is a prefetch, issued first on the idle stream.
  bool prefetches = false;
  // Caller memory feeding an input for the current request (filling_slot::use_caller_input):
  // the source of its DMA, or (zero-copy) the address the engine is bound to instead of the
  // slot's own buffer. Cleared, and the engine bound back, when the slot is filled again.
  struct caller_input {
    const std::byte* host = nullptr;
    void* device_view = nullptr;  // zero-copy only
  };
  std::vector<std::optional<caller_input>> caller_inputs;
  // Inputs assembled from caller ranges by copies in stream order (filling_slot::gather_input),
  // in place of the strategy's to_device: where each range goes, and where the tensor is built.
  struct gather {
    std::vector<gather_piece> pieces;
    std::byte* target = nullptr;  // the slot's device buffer, or gather_scratch (see gather_input)
  };
  std::vector<std::optional<gather>> gathers;
  // Device memory for gathers under strategies whose own input buffer is host or managed memory,
  // made the first time an input is gathered and kept for the slot's life.
  std::vector<std::optional<core::device_memory>> gather_scratch;
  // Outputs for the current request: caller memory the engine writes in place, ranges copied to
  // caller memory after the engine, and whether the host view is still fetched.
  std::vector<void*> caller_outputs;
  std::vector<std::vector<output_delivery>> deliveries;
  std::vector<bool> host_view_wanted;
  // Whether output i's host view holds the last request's result (completed_slot::output).
  std::vector<bool> host_view_valid;

  // What the caller-memory rule needs of the slot for one tensor: its strategy, the GPU, graphs.
  [[nodiscard]] slot_facts facts_of_input(std::size_t index) const noexcept;
  [[nodiscard]] slot_facts facts_of_output(std::size_t index) const noexcept;
  // What CUDA says caller memory is, for a tensor going by `strategy` (which decides whether
  // registered host memory would be bound by its device view).
  [[nodiscard]] caller_memory describe(const void* data, std::size_t bytes, strategy_kind strategy,
                                       bool as_output) const;
  void use_caller_input(std::size_t index, std::span<const std::byte> memory);
  void gather_input(std::size_t index, std::span<const gather_piece> pieces);
  void bind_caller_output(std::size_t index, std::span<std::byte> memory);
  void deliver_output(std::size_t index, const output_delivery& delivery);
  void forget_caller_inputs();
  [[nodiscard]] bool reads_caller_memory_in_place() const noexcept;
  // Whether this request moves bytes in copies of its own (gathers, deliveries) beside the
  // strategy's, so its copies get stage events even under a strategy that copies nothing.
  [[nodiscard]] bool moves_caller_bytes() const noexcept;

 private:
  void enqueue_stages(bool with_timing);
  // Whether input i's to_device is its strategy's prefetch (not caller memory or a gather).
  [[nodiscard]] bool input_prefetches(std::size_t i) const noexcept;
  // An input's to_device: the strategy's own, or the DMA from caller memory standing in for it.
  void input_to_device(std::size_t i, stream_ref s);
  // An output's to_host and deliveries.
  void output_to_caller(std::size_t i, stream_ref s);
  // Marks the inputs consumed in stream order: a plain record, or a graph node while capturing.
  void record_consumed(stream_ref s);
  bool stage_events_ = false;  // the request being enqueued times its copies apart
  bool capturing_ = false;     // enqueue_stages is being captured into the slot's graph
};

}  // namespace ferry::detail
