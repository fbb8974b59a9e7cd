#include "serve/scheduling/batching_policy.hpp"

namespace ferry::serve {

batch_decision decide_batch(std::span<const queued_request> queue, const batching_rules& rules,
                            steady_time now) noexcept {
  if (queue.empty()) return {};
  if (rules.max_batch <= 0) return {.take = 1, .wait_until = std::nullopt};
  std::size_t take = 0;
  std::int64_t rows = 0;
  // The first request always goes (validation capped its rows at max_batch).
  while (take < queue.size() && (take == 0 || rows + queue[take].rows <= rules.max_batch)) {
    rows += queue[take].rows;
    ++take;
  }
  const bool full = rows >= rules.max_batch;
  const bool next_does_not_fit = take < queue.size();
  const steady_time deadline = queue.front().arrived + rules.delay;
  if (full || next_does_not_fit || now >= deadline) return {.take = take, .wait_until = std::nullopt};
  return {.take = 0, .wait_until = deadline};
}

}  // namespace ferry::serve
