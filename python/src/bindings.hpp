// The parts of the extension module ferry._core, one per file; module.cpp calls each.
#pragma once

#include <nanobind/nanobind.h>

#include "ferry/device/device_caps.hpp"

namespace ferry::python {

void bind_errors(nanobind::module_& m);   // errors.cpp: ferry's C++ errors as ferry.errors classes
void bind_devices(nanobind::module_& m);  // devices.cpp: devices, info, the no-device cause
void bind_memory(nanobind::module_& m);   // memory.cpp: what memory is, DLPack sources, registrations
void bind_buffer(nanobind::module_& m);   // buffer.cpp: one io_buffer with its stream
void bind_session(nanobind::module_& m);  // session.cpp: sessions and their slots
void bind_bench(nanobind::module_& m);    // bench.cpp: the bench library's run, as its JSON report

// The GPU `ordinal`, ready to run ferry's work: throws no_device naming the cause (the CLI's
// line) where there is no usable GPU, unsupported where this build has no code for it.
[[nodiscard]] device_caps usable_device(int ordinal);

}  // namespace ferry::python
