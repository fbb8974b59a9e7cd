// What a request, an answer, a config and a control call may take, bounded before they take it:
// answers once were made whatever their size (300 JSON answers of 4.8 MB inputs reached 4.5 GB);
// a config asked for 4,119 threads or 32 GiB of weights and got them; an unload of a busy model
// held the threads every other model's requests needed for 26 s; gRPC messages were copied whole
// while parsed (twice their size at once).
#include <gtest/gtest.h>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "ferry/core/error.hpp"
#include "kserve_v2.pb.h"
#include "serve/admission/answer_size.hpp"
#include "serve/admission/request_intake.hpp"
#include "serve/config/load_check.hpp"
#include "serve/control/model_control.hpp"
#include "serve/transport/grpc/grpc_message_stream.hpp"
#include "serve/vocabulary/model_signature.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"
#include "support/test_gate.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;
using ferry::dtype;
using ferry::dynamic_dim;
using ferry::tensor_role;
using ferry::tensor_spec;
using ferry::serve::testing::error_of;

// A batched model: input x f32 [batch, 1000], outputs y f32 [batch, 1000] and n i64 [batch, 10].
model_signature batched_model() {
  return make_signature({{"x", dtype::f32, {dynamic_dim, 1000}, tensor_role::input, std::nullopt},
                         {"y", dtype::f32, {dynamic_dim, 1000}, tensor_role::output, std::nullopt},
                         {"n", dtype::i64, {dynamic_dim, 10}, tensor_role::output, std::nullopt}},
                        16, "m");
}

// The message of a call that must throw invalid_argument (a model's load refused).
std::string invalid_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

infer_request request_of(std::int64_t rows, std::vector<requested_output> outputs = {}) {
  infer_request r;
  r.model = "m";
  r.inputs.push_back({"x", dtype::f32, {rows, 1000}, {}, std::nullopt});
  r.outputs = std::move(outputs);
  return r;
}

TEST(ServeAnswerSize, BoundsAJsonAnswerByItsElementsAndABinaryOneByItsBytes) {
  const auto sig = batched_model();
  const auto json = [](const std::string&) { return false; };
  const auto binary = [](const std::string&) { return true; };
  // 4 rows: y has 4000 f32 elements (16,000 bytes), n 40 i64 (320 bytes).
  const std::size_t raw = 16'000 + 320;
  const std::size_t binary_bound = answer_bytes_bound(sig, request_of(4), answer_protocol::http, 0, binary);
  EXPECT_GE(binary_bound, 2 * raw);         // the outputs, and the body they are copied into
  EXPECT_LT(binary_bound, 2 * raw + 4096);  // and a little JSON
  const std::size_t json_bound = answer_bytes_bound(sig, request_of(4), answer_protocol::http, 0, json);
  EXPECT_GE(json_bound, raw + 4000 * (16 + 24) + 40 * (16 + 21));
  EXPECT_LT(json_bound, raw + 4000 * (16 + 24) + 40 * (16 + 21) + 4096);
  // The request's own bytes go before the answer is encoded: only what the encoding needs beyond
  // them is added to the outputs.
  EXPECT_EQ(answer_bytes_bound(sig, request_of(4), answer_protocol::http, 1 << 30, binary), raw);
  // gRPC: the response message and its serialized bytes.
  EXPECT_EQ(answer_bytes_bound(sig, request_of(4), answer_protocol::grpc, 0),
            answer_bytes_bound(sig, request_of(4), answer_protocol::http, 0, binary));
}

TEST(ServeAnswerSize, CountsTheOutputsAskedForAtTheRequestsRows) {
  const auto sig = batched_model();
  const std::size_t one = answer_bytes_bound(sig, request_of(1, {{"y", std::nullopt}}), answer_protocol::grpc, 0);
  const std::size_t eight = answer_bytes_bound(sig, request_of(8, {{"y", std::nullopt}}), answer_protocol::grpc, 0);
  EXPECT_EQ(eight - one, 2 * 7 * 4000U);
  // Rows past max_batch (the check refuses them later) count as max_batch.
  EXPECT_EQ(answer_bytes_bound(sig, request_of(1'000'000), answer_protocol::grpc, 0),
            answer_bytes_bound(sig, request_of(16), answer_protocol::grpc, 0));
  // An output written to shared memory takes nothing in the answer.
  const std::size_t in_shm =
      answer_bytes_bound(sig, request_of(8, {{"y", shm_ref{"r", 0, 32000}}}), answer_protocol::grpc, 0);
  EXPECT_LT(in_shm, 4096U);
}

TEST(ServeAnswerSize, AnElementPrintsWithinItsBound) {
  EXPECT_EQ(std::string("-1.1754943508222875e-38,").size(), json_chars_per_element(dtype::f32));
  EXPECT_EQ(std::string("-9223372036854775808,").size(), json_chars_per_element(dtype::i64));
  EXPECT_EQ(std::string("false,").size(), json_chars_per_element(dtype::boolean));
}

TEST(ServeIntake, KeepsAPartOfTheBudgetAside) {
  request_intake intake(1000);
  intake.set_aside(250);
  EXPECT_EQ(intake.admissible_bytes(), 750U);
  auto a = intake.admit(700);
  ASSERT_TRUE(a.ticket.valid());
  const auto b = intake.admit(100);
  ASSERT_TRUE(b.refusal.has_value());
  EXPECT_EQ(*b.refusal, intake_refusal::over_budget);
  const auto c = intake.admit(800);
  ASSERT_TRUE(c.refusal.has_value());
  EXPECT_EQ(*c.refusal, intake_refusal::too_large);
  EXPECT_NE(c.message.find("less the 250 kept for gRPC messages arriving"), std::string::npos) << c.message;
  EXPECT_FALSE(a.ticket.grow(51));
  EXPECT_TRUE(a.ticket.grow(50));
  request_intake half(1000);
  half.set_aside(900);  // at most half
  EXPECT_EQ(half.set_aside_bytes(), 500U);
}

// One client network holds at most its share (a quarter of what requests are admitted into, by
// default); what it gives back is its own again, other networks and requests naming none are not
// held to it, and a request larger than the share is too large for that network.
TEST(ServeIntake, HoldsEachNetworkToItsShare) {
  request_intake intake(1000);
  EXPECT_EQ(intake.peer_share_bytes(), 250U);
  auto a = intake.admit(200, "10.0.0.0/24");
  ASSERT_TRUE(a.ticket.valid());
  EXPECT_FALSE(a.ticket.grow(51));
  EXPECT_EQ(a.ticket.no_room_message(51),
            "client network 10.0.0.0/24 holds 200 bytes of the in-flight budget, and may hold 250 at once; these 51 "
            "more do not fit: try again shortly");
  EXPECT_TRUE(a.ticket.grow(50));
  const auto b = intake.admit(1, "10.0.0.0/24");
  ASSERT_TRUE(b.refusal.has_value());
  EXPECT_EQ(*b.refusal, intake_refusal::over_budget);
  auto other = intake.admit(250, "10.0.1.0/24");
  EXPECT_TRUE(other.ticket.valid());
  auto none = intake.admit(500);  // gRPC names no network
  EXPECT_TRUE(none.ticket.valid());
  const auto big = intake.admit(1, "10.0.2.0/24", 251);
  ASSERT_TRUE(big.refusal.has_value());
  EXPECT_EQ(*big.refusal, intake_refusal::too_large);
  EXPECT_NE(big.message.find("exceeds what one client network (10.0.2.0/24) may hold"), std::string::npos);
  a.ticket.resize(100);  // resized down: room again
  EXPECT_EQ(intake.peer_bytes_in_use("10.0.0.0/24"), 100U);
  EXPECT_TRUE(intake.admit(150, "10.0.0.0/24").ticket.valid());
  a.ticket.release();
  EXPECT_EQ(intake.peer_bytes_in_use("10.0.0.0/24"), 0U);
  intake.set_peer_share(1000);
  EXPECT_EQ(intake.peer_share_bytes(), 1000U);
}

// A request leaves the count of those in flight once answered, though its answer's bytes stay
// held until released (written): a client that has its answer never finds the request counted.
TEST(ServeIntake, ARequestStopsCountingOnceAnswered) {
  request_intake intake(1000);
  int idle = 0;
  intake.on_idle([&idle] { ++idle; });
  auto a = intake.admit(100, "10.0.0.0/24");
  a.ticket.resize(300);
  a.ticket.answered();
  EXPECT_EQ(intake.requests_in_flight(), 0U);
  EXPECT_EQ(idle, 1);
  EXPECT_EQ(intake.bytes_in_use(), 300U);
  a.ticket.answered();  // once only
  a.ticket.release();
  EXPECT_EQ(intake.requests_in_flight(), 0U);
  EXPECT_EQ(intake.bytes_in_use(), 0U);
  EXPECT_EQ(idle, 1);
  // An admission waits on what it announces, not only what it takes now.
  auto held = intake.admit(500);
  EXPECT_TRUE(intake.admit(10, "", 500).ticket.valid());
  EXPECT_FALSE(intake.admit(10, "", 501).ticket.valid());
}

model_config config_of(int instances, int inflight) {
  model_config c;
  c.name = "m";
  c.instances_per_gpu = instances;
  c.inflight = inflight;
  return c;
}

TEST(ServeLoadCheck, BoundsAModelsThreadsAloneAndWithTheOthers) {
  const load_limits limits{.max_model_threads = 64, .max_total_threads = 100};
  EXPECT_EQ(model_threads(config_of(64, 64), 0), 4097U);
  EXPECT_EQ(model_threads(config_of(2, 4), 8), 65U);
  EXPECT_NO_THROW(check_model_threads(config_of(4, 4), 17, 83, limits));
  const std::string alone =
      invalid_of([&] { check_model_threads(config_of(64, 64), model_threads(config_of(64, 64), 0), 0, limits); });
  EXPECT_EQ(alone,
            "model 'm': its config asks for 4097 threads (instances_per_gpu 64 x inflight 64 workers per device, "
            "and one more), more than the 64 a model may have (--max-model-threads)");
  const std::string together = invalid_of([&] { check_model_threads(config_of(4, 4), 17, 84, limits); });
  EXPECT_EQ(together,
            "model 'm': its 17 threads and the 84 of the models loaded exceed the 100 the server runs for models "
            "(--max-total-model-threads)");
}

TEST(ServeLoadCheck, RefusesWeightsThatDoNotFitBeforeMakingThem) {
  model_config mlp;
  mlp.name = "big";
  mlp.engine = "mlp:64x16384";
  EXPECT_EQ(model_weight_bytes(mlp), std::size_t{32} << 30);
  mlp.engine = "touch";
  EXPECT_EQ(model_weight_bytes(mlp), 0U);
  const std::string message =
      invalid_of([&] { check_host_memory(mlp, std::size_t{32} << 30, std::size_t{16} << 30, "weights"); });
  EXPECT_EQ(message,
            "model 'big': its weights would take 34.4 GB of host memory, and the host has 17.2 GB available (a "
            "load may take nine tenths of it)");
  EXPECT_NO_THROW(check_host_memory(mlp, std::size_t{9} << 30, std::size_t{10} << 30, "weights"));
  EXPECT_GT(available_host_memory(), 0U);
  EXPECT_EQ(meminfo_available("MemTotal:       32768 kB\nMemFree:         1024 kB\nMemAvailable:    2048 kB\n"),
            2048U * 1024);
}

TEST(ServeModelControl, RunsCallsOneAtATimeAndAnswersEach) {
  model_control control(5s);
  std::atomic<int> running{0}, most{0};
  std::vector<std::future<std::exception_ptr>> outcomes;
  std::vector<std::shared_ptr<std::promise<std::exception_ptr>>> promises;
  for (int i = 0; i < 4; ++i) {
    auto p = std::make_shared<std::promise<std::exception_ptr>>();
    outcomes.push_back(p->get_future());
    control.submit(
        "call " + std::to_string(i),
        [&, i] {
          most = std::max(most.load(), ++running);
          std::this_thread::sleep_for(10ms);
          --running;
          if (i == 2) throw ferry::serve::request_error(error_status::bad_request, "third fails");
        },
        [p](std::exception_ptr e) { p->set_value(std::move(e)); });
  }
  for (int i = 0; i < 4; ++i) {
    const auto outcome = outcomes[static_cast<std::size_t>(i)].get();
    EXPECT_EQ(outcome != nullptr, i == 2) << i;
  }
  EXPECT_EQ(most.load(), 1);
}

// An unload waiting for its model's requests: its caller is answered at the timeout, saying it
// goes on; a call behind it is answered too, never started; the control thread is the only one
// held.
TEST(ServeModelControl, AnswersWaitingCallersAtTheTimeoutWhileTheCallGoesOn) {
  ferry::testing::gate unload_waits;
  model_control control(200ms, 1);
  std::promise<std::exception_ptr> first, second;
  std::atomic<bool> second_ran{false};
  const auto started = std::chrono::steady_clock::now();
  control.submit(
      "unload of model 'busy'", [&] { unload_waits.pass(); },
      [&](std::exception_ptr e) { first.set_value(std::move(e)); });
  unload_waits.wait_for_arrivals(1);
  control.submit(
      "load of model 'other'", [&] { second_ran = true; },
      [&](std::exception_ptr e) { second.set_value(std::move(e)); });
  // One call waits already, the most this one queues: another is refused at once.
  EXPECT_NE(error_of(
                [&] {
                  control.submit(
                      "third", [] {}, [](std::exception_ptr) {});
                },
                error_status::unavailable)
                .find("1 model control calls wait already"),
            std::string::npos);
  const std::string first_message =
      error_of([&] { std::rethrow_exception(first.get_future().get()); }, error_status::timed_out);
  EXPECT_EQ(first_message,
            "unload of model 'busy' did not finish within 200 ms; it goes on, and the repository index shows the "
            "model LOADING or UNLOADING until it ends");
  const std::string second_message =
      error_of([&] { std::rethrow_exception(second.get_future().get()); }, error_status::timed_out);
  EXPECT_EQ(second_message,
            "load of model 'other' was not started within 200 ms: unload of model 'busy' still runs; it is dropped, "
            "try again later");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  unload_waits.open();
  control.stop();
  EXPECT_FALSE(second_ran.load());
}

// A ModelInferRequest read through the stream that lets go of its slices, as the server parses
// one: the same message, and the model named at its start found without parsing it.
TEST(ServeGrpcMessageStream, ParsesAMessageSpreadOverSlices) {
  inference::ModelInferRequest sent;
  sent.set_model_name("touch");
  sent.add_raw_input_contents(std::string(100'000, 'x'));
  auto* input = sent.add_inputs();
  input->set_name("input");
  input->set_datatype("FP32");
  input->add_shape(25'000);
  const std::string bytes = sent.SerializeAsString();
  std::vector<grpc::Slice> slices;
  for (std::size_t at = 0; at < bytes.size(); at += 4096)
    slices.emplace_back(bytes.data() + at, std::min<std::size_t>(4096, bytes.size() - at));
  grpc::ByteBuffer message(slices.data(), slices.size());
  EXPECT_EQ(peek_model_name(message), "touch");
  consuming_message_stream stream(message);
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(message.Length(), 0U);  // the bytes are the stream's now
  inference::ModelInferRequest received;
  ASSERT_TRUE(received.ParseFromZeroCopyStream(&stream));
  EXPECT_EQ(received.SerializeAsString(), bytes);
  EXPECT_EQ(stream.ByteCount(), static_cast<std::int64_t>(bytes.size()));
  // A message that does not start with its model's name is not guessed at.
  inference::ModelInferRequest nameless;
  nameless.set_id("x");
  const std::string other = nameless.SerializeAsString();
  grpc::Slice one(other.data(), other.size());
  EXPECT_FALSE(peek_model_name(grpc::ByteBuffer(&one, 1)).has_value());
}

}  // namespace
