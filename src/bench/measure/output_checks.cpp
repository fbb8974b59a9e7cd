#include "bench/measure/output_checks.hpp"

#include <cstring>
#include <latch>

#include "bench/measure/input_fill.hpp"
#include "bench/measure/output_check.hpp"

namespace ferry::bench {

output_checks::output_checks(std::map<int, session*> references, std::size_t request_bytes, std::size_t check_every)
    : references_(std::move(references)),
      request_bytes_(std::max<std::size_t>(request_bytes, 1)),
      check_every_(check_every) {
  for (const auto& [device, reference] : references_) (void)reference_mutex_[device];
}

output_checks::~output_checks() {
  if (checker_.joinable()) finish();
}

void output_checks::start(bool warm, input_writes writes, const input_data& data) {
  std::latch warmed(1);
  checker_ = std::thread([this, warm, writes, &data, &warmed] {
    if (warm) {
      // A warm-up that fails leaves the checks to say so: each one reruns the reference.
      try {
        for (const auto& [device, reference] : references_) {
          std::lock_guard lock(reference_mutex_.at(device));
          auto filling = reference->acquire();
          for (std::size_t i = 0; i < filling.input_count(); ++i)
            fill_fresh(filling.input(i), filling.input_spec(i), ~std::uint64_t{0} - 7, writes, data);
          filling.upload_resident_inputs();
          (void)std::move(filling).submit().wait();
        }
      } catch (const std::exception&) {
      }
    }
    warmed.count_down();
    // Sleeps until finish(): waking it during the timed requests put its wake-up on the CPU just
    // as a request ran (a few µs on a 15 µs request).
    for (;;) {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return done_; });
      if (queue_.empty()) return;
      pending next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      check(next);
    }
  });
  warmed.wait();
}

bool output_checks::reserve(std::optional<std::uint64_t> seq) {
  const bool due = check_every_ > 0 && seq && (*seq == 1 || *seq == 2 || (*seq > 0 && *seq % check_every_ == 0));
  if (!due) return false;
  std::size_t held = held_.load();
  do {
    if (held + request_bytes_ > budget_bytes && held > 0) return false;
  } while (!held_.compare_exchange_weak(held, held + request_bytes_));
  return true;
}

void output_checks::keep(int device, byte_copies inputs, byte_copies outputs, check_tally& tally) {
  std::lock_guard lock(mutex_);
  queue_.push_back({device, std::move(inputs), std::move(outputs), &tally});
}

void output_checks::finish() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  ready_.notify_one();
  if (checker_.joinable()) checker_.join();
}

// On the checker thread, where an exception would end the process: a reference run that fails
// (out of memory, a CUDA error) is a check that could not confirm the output, and says why.
void output_checks::check(const pending& p) {
  try {
    check_against_reference(p);
  } catch (const std::exception& e) {
    std::lock_guard tally_lock(tally_mutex_);
    p.tally->checked = true;
    if (p.tally->all_match) {
      p.tally->all_match = false;
      p.tally->mismatch = std::string("the reference run of a check failed: ") + e.what();
    }
  }
}

void output_checks::check_against_reference(const pending& p) {
  session& reference = *references_.at(p.device);
  std::lock_guard lock(reference_mutex_.at(p.device));
  auto filling = reference.acquire();
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    std::memcpy(filling.input(i).data(), p.inputs[i].data(), p.inputs[i].size());
  filling.upload_resident_inputs();
  auto done = std::move(filling).submit().wait();
  done.download_resident_outputs();
  std::vector<check_outcome> outcomes;
  for (std::size_t i = 0; i < p.outputs.size(); ++i)
    outcomes.push_back(compare_output(p.outputs[i], done.output(i), done.output_spec(i)));
  std::lock_guard tally_lock(tally_mutex_);
  p.tally->checked = true;
  for (const auto& outcome : outcomes) {
    p.tally->compared += outcome.compared;
    if (!outcome.matches && p.tally->all_match) {
      p.tally->all_match = false;
      p.tally->mismatch = outcome.first_mismatch;
    }
  }
}

}  // namespace ferry::bench
