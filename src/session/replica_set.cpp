#include "ferry/session/replica_set.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/scoped_device.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_set.hpp"
#include "ferry/memory/data_location.hpp"
#include "ferry/session/placement.hpp"

namespace ferry {

namespace {
// One GPU's engine and the session over it; the session is declared after the engine so it is
// destroyed first.
struct gpu_replica {
  int device = 0;
  std::unique_ptr<engine> eng;
  std::unique_ptr<session> s;
  std::uint64_t acquired = 0;
};

std::string describe_io(const std::vector<tensor_spec>& io) {
  std::string out;
  for (const auto& t : io) {
    out += (out.empty() ? "" : ", ") + t.name + " " + std::string(to_string(t.type)) + "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) out += (i ? "x" : "") + std::to_string(t.shape[i]);
    out += "]";
  }
  return out;
}

bool same_io(const std::vector<tensor_spec>& a, const std::vector<tensor_spec>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const tensor_spec& x, const tensor_spec& y) {
    return x.name == y.name && x.type == y.type && x.shape == y.shape && x.role == y.role;
  });
}
}  // namespace

struct replica_set::state {
  std::vector<int> devices;
  std::vector<tensor_spec> io;
  std::vector<gpu_replica> replicas;
  placement_policy policy;
  std::vector<peer_link> peers;
  // Guards the placement decision and the counters; released slots notify `freed` so a request
  // waiting for "any replica" wakes whichever GPU frees first.
  std::mutex mutex;
  std::condition_variable freed;
};

replica_set::replica_set(const std::vector<device_caps>& devices, const engine_factory& make_engine,
                         std::span<const shape_binding> shapes, const session_options& options)
    : state_(std::make_unique<state>()) {
  if (devices.empty()) throw invalid_argument("a replica set needs at least one GPU");
  for (const auto& caps : devices) {
    if (std::find(state_->devices.begin(), state_->devices.end(), caps.ordinal) != state_->devices.end())
      throw invalid_argument("a replica set got GPU " + std::to_string(caps.ordinal) + " twice");
    state_->devices.push_back(caps.ordinal);
  }
  if (state_->devices.size() >= 2) state_->peers = enable_peer_access(state_->devices);
  state_->replicas.reserve(devices.size());
  for (const auto& caps : devices) {
    gpu_replica r;
    r.device = caps.ordinal;
    {
      // The factory (and resolve) may touch the device: weights, model loading, probing.
      core::scoped_device on_device(caps.ordinal);
      r.eng = make_engine(caps.ordinal);
    }
    if (!r.eng) throw invalid_argument("the engine factory returned no engine for GPU " + std::to_string(caps.ordinal));
    auto io = r.eng->resolve(shapes);
    if (state_->io.empty()) {
      state_->io = io;
    } else if (!same_io(io, state_->io)) {
      throw invalid_argument("the engine replica on GPU " + std::to_string(caps.ordinal) +
                             " resolves to different I/O (" + describe_io(io) + ") than on GPU " +
                             std::to_string(state_->devices.front()) + " (" + describe_io(state_->io) + ")");
    }
    r.s = std::make_unique<session>(*r.eng, std::move(io), options, caps);
    state_->replicas.push_back(std::move(r));
  }
  for (auto& r : state_->replicas) {
    r.s->set_release_listener([st = state_.get()] {
      // Taking the lock orders the notification after a waiter's check of the loads.
      { std::lock_guard lock(st->mutex); }
      st->freed.notify_all();
    });
  }
}

replica_set::~replica_set() = default;

filling_slot replica_set::acquire() { return acquire_with(std::nullopt); }

filling_slot replica_set::acquire_on(int device) {
  (void)index_of(device);  // an unknown device is the caller's mistake, named now
  return acquire_with(device);
}

filling_slot replica_set::acquire_for(const void* data, std::size_t bytes) {
  const auto holder = gpu_holding(data, bytes);
  const bool in_set =
      holder && std::find(state_->devices.begin(), state_->devices.end(), *holder) != state_->devices.end();
  return acquire_with(in_set ? holder : std::nullopt);
}

filling_slot replica_set::acquire_with(std::optional<int> preferred_device) {
  std::unique_lock lock(state_->mutex);
  std::vector<replica_load> loads(state_->replicas.size());
  for (;;) {
    for (std::size_t i = 0; i < loads.size(); ++i) {
      const auto& r = state_->replicas[i];
      loads[i] = {r.device, r.s->slots_in_use(), r.s->slots()};
    }
    if (const auto pick = state_->policy.pick(loads, preferred_device)) {
      gpu_replica& r = state_->replicas[*pick];
      // Every acquire of a replica's session goes through this lock, so a free slot seen above
      // is still free; a zero wait only guards against someone using the session directly.
      if (auto slot = r.s->try_acquire(std::chrono::milliseconds(0))) {
        ++r.acquired;
        return std::move(*slot);
      }
    }
    state_->freed.wait(lock);
  }
}

void replica_set::warmup(int rounds, const input_data& data) {
  for (auto& r : state_->replicas) r.s->warmup(rounds, data);
}

std::size_t replica_set::size() const noexcept { return state_->replicas.size(); }
const std::vector<int>& replica_set::devices() const noexcept { return state_->devices; }
session& replica_set::replica(std::size_t index) { return *state_->replicas.at(index).s; }
engine& replica_set::engine_of(std::size_t index) { return *state_->replicas.at(index).eng; }
const std::vector<tensor_spec>& replica_set::io() const noexcept { return state_->io; }

std::size_t replica_set::index_of(int device) const {
  for (std::size_t i = 0; i < state_->replicas.size(); ++i)
    if (state_->replicas[i].device == device) return i;
  throw invalid_argument("GPU " + std::to_string(device) + " is not in this replica set (GPUs " +
                         format_device_set(state_->devices) + ")");
}

const std::vector<peer_link>& replica_set::peer_links() const noexcept { return state_->peers; }

std::vector<std::uint64_t> replica_set::acquisitions() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::uint64_t> out;
  for (const auto& r : state_->replicas) out.push_back(r.acquired);
  return out;
}

}  // namespace ferry
