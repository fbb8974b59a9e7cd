#include "serve/vocabulary/device_fault_report.hpp"

#include <atomic>
#include <cstdio>

#include "serve/vocabulary/client_text.hpp"

namespace ferry::serve {

std::string device_fault_reason(const device_fault_record& fault) {
  return "the GPU faulted (" + public_reason(fault.what) + "): this server cannot use it again and is restarting";
}

void report_device_fault(std::string_view model, std::string_view request_id, std::string_view what) noexcept {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  try {
    const std::string id = request_id.empty() ? "" : " (request id '" + quote_text(request_id, 64) + "')";
    std::fprintf(stderr,
                 "ferry serve: the GPU faulted running model '%s'%s: %s. From now on the server is not live and "
                 "not ready; it answers what it can, then exits with code %d for a restart\n",
                 std::string(model).c_str(), id.c_str(), std::string(what).c_str(), serve_exit_device_fault);
  } catch (...) {  // no memory to say it: the exit code still does
  }
}

}  // namespace ferry::serve
