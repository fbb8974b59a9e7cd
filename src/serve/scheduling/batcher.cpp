#include "serve/scheduling/batcher.hpp"

#include <chrono>
#include <cstddef>
#include <span>

namespace ferry::serve {

batcher::formed batcher::form(request_queue& queue, const std::function<bool(const scheduled_request&)>& may_run,
                              worker_view workers) const {
  std::vector<queued_request> view;    // what the group may run, in arrival order
  std::vector<std::size_t> positions;  // where each entry of view is in the queue
  const request_queue::entries& waiting = queue.waiting();
  for (std::size_t i = 0; i < waiting.size(); ++i)
    if (may_run(*waiting[i])) {
      view.push_back({waiting[i]->work.plan.rows, waiting[i]->arrived});
      positions.push_back(i);
    }
  const batch_decision d = decide_batch(view, rules_, std::chrono::steady_clock::now(), workers);
  if (d.take == 0) return {.batch = {}, .wait_until = d.wait_until};
  return {.batch = queue.take(std::span(positions).first(d.take)), .wait_until = std::nullopt};
}

}  // namespace ferry::serve
