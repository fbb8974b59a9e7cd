// The CUDA graphs an engine context captures of its own run (engine_context::use_own_graphs), as
// bookkeeping over any graph type: one policy for every backend, checked by CPU tests with a fake
// engine. The backend does the capturing and replaying; this decides when.
// - A graph is keyed by what a replay fixes: the concrete shapes and every bound address. A
//   dynamic batch gets one graph per batch size used, caller memory one per set of addresses.
// - A key runs plainly for its first `warmup_runs` runs, is captured on the next and replayed from
//   then on: libraries choose kernels, make handles and load modules on their first runs, and a
//   capture must not see any of that.
// - At most `max_graphs` graphs are kept; beyond, the least recently used is dropped (its key
//   warms up again if it comes back).
// - A key whose capture failed is remembered with the reason and runs plainly from then on, never
//   captured again: a failed capture costs a run and may leave a framework's state to clean up.
// - Keys still warming up and keys that failed are bounded too (`max_remembered` each, the least
//   recently used forgotten first), so clients bringing ever new addresses cannot grow it without
//   end; a failed key forgotten that way may be tried once more, and fails the same way.
// Not thread-safe: one context is enqueued from one thread at a time, and so is its cache.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferry/core/error.hpp"

namespace ferry {

struct graph_key {
  std::vector<std::int64_t> dims;      // every tensor's concrete dims, one tensor after the other
  std::vector<const void*> addresses;  // every tensor's bound address, in the context's order
  friend bool operator==(const graph_key&, const graph_key&) = default;
};

struct graph_key_hash {
  [[nodiscard]] std::size_t operator()(const graph_key& key) const noexcept {
    std::size_t h = key.dims.size() * 31 + key.addresses.size();
    const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (const std::int64_t d : key.dims) mix(std::hash<std::int64_t>{}(d));
    for (const void* a : key.addresses) mix(std::hash<const void*>{}(a));
    return h;
  }
};

// What the backend does for one run of a key.
enum class graph_step {
  run_plain,  // warming up, or its capture failed
  capture,    // warm: capture it now, then report captured() or capture_failed()
  replay,     // replay the key's graph
};

// What the cache saw, for reports and tests.
struct graph_cache_counts {
  std::uint64_t plain_runs = 0;
  std::uint64_t captures = 0;  // graphs kept
  std::uint64_t failures = 0;  // captures that failed
  std::uint64_t replays = 0;
  std::uint64_t evictions = 0;  // graphs dropped for the bound
};

inline constexpr int default_graph_warmup_runs = 2;
inline constexpr std::size_t default_graph_keys_remembered = 64;

template <class Graph>
class graph_cache {
 public:
  struct plan {
    graph_step step = graph_step::run_plain;
    Graph* graph = nullptr;  // the graph to replay (graph_step::replay only)
  };

  // max_graphs >= 1, warmup_runs >= 0, max_remembered >= 1; invalid_argument otherwise.
  explicit graph_cache(std::size_t max_graphs, int warmup_runs = default_graph_warmup_runs,
                       std::size_t max_remembered = default_graph_keys_remembered)
      : max_graphs_(max_graphs), warmup_runs_(warmup_runs), max_remembered_(max_remembered) {
    if (max_graphs < 1 || warmup_runs < 0 || max_remembered < 1)
      throw invalid_argument("graph_cache: needs max_graphs >= 1, warmup_runs >= 0, max_remembered >= 1");
  }

  // Counts one run of `key` and says how to do it; the key becomes the most recently used. After
  // graph_step::capture the caller reports captured() or capture_failed() before its next call
  // (without either, the key is captured again on its next run).
  [[nodiscard]] plan next(const graph_key& key) {
    entry& e = touch(key);
    switch (e.state) {
      case key_state::failed:
        ++counts_.plain_runs;
        return {};
      case key_state::captured:
        ++counts_.replays;
        return {graph_step::replay, &*e.graph};
      case key_state::warming:
        break;
    }
    if (e.runs < warmup_runs_) {
      ++e.runs;
      ++counts_.plain_runs;
      return {};
    }
    return {graph_step::capture, nullptr};
  }

  // The graph captured for `key`: kept as the most recently used; beyond max_graphs the least
  // recently used other graph is dropped (destroyed here).
  void captured(const graph_key& key, Graph graph) {
    entry& e = touch(key);
    set_state(e, key_state::captured);
    e.graph.emplace(std::move(graph));
    ++counts_.captures;
    if (held_[index(key_state::captured)] > max_graphs_) {
      forget_oldest(key_state::captured, &e);
      ++counts_.evictions;
    }
  }

  // The capture of `key` failed for `reason`: it runs plainly from then on.
  void capture_failed(const graph_key& key, std::string reason) {
    entry& e = touch(key);
    set_state(e, key_state::failed);
    e.graph.reset();
    ++counts_.failures;
    if (!first_failure_) first_failure_ = reason;
    e.failure = std::move(reason);
    if (held_[index(key_state::failed)] > max_remembered_) forget_oldest(key_state::failed, &e);
  }

  // Why `key` runs without a graph for good, or nullopt (it has one, warms up, or is unknown).
  [[nodiscard]] std::optional<std::string> refusal(const graph_key& key) const {
    const auto it = entries_.find(key);
    if (it == entries_.end() || it->second->state != key_state::failed) return std::nullopt;
    return it->second->failure;
  }
  // The reason of the first capture that failed, kept even after its key is forgotten.
  [[nodiscard]] const std::optional<std::string>& first_failure() const noexcept { return first_failure_; }
  [[nodiscard]] std::size_t graphs() const noexcept { return held_[index(key_state::captured)]; }
  [[nodiscard]] const graph_cache_counts& counts() const noexcept { return counts_; }
  [[nodiscard]] std::size_t max_graphs() const noexcept { return max_graphs_; }

  // Drops every graph and forgets every key (the counts and the first failure stay).
  void clear() {
    entries_.clear();
    order_.clear();
    held_ = {};
  }

 private:
  enum class key_state { warming, captured, failed };
  struct entry {
    graph_key key;
    key_state state = key_state::warming;
    int runs = 0;
    std::optional<Graph> graph;
    std::string failure;
  };
  using position = typename std::list<entry>::iterator;

  static constexpr std::size_t index(key_state s) noexcept { return static_cast<std::size_t>(s); }

  // The entry of `key`, made (warming) where there is none, moved to the front of the order.
  entry& touch(const graph_key& key) {
    if (const auto it = entries_.find(key); it != entries_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return *it->second;
    }
    order_.push_front(entry{key, key_state::warming, 0, std::nullopt, {}});
    entries_.emplace(key, order_.begin());
    ++held_[index(key_state::warming)];
    if (held_[index(key_state::warming)] > max_remembered_) forget_oldest(key_state::warming, &order_.front());
    return order_.front();
  }

  void set_state(entry& e, key_state s) {
    --held_[index(e.state)];
    e.state = s;
    ++held_[index(s)];
  }

  // Forgets the least recently used entry in state `s` other than `keep`.
  void forget_oldest(key_state s, const entry* keep) {
    for (auto it = order_.end(); it != order_.begin();) {
      --it;
      if (it->state != s || &*it == keep) continue;
      --held_[index(s)];
      entries_.erase(it->key);
      order_.erase(it);  // destroys its graph, if any
      return;
    }
  }

  std::size_t max_graphs_;
  int warmup_runs_;
  std::size_t max_remembered_;
  std::list<entry> order_;  // most recently used first
  std::unordered_map<graph_key, position, graph_key_hash> entries_;
  std::array<std::size_t, 3> held_{};  // entries per state
  graph_cache_counts counts_;
  std::optional<std::string> first_failure_;
};

}  // namespace ferry
