// What the server takes in, across HTTP and gRPC: a budget of bytes for the inference requests in
// flight, the count of those requests, and whether the server still takes new ones.
//
// A request is admitted from what its headers announce (an HTTP Content-Length, the size of a
// gRPC message) before its body is read or parsed; one that does not fit what is left of the
// budget is refused at once (HTTP 503 with Retry-After, gRPC RESOURCE_EXHAUSTED), never queued in
// memory. Its ticket holds the bytes while its body and its inference live, then the size of its
// answer until that is written, and gives them back when it ends. So the memory the server spends
// on requests is bounded by the budget, whoever sends them and however large they say they are.
//
// gRPC reads a message whole before the server sees it, so the bytes of gRPC messages still
// arriving are held by gRPC itself: a part of the budget is set aside for them (set_aside, gRPC's
// resource quota: grpc_frontend.hpp), and requests are admitted into the rest. Together the two
// never exceed the budget.
//
// Shutdown: once draining, no new request is admitted (HTTP 503, gRPC UNAVAILABLE), and
// wait_until_idle() returns when every admitted one has ended. When the last ticket ends, the
// idle callback runs (the server gives memory back to the system then, see memory_release.hpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace ferry::serve {

class request_intake;

// One admitted request's share of the budget. Move-only; gives its bytes back when destroyed.
class intake_ticket {
 public:
  intake_ticket() = default;
  ~intake_ticket() { release(); }
  intake_ticket(intake_ticket&& other) noexcept;
  intake_ticket& operator=(intake_ticket&& other) noexcept;
  intake_ticket(const intake_ticket&) = delete;
  intake_ticket& operator=(const intake_ticket&) = delete;

  [[nodiscard]] bool valid() const noexcept { return intake_ != nullptr; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  // Takes `more` bytes from the budget, for a body whose size no header announced (HTTP chunked)
  // as it arrives; false, taking nothing, when they do not fit.
  [[nodiscard]] bool grow(std::size_t more);
  // Holds `bytes` from now on, whether or not they fit: what the request has already taken (its
  // answer, once computed) is counted so that later requests see it, never refused.
  void resize(std::size_t bytes);
  void release();

 private:
  friend class request_intake;
  intake_ticket(request_intake* intake, std::size_t bytes) : intake_(intake), bytes_(bytes) {}

  request_intake* intake_ = nullptr;
  std::size_t bytes_ = 0;
};

// Why a request was not admitted.
enum class intake_refusal {
  draining,     // the server is shutting down: HTTP 503, gRPC UNAVAILABLE
  over_budget,  // the budget cannot hold it now: HTTP 503 + Retry-After, gRPC RESOURCE_EXHAUSTED
  too_large,    // it alone is larger than the whole budget: HTTP 413, gRPC RESOURCE_EXHAUSTED
};

class request_intake {
 public:
  // `budget_bytes`: the bytes requests in flight may hold at once (at least 1).
  explicit request_intake(std::size_t budget_bytes);
  request_intake(const request_intake&) = delete;
  request_intake& operator=(const request_intake&) = delete;

  struct admission {
    intake_ticket ticket;                   // valid when admitted
    std::optional<intake_refusal> refusal;  // set when not
    std::string message;                    // why not, naming the figures
  };
  // Admits a request announcing `bytes` (0 when it announces none: a chunked body grows its
  // ticket as it arrives).
  [[nodiscard]] admission admit(std::size_t bytes);

  // Keeps `bytes` of the budget for what is held elsewhere (gRPC messages still arriving): from
  // now on requests are admitted into the rest. Set before any request is admitted; at most half
  // the budget is set aside.
  void set_aside(std::size_t bytes);

  // From now on nothing is admitted. Idempotent.
  void begin_draining();
  [[nodiscard]] bool draining() const;
  // Returns once no ticket is out.
  void wait_until_idle();

  // Called (under no lock of this class, on the thread ending the last ticket) each time the
  // requests in flight drop to none. Set before any request is admitted.
  void on_idle(std::function<void()> callback) { on_idle_ = std::move(callback); }

  [[nodiscard]] std::size_t budget_bytes() const noexcept { return budget_; }
  // What requests are admitted into: the budget less what is set aside. The largest request.
  [[nodiscard]] std::size_t admissible_bytes() const noexcept { return budget_ - set_aside_.load(); }
  [[nodiscard]] std::size_t set_aside_bytes() const noexcept { return set_aside_.load(); }
  [[nodiscard]] std::size_t bytes_in_use() const;
  [[nodiscard]] std::size_t requests_in_flight() const;

 private:
  friend class intake_ticket;
  bool take(std::size_t bytes);                   // under no lock; false when it does not fit
  void adjust(std::size_t from, std::size_t to);  // resize: may exceed the budget
  void end(std::size_t bytes);                    // a ticket released

  const std::size_t budget_;
  std::atomic<std::size_t> set_aside_{0};  // read by every admission, set once before them
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t in_use_ = 0;
  std::size_t requests_ = 0;
  bool draining_ = false;
  std::function<void()> on_idle_;
};

// The default budget: an eighth of the memory this process may use (the machine's physical
// memory, or the cgroup's limit when that is lower), at least 256 MiB. A request costs the server
// a few times what it announces while it runs (its body, the engine's input and output, the
// encoded answer: 4 to 5 times on the CPU reference at 128 MiB), so an eighth keeps the peak
// near half of the memory.
[[nodiscard]] std::size_t default_inflight_budget();

}  // namespace ferry::serve
