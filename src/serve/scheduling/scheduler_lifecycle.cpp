#include "serve/scheduling/scheduler_lifecycle.hpp"

namespace ferry::serve {

std::optional<std::string> scheduler_lifecycle::refusal(const std::string& model) const {
  switch (state_) {
    case scheduler_state::ready:
      return std::nullopt;
    case scheduler_state::draining:
    case scheduler_state::unloaded:
      return "model '" + model + "' is being unloaded";
    case scheduler_state::shutting_down:
      return "model '" + model + "' is shutting down";
  }
  return "model '" + model + "' is shutting down";
}

bool scheduler_lifecycle::threads_run() const noexcept {
  return state_ == scheduler_state::ready || state_ == scheduler_state::draining;
}

bool scheduler_lifecycle::stop_began() const noexcept {
  return state_ == scheduler_state::draining || state_ == scheduler_state::unloaded;
}

bool scheduler_lifecycle::begin_drain() noexcept {
  if (state_ == scheduler_state::ready) state_ = scheduler_state::draining;
  return state_ == scheduler_state::draining;
}

bool scheduler_lifecycle::finish_drain() noexcept {
  if (state_ != scheduler_state::draining) return false;
  state_ = scheduler_state::unloaded;
  return true;
}

void scheduler_lifecycle::shut_down() noexcept {
  if (state_ != scheduler_state::unloaded) state_ = scheduler_state::shutting_down;
}

}  // namespace ferry::serve
