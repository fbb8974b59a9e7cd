// What a front end hands a model's scheduler, and what it gets back: a checked request with what
// it needs besides itself, and exactly one answer, through a callback or a pending_response.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "serve/execution/executor.hpp"
#include "serve/vocabulary/inference.hpp"

namespace ferry::serve {

// What a queued request needs besides itself: where its shared-memory outputs go.
struct submission {
  infer_request request;
  request_plan plan;
  std::vector<output_destination> output_destinations;  // see batch_item
  // Keeps the shared-memory regions the request reads or writes mapped until it is answered,
  // even when a client unregisters them meanwhile.
  std::vector<std::shared_ptr<const void>> pinned_regions;
  // The longest the request may wait for a worker; none: as long as it takes.
  std::optional<std::chrono::microseconds> timeout;
};

// A request's outcome: its response, or (failure set) the request_error of its failed run or of
// its timeout.
struct infer_result {
  infer_response response;
  std::exception_ptr failure;
};

// Receives a request's outcome. Called exactly once, on a worker or the scheduler's own threads:
// it must return quickly (hand work elsewhere) and must not throw.
using infer_callback = std::function<void(infer_result)>;

// A queued request's answer, for callers that wait for it (tests, tools).
class pending_response {
 public:
  // Waits for the response and returns it. Throws the request's request_error: that of its failed
  // run, or timed_out when it was still queued at its deadline (it is then withdrawn, never run).
  [[nodiscard]] infer_response get() { return answer_.get(); }

 private:
  friend class model_scheduler;
  explicit pending_response(std::shared_ptr<std::promise<infer_response>> promise)
      : promise_(std::move(promise)), answer_(promise_->get_future()) {}
  // Held here too, so the answer (an error's exception object among it) is released by the
  // caller's thread, never by the scheduler's after the caller has read it: a thread sanitizer
  // cannot see the exception's reference count, and would report that release as a race.
  std::shared_ptr<std::promise<infer_response>> promise_;
  std::future<infer_response> answer_;
};

}  // namespace ferry::serve
