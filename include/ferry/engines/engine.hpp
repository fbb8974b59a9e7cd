// The engine seam: what ferry needs from an inference engine, and nothing more.
//
// An engine describes its I/O tensors (names, dtypes, shapes with dynamic dims), makes one
// execution context per slot, and enqueues work on a stream it is given. It never allocates
// I/O memory: ferry's strategies own that, and a context is told the device addresses to use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/core/dtype.hpp"
#include "ferry/core/stream.hpp"

namespace ferry {

enum class tensor_role { input, output };

inline constexpr std::int64_t dynamic_dim = -1;

struct tensor_spec {
  std::string name;
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;  // dynamic_dim where the engine accepts any extent
  tensor_role role = tensor_role::input;
  // Integer inputs that index something (embedding rows, pages): valid values are
  // [0, index_bound). Benchmarks draw fresh inputs inside it; unset means any value is valid.
  std::optional<std::int64_t> index_bound;

  [[nodiscard]] bool is_dynamic() const noexcept;
  // Elements and bytes of a concrete shape; throw invalid_argument when a dim is still dynamic.
  [[nodiscard]] std::size_t elements() const;
  [[nodiscard]] std::size_t bytes() const;
};

// A concrete shape asked for one input ("input" -> {16, 3, 224, 224}).
struct shape_binding {
  std::string name;
  std::vector<std::int64_t> dims;
};

// Per-slot execution state: the engine's equivalent of a TensorRT execution context.
//
// As RMM's device_memory_resource: the public calls are not virtual. They do what every backend
// needs in one place (the checks on bindings, the NVTX range around the engine's work, its GPU
// made current) and then call the backend's private do_* functions.
class engine_context {
 public:
  virtual ~engine_context() = default;
  engine_context(const engine_context&) = delete;
  engine_context& operator=(const engine_context&) = delete;

  // Binds a tensor to a device address. Throws invalid_argument for an unknown tensor name (listing
  // the valid ones), a null address or one that is not device_alignment (256-byte) aligned, before
  // the backend sees it. Binding again replaces the address.
  void bind(std::string_view tensor, void* device_address);
  // Enqueues one inference on `stream`, inside the NVTX range "ferry.engine" and with the
  // context's GPU current. Throws invalid_argument naming the tensors not bound yet.
  void enqueue(stream_ref stream);
  // Asks the engine to record `consumed` on the enqueue stream as soon as it has read its inputs
  // (TensorRT's setInputConsumedEvent), earlier than the end of its work. Returns false when the
  // engine cannot tell; ferry then records the event right after enqueue().
  [[nodiscard]] bool signal_inputs_consumed(cudaEvent_t consumed) { return do_signal_inputs_consumed(consumed); }
  // Why enqueue() cannot be captured into a CUDA graph by a plain stream capture, or nullopt when
  // it can. Sessions asked for graphs do not try to capture such an engine: a failed capture can
  // leave an engine's own state (a framework's allocator, a runner) unusable for later runs.
  [[nodiscard]] std::optional<std::string> capture_refusal() const { return do_capture_refusal(); }
  // Asks the context to capture its own enqueue into CUDA graphs and replay them, for an engine
  // whose run a plain stream capture cannot take (it allocates while it runs): the engine keys a
  // graph by the concrete shapes and the bound addresses, runs a key plainly while it warms up,
  // then captures it on a memory pool of its own and replays it; at most `max_graphs` graphs, the
  // least recently used dropped beyond; a key whose capture fails runs plainly from then on
  // (own_graphs_failure says why). 0 turns it off again. Returns why the engine will not, or
  // nullopt when it will; throws invalid_argument for a negative count. Call it before enqueue.
  [[nodiscard]] std::optional<std::string> use_own_graphs(int max_graphs);
  // Why the context's first capture of its own failed (that key runs without a graph), or nullopt
  // while none has.
  [[nodiscard]] std::optional<std::string> own_graphs_failure() const { return do_own_graphs_failure(); }
  // Runs the later enqueues at another concrete I/O of the same tensors in the same order (a
  // smaller batch of a dynamic batch dim, each tensor no larger than the memory bound to it),
  // keeping the bindings. Returns false, changing nothing, when the engine cannot: its caller then
  // makes a context per shape. An engine whose graphs are keyed by shape keeps one per shape on
  // the context's one memory pool. Throws invalid_argument when `concrete_io` names other tensors.
  [[nodiscard]] bool reshape(std::span<const tensor_spec> concrete_io);

 protected:
  // `tensor_names`: the tensors bind() accepts, in the order do_bind's indices and
  // device_addresses() use (a backend's concrete I/O order); `engine_name` starts every message.
  // The context's GPU is the device current now (none on a machine without one).
  engine_context(std::string engine_name, std::vector<std::string> tensor_names);
  // The bound addresses in tensor_names order (null where unbound; none is null in do_enqueue).
  [[nodiscard]] std::span<void* const> device_addresses() const noexcept { return addresses_; }
  [[nodiscard]] const std::string& tensor_name(std::size_t index) const { return names_.at(index); }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }

 private:
  // A checked, aligned, non-null address for tensor_names[index].
  virtual void do_bind(std::size_t index, void* device_address) = 0;
  // Every tensor is bound; the context's GPU is current.
  virtual void do_enqueue(stream_ref stream) = 0;
  [[nodiscard]] virtual bool do_signal_inputs_consumed(cudaEvent_t consumed) {
    (void)consumed;
    return false;
  }
  [[nodiscard]] virtual std::optional<std::string> do_capture_refusal() const { return std::nullopt; }
  // max_graphs >= 0; the context's GPU is current. Engines that capture nothing themselves refuse
  // (and have nothing to turn off for 0).
  [[nodiscard]] virtual std::optional<std::string> do_use_own_graphs(int max_graphs) {
    if (max_graphs == 0) return std::nullopt;
    return "the engine does not capture CUDA graphs of its own";
  }
  [[nodiscard]] virtual std::optional<std::string> do_own_graphs_failure() const { return std::nullopt; }
  // The tensors are checked to be this context's, in its order.
  [[nodiscard]] virtual bool do_reshape(std::span<const tensor_spec> concrete_io) {
    (void)concrete_io;
    return false;
  }

  std::string engine_name_;
  std::vector<std::string> names_;
  std::vector<void*> addresses_;
  int ordinal_ = -1;
};

// The names of `io`, in order: what a context made for that concrete I/O passes to engine_context.
[[nodiscard]] std::vector<std::string> tensor_names(std::span<const tensor_spec> io);

class engine {
 public:
  virtual ~engine() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Declared I/O, dynamic dims as dynamic_dim.
  [[nodiscard]] virtual const std::vector<tensor_spec>& io() const = 0;
  // The concrete I/O for the given input shapes: dynamic dims filled, outputs derived. Throws
  // invalid_argument naming the tensor for an unknown name, wrong rank, or a shape the engine
  // cannot take.
  [[nodiscard]] virtual std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const = 0;
  // One execution context for one slot, for the concrete I/O returned by resolve().
  [[nodiscard]] virtual std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) = 0;
  // How many bytes of a concrete input one request's kernels read: all of them, unless the engine
  // knows it reads fewer (a lookup that reads a few rows of a table). A strategy whose engine
  // reads host memory in place moves only these over the link; a copy moves the whole tensor.
  [[nodiscard]] virtual std::size_t input_bytes_read(const tensor_spec& input) const { return input.bytes(); }
};

}  // namespace ferry
