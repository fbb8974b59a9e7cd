// Sessions: N slots, each with its buffers, a stream, timing events and the engine's per-slot
// context.
//
// The CPU may touch a slot's host views only while it holds the slot, and the types say when:
//   filling_slot  --submit()-->  pending_slot  --wait()-->  completed_slot  --(destroyed)--> free
// Inputs are writable only on a filling_slot, outputs readable only on a completed_slot, and a
// slot returns to the pool when the last of these handles is destroyed. A pending slot that is
// dropped without wait() is waited for in its destructor, so a slot never returns to the pool
// with work in flight.
//
// A filling slot may also take a caller's memory instead of its own buffers for one request (a
// server's shared-memory clients): inputs read in place or gathered by copies in stream order,
// outputs bound in place or delivered by copies in stream order; ferry/session/caller_memory.hpp is the
// rule for what may be used in place.
//
// Each input and output goes by one strategy: the session's, or the one session_options names for
// that tensor (a model's small inputs read in place, its large ones copied, its outputs another
// way). Everything a strategy decides is decided per tensor: its buffer, its stream operations,
// and what caller memory may stand in for it.
//
// With two or more slots, the copy of request k+1 runs on its slot's stream while request k
// computes on another slot's: the transfer leaves the throughput when compute dominates.
//
// Batch sizes: a session whose engine takes a dynamic batch (every tensor leads with it) may run
// a request at fewer rows than its buffers hold (session_options::batch_sizes): the engine runs
// that batch in the buffers' first rows, the strategy's copies move those rows only, and in graph
// mode each size has its own graph (captured with the others at the start, or by the engine on
// one memory pool per slot). A request picks its size before it is filled (run_at_rows).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/device/device_caps.hpp"
#include "ferry/engines/engine.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/caller_memory.hpp"
#include "ferry/session/graph_choice.hpp"
#include "ferry/session/index_check.hpp"
#include "ferry/session/input_data.hpp"

namespace ferry {

// Whether inputs with an index_bound are checked on the GPU before the engine reads them
// (ferry/session/index_check.hpp): on unless the caller made every value itself and knows it is inside.
enum class index_check { on, off };

// Whether a request's stages are timed with CUDA events. Recording an event costs host time on
// every request, so a caller that never reads times() can leave them out.
enum class stage_timing { events, off };

struct session_options {
  // The strategy of every input and output that tensor_strategies does not name.
  strategy_kind strategy = strategy_kind::pinned;
  int inflight = 2;  // slots
  graph_mode graph = graph_mode::off;
  oversubscription managed_policy = oversubscription::refuse;
  index_check index_checks = index_check::on;
  // Tensors that go another way than `strategy`, by name: each a tensor of the engine's I/O, each
  // named once (check_session_options).
  std::vector<tensor_strategy> tensor_strategies = {};
  // Smaller batches a request may run at, ascending, each in 1..the concrete I/O's batch (which is
  // always one): the engine must resolve each with every input's leading dim set to it, and every
  // tensor must lead with the batch. Empty: requests run at the concrete I/O only. Last, so brace
  // initialisers that stop earlier still work.
  std::vector<std::int64_t> batch_sizes = {};
};

// The strategy `tensor` goes by under `options`: its entry in tensor_strategies, else
// options.strategy. Does not check that the tensor exists (session::strategy_of does).
[[nodiscard]] strategy_kind strategy_for(const session_options& options, std::string_view tensor) noexcept;

// Every entry names a tensor of `io` (an input or output), and no tensor is named twice; throws
// invalid_argument naming the tensor (and listing io's tensors) otherwise. Pure: a server checks
// a model's configuration with it where no session is made (no GPU).
void check_tensor_strategies(std::span<const tensor_spec> io, std::span<const tensor_strategy> overrides);

// What a session checks of its options before it makes anything, pure so it holds without a GPU:
// inflight is at least 1; check_tensor_strategies; every strategy some tensor goes by is
// available on `caps` (unsupported naming the strategy, its tensors and unavailable_reason's why).
void check_session_options(std::span<const tensor_spec> io, const session_options& options, const device_caps& caps);

// Device-side time of one request, from CUDA events (milliseconds). In graph mode the stages are
// one graph launch, so only `total` is known and the stage fields are empty. Strategies that copy
// nothing (zero-copy, resident, hint-only managed) have no h2d/d2h stages: compute is the total.
// managed-prefetch's h2d stage is the host time of its prefetch calls, which run before the
// request's first event (see slot.cpp), and is part of its total. A request submitted with
// stage_timing::off has only enqueue_us.
// When tensors go by different strategies (session_options::tensor_strategies), the stages are
// those of the whole request: h2d is every copy in (of the tensors whose strategy copies, plus
// the host time of managed-prefetch's prefetches, as above), compute is the engine, d2h every copy
// out. A tensor that is read or written in place (zero-copy, managed without prefetch) crosses
// the link while the engine runs, so its transfer is part of compute, as in a session of its
// strategy alone; a resident (`device`) tensor moves outside any timing. h2d and d2h are set when
// some tensor copies (h2d also when one is prefetched); with neither, compute is the total.
struct stage_times {
  std::optional<float> h2d_ms;
  std::optional<float> compute_ms;
  std::optional<float> d2h_ms;
  float total_ms = 0;
  // Host time submit() spent enqueueing the request (every stage, the engine's launches
  // included), from the CPU's clock. When it is as long as the device time, the engine is
  // launch-bound: the GPU runs only as fast as the CPU hands it work.
  float enqueue_us = 0;
};

// Which CUDA graphs a session set up for graph_mode::on.
enum class graph_kind {
  none,  // graphs not asked for, or refused (graph_status::reason says why)
  // Each slot's whole pipeline (copies in, the engine, copies out) captured by the session, where
  // the engine's capture_refusal allows it: addresses are fixed, so caller memory is copied, never
  // bound in place, and only a request's total time is known.
  pipeline,
  // The engine captures its own run (engine_context::use_own_graphs), for an engine a plain
  // capture cannot take (AOTInductor packages): a graph per shapes and bound addresses, captured
  // after warm-up runs and replayed; the slot's copies run as before, so caller memory may still
  // be bound in place and every stage is timed.
  engine,
};

// Whether requests run as CUDA graphs, and if not, why (visible, never silent).
struct graph_status {
  bool active = false;
  graph_kind kind = graph_kind::none;
  std::string reason;  // empty when active or when graphs were not asked for
  // graph_mode::automatic, once warmup() has timed both ways: the figures the choice rests on.
  std::optional<graph_measurement> measured;
};

class session;
class completed_slot;

// One caller range of a gathered input: `source` (host memory page-locked by cudaHostRegister or
// cudaMallocHost, or device memory on the slot's GPU) lands at byte `offset` of the tensor.
struct gather_piece {
  std::span<const std::byte> source;
  std::size_t offset = 0;
};

// Bytes [offset, offset + destination.size()) of an output, copied to `destination` (registered
// host memory or device memory on the slot's GPU) in the request's stream order.
struct output_delivery {
  std::size_t offset = 0;
  std::span<std::byte> destination;
};

namespace detail {
struct slot;
// Returns a slot to its session's free list when the last handle lets go of it.
struct slot_release {
  session* owner = nullptr;
  void operator()(slot* s) const noexcept;
};
using slot_handle = std::unique_ptr<slot, slot_release>;
}  // namespace detail

class pending_slot {
 public:
  // Blocks until the request has finished (outputs readable on the host). Throws
  // index_out_of_range when an input's check found a value outside its bound: the slot is then
  // back in the pool and the request's outputs, computed on repaired values, are never seen.
  [[nodiscard]] completed_slot wait() &&;
  // Blocks until the inputs' host memory may be reused while the request still runs: after the
  // copy when every input's strategy copies, once the engine has read them otherwise (zero-copy,
  // managed and resident inputs, or a mix; a registered client buffer can go back to its owner
  // before the outputs are ready). The slot's own input views stay closed until the slot is
  // filled again.
  void wait_inputs_consumed() const;
  ~pending_slot();
  pending_slot(pending_slot&&) noexcept = default;
  pending_slot& operator=(pending_slot&&) noexcept = default;

 private:
  friend class filling_slot;
  explicit pending_slot(detail::slot_handle s) : slot_(std::move(s)) {}
  detail::slot_handle slot_;
};

class filling_slot {
 public:
  // Runs this request at `rows`, one of session::batch_sizes(): the engine runs that batch, and
  // input views and specs (and, once done, output views and specs) are that batch's first rows.
  // A request runs at the full batch unless this is called. Call it before any caller memory is
  // given (it throws invalid_argument then, and for a size the session was not made with).
  void run_at_rows(std::int64_t rows);
  // Host view of an input (its first rows at a smaller batch); throws invalid_argument for a name
  // that is not an input.
  [[nodiscard]] std::span<std::byte> input(std::string_view name);
  [[nodiscard]] std::span<std::byte> input(std::size_t index);
  [[nodiscard]] std::size_t input_count() const noexcept;
  [[nodiscard]] const tensor_spec& input_spec(std::size_t index) const;
  // For inputs of the `device` strategy: copies what the CPU wrote to device memory now, blocking
  // and outside any timing (that strategy is the floor whose stream operations move nothing).
  // Inputs fed from caller memory are left alone; other strategies' inputs too.
  void upload_resident_inputs();

  // Caller memory for this request only, instead of the slot's buffers. "The strategy" of a
  // tensor is its own (session::strategy_of); ferry/session/caller_memory.hpp is the rule for what is
  // taken in place. Caller memory must stay untouched until wait_inputs_consumed() (inputs) or
  // wait() returns. Each call throws invalid_argument for memory the rule refuses as wrong (size,
  // alignment, pageable, another GPU's; gathered pieces that overlap or leave the tensor, ranges
  // outside an output), unsupported for what the slot cannot do (a managed strategy's input, a
  // slot running as a captured CUDA graph, whose addresses are fixed).
  //
  // nullopt when use_caller_input / bind_caller_output would take `memory`; otherwise why not.
  [[nodiscard]] std::optional<in_place_refusal> input_in_place_refusal(std::size_t index,
                                                                       std::span<const std::byte> memory) const;
  [[nodiscard]] std::optional<in_place_refusal> output_in_place_refusal(std::size_t index,
                                                                        std::span<const std::byte> memory) const;
  // Input `index` read from caller memory, exactly the tensor's size, with no staging copy:
  // registered host memory (cudaHostRegister, cudaMallocHost) is one DMA into the slot's device
  // buffer under copy strategies and the device strategy, bound in place under zero-copy ones;
  // device memory on the slot's GPU (a CUDA IPC handle) is bound in place under any strategy.
  void use_caller_input(std::size_t index, std::span<const std::byte> registered_memory);
  // Input `index` built from caller ranges by copies on the slot's stream, in place of the
  // strategy's to_device: each piece lands at its offset and every byte no piece covers is
  // zero-filled (padding rows). Built in the slot's device buffer, or (zero-copy and managed
  // strategies, whose buffer is host or managed memory) in device memory of the slot bound for
  // this request, so the engine reads it at device speed. Pageable pieces are staged by the driver.
  void gather_input(std::size_t index, std::span<const gather_piece> pieces);
  // Output `index` written by the engine straight into caller memory; its host view is not fetched.
  void bind_caller_output(std::size_t index, std::span<std::byte> memory);
  // A range of output `index` copied to caller memory (registered host or the slot's GPU's) after
  // the engine, from the slot's device output (or where a zero-copy or managed output lives). With
  // host_view::skipped the output's to_host is left out too and completed_slot::output(index)
  // throws; host_view::fetched when some of its bytes are still read on the host.
  enum class host_view { fetched, skipped };
  void deliver_output(std::size_t index, const output_delivery& delivery, host_view view);

  // Enqueues to_device, the engine and to_host on the slot's stream and hands the slot on. Throws
  // index_out_of_range, with nothing enqueued and the slot back in the pool, when a small index
  // input's host view holds a value out of its bound (ferry/session/index_check.hpp).
  [[nodiscard]] pending_slot submit(stage_timing timing = stage_timing::events) &&;
  [[nodiscard]] int slot_index() const noexcept;
  // The ordinal of the GPU this slot's buffers, stream and engine context live on (its session's).
  [[nodiscard]] int ordinal() const noexcept;

 private:
  friend class session;
  explicit filling_slot(detail::slot_handle s) : slot_(std::move(s)) {}
  detail::slot_handle slot_;
};

class completed_slot {
 public:
  // Host view of an output; throws invalid_argument for a name that is not an output, unsupported
  // for one that went only to caller memory (bind_caller_output, deliver_output without its view).
  [[nodiscard]] std::span<const std::byte> output(std::string_view name) const;
  [[nodiscard]] std::span<const std::byte> output(std::size_t index) const;
  [[nodiscard]] std::size_t output_count() const noexcept;
  [[nodiscard]] const tensor_spec& output_spec(std::size_t index) const;
  [[nodiscard]] stage_times times() const;
  // For the `device` strategy: copies outputs back, blocking and outside any timing, for checks.
  // Outputs bound to caller memory or delivered without their host view are left alone.
  void download_resident_outputs();
  [[nodiscard]] int slot_index() const noexcept;
  [[nodiscard]] int ordinal() const noexcept;

 private:
  friend class pending_slot;
  explicit completed_slot(detail::slot_handle s) : slot_(std::move(s)) {}
  detail::slot_handle slot_;
};

class session {
 public:
  // Allocates every slot's buffers, each with its tensor's strategy, binds them to a context per
  // slot, and (graph_mode::on) captures each slot's pipeline, or, where a plain capture cannot take
  // the engine, asks each context for graphs of its own (graph() says which, or why none). Everything is made on
  // caps.ordinal (the calling thread's current device is restored afterwards), so `eng` must be able to make contexts
  // on that GPU. Throws what check_session_options throws (an unknown or twice-named tensor, a strategy that is not
  // available), unsupported when a buffer cannot be made, invalid_argument when the I/O is not concrete.
  session(engine& eng, std::vector<tensor_spec> concrete_io, const session_options& options, const device_caps& caps);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // Blocks until a slot is free. Thread-safe: many clients may acquire concurrently.
  [[nodiscard]] filling_slot acquire();
  // Like acquire(), but gives up after `timeout`.
  [[nodiscard]] std::optional<filling_slot> try_acquire(std::chrono::milliseconds timeout);

  // Runs every slot's pipeline `rounds` times the way real requests do (the CPU writes every
  // input page, the pipeline runs, the CPU reads every output page) so the first real request
  // is not the slow one: modules load, library handles initialise, host mappings and managed
  // pages settle into their steady state. Overwrites the host views with `data`'s values
  // (ferry/session/input_data.hpp; by default finite floats, and zeros for integers and booleans, which
  // every model takes).
  // With batch sizes, each round runs once at every size (so every size's graphs are captured).
  // graph_mode::automatic: the first warmup() then times rounds without graphs, starts them (as
  // graph_mode::on does), warms them up the same way, times rounds with them, and keeps them only
  // where graphs_pay (graph() holds the figures either way).
  void warmup(int rounds = 3, const input_data& data = {});
  // With the engine's own graphs (graph_kind::engine), a key is captured only after warm-up runs,
  // so a capture may fail after the session began: this reads the engines' first failure into
  // graph() (then inactive, saying why; the requests of that key run without a graph). It holds
  // every slot while it reads, so it waits for requests in flight; warmup() ends with it. Not
  // while another thread reads graph(). Both wait for every slot, so a thread still holding a slot
  // it acquired (a filling, pending or completed handle alive, even one handed to another thread)
  // gets invalid_argument instead of waiting for itself.
  const graph_status& refresh_graph_status();

  // The options the session was made with, tensor_strategies included.
  [[nodiscard]] const session_options& options() const noexcept;
  // The batch sizes a request may run at (filling_slot::run_at_rows), ascending, the full one
  // last; empty for a session made without session_options::batch_sizes.
  [[nodiscard]] const std::vector<std::int64_t>& batch_sizes() const noexcept;
  // The strategy tensor `name` (an input or output) goes by; throws invalid_argument naming it
  // and listing the tensors when it is none of them.
  [[nodiscard]] strategy_kind strategy_of(std::string_view tensor) const;
  [[nodiscard]] const std::vector<tensor_spec>& io() const noexcept;
  [[nodiscard]] const graph_status& graph() const noexcept;
  [[nodiscard]] int slots() const noexcept;
  // The ordinal of the GPU the session runs on (caps.ordinal at construction).
  [[nodiscard]] int ordinal() const noexcept;
  // Slots handed out and not yet back in the pool, at the moment of the call.
  [[nodiscard]] int slots_in_use() const;

  // Called every time a slot returns to the pool, on the releasing thread, after the session's
  // own lock is dropped (so the listener may call slots_in_use()). A pool spanning several
  // sessions (replica_set) uses it to wait for whichever session frees a slot first. Set it
  // before the first acquire; it replaces any earlier listener.
  void set_release_listener(std::function<void()> listener);

 private:
  friend struct detail::slot_release;
  void release(detail::slot* s) noexcept;
  // One request on every slot, all in flight, the way warmup() runs them (at `rows` when given);
  // returns the round's wall time (us).
  double run_round(const input_data& bound_values, std::uint64_t& request, std::optional<std::int64_t> rows = {});
  // A round at every batch size (one at the full batch without sizes).
  void run_round_per_size(const input_data& bound_values, std::uint64_t& request);
  // graph_mode::automatic's trial (see warmup()).
  void choose_graphs(int warmup_rounds, const input_data& bound_values, std::uint64_t& request);
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace ferry
