// CUDA graphs on or off, and graph_mode::automatic: graphs kept only where they measure faster on
// this machine.
//
// A graph saves the host the launches of a request; it costs a capture, memory for its launch
// state (and, for an engine's own graphs, a private memory pool), and fixed addresses. Where the
// GPU, not the host, bounds the rate, it saves nothing. So after warm-up the session times rounds
// of requests (one on every slot, all in flight, as a loaded server runs them) without graphs and
// then with them, and keeps the graphs only when their median round is shorter by at least
// graphs_min_saving. The figures stay in the session's graph status, so the choice is never silent.
#pragma once

#include <span>
#include <string>

namespace ferry {

// Whether a session's requests run as CUDA graphs: never, always where the engine allows, or
// where they measure faster on this machine, as session::warmup() decides.
enum class graph_mode { off, on, automatic };

// Below this the two medians are within the rounds' noise: graphs are not worth their cost.
inline constexpr double graphs_min_saving = 0.02;
// Rounds timed each way: enough for a median that one slow round does not move.
inline constexpr int graph_trial_rounds = 15;

// One request's time each way: the median round's wall time over the requests in a round.
struct graph_measurement {
  double without_us = 0;
  double with_us = 0;
  int rounds = 0;  // timed each way
  int slots = 0;   // requests in flight in each round
};

// Throws invalid_argument when either side has no round or `slots` is below 1.
[[nodiscard]] graph_measurement summarise_graph_trial(std::span<const double> rounds_without_us,
                                                      std::span<const double> rounds_with_us, int slots);

// Whether the graphs are kept: with_us at most (1 - graphs_min_saving) of without_us.
[[nodiscard]] bool graphs_pay(const graph_measurement& m) noexcept;

// "measured 812 us per request with CUDA graphs, 1650 us without (median of 15 rounds of 4
// request(s) in flight): kept", or "...: not faster by 2%, not used".
[[nodiscard]] std::string describe(const graph_measurement& m);

}  // namespace ferry
