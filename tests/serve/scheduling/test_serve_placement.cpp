// Which GPU runs a request in ferry serve, without a GPU: a fake executor reports two GPUs, and
// requests "in CUDA regions" carry a cuda_device while their bytes stay host memory the fake
// reads. A request pinned to a GPU runs only there (mixed with free ones, under concurrency,
// every request answered once with its own rows); one needing a GPU the model lacks, or two GPUs,
// is refused at submit; free requests are spread over both GPUs. Also the pure rules behind it
// (required_gpu, and the library's placement rule as the scheduler uses it) and `ferry serve --devices`
// (serve_devices).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/session/placement.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/execution/execution_platform.hpp"
#include "serve/scheduling/model_scheduler.hpp"
#include "serve/scheduling/request_placement.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::tensor_role;
using ferry::tensor_spec;
using ferry::serve::testing::error_of;

constexpr float slow_marker = -2.0F;

// y = x + 1000 per row, on workers spread over `devices` (`per_device` consecutive workers
// each; none: a host executor). Records which GPU ran each request id, and counts CUDA inputs it
// was handed on another GPU (which a real GPU executor refuses). A row holding slow_marker
// sleeps 300 ms; every run takes at least `run_time`.
class fake_gpu_executor final : public executor {
 public:
  fake_gpu_executor(std::vector<int> devices, int per_device, std::chrono::microseconds run_time = 0us)
      : devices_(std::move(devices)), per_device_(per_device), run_time_(run_time) {}
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] int workers() const override {
    return per_device_ * static_cast<int>(devices_.empty() ? 1 : devices_.size());
  }
  [[nodiscard]] std::optional<int> worker_device(int worker) const override {
    if (devices_.empty()) return std::nullopt;
    return devices_.at(static_cast<std::size_t>(worker / per_device_));
  }
  [[nodiscard]] std::string platform() const override { return "fake GPUs"; }

  batch_timing execute(std::span<batch_item> batch, int worker) override {
    const std::optional<int> device = worker_device(worker);
    std::vector<float> x;
    for (const auto& item : batch) {
      const input_tensor& in = item.request->inputs.at(0);
      if (in.cuda_device && in.cuda_device != device) ++misplaced;
      const auto* v = reinterpret_cast<const float*>(in.data.data());  // host bytes, even "in a CUDA region"
      x.insert(x.end(), v, v + in.data.size() / sizeof(float));
      const std::lock_guard lock(mutex_);
      ran_on_[item.request->id].push_back(device.value_or(-1));
    }
    for (float v : x)
      if (v == slow_marker) std::this_thread::sleep_for(300ms);
    std::this_thread::sleep_for(run_time_);
    for (float& v : x) v += 1000;
    const auto rows = static_cast<std::int64_t>(x.size());
    const std::vector<tensor_spec> out{{"y", dtype::f32, {rows}, tensor_role::output, std::nullopt}};
    const std::vector<std::span<const std::byte>> sources{std::as_bytes(std::span(x))};
    scatter_outputs(batch, signature(), out, sources);
    return {};
  }
  [[nodiscard]] model_signature signature() const { return make_signature(io_, 8, "m"); }
  // The GPUs request `id` ran on, one entry per run (-1: the host).
  [[nodiscard]] std::vector<int> ran_on(const std::string& id) const {
    const std::lock_guard lock(mutex_);
    const auto found = ran_on_.find(id);
    return found == ran_on_.end() ? std::vector<int>{} : found->second;
  }
  // Requests each GPU ran.
  [[nodiscard]] std::map<int, int> requests_per_gpu() const {
    const std::lock_guard lock(mutex_);
    std::map<int, int> counts;
    for (const auto& [id, gpus] : ran_on_)
      for (int g : gpus) ++counts[g];
    return counts;
  }

  std::atomic<int> misplaced{0};

 private:
  std::vector<int> devices_;
  int per_device_;
  std::chrono::microseconds run_time_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<int>> ran_on_;
  std::vector<tensor_spec> io_{{"x", dtype::f32, {dynamic_dim}, tensor_role::input, std::nullopt},
                               {"y", dtype::f32, {dynamic_dim}, tensor_role::output, std::nullopt}};
};

// Queues request `id` with input x; `gpu` set: x is "in a CUDA region on that GPU".
pending_response send(model_scheduler& s, const model_signature& sig, const std::string& id,
                      const std::vector<float>& x, std::optional<int> gpu = std::nullopt) {
  submission work;
  work.request.model = "m";
  work.request.id = id;
  input_tensor in{"x",          dtype::f32, {static_cast<std::int64_t>(x.size())}, std::as_bytes(std::span(x)),
                  std::nullopt, gpu};
  if (gpu) in.shared_memory = shm_ref{"region-gpu" + std::to_string(*gpu), 0, x.size() * sizeof(float)};
  work.request.inputs.push_back(std::move(in));
  work.plan = plan_request(sig, work.request);
  return s.submit(std::move(work));
}

std::vector<float> values(const infer_response& r) {
  std::vector<float> v(r.outputs.at(0).data.size() / sizeof(float));
  std::memcpy(v.data(), r.outputs[0].data.data(), v.size() * sizeof(float));
  return v;
}

std::vector<float> plus_1000(std::vector<float> x) {
  for (float& v : x) v += 1000;
  return x;
}

TEST(ServePlacement, PinnedRequestsRunOnlyOnTheirGpuAndEveryRequestIsAnsweredOnceWithItsOwnRows) {
  // Two workers per GPU: 0-1 on GPU 0, 2-3 on GPU 1; batches of up to 8 rows form under load.
  auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 2, 500us);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {8, 1ms}, stats);

  // Each client queues all its requests at once, then collects them: per three requests one
  // needs GPU 1, one may run anywhere, one needs GPU 0.
  constexpr int clients = 8, per_client = 30;
  auto gpu_of = [](int i) -> std::optional<int> {
    if (i % 3 == 0) return 1;
    if (i % 3 == 1) return std::nullopt;
    return 0;
  };
  auto id_of = [](int c, int i) { return std::to_string(c) + "/" + std::to_string(i); };
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      std::vector<std::vector<float>> inputs;
      std::vector<pending_response> answers;
      for (int i = 0; i < per_client; ++i)
        inputs.emplace_back(static_cast<std::size_t>(1 + i % 2), static_cast<float>(c * 100 + i));
      for (int i = 0; i < per_client; ++i) answers.push_back(send(scheduler, sig, id_of(c, i), inputs[i], gpu_of(i)));
      for (int i = 0; i < per_client; ++i) {
        const infer_response r = answers[i].get();
        if (r.id != id_of(c, i) || values(r) != plus_1000(inputs[i])) ++wrong;
      }
    });
  for (auto& t : threads) t.join();

  EXPECT_EQ(wrong.load(), 0) << "requests got another request's rows";
  EXPECT_EQ(exec->misplaced.load(), 0) << "a worker was handed a CUDA input of another GPU";
  for (int c = 0; c < clients; ++c)
    for (int i = 0; i < per_client; ++i) {
      const std::vector<int> ran = exec->ran_on(id_of(c, i));
      ASSERT_EQ(ran.size(), 1U) << id_of(c, i) << " ran " << ran.size() << " times";
      if (gpu_of(i)) EXPECT_EQ(ran.front(), *gpu_of(i)) << id_of(c, i);
    }
  EXPECT_EQ(stats.snapshot().success.count, static_cast<std::uint64_t>(clients * per_client));
  EXPECT_EQ(scheduler.pending(), 0U);
}

TEST(ServePlacement, APinnedRequestWaitsForItsGpuWithoutHoldingUpTheOthers) {
  // One worker per GPU. GPU 1 is busy with a slow request; a second request for GPU 1 must wait
  // for it (GPU 0's idle worker may not take it), while a free request runs on GPU 0 at once.
  auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 1);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {8, 0us}, stats);
  const std::vector<float> slow{slow_marker}, pinned{7}, anywhere{8};
  auto slow_answer = send(scheduler, sig, "slow", slow, 1);
  std::this_thread::sleep_for(30ms);  // the slow one is running on GPU 1
  const auto start = std::chrono::steady_clock::now();
  auto pinned_answer = send(scheduler, sig, "pinned", pinned, 1);
  EXPECT_EQ(values(send(scheduler, sig, "anywhere", anywhere).get()), plus_1000(anywhere));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 200ms) << "the free request waited behind GPU 1";
  EXPECT_EQ(exec->ran_on("anywhere"), (std::vector<int>{0}));
  EXPECT_EQ(values(pinned_answer.get()), plus_1000(pinned));
  EXPECT_EQ(exec->ran_on("pinned"), (std::vector<int>{1}));
  EXPECT_EQ(values(slow_answer.get()), plus_1000(slow));
}

TEST(ServePlacement, ARequestOnAGpuTheModelLacksIsRefusedNamingTheRegionsGpuAndTheModels) {
  const std::vector<float> x{1};
  {
    auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 1);
    model_statistics stats;
    model_scheduler scheduler("m", "1", exec, exec->signature(), {8, 0us}, stats);
    const std::string message = error_of([&] { (void)send(scheduler, exec->signature(), "r", x, 2); });
    EXPECT_NE(message.find("input 'x'"), std::string::npos) << message;
    EXPECT_NE(message.find("region 'region-gpu2') on GPU 2"), std::string::npos) << message;
    EXPECT_NE(message.find("model 'm' runs on GPUs 0,1 only"), std::string::npos) << message;
    EXPECT_EQ(scheduler.pending(), 0U);
    EXPECT_TRUE(exec->ran_on("r").empty());
  }
  {
    auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{1}, 2);
    model_statistics stats;
    model_scheduler scheduler("m", "1", exec, exec->signature(), {8, 0us}, stats);
    const std::string message = error_of([&] { (void)send(scheduler, exec->signature(), "r", x, 0); });
    EXPECT_NE(message.find("on GPU 0, but model 'm' runs on GPU 1 only"), std::string::npos) << message;
    EXPECT_EQ(values(send(scheduler, exec->signature(), "ok", x, 1).get()), plus_1000(x));  // its own GPU: runs
  }
  {
    auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{}, 2);  // host executor: no GPU
    model_statistics stats;
    model_scheduler scheduler("m", "1", exec, exec->signature(), {8, 0us}, stats);
    const std::string message = error_of([&] { (void)send(scheduler, exec->signature(), "r", x, 0); });
    EXPECT_NE(message.find("model 'm' runs on the CPU"), std::string::npos) << message;
  }
}

TEST(ServePlacement, ARequestWithCudaInputsOnTwoGpusIsRefusedNamingBoth) {
  auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 1);
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, exec->signature(), {8, 0us}, stats);
  std::vector<float> a{1}, b{2}, c{3};
  submission work;
  work.request.model = "m";
  work.request.inputs.push_back({"a", dtype::f32, {1}, std::as_bytes(std::span(a)), shm_ref{"ra", 0, 4}, 0});
  work.request.inputs.push_back({"c", dtype::f32, {1}, std::as_bytes(std::span(c)), std::nullopt, std::nullopt});
  work.request.inputs.push_back({"b", dtype::f32, {1}, std::as_bytes(std::span(b)), shm_ref{"rb", 0, 4}, 1});
  const std::string message = error_of([&] { (void)scheduler.submit(std::move(work)); });
  EXPECT_NE(message.find("on two GPUs"), std::string::npos) << message;
  EXPECT_NE(message.find("input 'a' (CUDA shared-memory region 'ra') on GPU 0"), std::string::npos) << message;
  EXPECT_NE(message.find("input 'b' (CUDA shared-memory region 'rb') on GPU 1"), std::string::npos) << message;
  EXPECT_EQ(scheduler.pending(), 0U);
}

TEST(ServePlacement, RequiredGpuIsTheOneHoldingTheCudaInputs) {
  std::vector<float> a{1};
  infer_request request;
  request.inputs.push_back({"a", dtype::f32, {1}, std::as_bytes(std::span(a)), std::nullopt, std::nullopt});
  const std::vector<int> gpus{0, 1};
  EXPECT_EQ(required_gpu(request, gpus, "m"), std::nullopt);  // no CUDA input: anywhere
  request.inputs.push_back({"b", dtype::f32, {1}, std::as_bytes(std::span(a)), shm_ref{"rb", 0, 4}, 1});
  request.inputs.push_back({"c", dtype::f32, {1}, std::as_bytes(std::span(a)), shm_ref{"rc", 0, 4}, 1});
  EXPECT_EQ(required_gpu(request, gpus, "m"), 1);
}

TEST(ServePlacement, UnplacedRequestsGoToTheIdleGpuWithFewestRunningBatchesTiesInTurn) {
  // The scheduler's worker groups as the library's placement rule sees them: slots = workers,
  // busy = workers running a batch. peek() asks without moving the turn; taken() moves it.
  using loads = std::vector<ferry::replica_load>;
  ferry::placement_policy policy;
  EXPECT_EQ(policy.peek(loads{{0, 2, 3}, {1, 0, 1}}), 1U);  // fewer running batches
  policy.taken(1, 2);
  EXPECT_EQ(policy.peek(loads{{0, 0, 1}, {1, 3, 4}}), 0U);  // fewer running beats the turn
  EXPECT_EQ(policy.peek(loads{{0, 1, 1}, {1, 3, 5}}), 1U);  // a group with no idle worker is skipped
  EXPECT_EQ(policy.peek(loads{{0, 1, 1}, {1, 1, 1}}), std::nullopt);
  ferry::placement_policy turns;
  for (std::size_t turn = 0; turn < 4; ++turn) {  // all equal: the turn decides, cyclically
    const auto g = turns.peek(loads{{0, 1, 2}, {1, 1, 2}, {2, 1, 2}});
    EXPECT_EQ(g, turn % 3) << turn;
    EXPECT_EQ(turns.peek(loads{{0, 1, 2}, {1, 1, 2}, {2, 1, 2}}), g) << "peek leaves the turn";
    turns.taken(*g, 3);
  }
}

TEST(ServePlacement, SequentialFreeRequestsAlternateOverTheGpus) {
  // One request at a time: when it arrives every worker is idle and nothing runs (a worker
  // counts as idle again before it answers), so the turn decides and each request runs on the
  // other GPU than the one before. (The first goes where a worker thread first came up.)
  auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 2);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats);
  int previous = -1;
  for (int i = 0; i < 20; ++i) {
    const std::vector<float> x{static_cast<float>(i)};
    EXPECT_EQ(values(send(scheduler, sig, std::to_string(i), x).get()), plus_1000(x));
    const std::vector<int> ran = exec->ran_on(std::to_string(i));
    ASSERT_EQ(ran.size(), 1U) << "request " << i;
    if (i > 0) EXPECT_EQ(ran.front(), 1 - previous) << "request " << i;
    previous = ran.front();
  }
}

TEST(ServePlacement, ConcurrentFreeRequestsRunOnBothGpus) {
  auto exec = std::make_shared<fake_gpu_executor>(std::vector<int>{0, 1}, 2, 1ms);
  const auto sig = exec->signature();
  model_statistics stats;
  model_scheduler scheduler("m", "1", exec, sig, {0, 0us}, stats);
  constexpr int clients = 4, per_client = 25;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      for (int i = 0; i < per_client; ++i) {
        const std::vector<float> x{static_cast<float>(c * 100 + i)};
        if (values(send(scheduler, sig, std::to_string(c * 100 + i), x).get()) != plus_1000(x)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  const auto counts = exec->requests_per_gpu();
  // 4 clients on 2 x 2 workers: balanced by the rule, each GPU runs about half.
  EXPECT_GE(counts.count(0) ? counts.at(0) : 0, clients * per_client / 4);
  EXPECT_GE(counts.count(1) ? counts.at(1) : 0, clients * per_client / 4);
}

TEST(ServeDevices, DefaultAllIsEveryGpuOrTheCpuWithoutOne) {
  EXPECT_EQ(serve_devices("all", 2), (std::vector<int>{0, 1}));
  EXPECT_TRUE(serve_devices("all", 0).empty());  // no GPU: the server runs on the CPU
  EXPECT_EQ(serve_devices("1", 2), (std::vector<int>{1}));
  EXPECT_EQ(serve_devices("1,0", 2), (std::vector<int>{1, 0}));
}

TEST(ServeDevices, BadListsAreRefusedAsBenchRefusesThem) {
  auto message = [](const char* text, int count) {
    try {
      (void)serve_devices(text, count);
    } catch (const ferry::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no invalid_argument");
  };
  EXPECT_NE(message("2", 2).find("GPU 2 does not exist (this machine has 2 GPUs: 0-1)"), std::string::npos);
  EXPECT_NE(message("0,0", 2).find("GPU 0 is listed twice"), std::string::npos);
  EXPECT_NE(message("gpu1", 2).find("'gpu1' is not a GPU ordinal"), std::string::npos);
  EXPECT_NE(message("0,", 2).find("empty item"), std::string::npos);
  EXPECT_NE(message("", 2).find("--devices is empty"), std::string::npos);
  // Naming GPUs on a machine without one is no_device (ferry exits 3), not a CPU fallback.
  EXPECT_THROW((void)serve_devices("0", 0), ferry::no_device);
}

}  // namespace
