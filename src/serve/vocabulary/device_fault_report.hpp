// What the server says once a GPU faults (ferry/core/device_fault.hpp): the one log line, naming the
// model and request that met it first, and the reason every later client and probe is given.
// server.cpp then exits with serve_exit_device_fault for a restart.
#pragma once

#include <string>
#include <string_view>

#include "ferry/core/device_fault.hpp"

namespace ferry::serve {

// The exit code of `ferry serve` after a GPU faulted (documented with the CLI's codes).
inline constexpr int serve_exit_device_fault = 4;

// "the GPU faulted (<cause>): this server cannot use it again and is restarting", paths cut.
[[nodiscard]] std::string device_fault_reason(const device_fault_record& fault);

// Logs, once per process, which model and request met the fault first (to stderr).
void report_device_fault(std::string_view model, std::string_view request_id, std::string_view what) noexcept;

}  // namespace ferry::serve
