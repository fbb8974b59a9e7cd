// A model scheduler's lifecycle as one state, with every transition in this file:
//
//   ready ──stop()──> draining ──(nothing queued or running)──> unloaded
//     │
//     └──~model_scheduler──> shutting_down
//
//   ready          requests are taken.
//   draining       stop() has begun: a new request is refused ("being unloaded"), every request
//                  admitted before is run (or times out) and answered as usual.
//   unloaded       stop() found nothing left: the workers and the deadline thread exit, and stop()
//                  joins them and releases the executor. New requests are still refused as
//                  "being unloaded".
//   shutting_down  the destructor, without stop(): the workers exit after their current batch,
//                  the deadline thread at once, and whatever is still queued is answered
//                  unavailable ("shutting down"). A scheduler already unloaded stays so.
//
// Thread safety: none of its own. The state is guarded by the scheduler's mutex, the one that
// guards the queue: submit() reads it and queues under one lock, so no request slips in once
// stop() has begun, and stop() moves to unloaded under the lock in which it found the queue
// empty and no batch running, so nothing is left behind when the threads go.
#pragma once

#include <optional>
#include <string>

namespace ferry::serve {

enum class scheduler_state { ready, draining, unloaded, shutting_down };

class scheduler_lifecycle {
 public:
  [[nodiscard]] scheduler_state state() const noexcept { return state_; }

  // Why a new request for `model` is refused now; none while ready.
  [[nodiscard]] std::optional<std::string> refusal(const std::string& model) const;
  // Whether the workers and the deadline thread go on (ready or draining).
  [[nodiscard]] bool threads_run() const noexcept;
  // Whether stop() has begun (draining or unloaded): whoever answers a request tells it, since it
  // waits for the last one.
  [[nodiscard]] bool stop_began() const noexcept;

  // stop() begins: ready -> draining. False when there is nothing to drain: stop() is over
  // (unloaded) or the scheduler is being destroyed.
  [[nodiscard]] bool begin_drain() noexcept;
  // stop() found nothing queued or running: draining -> unloaded. False when another stop() call
  // got there first; it joins the threads.
  [[nodiscard]] bool finish_drain() noexcept;
  // The destructor: ready or draining -> shutting_down; unloaded stays.
  void shut_down() noexcept;

 private:
  scheduler_state state_ = scheduler_state::ready;
};

}  // namespace ferry::serve
