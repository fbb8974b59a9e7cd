// ferry._core: the C++ side of the Python package. It binds ferry's public API thinly; the
// Pythonic surface (views, context managers, NumPy and DLPack) is python/ferry/.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "ferry's C++ library, bound for the ferry package (use `import ferry`, not this module)";
  ferry::python::bind_errors(m);
  ferry::python::bind_devices(m);
  ferry::python::bind_memory(m);
  ferry::python::bind_buffer(m);
  ferry::python::bind_session(m);
  ferry::python::bind_bench(m);
}
