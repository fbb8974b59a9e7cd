// The Prometheus text exposition (/metrics), with Triton's metric names so existing dashboards
// read it: nv_inference_request_success, nv_inference_count, nv_inference_queue_duration_us, ...
#pragma once

#include <string>

#include "serve/model_repository.hpp"

namespace ferry::serve {

[[nodiscard]] std::string render_metrics(const model_repository& repository);

}  // namespace ferry::serve
