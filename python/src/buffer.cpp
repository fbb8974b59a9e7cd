// ferry.Buffer's C++ side: one io_buffer (ferry/memory/buffer.hpp) of a strategy, with a stream of its
// own for its copies and an event recorded after the last of them, which consumers of its
// memory (DLPack, the CUDA array interface) wait on.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"
#include "ferry/core/stream.hpp"
#include "ferry/memory/buffer.hpp"
#include "ferry/memory/strategy.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

direction parse_direction(const std::string& name) {
  if (name == "input") return direction::input;
  if (name == "output") return direction::output;
  if (name == "inout") return direction::inout;
  throw invalid_argument("direction must be 'input', 'output' or 'inout', not '" + name + "'");
}

// A stream or event belongs to the device current when it is made.
template <typename Make>
auto on_device(int ordinal, Make make) {
  core::scoped_device current(ordinal);
  return make();
}

class python_buffer {
 public:
  python_buffer(std::size_t bytes, const std::string& strategy, int device, const std::string& dir,
                bool allow_oversubscription)
      : python_buffer(bytes, parse_strategy(strategy), parse_direction(dir), usable_device(device),
                      allow_oversubscription) {}

  [[nodiscard]] std::uintptr_t host_address() { return reinterpret_cast<std::uintptr_t>(buffer_.host().data()); }
  [[nodiscard]] std::uintptr_t device_address() const {
    return reinterpret_cast<std::uintptr_t>(buffer_.device_address());
  }
  [[nodiscard]] std::size_t bytes() const { return buffer_.bytes(); }
  [[nodiscard]] std::string strategy() const { return std::string(to_string(buffer_.strategy())); }
  [[nodiscard]] int device() const { return buffer_.device_ordinal(); }
  [[nodiscard]] std::uintptr_t stream_handle() const { return reinterpret_cast<std::uintptr_t>(stream_.get()); }
  [[nodiscard]] std::uintptr_t ready_event() const { return reinterpret_cast<std::uintptr_t>(ready_.get()); }

  // What the CPU wrote into the host view, made visible to the GPU, in the buffer's stream order.
  // A strategy whose data is kept in GPU memory (`device`, `peer`) moves nothing in its stream
  // operations by definition, so it copies blocking.
  void to_device() {
    core::scoped_device on_device(buffer_.device_ordinal());
    if (resident())
      buffer_.upload_blocking(stream_);
    else
      buffer_.to_device(stream_);
    ready_.record(stream_);
  }

  // What the GPU wrote, in the host view when this returns.
  void to_host() {
    core::scoped_device on_device(buffer_.device_ordinal());
    if (resident()) {
      buffer_.download_blocking(stream_);
    } else {
      buffer_.to_host(stream_);
      stream_.synchronize_blocking();
      buffer_.finish_to_host();
    }
    ready_.record(stream_);
  }

  void synchronize() {
    core::scoped_device on_device(buffer_.device_ordinal());
    stream_.synchronize_blocking();
  }

 private:
  [[nodiscard]] bool resident() const { return properties(buffer_.strategy()).path == data_path::resident; }

  python_buffer(std::size_t bytes, strategy_kind strategy, direction dir, const device_caps& caps,
                bool allow_oversubscription)
      : buffer_(io_buffer::allocate(
            strategy,
            {.bytes = bytes,
             .dir = dir,
             .managed_policy = allow_oversubscription ? oversubscription::allow : oversubscription::refuse},
            caps)),
        stream_(on_device(caps.ordinal, [] { return ferry::stream(); })),
        ready_(on_device(caps.ordinal, [] { return ferry::event(); })) {
    core::scoped_device on_device(caps.ordinal);
    ready_.record(stream_);  // nothing enqueued yet: consumers wait for nothing
  }

  io_buffer buffer_;
  ferry::stream stream_;
  ferry::event ready_;
};

}  // namespace

void bind_buffer(nb::module_& m) {
  nb::class_<python_buffer>(m, "_Buffer", "an io_buffer of one strategy with its stream and ready event")
      .def(nb::init<std::size_t, const std::string&, int, const std::string&, bool>(), nb::arg("bytes"),
           nb::arg("strategy"), nb::arg("device"), nb::arg("direction"), nb::arg("allow_oversubscription"))
      .def_prop_ro("host_address", &python_buffer::host_address)
      .def_prop_ro("device_address", &python_buffer::device_address)
      .def_prop_ro("bytes", &python_buffer::bytes)
      .def_prop_ro("strategy", &python_buffer::strategy)
      .def_prop_ro("device", &python_buffer::device)
      .def_prop_ro("stream", &python_buffer::stream_handle)
      .def_prop_ro("ready_event", &python_buffer::ready_event)
      .def("to_device", &python_buffer::to_device, nb::call_guard<nb::gil_scoped_release>())
      .def("to_host", &python_buffer::to_host, nb::call_guard<nb::gil_scoped_release>())
      .def("synchronize", &python_buffer::synchronize, nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace ferry::python
