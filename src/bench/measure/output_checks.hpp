// Output checks of a cell: copies of some requests' inputs and outputs are kept while the timed
// requests run, and compared with the device-resident reference once they are over, on a thread
// of its own. Private to src/bench.
//
// Checks run after the timed requests because a check's reference run moves the request's bytes
// over the same link again and its comparison reads them on the same CPU: a check running next
// to timed requests slowed them (touch 19 MB: a check every 64 requests kept the checker busy
// through ~8 of them and put pinned H2D at 86.5% of the link instead of 94%).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ferry/bench/run_options.hpp"
#include "ferry/session/session.hpp"

namespace ferry::bench {

// What the checks of one series (a strategy's requests, or its recipe's) found.
struct check_tally {
  bool checked = false;
  bool all_match = true;
  std::size_t compared = 0;
  std::string mismatch;  // the first one
};

using byte_copies = std::vector<std::vector<std::byte>>;

class output_checks {
 public:
  // `references`: the device-strategy session of each GPU. `request_bytes`: what one kept check
  // holds (inputs + outputs). Requests 1 and 2 and every `check_every`-th are checked; with
  // `check_every` 0, none are.
  output_checks(std::map<int, session*> references, std::size_t request_bytes, std::size_t check_every);
  ~output_checks();
  output_checks(const output_checks&) = delete;
  output_checks& operator=(const output_checks&) = delete;

  // Starts the checker thread. With `warm`, it first runs each reference once on its own thread
  // (libtorch makes per-thread handles, ~50 ms, that a check must not pay while holding the
  // engine) and only then returns, so the clients start after it and nothing runs between their
  // warm-up and their first timed request.
  void start(bool warm, input_writes writes, const input_data& data);
  // Whether request `seq` is due a check and the budget still holds its copies. Request 0 never
  // is: the first request after warm-up runs exactly like the steady state.
  [[nodiscard]] bool reserve(std::optional<std::uint64_t> seq);
  // Queues a check of `outputs` (produced on `device` from `inputs`) into `tally`.
  void keep(int device, byte_copies inputs, byte_copies outputs, check_tally& tally);
  // Runs the kept checks (the timed requests are over) and returns when all are done.
  void finish();

 private:
  struct pending {
    int device;
    byte_copies inputs;
    byte_copies outputs;
    check_tally* tally;
  };
  void check(const pending& p);
  void check_against_reference(const pending& p);

  // Kept copies wait for the end of the run; past the budget a due check is skipped. 2 GiB holds
  // 256 checks of mlp:48x2048 b1024 (4 MB in, 4 MB out) or 16 of touch 64 MB; requests 1 and 2
  // always fit.
  static constexpr std::size_t budget_bytes = std::size_t{2} << 30;

  std::map<int, session*> references_;
  std::map<int, std::mutex> reference_mutex_;
  std::size_t request_bytes_;
  std::size_t check_every_;
  std::atomic<std::size_t> held_{0};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<pending> queue_;
  std::mutex tally_mutex_;
  bool done_ = false;
  std::thread checker_;
};

}  // namespace ferry::bench
