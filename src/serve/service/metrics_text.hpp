// The Prometheus text exposition (/metrics), with Triton's metric names so existing dashboards
// read it: nv_inference_request_success, nv_inference_count, nv_inference_queue_duration_us, ...
// and ferry's own: model readiness, and the shared-memory regions registered against their limits.
#pragma once

#include <string>

#include "serve/service/inference_service.hpp"

namespace ferry::serve {

[[nodiscard]] std::string render_metrics(const inference_service& service);

}  // namespace ferry::serve
