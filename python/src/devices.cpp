// What the machine has: its GPUs, `ferry info`'s record, and why there is no usable GPU.
// Records cross as JSON text (json.loads on the Python side), so they stay the CLI's own.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "ferry/device/device_caps.hpp"
#include "ferry/device/device_diagnosis.hpp"
#include "ferry/engines/backend_api.h"
#include "ferry/frontend/info_record.hpp"
#include "ferry/info/info_report.hpp"
#include "ferry/memory/strategy.hpp"

namespace nb = nanobind;

namespace ferry::python {
namespace {

std::string devices_json() {
  if (cuda_device_count() == 0) return "[]";
  const auto devices = query_all_devices();
  nlohmann::json record = build_info_json(query_cuda_versions(), devices);
  frontend::mark_missing_code(record, devices);
  return record["devices"].dump();
}

std::string info_json(bool measure, std::optional<int> device, std::optional<std::string> profile,
                      const std::string& backend_directory) {
  frontend::info_options options;
  options.link = measure ? frontend::link_measurement::measure : frontend::link_measurement::skip;
  options.device = device;
  if (profile) options.profile = *profile;
  options.backend_directory = backend_directory;
  nb::gil_scoped_release unlocked;  // --measure calibrates for seconds
  return frontend::info_record(options).dump();
}

nb::dict build_info() {
  nb::dict d;
  d["cuda_runtime"] = std::to_string(CUDART_VERSION / 1000) + "." + std::to_string((CUDART_VERSION % 1000) / 10);
  d["cuda_architectures"] = std::string(built_cuda_architectures());
  d["backend_api"] = FERRY_BACKEND_API_VERSION;
  return d;
}

nb::list strategies() {
  static constexpr const char* paths[] = {"copy", "zero_copy", "migrate", "resident"};
  nb::list list;
  for (const strategy_kind k : all_strategies) {
    const strategy_properties p = properties(k);
    nb::dict d;
    d["name"] = std::string(to_string(k));
    d["data_path"] = paths[static_cast<int>(p.path)];
    d["uses_managed_memory"] = p.uses_managed_memory;
    d["wraps_caller_memory"] = p.wraps_caller_memory;
    d["summary"] = std::string(p.summary);
    list.append(d);
  }
  return list;
}

}  // namespace

void bind_devices(nb::module_& m) {
  m.def("_devices_json", &devices_json, "Every usable GPU as ferry info describes it (JSON); [] without one.");
  m.def("_info_json", &info_json, nb::arg("measure"), nb::arg("device").none(), nb::arg("profile").none(),
        nb::arg("backend_directory"), "ferry info --json's record (JSON text).");
  m.def("no_device_reason", &no_device_reason,
        "Why there is no usable GPU, in one line ('no CUDA device: ...'), or '' when there is one.");
  m.def("_strategies", &strategies, "Every transfer strategy with its properties.");
  m.def("_build_info", &build_info, "What this build of ferry has: CUDA runtime, GPU architectures, backend API.");
}

}  // namespace ferry::python
