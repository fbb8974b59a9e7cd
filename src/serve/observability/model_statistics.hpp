// Per-model counters of the statistics extension, in Triton's terms:
//   success / fail   requests and their whole time in the server (queue + compute)
//   queue            time from arrival until a worker took the request's batch
//   compute_input    gathering request tensors into the engine's input buffers (and, on a GPU,
//                    until the inputs are on the device)
//   compute_infer    the engine run
//   compute_output   scattering outputs back into each request's response
// A batch's compute times count once per request in it (as Triton counts them); execution_count
// counts engine runs and inference_count counts batch rows, so their ratio is the mean batch.
// batch_stats (`batches`) are by the rows the requests brought, as Triton's; beside them, engine
// runs by the bucket they ran at and the padded rows those buckets added (ferry's own counters).
//
// Failures are counted by reason, as Triton's nv_inference_request_failure{reason=...} counts
// them: REJECTED (the server refused the request before running it: a bad request, no room in the
// in-flight budget or the queue, its timeout passed in the queue, the model unloading), CANCELED
// (the client gave up on it), BACKEND (the engine failed to run it) and OTHER (anything else,
// such as an answer that could not be encoded).
//
// Histograms, for autoscalers and latency alerts (Prometheus `_bucket`/`_sum`/`_count`): each
// request's whole time (success), its queue time and its batch's compute_infer time, over the
// fixed buckets of duration_bucket_bounds_us (microseconds; one list for every model and server, so
// series aggregate across pods).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>

namespace ferry::serve {

struct duration_stat {
  std::uint64_t count = 0;
  std::uint64_t ns = 0;
  void add(std::uint64_t n, std::uint64_t times = 1) {
    count += times;
    ns += n * times;
  }
};

// Upper bounds of the duration histograms' buckets, microseconds (+Inf follows): 100 us to 10 s.
inline constexpr std::array<std::uint64_t, 16> duration_bucket_bounds_us{
    100,    250,     500,     1'000,   2'500,     5'000,     10'000,    25'000,
    50'000, 100'000, 250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000};

// Counts per bucket (not cumulative; the last is +Inf) and the sum, in nanoseconds.
struct duration_histogram {
  std::array<std::uint64_t, duration_bucket_bounds_us.size() + 1> counts{};
  std::uint64_t sum_ns = 0;
  void add(std::uint64_t ns, std::uint64_t times = 1);
  [[nodiscard]] std::uint64_t count() const noexcept;
};

enum class failure_reason { rejected, canceled, backend, other };
inline constexpr std::array<failure_reason, 4> failure_reasons{failure_reason::rejected, failure_reason::canceled,
                                                               failure_reason::backend, failure_reason::other};
// Triton's label: "REJECTED", "CANCELED", "BACKEND", "OTHER".
[[nodiscard]] const char* to_label(failure_reason reason) noexcept;

struct batch_timing {
  std::uint64_t compute_input_ns = 0;
  std::uint64_t compute_infer_ns = 0;
  std::uint64_t compute_output_ns = 0;
  // The rows the engine ran: the batch's bucket (its rows and padding); 0 when it ran exactly the
  // batch's rows.
  std::int64_t run_rows = 0;
};

struct statistics_snapshot {
  std::uint64_t last_inference_ms = 0;  // Unix time of the last request, milliseconds
  std::uint64_t inference_count = 0;
  std::uint64_t execution_count = 0;
  duration_stat success, fail, queue, compute_input, compute_infer, compute_output;
  struct per_batch_size {
    duration_stat compute_input, compute_infer, compute_output;
  };
  std::map<std::int64_t, per_batch_size> batches;           // by batch size (rows), Triton's batch_stats
  std::map<std::int64_t, std::uint64_t> bucket_executions;  // engine runs by the rows they ran at
  std::uint64_t padded_rows = 0;                            // rows run that no request asked for
  duration_histogram request_histogram, queue_histogram, compute_infer_histogram;
  std::array<std::uint64_t, failure_reasons.size()> failures_by_reason{};  // indexed by failure_reason
};

class model_statistics {
 public:
  // One engine run of `rows` rows from `requests` requests.
  void record_execution(std::int64_t rows, std::size_t requests, const batch_timing& timing);
  // One request answered; queue_ns and total_ns are its own times.
  void record_success(std::int64_t rows, std::uint64_t queue_ns, std::uint64_t total_ns);
  // One request failed after `total_ns` in the server (0 when it was refused before it was queued).
  // A run that failed is the engine's (BACKEND) unless said otherwise.
  void record_failure(std::uint64_t total_ns, failure_reason reason = failure_reason::backend);

  [[nodiscard]] statistics_snapshot snapshot() const;

 private:
  void touch_last_inference();
  mutable std::mutex mutex_;
  statistics_snapshot stats_;
};

}  // namespace ferry::serve
