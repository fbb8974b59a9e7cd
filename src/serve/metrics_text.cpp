#include "serve/metrics_text.hpp"

#include <fmt/format.h>

#include <functional>

#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

struct metric {
  const char* name;
  const char* type;
  const char* help;
  std::function<double(const served_model&, const statistics_snapshot&)> value;
};

// The shared-memory regions registered and the limit, per kind (system, cuda); none when client
// shared memory is off.
std::string render_region_usage(const inference_service& service) {
  if (service.system_shm() == nullptr) return {};
  std::vector<std::pair<const char*, region_usage>> kinds{{"system", service.system_shm()->usage()}};
  if (service.cuda_shm() != nullptr) kinds.emplace_back("cuda", service.cuda_shm()->usage());
  std::string text =
      "# HELP ferry_shm_regions Shared-memory regions registered\n# TYPE ferry_shm_regions gauge\n";
  for (const auto& [kind, usage] : kinds) text += fmt::format("ferry_shm_regions{{kind=\"{}\"}} {}\n", kind, usage.registered);
  text += "# HELP ferry_shm_region_limit Shared-memory regions that may be registered at once\n"
          "# TYPE ferry_shm_region_limit gauge\n";
  for (const auto& [kind, usage] : kinds) text += fmt::format("ferry_shm_region_limit{{kind=\"{}\"}} {}\n", kind, usage.limit);
  return text;
}

}  // namespace

std::string render_metrics(const inference_service& service) {
  const model_repository& repository = service.repository();
  const std::vector<metric> metrics{
      {"nv_inference_request_success", "counter", "Number of successful inference requests",
       [](const served_model&, const statistics_snapshot& s) { return double(s.success.count); }},
      {"nv_inference_request_failure", "counter", "Number of failed inference requests",
       [](const served_model&, const statistics_snapshot& s) { return double(s.fail.count); }},
      {"nv_inference_count", "counter", "Number of inferences performed (batch rows)",
       [](const served_model&, const statistics_snapshot& s) { return double(s.inference_count); }},
      {"nv_inference_exec_count", "counter", "Number of model executions (batches)",
       [](const served_model&, const statistics_snapshot& s) { return double(s.execution_count); }},
      {"nv_inference_request_duration_us", "counter", "Cumulative inference request duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.success.ns) / 1e3; }},
      {"nv_inference_queue_duration_us", "counter", "Cumulative inference queuing duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.queue.ns) / 1e3; }},
      {"nv_inference_compute_input_duration_us", "counter", "Cumulative compute input duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.compute_input.ns) / 1e3; }},
      {"nv_inference_compute_infer_duration_us", "counter", "Cumulative compute inference duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.compute_infer.ns) / 1e3; }},
      {"nv_inference_compute_output_duration_us", "counter", "Cumulative inference compute output duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.compute_output.ns) / 1e3; }},
      {"nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests awaiting execution",
       [](const served_model& m, const statistics_snapshot&) {
         return m.scheduler ? double(m.scheduler->pending()) : 0.0;
       }},
      {"ferry_model_ready", "gauge", "1 when the model is ready, 0 when it failed to load",
       [](const served_model& m, const statistics_snapshot&) { return m.ready() ? 1.0 : 0.0; }},
  };
  std::vector<statistics_snapshot> snapshots;
  for (const auto& m : repository.models()) snapshots.push_back(m->stats->snapshot());
  std::string text;
  for (const auto& metric : metrics) {
    text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", metric.name, metric.help, metric.name, metric.type);
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
      const served_model& m = *repository.models()[i];
      // Model names are folder names; quotes and backslashes would break the label syntax.
      std::string label;
      for (const char c : m.config.name) {
        if (c == '"' || c == '\\') label += '\\';
        if (c == '\n') { label += "\\n"; continue; }
        label += c;
      }
      text += fmt::format("{}{{model=\"{}\",version=\"{}\"}} {}\n", metric.name, label, model_version,
                          metric.value(m, snapshots[i]));
    }
  }
  return text + render_region_usage(service);
}

}  // namespace ferry::serve
