// ferry's errors (ferry/core/error.hpp) raised as the classes of python/ferry/errors.py, which mirror
// the C++ hierarchy; every other C++ exception keeps nanobind's default mapping.
#include <nanobind/stl/string.h>

#include <cuda_runtime_api.h>

#include <exception>
#include <string>

#include "bindings.hpp"
#include "ferry/core/error.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

void raise(const char* class_name, const char* message, const cuda_error* cuda = nullptr) {
  // Looked up when raised: ferry.errors is imported by the package before this module is used.
  const nb::object cls = nb::module_::import_("ferry.errors").attr(class_name);
  const nb::object instance = cls(message);
  if (cuda != nullptr) {
    instance.attr("code") = static_cast<int>(cuda->code());
    instance.attr("code_name") = cudaGetErrorName(cuda->code());
  }
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

void translate(const std::exception_ptr& thrown, void* /*payload*/) {
  try {
    std::rethrow_exception(thrown);
  } catch (const out_of_memory& e) {
    raise("OutOfMemoryError", e.what(), &e);
  } catch (const cuda_error& e) {
    raise("CudaError", e.what(), &e);
  } catch (const no_device& e) {
    raise("NoDeviceError", e.what());
  } catch (const unsupported& e) {
    raise("UnsupportedError", e.what());
  } catch (const invalid_argument& e) {
    raise("InvalidArgumentError", e.what());
  } catch (const error& e) {
    raise("Error", e.what());
  }
}

// Throws the C++ error named by `kind`, so the mapping is tested without a GPU.
void throw_error(const std::string& kind, const std::string& message) {
  if (kind == "error") throw error(message);
  if (kind == "invalid_argument") throw invalid_argument(message);
  if (kind == "unsupported") throw unsupported(message);
  if (kind == "no_device") throw no_device(message);
  if (kind == "cuda_error") throw cuda_error(cudaErrorLaunchFailure, message);
  if (kind == "out_of_memory") throw out_of_memory(cudaErrorMemoryAllocation, message);
  throw std::logic_error("no ferry error is called '" + kind + "'");
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::register_exception_translator(translate);
  m.def("_throw_error", &throw_error, nb::arg("kind"), nb::arg("message"),
        "Throws the C++ ferry error `kind` (error, invalid_argument, unsupported, no_device, cuda_error, "
        "out_of_memory); for tests of the error mapping.");
}

}  // namespace ferry::python
