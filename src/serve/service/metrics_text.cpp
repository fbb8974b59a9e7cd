#include "serve/service/metrics_text.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "serve/observability/allocation_failures.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"

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
  std::string text = "# HELP ferry_shm_regions Shared-memory regions registered\n# TYPE ferry_shm_regions gauge\n";
  for (const auto& [kind, usage] : kinds)
    text += fmt::format("ferry_shm_regions{{kind=\"{}\"}} {}\n", kind, usage.registered);
  text +=
      "# HELP ferry_shm_region_limit Shared-memory regions that may be registered at once\n"
      "# TYPE ferry_shm_region_limit gauge\n";
  for (const auto& [kind, usage] : kinds)
    text += fmt::format("ferry_shm_region_limit{{kind=\"{}\"}} {}\n", kind, usage.limit);
  return text;
}

}  // namespace

namespace {

// Model names are folder names, printable ones (safe_name.hpp: the repository names a folder whose
// name is not safe by its printable form, valid UTF-8); quotes, backslashes and newlines would
// break the label syntax.
std::string label_value(std::string_view text) {
  std::string label;
  for (const char c : text) {
    if (c == '"' || c == '\\') label += '\\';
    if (c == '\n') {
      label += "\\n";
      continue;
    }
    label += c;
  }
  return label;
}

// One histogram family in Prometheus' text format: cumulative _bucket lines over the fixed bounds
// (le in microseconds, as the name says), then _sum (microseconds) and _count, per model.
std::string render_histogram(const char* name, const char* help,
                             const std::vector<std::shared_ptr<const served_model>>& models,
                             const std::vector<statistics_snapshot>& snapshots,
                             duration_histogram statistics_snapshot::*which) {
  std::string text = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  for (std::size_t i = 0; i < models.size(); ++i) {
    const duration_histogram& h = snapshots[i].*which;
    const std::string labels =
        fmt::format("model=\"{}\",version=\"{}\"", label_value(models[i]->config.name), model_version);
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < h.counts.size(); ++b) {
      cumulative += h.counts[b];
      const std::string le =
          b < duration_bucket_bounds_us.size() ? std::to_string(duration_bucket_bounds_us[b]) : "+Inf";
      text += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, le, cumulative);
    }
    text += fmt::format("{}_sum{{{}}} {}\n", name, labels, static_cast<double>(h.sum_ns) / 1e3);
    text += fmt::format("{}_count{{{}}} {}\n", name, labels, cumulative);
  }
  return text;
}

// Requests being run now, per device (GPU ordinal, or "cpu"), summed over the models, and the
// inference requests the server holds in all (queued, running, or being answered).
std::string render_in_flight(const inference_service& service,
                             const std::vector<std::shared_ptr<const served_model>>& models) {
  std::map<std::string, std::size_t> by_device;
  for (const auto& m : models)
    if (m->scheduler)
      for (const auto& [device, running] : m->scheduler->running())
        by_device[device ? std::to_string(*device) : "cpu"] += running;
  std::string text =
      "# HELP ferry_device_requests_in_flight Inference requests being run now on each GPU (\"cpu\" without one), "
      "all models\n# TYPE ferry_device_requests_in_flight gauge\n";
  for (const auto& [device, running] : by_device)
    text += fmt::format("ferry_device_requests_in_flight{{device=\"{}\"}} {}\n", device, running);
  text += fmt::format(
      "# HELP ferry_requests_in_flight Inference requests the server holds: admitted and not yet answered\n"
      "# TYPE ferry_requests_in_flight gauge\nferry_requests_in_flight {}\n",
      service.intake().requests_in_flight());
  return text;
}

}  // namespace

std::string render_metrics(const inference_service& service) {
  const std::vector<metric> metrics{
      {"nv_inference_request_success", "counter", "Number of successful inference requests",
       [](const served_model&, const statistics_snapshot& s) { return double(s.success.count); }},
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
      {"nv_inference_compute_output_duration_us", "counter",
       "Cumulative inference compute output duration in microseconds",
       [](const served_model&, const statistics_snapshot& s) { return double(s.compute_output.ns) / 1e3; }},
      {"nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests awaiting execution",
       [](const served_model& m, const statistics_snapshot&) {
         return m.scheduler ? double(m.scheduler->pending()) : 0.0;
       }},
      {"ferry_padded_rows_total", "counter",
       "Rows the engine ran that no request asked for: a batch padded up to its bucket",
       [](const served_model&, const statistics_snapshot& s) { return double(s.padded_rows); }},
      {"ferry_model_ready", "gauge", "1 when the model is ready, 0 when it failed to load or is not loaded",
       [](const served_model& m, const statistics_snapshot&) { return m.ready() ? 1.0 : 0.0; }},
  };
  // One snapshot of the models: one may be loaded or unloaded while this renders.
  const auto models = service.repository().models();
  std::vector<statistics_snapshot> snapshots;
  for (const auto& m : models) snapshots.push_back(m->stats->snapshot());
  std::string text;
  for (const auto& metric : metrics) {
    text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", metric.name, metric.help, metric.name, metric.type);
    for (std::size_t i = 0; i < snapshots.size(); ++i)
      text += fmt::format("{}{{model=\"{}\",version=\"{}\"}} {}\n", metric.name, label_value(models[i]->config.name),
                          model_version, metric.value(*models[i], snapshots[i]));
  }
  // Failures by reason, as Triton labels them: a series for every reason of every model, zeros too.
  text +=
      "# HELP nv_inference_request_failure Number of failed inference requests, by reason (REJECTED: refused "
      "before it ran; CANCELED; BACKEND: the engine failed; OTHER)\n# TYPE nv_inference_request_failure counter\n";
  for (std::size_t i = 0; i < snapshots.size(); ++i)
    for (const failure_reason reason : failure_reasons)
      text += fmt::format("nv_inference_request_failure{{model=\"{}\",version=\"{}\",reason=\"{}\"}} {}\n",
                          label_value(models[i]->config.name), model_version, to_label(reason),
                          snapshots[i].failures_by_reason[static_cast<std::size_t>(reason)]);
  text +=
      "# HELP ferry_bucket_executions_total Engine runs by the batch size they ran at (the batch's bucket, rows)\n"
      "# TYPE ferry_bucket_executions_total counter\n";
  for (std::size_t i = 0; i < snapshots.size(); ++i)
    for (const auto& [bucket, runs] : snapshots[i].bucket_executions)
      text += fmt::format("ferry_bucket_executions_total{{model=\"{}\",version=\"{}\",bucket=\"{}\"}} {}\n",
                          label_value(models[i]->config.name), model_version, bucket, runs);
  text += render_histogram("ferry_request_duration_us", "Inference request duration (queue + compute), microseconds",
                           models, snapshots, &statistics_snapshot::request_histogram);
  text += render_histogram("ferry_queue_duration_us", "Time a request waited for a worker, microseconds", models,
                           snapshots, &statistics_snapshot::queue_histogram);
  text += render_histogram("ferry_compute_infer_duration_us", "Engine run time of a request's batch, microseconds",
                           models, snapshots, &statistics_snapshot::compute_infer_histogram);
  return text + render_in_flight(service, models) + render_allocation_failures() + render_region_usage(service);
}

}  // namespace ferry::serve
