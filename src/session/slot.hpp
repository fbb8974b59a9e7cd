// One slot of a session: its tensors (buffers and per-request caller memory), its stream, events,
// engine context and (optionally) the CUDA graph of its pipeline, per batch size it runs at.
// Internal to src/session.
//
// Batch sizes (session_options::batch_sizes): the buffers are made once, at the full batch; a
// request run at fewer rows uses their first rows. The engine runs it through one context
// reshaped to that size where the engine can (engine_context::reshape: its own graphs then share
// the context's pool), else through a context made for that size and bound to the same buffers.
// Each size has its own pipeline graph in graph mode. A request's size is chosen before any caller
// memory is given (filling_slot::run_at_rows), so only the chosen size's context ever holds a
// request's caller memory, and reset_tensors gives it back before the next request.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device_stream.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/session/caller_memory.hpp"
#include "ferry/session/session.hpp"
#include "session/batch_shapes.hpp"
#include "session/slot_tensors.hpp"

namespace ferry::detail {

// Owning cudaGraphExec_t.
class graph_exec {
 public:
  explicit graph_exec(cudaGraphExec_t exec) noexcept : exec_(exec) {}
  ~graph_exec();
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  graph_exec(graph_exec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  graph_exec& operator=(graph_exec&&) = delete;
  void launch(stream_ref s) const;

 private:
  cudaGraphExec_t exec_;
};

// One batch size of a slot: its tensors' concrete specs, the context that runs it, and its
// captured pipeline in graph mode.
struct slot_shape {
  std::int64_t rows = 0;
  std::vector<tensor_spec> io;               // the session's order, for a context's reshape
  std::vector<tensor_spec> inputs, outputs;  // the same, by role, in the slot's order
  engine_context* context = nullptr;         // owned by slot::contexts
  bool engine_signals_consumed = false;      // that context records inputs_consumed itself
  std::optional<graph_exec> graph;
};

// Which event says a request's inputs are consumed (pending_slot::wait_inputs_consumed).
enum class consumed_mark {
  h2d_event,      // the copies' own stage event: every input copies and the request is timed
  compute_event,  // the engine's stage event: the engine reads host memory, the request is timed
  own_event,      // inputs_consumed, recorded by the slot where no stage event marks the point
  engine_event,   // inputs_consumed, recorded by the engine once it has read its inputs
};

struct slot {
  // Made on caps.ordinal (the calling thread's current device is left as it was). `shapes` are
  // the batch sizes (resolve_batch_shapes), the full one last: its I/O sizes the buffers.
  static std::unique_ptr<slot> make(int index, engine& eng, const std::vector<batch_shape>& shapes,
                                    const session_options& options, const device_caps& caps);
  slot(int index, engine& eng, const std::vector<batch_shape>& shapes, const session_options& options,
       const device_caps& caps);
  ~slot();
  slot(const slot&) = delete;
  slot& operator=(const slot&) = delete;

  // Enqueues the whole pipeline: directly, or as the captured graph when there is one.
  void enqueue_pipeline(bool timed);
  // Tries to capture the pipeline of every batch size into a graph; returns why not when a capture
  // fails (then the slot keeps none). The full size is selected afterwards.
  [[nodiscard]] std::optional<std::string> capture_graphs();
  void drop_graphs() noexcept;
  // Asks every context for graphs of its own (engine_context::use_own_graphs), `per_size` for
  // each batch size it runs; the first refusal, after turning every context's off again.
  [[nodiscard]] std::optional<std::string> use_own_graphs(int per_size);
  // The first context's failure of its own graphs' captures, if any.
  [[nodiscard]] std::optional<std::string> own_graphs_failure() const;
  // Why a plain stream capture cannot take this slot's engine, if it cannot.
  [[nodiscard]] std::optional<std::string> capture_refusal() const;

  // The batch sizes, ascending (the full one last), and selecting the one the next request runs.
  [[nodiscard]] const std::vector<slot_shape>& shapes() const noexcept { return shapes_; }
  [[nodiscard]] std::size_t selected() const noexcept { return current_; }
  // Makes shape `index` the current request's: its specs for every tensor and index check. The
  // context is reshaped at enqueue (only when it changed), so a slot moving back and forth between
  // sizes before a request is filled pays nothing for it. Throws invalid_argument when caller
  // memory was given to this request already (it is bound to the current size's context).
  void select_shape(std::size_t index);
  [[nodiscard]] engine_context& context() const noexcept { return *shapes_[current_].context; }
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
  // Every context of the slot: one, reshaped per batch size, or one per size.
  std::vector<std::unique_ptr<engine_context>> contexts;
  // One stream for the whole request: its stages run in order anyway, and requests overlap
  // across slots, each on its own stream. A second stream per slot would add two cross-stream
  // waits and four events per request (docs/RESULTS.md has the cost).
  core::device_stream work;

 private:
  // The current size's captured pipeline (graph mode), if any.
  [[nodiscard]] const std::optional<graph_exec>& graph() const noexcept { return shapes_[current_].graph; }
  // Tries to capture the current size's pipeline; returns why not when capture fails.
  [[nodiscard]] std::optional<std::string> capture_graph();
  // Makes one context run the current size: reshapes a shared context when it last ran another.
  void reshape_context();
  // The constructor's steps: each tensor's buffer at the full batch (with its index check), then
  // the contexts and the shapes they run.
  void make_buffers(const std::vector<tensor_spec>& io, const session_options& options, const device_caps& caps);
  void make_contexts(engine& eng, const std::vector<batch_shape>& shapes);
  // Binds `c` to the slot's buffers; whether it records inputs_consumed itself.
  [[nodiscard]] bool bind_to_buffers(engine_context& c);
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
  std::vector<slot_shape> shapes_;
  std::size_t current_ = 0;        // the shape of the request being filled or run
  bool shared_context_ = false;    // one context reshaped per size (else one context per size)
  std::size_t context_shape_ = 0;  // the shape the shared context was last reshaped to
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
