#include "serve/observability/model_statistics.hpp"

namespace ferry::serve {

void duration_histogram::add(std::uint64_t ns, std::uint64_t times) {
  std::size_t bucket = 0;
  while (bucket < duration_bucket_bounds_us.size() && ns > duration_bucket_bounds_us[bucket] * 1000) ++bucket;
  counts[bucket] += times;
  sum_ns += ns * times;
}

std::uint64_t duration_histogram::count() const noexcept {
  std::uint64_t total = 0;
  for (const auto c : counts) total += c;
  return total;
}

void model_statistics::touch_last_inference() {
  using namespace std::chrono;
  stats_.last_inference_ms =
      static_cast<std::uint64_t>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

void model_statistics::record_execution(std::int64_t rows, std::size_t requests, const batch_timing& t) {
  const std::lock_guard lock(mutex_);
  ++stats_.execution_count;
  stats_.compute_input.add(t.compute_input_ns, requests);
  stats_.compute_infer.add(t.compute_infer_ns, requests);
  stats_.compute_infer_histogram.add(t.compute_infer_ns, requests);
  stats_.compute_output.add(t.compute_output_ns, requests);
  const std::int64_t run = t.run_rows > 0 ? t.run_rows : rows;
  ++stats_.bucket_executions[run];
  if (run > rows) stats_.padded_rows += static_cast<std::uint64_t>(run - rows);
  auto& b = stats_.batches[rows];
  b.compute_input.add(t.compute_input_ns);
  b.compute_infer.add(t.compute_infer_ns);
  b.compute_output.add(t.compute_output_ns);
}

void model_statistics::record_success(std::int64_t rows, std::uint64_t queue_ns, std::uint64_t total_ns) {
  const std::lock_guard lock(mutex_);
  stats_.inference_count += static_cast<std::uint64_t>(rows);
  stats_.queue.add(queue_ns);
  stats_.success.add(total_ns);
  stats_.queue_histogram.add(queue_ns);
  stats_.request_histogram.add(total_ns);
  touch_last_inference();
}

const char* to_label(failure_reason reason) noexcept {
  switch (reason) {
    case failure_reason::rejected:
      return "REJECTED";
    case failure_reason::canceled:
      return "CANCELED";
    case failure_reason::backend:
      return "BACKEND";
    case failure_reason::other:
      return "OTHER";
  }
  return "OTHER";
}

void model_statistics::record_failure(std::uint64_t total_ns, failure_reason reason) {
  const std::lock_guard lock(mutex_);
  stats_.fail.add(total_ns);
  ++stats_.failures_by_reason.at(static_cast<std::size_t>(reason));
  touch_last_inference();
}

statistics_snapshot model_statistics::snapshot() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace ferry::serve
