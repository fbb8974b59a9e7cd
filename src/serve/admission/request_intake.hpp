// What the server takes in, across HTTP and gRPC: a budget of bytes for the inference requests in
// flight, the count of those requests, and whether the server still takes new ones.
//
// A request is admitted before its body is read or parsed, and holds the bytes it takes until it
// ends; one that does not fit what is left of the budget is refused at once (HTTP 503 with
// Retry-After, gRPC RESOURCE_EXHAUSTED), never queued in memory. A gRPC call takes its message's
// size (gRPC has read it whole). An HTTP request takes its body's bytes as they arrive, a step
// ahead of them, not the length it announces: a client that announces a large body and sends it
// slowly holds only what it has sent. Then, once decoded, a request takes the most its answer
// can hold (answer_size.hpp), and from its answer on holds the size of that until it is written.
// So the memory the server spends on requests is bounded by the budget, whoever sends them and
// however large they say they are.
//
// Fair shares: a request may name its client network (peer_group.hpp; HTTP does). What one
// network's requests hold together is capped at its share (peer_shares.hpp; by default a quarter
// of what requests are admitted into), so one network, however many connections it opens, leaves
// three quarters to the others. A request larger than the share could never be served to it:
// refused as too large (HTTP 413), like one larger than the whole budget.
//
// gRPC reads a message whole before the server sees it, so the bytes of gRPC messages still
// arriving are held by gRPC itself: a part of the budget is set aside for them (set_aside, gRPC's
// resource quota: grpc_frontend.hpp), and requests are admitted into the rest. Together the two
// never exceed the budget.
//
// In flight: a request counts from its admission until its answer is handed over to be written
// (intake_ticket::answered); its bytes stay held until the answer is written. So a client that has
// read its answer never finds its request still counted.
//
// Shutdown: once draining, no new request is admitted (HTTP 503, gRPC UNAVAILABLE), and
// wait_until_idle() returns when every admitted one has ended. When the last request ends, the
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
#include <string_view>

#include "serve/admission/peer_shares.hpp"

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
  // Takes `more` bytes from the budget (and from its network's share), for a body as it arrives or
  // for an answer; false, taking nothing, when they do not fit.
  [[nodiscard]] bool grow(std::size_t more);
  // Why `more` bytes did not fit, naming the figures (after grow() said false).
  [[nodiscard]] std::string no_room_message(std::size_t more) const;
  // Holds `bytes` from now on, whether or not they fit: what the request has already taken (its
  // answer, once computed) is counted so that later requests see it, never refused.
  void resize(std::size_t bytes);
  // The request has its answer, handed over to be written: it no longer counts among the requests
  // in flight, and its bytes stay held until release().
  void answered();
  void release();

 private:
  friend class request_intake;
  intake_ticket(request_intake* intake, std::size_t bytes, std::string group)
      : intake_(intake), bytes_(bytes), group_(std::move(group)) {}

  request_intake* intake_ = nullptr;
  std::size_t bytes_ = 0;
  std::string group_;      // the client network it counts against; "" for none
  bool in_flight_ = true;  // counted among the requests in flight (until answered())
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
  // Admits a request taking `bytes` now (an HTTP body grows its ticket as it arrives), from client
  // network `group` ("": none, no share applies), if `announced` (what it says it will need, when
  // more) also fits what is free now: one that could not be served now is told so at once, but
  // holds only what it takes.
  [[nodiscard]] admission admit(std::size_t bytes, std::string group = {}, std::size_t announced = 0);

  // The most one request of `group` may ever hold: the admissible bytes, and its network's share.
  [[nodiscard]] std::size_t largest_request(std::string_view group = {}) const;
  // Why a request of `bytes` could never be served (bytes > largest_request(group)).
  [[nodiscard]] std::string too_large_message(std::size_t bytes, std::string_view group = {}) const;

  // Why `bytes` more for a request of `group` do not fit now, naming the figures.
  [[nodiscard]] std::string no_room_message(std::size_t bytes, std::string_view group = {}) const;

  // What one client network may hold at once; 0: a quarter of the admissible bytes (the default).
  void set_peer_share(std::size_t bytes);
  [[nodiscard]] std::size_t peer_share_bytes() const noexcept;
  [[nodiscard]] std::size_t peer_bytes_in_use(std::string_view group) const;

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
  // Under no lock of the caller's. take: false, taking nothing, when `bytes` do not fit.
  bool take(std::size_t bytes, std::string_view group);
  void adjust(std::size_t from, std::size_t to, std::string_view group);  // resize: may exceed the budget
  void give_back(std::size_t bytes, std::string_view group);
  void end_request();  // one request fewer in flight
  // Under mutex_: why `bytes` more do not fit for `group` now.
  [[nodiscard]] std::string no_room_locked(std::size_t bytes, std::string_view group) const;

  const std::size_t budget_;
  std::atomic<std::size_t> set_aside_{0};  // read by every admission, set once before them
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::atomic<std::size_t> peer_share_{0};  // set once before any admission; 0: a quarter
  std::size_t in_use_ = 0;
  peer_shares by_peer_;  // what each client network holds of in_use_
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
