// A first program with ferry: the built-in `touch` workload (y = 2x + 1 on 4 MiB of floats) run
// through a session whose transfer strategy ferry chooses for this GPU, and its answer checked.
#include <cstdio>
#include <cstring>
#include <vector>

#include <ferry/core/error.hpp>
#include <ferry/device/device_caps.hpp>
#include <ferry/engines/builtin.hpp>
#include <ferry/session/choose.hpp>
#include <ferry/session/session.hpp>

int main() try {
  const ferry::device_caps gpu = ferry::query_device(0);  // throws no_device, saying why, without one
  const auto engine = ferry::make_builtin_engine("touch", {.input_bytes = std::size_t{4} << 20});
  const auto io = engine->resolve({});  // touch has no dynamic dims: no shapes to give
  const ferry::choice pick = ferry::choose(ferry::io_traffic_of(*engine, io), gpu, nullptr, ferry::objective::latency);
  ferry::session session(*engine, io, {.strategy = pick.strategy, .inflight = 2}, gpu);

  std::vector<float> x(io[0].elements()), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000);
  auto request = session.acquire();  // a slot: its host view is ours until submit()
  std::memcpy(request.input(0).data(), x.data(), request.input(0).size());
  request.upload_resident_inputs();  // only the `device` strategy needs it; a no-op otherwise
  auto done = std::move(request).submit().wait();
  done.download_resident_outputs();
  std::memcpy(y.data(), done.output(0).data(), done.output(0).size());

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) wrong += y[i] != 2.0F * x[i] + 1.0F;
  std::printf("touch on %s through '%s' (%s): %zu of %zu values wrong\n", gpu.name.c_str(),
              std::string(ferry::to_string(pick.strategy)).c_str(), ferry::describe(pick).c_str(), wrong, x.size());
  return wrong == 0 ? 0 : 1;
} catch (const ferry::no_device& e) {
  std::fprintf(stderr, "first_request: %s\n", e.what());
  return 3;
} catch (const std::exception& e) {
  std::fprintf(stderr, "first_request: %s\n", e.what());
  return 1;
}
