// Memory as the Python views see it: what kind an address is (so a view exports the right DLPack
// device), the GPU's address of host memory, DLPack capsule sources over ferry's memory, and
// registrations of memory the caller already has (ferry.pin).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "core/host_registration.hpp"  // the RAII owner of a registration (no public header offers one)
#include "core/mapped_device_pointer.hpp"
#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

void* as_pointer(std::uintptr_t address) { return reinterpret_cast<void*>(address); }  // NOLINT

// "pageable", "host" (page-locked: pinned, mapped, registered), "managed" or "device", with the
// GPU of device and managed memory (-1 for host memory). Memory CUDA does not know is pageable;
// so is every address without a driver.
nb::tuple memory_kind(std::uintptr_t address) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, as_pointer(address)) != cudaSuccess) {
    (void)cudaGetLastError();
    return nb::make_tuple("pageable", -1);
  }
  switch (attributes.type) {
    case cudaMemoryTypeHost:
      return nb::make_tuple("host", -1);
    case cudaMemoryTypeDevice:
      return nb::make_tuple("device", attributes.device);
    case cudaMemoryTypeManaged:
      return nb::make_tuple("managed", attributes.device);
    default:
      return nb::make_tuple("pageable", -1);
  }
}

// The address kernels use for page-locked host memory (the same as the host's under unified
// addressing for cudaHostAlloc; cudaHostGetDevicePointer says for registered memory).
std::uintptr_t device_address_of_host(std::uintptr_t address) {
  return reinterpret_cast<std::uintptr_t>(core::mapped_device_pointer(as_pointer(address)));  // NOLINT
}

// A nanobind ndarray (array-API framework: an object with __dlpack__, not a bare capsule) over
// memory ferry owns, whose __dlpack__ makes the capsule; `owner` keeps the
// memory alive for as long as a consumer holds the capsule's tensor.
nb::object dlpack_source(std::uintptr_t address, const std::vector<std::size_t>& shape, int code, int bits,
                         int device_type, int device_id, bool read_only, nb::handle owner) {
  const nb::dlpack::dtype type{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
  if (read_only)
    return nb::cast(nb::ndarray<nb::array_api, nb::ro>(as_pointer(address), shape.size(), shape.data(), owner, nullptr,
                                                       type, device_type, device_id));
  return nb::cast(nb::ndarray<nb::array_api>(as_pointer(address), shape.size(), shape.data(), owner, nullptr, type,
                                             device_type, device_id));
}

// Makes `consumer` (a cudaStream_t as an integer; 1 the legacy default stream, 2 the per-thread
// one, as DLPack and the CUDA array interface number them) wait for `event` without blocking.
void stream_wait_event(std::uintptr_t consumer, std::uintptr_t event) {
  cudaStream_t stream = consumer == 1   ? cudaStreamLegacy
                        : consumer == 2 ? cudaStreamPerThread
                                        : reinterpret_cast<cudaStream_t>(consumer);      // NOLINT
  FERRY_CUDA_TRY(cudaStreamWaitEvent(stream, reinterpret_cast<cudaEvent_t>(event), 0));  // NOLINT
}

// Memory the caller already has, page-locked for every GPU and mapped into their address space
// until release() or the object's end.
class registration {
 public:
  registration(std::uintptr_t address, std::size_t bytes, int device) {
    const device_caps caps = usable_device(device);
    core::scoped_device on_device(caps.ordinal);
    owner_ = core::register_host({static_cast<std::byte*>(as_pointer(address)), bytes},
                                 cudaHostRegisterPortable | cudaHostRegisterMapped);
  }
  void release() { owner_ = {}; }  // the moved-in empty owner unregisters nothing; the old one unregisters
  [[nodiscard]] bool active() const { return owner_.get() != nullptr; }
  [[nodiscard]] std::size_t bytes() const { return owner_.size(); }

 private:
  core::host_registration owner_;
};

}  // namespace

void bind_memory(nb::module_& m) {
  m.def("_memory_kind", &memory_kind, nb::arg("address"));
  m.def("_device_address_of_host", &device_address_of_host, nb::arg("address"));
  m.def("_dlpack_source", &dlpack_source, nb::arg("address"), nb::arg("shape"), nb::arg("code"), nb::arg("bits"),
        nb::arg("device_type"), nb::arg("device_id"), nb::arg("read_only"), nb::arg("owner"));
  m.def("_stream_wait_event", &stream_wait_event, nb::arg("consumer"), nb::arg("event"));
  nb::class_<registration>(m, "_Registration",
                           "cudaHostRegister (portable, mapped) of caller memory, undone by release()")
      .def(nb::init<std::uintptr_t, std::size_t, int>(), nb::arg("address"), nb::arg("bytes"), nb::arg("device"))
      .def("release", &registration::release)
      .def_prop_ro("active", &registration::active)
      .def_prop_ro("bytes", &registration::bytes);
}

}  // namespace ferry::python
