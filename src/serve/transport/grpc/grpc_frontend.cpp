#include "serve/transport/grpc/grpc_frontend.hpp"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <new>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "kserve_v2.grpc.pb.h"
#include "serve/admission/answer_size.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/codec/grpc_infer_codec.hpp"
#include "serve/codec/grpc_infer_reader.hpp"
#include "serve/observability/allocation_failures.hpp"
#include "serve/observability/request_failure.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/transport/grpc/grpc_answer_bytes.hpp"
#include "serve/transport/grpc/grpc_message_stream.hpp"
#include "serve/transport/inline_work.hpp"
#include "serve/transport/work_pool.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "serve/vocabulary/shm_client.hpp"

namespace ferry::serve {
namespace {

using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;

// The protocol's status for the exception in flight (call inside a catch block); memory that
// could not be allocated at `stage` fails the call alone (RESOURCE_EXHAUSTED).
Status current_exception_status(allocation_stage stage = allocation_stage::decode) {
  const request_error e = current_request_error(stage);
  return {static_cast<StatusCode>(grpc_status_code(e.status())), e.what()};
}

// Runs an RPC body, turning every exception into the protocol's status.
template <typename F>
Status guarded(F body, allocation_stage stage = allocation_stage::decode) {
  try {
    body();
    return Status::OK;
  } catch (...) {
    return current_exception_status(stage);
  }
}

// A client that set a gRPC deadline has given up on its request by then: the request's timeout
// is shortened to it, so it leaves the queue instead of running for no one.
void wait_no_longer_than_the_client(infer_request& request, std::chrono::system_clock::time_point deadline) {
  if (deadline == std::chrono::system_clock::time_point::max()) return;  // none set
  const auto left =
      std::max(std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::system_clock::now()),
               std::chrono::microseconds(1));
  if (!request.timeout || request.timeout->count() == 0 || left < *request.timeout) request.timeout = left;
}

// Whether any input or output of the request names a shared-memory region.
bool uses_shared_memory(const inference::ModelInferRequest& message) {
  const auto names_region = [](const auto& tensor) { return tensor.parameters().contains("shared_memory_region"); };
  return std::any_of(message.inputs().begin(), message.inputs().end(), names_region) ||
         std::any_of(message.outputs().begin(), message.outputs().end(), names_region);
}

// Triton's TYPE_ enum for a tensor's dtype.
inference::DataType config_data_type(dtype t) {
  switch (t) {
    case dtype::f32:
      return inference::TYPE_FP32;
    case dtype::f16:
      return inference::TYPE_FP16;
    case dtype::bf16:
      return inference::TYPE_BF16;
    case dtype::i8:
      return inference::TYPE_INT8;
    case dtype::u8:
      return inference::TYPE_UINT8;
    case dtype::i32:
      return inference::TYPE_INT32;
    case dtype::i64:
      return inference::TYPE_INT64;
    case dtype::boolean:
      return inference::TYPE_BOOL;
  }
  return inference::TYPE_INVALID;
}

void fill(inference::StatisticDuration* out, const duration_stat& s) {
  out->set_count(s.count);
  out->set_ns(s.ns);
}

class grpc_core;

// One call, on the callback API: gRPC hands it the request's bytes (OnReadDone) on one of its own
// threads, and it is answered, from whichever thread has the answer, by one write-and-finish or
// one finish. Nothing waits: an inference is queued and the model's callback answers. It deletes
// itself when gRPC is done with it (OnDone), giving back its share of the in-flight budget.
class call final : public grpc::ServerGenericBidiReactor {
 public:
  call(grpc_core& core, grpc::GenericCallbackServerContext* context) : core_(core), context_(context) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }

  [[nodiscard]] const std::string& method() const { return context_->method(); }
  [[nodiscard]] std::string peer() const { return context_->peer(); }
  [[nodiscard]] std::chrono::system_clock::time_point deadline() const { return context_->deadline(); }
  [[nodiscard]] grpc::ByteBuffer& request() { return request_; }
  intake_ticket ticket;  // an inference's share of the in-flight budget

  // Parses the request's bytes into `message`, letting go of them as it goes; false for malformed
  // bytes.
  bool parse(google::protobuf::Message& message) {
    const std::size_t bytes = request_.Length();
    consuming_message_stream stream(request_);
    const bool ok = stream.ok() && message.ParseFromZeroCopyStream(&stream);
    if (!ok)
      fail({StatusCode::INVALID_ARGUMENT, "malformed " + std::string(message.GetTypeName()) + " message (" +
                                              std::to_string(bytes) + " bytes that do not parse as protobuf)"});
    return ok;
  }

  // Reads an inference request, its tensors each into a buffer of its own (grpc_infer_reader.hpp);
  // false for malformed bytes.
  bool parse(received_infer_request& into) {
    const std::size_t bytes = request_.Length();
    consuming_message_stream stream(request_);
    const bool ok = stream.ok() && read_infer_request(stream, bytes, into);
    if (!ok)
      fail({StatusCode::INVALID_ARGUMENT, "malformed " + std::string(into.message.GetTypeName()) + " message (" +
                                              std::to_string(bytes) + " bytes that do not parse as protobuf)"});
    return ok;
  }

  void reply(const google::protobuf::Message& response) {
    bool own = false;
    const Status serialized =
        grpc::SerializationTraits<google::protobuf::Message>::Serialize(response, &response_, &own);
    if (!serialized.ok()) return fail(serialized);
    send_response();
  }
  // Answers with bytes made already (grpc_answer_bytes.hpp).
  void reply(grpc::ByteBuffer&& bytes) {
    response_.Swap(&bytes);
    send_response();
  }

  void fail(const Status& status) { Finish(status); }

 private:
  // The ticket holds what the answer holds until it is written.
  void send_response() {
    if (ticket.valid()) ticket.resize(response_.Length());
    StartWriteAndFinish(&response_, grpc::WriteOptions(), Status::OK);
  }

  grpc_core& core_;
  grpc::GenericCallbackServerContext* context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

// Everything the calls share: the service, a fixed pool that decodes inference requests and
// encodes their answers (gRPC's own threads hand calls over, and decode only small ones), and the
// method table.
class grpc_core final : public grpc::CallbackGenericService {
 public:
  grpc_core(inference_service& service, int threads) : service_(service), pool_(static_cast<std::size_t>(threads)) {
    add_methods();
  }

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    return new call(*this, context);
  }

  // The call's request has arrived: answer it, now or through the pool.
  void dispatch(call& c) {
    // From the first signal on, every new call is refused at once, before gRPC's own shutdown
    // (on the drain thread) has taken effect.
    if (service_.intake().draining()) return c.fail({StatusCode::UNAVAILABLE, "the server is shutting down"});
    const auto method = methods_.find(c.method());
    if (method == methods_.end())
      return c.fail({StatusCode::UNIMPLEMENTED,
                     "method '" + quote_text(c.method()) + "' is not served: this is inference.GRPCInferenceService"});
    try {
      method->second(c);
    } catch (...) {
      // Out of memory on gRPC's thread (a handler's own work is guarded where it runs).
      c.fail(current_exception_status());
    }
  }

  void join() { pool_.join(); }
  // The port the server listens on, once bound: where local clients' sockets are connected.
  void set_port(int port) { port_ = static_cast<std::uint16_t>(port); }

 private:
  using method_handler = std::function<void(call&)>;

  static constexpr std::string_view service_prefix = "/inference.GRPCInferenceService/";

  // A method answered at once on gRPC's thread: it reads counters or documents, never blocks.
  template <class Request, class Response, class Body>
  void quick(const char* name, Body body) {
    methods_.emplace(std::string(service_prefix) + name, [body](call& c) {
      Request request;
      Response response;
      bool parsed = false;
      const Status status = guarded([&] {
        parsed = c.parse(request);
        if (parsed) body(request, response);
      });
      if (!parsed && status.ok()) return;  // parse() answered
      if (!status.ok()) return c.fail(status);
      c.reply(response);
    });
  }

  // A method answered on the pool: it may take a while (registering shared memory maps and
  // page-locks it). `body` may take the call too, to know its client.
  template <class Request, class Response, class Body>
  void pooled(const char* name, Body body) {
    methods_.emplace(std::string(service_prefix) + name, [this, body](call& c) {
      pool_.post([&c, body] {
        Request request;
        Response response;
        bool parsed = false;
        const Status status = guarded([&] {
          parsed = c.parse(request);
          if (!parsed) return;
          if constexpr (std::is_invocable_v<Body, const Request&, Response&, call&>)
            body(request, response, c);
          else
            body(request, response);
        });
        if (!parsed && status.ok()) return;  // parse() answered
        if (!status.ok()) return c.fail(status);
        c.reply(response);
      });
    });
  }

  // A model control method: parsed on gRPC's thread (a small message), run on the repository's
  // control thread (model_control.hpp), answered from there with its outcome, the control's
  // refusal, or its timeout.
  template <class Request, class Response, class Body>
  void controlled(const char* name, Body body) {
    methods_.emplace(std::string(service_prefix) + name, [this, name, body](call& c) {
      auto request = std::make_shared<Request>();
      if (!c.parse(*request)) return;
      const std::string what = std::string(name) + " of model '" + quote_text(request->model_name()) + "'";
      const auto answer = [&c](std::exception_ptr outcome) {
        if (!outcome) return c.reply(Response());
        try {
          std::rethrow_exception(outcome);
        } catch (...) {
          c.fail(current_exception_status());
        }
      };
      try {
        service_.repository().control().submit(
            what, [request, body] { body(*request); }, answer);
      } catch (...) {
        answer(std::current_exception());
      }
    });
  }

  // ModelInfer: admitted by its size before it is parsed (RESOURCE_EXHAUSTED when the in-flight
  // budget cannot hold it), parsed and queued on the pool, answered when its model calls back.
  void infer(call& c) {
    auto admitted = service_.intake().admit(c.request().Length());
    if (admitted.refusal) {
      if (*admitted.refusal != intake_refusal::draining) count_rejection(peek_model_name(c.request()));
      return c.fail(
          {*admitted.refusal == intake_refusal::draining ? StatusCode::UNAVAILABLE : StatusCode::RESOURCE_EXHAUSTED,
           admitted.message});
    }
    c.ticket = std::move(admitted.ticket);
    // A small message (tensors in shared memory, or a few KiB of them) is decoded here, on
    // gRPC's thread (inline_work.hpp).
    if (c.request().Length() <= inline_request_bytes) return decode_and_queue(c);
    pool_.post([this, &c] { decode_and_queue(c); });
  }

  // On the pool (or gRPC's thread for a small message): parses the request, checks it and queues
  // it. Memory that cannot be had for it fails this call alone.
  void decode_and_queue(call& c) {
    // The request outlives the inference: its raw_input_contents are the inputs' bytes.
    std::shared_ptr<received_infer_request> message;
    std::optional<std::string> model;  // for counting a failure: read before the message is
    bool queueing = false;             // service_.infer runs: its scheduler counts a full queue itself
    try {
      model = peek_model_name(c.request());
      message = std::make_shared<received_infer_request>();
      if (!c.parse(*message)) return;
      // Refused as such before anything else is checked: whatever else the request holds (raw
      // contents beside a region, say), shared memory is what this server does not take.
      if (service_.system_shm() == nullptr && uses_shared_memory(message->message))
        return c.fail({StatusCode::PERMISSION_DENIED,
                       "the request uses shared memory, which this server does not allow (start it with "
                       "--allow-client-shm)"});
      infer_request request = from_grpc(message->message, message->raw_views());
      if (uses_shared_memory(request)) request.client = client_of(c);
      wait_no_longer_than_the_client(request, c.deadline());
      const auto found = service_.find_ready(request.model, request.version);  // once per request
      take_answer_bound(c, *found, request);
      queueing = true;
      service_.infer(std::move(request), found, [this, &c, message](infer_result result) mutable {
        // On the model's worker: a small answer is made and sent from here (inline_work.hpp).
        if (small_answer(result)) return answer(c, std::move(message), std::move(result));
        answer_on_pool(c, std::move(message), std::move(result));
      });
    } catch (...) {
      const Status status = current_exception_status();
      if (!(queueing && status.error_code() == StatusCode::UNAVAILABLE)) count_rejection(model);
      c.fail(status);
    }
  }

  // On the model's worker: hands the answer to the pool, or fails the call here when even that
  // cannot be allocated (the worker must go on).
  void answer_on_pool(call& c, std::shared_ptr<received_infer_request> message, infer_result result) {
    try {
      pool_.post([this, &c, message = std::move(message), result = std::move(result)]() mutable {
        answer(c, std::move(message), std::move(result));
      });
    } catch (...) {
      c.fail(current_exception_status(allocation_stage::answer));
    }
  }

  void answer(call& c, std::shared_ptr<received_infer_request> message, infer_result result) {
    std::optional<std::string> model;
    try {
      model = message->message.model_name();
      message.reset();                                             // the inputs have been read
      if (result.failure) std::rethrow_exception(result.failure);  // counted by the scheduler
    } catch (...) {
      return c.fail(current_exception_status(allocation_stage::answer));
    }
    try {
      c.reply(infer_answer_bytes(std::move(result.response)));
    } catch (...) {
      count_rejection(model, failure_reason::other);  // the answer could not be made
      c.fail(current_exception_status(allocation_stage::answer));
    }
  }

  // Who a call's client is, for its shared-memory regions (shm_client.hpp).
  [[nodiscard]] shm_client client_of(const call& c) const { return grpc_shm_client(c.peer(), port_.load()); }

  // Counts a request that failed before it ran (REJECTED) or while its answer was made (OTHER)
  // against its model, when it names one the repository has.
  void count_rejection(const std::optional<std::string>& model_name,
                       failure_reason reason = failure_reason::rejected) const {
    if (!model_name) return;
    if (const auto model = service_.repository().find(*model_name)) model->stats->record_failure(0, reason);
  }

  // Takes the bound of the request's answer from the in-flight budget (answer_size.hpp); throws
  // request_error when it does not fit (RESOURCE_EXHAUSTED).
  void take_answer_bound(call& c, const served_model& model, infer_request& request) {
    const std::size_t bound = answer_bytes_bound(model.signature, request, answer_protocol::grpc, c.ticket.bytes());
    if (c.ticket.grow(bound)) return;
    const request_intake& intake = service_.intake();
    const bool never = c.ticket.bytes() + bound > intake.admissible_bytes();
    throw request_error(
        never ? error_status::payload_too_large : error_status::unavailable,
        "model '" + quote_text(request.model) + "': this request's answer may take up to " + std::to_string(bound) +
            " bytes, which with its " + std::to_string(c.ticket.bytes()) + " bytes " +
            (never ? "exceeds" : "do not fit") + " the server's in-flight memory budget of " +
            std::to_string(intake.admissible_bytes()) + " bytes" +
            (never ? "" : " (" + std::to_string(intake.bytes_in_use()) + " in use): try again shortly"));
  }

  void add_methods();
  void add_model_methods();
  void add_statistics_methods();
  void add_repository_methods();
  void add_shared_memory_methods();

  inference_service& service_;
  work_pool pool_;
  std::unordered_map<std::string, method_handler> methods_;
  std::atomic<std::uint16_t> port_{0};
};

void call::OnReadDone(bool ok) {
  // No request message: the client ended its side first (or the call was cancelled).
  if (!ok) return Finish({StatusCode::INVALID_ARGUMENT, "the call carried no request message"});
  core_.dispatch(*this);
}

void grpc_core::add_methods() {
  using namespace inference;
  quick<ServerLiveRequest, ServerLiveResponse>("ServerLive",
                                               [this](const auto&, auto& r) { r.set_live(service_.live()); });
  quick<ServerReadyRequest, ServerReadyResponse>("ServerReady",
                                                 [this](const auto&, auto& r) { r.set_ready(service_.ready()); });
  quick<ModelReadyRequest, ModelReadyResponse>(
      "ModelReady", [this](const auto& q, auto& r) { r.set_ready(service_.find(q.name(), q.version())->ready()); });
  quick<ServerMetadataRequest, ServerMetadataResponse>("ServerMetadata", [this](const auto&, auto& r) {
    r.set_name(std::string(server_name));
    r.set_version(FERRY_VERSION);
    for (const auto& e : service_.extensions()) r.add_extensions(e);
  });
  methods_.emplace(std::string(service_prefix) + "ModelInfer", [this](call& c) { infer(c); });
  add_model_methods();
  add_statistics_methods();
  add_repository_methods();
  add_shared_memory_methods();
}

void grpc_core::add_model_methods() {
  using namespace inference;
  quick<ModelMetadataRequest, ModelMetadataResponse>("ModelMetadata", [this](const auto& q, auto& r) {
    const auto found = service_.find_ready(q.name(), q.version());
    const served_model& m = *found;
    r.set_name(m.config.name);
    r.add_versions(std::string(model_version));
    r.set_platform(m.platform);
    const auto add = [](auto* list, const std::vector<tensor_spec>& specs) {
      for (const auto& t : specs) {
        auto* meta = list->Add();
        meta->set_name(t.name);
        meta->set_datatype(std::string(to_string(t.type)));
        for (const auto d : t.shape) meta->add_shape(d);
      }
    };
    add(r.mutable_inputs(), m.signature.inputs);
    add(r.mutable_outputs(), m.signature.outputs);
  });
  // The same configuration as HTTP's GET /v2/models/NAME/config (model_config_json).
  quick<ModelConfigRequest, ModelConfigResponse>("ModelConfig", [this](const auto& q, auto& r) {
    const auto found = service_.find_ready(q.name(), q.version());
    const served_model& m = *found;
    const bool batched = m.signature.max_batch > 0;
    auto* config = r.mutable_config();
    config->set_name(m.config.name);
    config->set_platform(m.platform);
    config->set_backend("ferry");
    config->set_max_batch_size(static_cast<std::int32_t>(m.signature.max_batch));
    auto& parameters = *config->mutable_parameters();
    parameters["strategy"].set_string_value(std::string(to_string(m.config.strategy)));
    parameters["inflight"].set_string_value(std::to_string(m.config.inflight));
    if (const auto overrides = tensor_strategies_text(m.config.tensor_strategies); !overrides.empty())
      parameters["tensor_strategies"].set_string_value(overrides);
    if (!m.automatic.empty()) parameters["strategy_choice"].set_string_value(m.automatic);
    if (const auto bounds = index_bounds_text(m.signature); !bounds.empty())
      parameters["index_bounds"].set_string_value(bounds);
    const auto dims_of = [batched](const tensor_spec& t) {
      std::vector<std::int64_t> dims = t.shape;
      if (batched && !dims.empty()) dims.erase(dims.begin());
      return dims;
    };
    for (const auto& t : m.signature.inputs) {
      auto* in = config->add_input();
      in->set_name(t.name);
      in->set_data_type(config_data_type(t.type));
      for (const auto d : dims_of(t)) in->add_dims(d);
    }
    for (const auto& t : m.signature.outputs) {
      auto* out = config->add_output();
      out->set_name(t.name);
      out->set_data_type(config_data_type(t.type));
      for (const auto d : dims_of(t)) out->add_dims(d);
    }
    if (batched)
      config->mutable_dynamic_batching()->set_max_queue_delay_microseconds(
          static_cast<std::uint64_t>(m.config.batch_delay.count()));
  });
}

void grpc_core::add_statistics_methods() {
  using namespace inference;
  quick<ModelStatisticsRequest, ModelStatisticsResponse>("ModelStatistics", [this](const auto& q, auto& r) {
    std::vector<std::shared_ptr<const served_model>> models;
    if (q.name().empty())
      models = service_.repository().models();
    else
      models.push_back(service_.find(q.name(), q.version()));
    for (const auto& m : models) {
      const statistics_snapshot s = m->stats->snapshot();
      auto* out = r.add_model_stats();
      out->set_name(m->config.name);
      out->set_version(std::string(model_version));
      out->set_last_inference(s.last_inference_ms);
      out->set_inference_count(s.inference_count);
      out->set_execution_count(s.execution_count);
      auto* inference = out->mutable_inference_stats();
      fill(inference->mutable_success(), s.success);
      fill(inference->mutable_fail(), s.fail);
      fill(inference->mutable_queue(), s.queue);
      fill(inference->mutable_compute_input(), s.compute_input);
      fill(inference->mutable_compute_infer(), s.compute_infer);
      fill(inference->mutable_compute_output(), s.compute_output);
      fill(inference->mutable_cache_hit(), {});
      fill(inference->mutable_cache_miss(), {});
      for (const auto& [size, b] : s.batches) {
        auto* batch = out->add_batch_stats();
        batch->set_batch_size(static_cast<std::uint64_t>(size));
        fill(batch->mutable_compute_input(), b.compute_input);
        fill(batch->mutable_compute_infer(), b.compute_infer);
        fill(batch->mutable_compute_output(), b.compute_output);
      }
    }
  });
}

void grpc_core::add_repository_methods() {
  using namespace inference;
  quick<RepositoryIndexRequest, RepositoryIndexResponse>("RepositoryIndex", [this](const auto& q, auto& r) {
    for (const auto& m : service_.repository().index()) {
      if (q.ready() && m.state != "READY") continue;
      auto* entry = r.add_models();
      entry->set_name(m.name);
      entry->set_version(std::string(model_version));
      entry->set_state(m.state);
      entry->set_reason(m.reason);
    }
  });
  // Load and unload wait for the model (its build, or its requests in flight): on the
  // repository's control thread, never on a thread requests need.
  controlled<RepositoryModelLoadRequest, RepositoryModelLoadResponse>("RepositoryModelLoad", [this](const auto& q) {
    // Triton's load may carry a config or model files inline; ferry loads what the repository
    // holds, and says so rather than ignoring them.
    for (const auto& [key, value] : q.parameters())
      if (key == "config" || key.rfind("file:", 0) == 0)
        throw request_error(error_status::not_implemented,
                            "load parameter '" + quote_text(key) +
                                "' is not supported: ferry loads the model's folder as the repository holds it");
    service_.load_model(q.model_name());
  });
  controlled<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>(
      "RepositoryModelUnload", [this](const auto& q) { service_.unload_model(q.model_name()); });
}

void grpc_core::add_shared_memory_methods() {
  using namespace inference;
  pooled<SystemSharedMemoryStatusRequest, SystemSharedMemoryStatusResponse>(
      "SystemSharedMemoryStatus", [this](const auto& q, auto& r, call& c) {
        for (const auto& region : service_.allowed_system_shm().status(q.name(), client_of(c))) {
          auto& s = (*r.mutable_regions())[region.name];
          s.set_name(region.name);
          s.set_key(region.key);
          s.set_offset(region.offset);
          s.set_byte_size(region.byte_size);
        }
      });
  pooled<SystemSharedMemoryRegisterRequest, SystemSharedMemoryRegisterResponse>(
      "SystemSharedMemoryRegister", [this](const auto& q, auto&, call& c) {
        shm_registry& registry = service_.allowed_system_shm();
        registry.register_region(q.name(), q.key(), q.offset(), q.byte_size(), client_of(c));
      });
  pooled<SystemSharedMemoryUnregisterRequest, SystemSharedMemoryUnregisterResponse>(
      "SystemSharedMemoryUnregister", [this](const auto& q, auto&, call& c) {
        if (q.name().empty())
          service_.allowed_system_shm().unregister_all(client_of(c));
        else
          service_.allowed_system_shm().unregister_region(q.name(), client_of(c));
      });
  pooled<CudaSharedMemoryStatusRequest, CudaSharedMemoryStatusResponse>(
      "CudaSharedMemoryStatus", [this](const auto& q, auto& r, call& c) {
        for (const auto& region : service_.allowed_cuda_shm().status(q.name(), client_of(c))) {
          auto& s = (*r.mutable_regions())[region.name];
          s.set_name(region.name);
          s.set_device_id(static_cast<std::uint64_t>(region.device_id));
          s.set_byte_size(region.byte_size);
        }
      });
  pooled<CudaSharedMemoryRegisterRequest, CudaSharedMemoryRegisterResponse>(
      "CudaSharedMemoryRegister", [this](const auto& q, auto&, call& c) {
        service_.allowed_cuda_shm().register_region(q.name(), q.raw_handle(), q.device_id(), q.byte_size(),
                                                    client_of(c));
      });
  pooled<CudaSharedMemoryUnregisterRequest, CudaSharedMemoryUnregisterResponse>(
      "CudaSharedMemoryUnregister", [this](const auto& q, auto&, call& c) {
        if (q.name().empty())
          service_.allowed_cuda_shm().unregister_all(client_of(c));
        else
          service_.allowed_cuda_shm().unregister_region(q.name(), client_of(c));
      });
}

int default_threads() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 16); }

}  // namespace

std::size_t grpc_receive_bytes(const grpc_options& options, std::size_t budget_bytes) {
  return std::max<std::size_t>(1, std::min(options.max_message_bytes, budget_bytes / 4));
}

struct grpc_frontend::state {
  grpc_options options;
  inference_service& service;
  grpc_core core;  // before the server, which calls into it until it is shut down
  std::unique_ptr<grpc::Server> server;
  state(inference_service& s, const grpc_options& o)
      : options(o), service(s), core(s, o.threads > 0 ? o.threads : default_threads()) {}
};

grpc_frontend::grpc_frontend(inference_service& service, const grpc_options& options)
    : state_(std::make_unique<state>(service, options)) {}

grpc_frontend::~grpc_frontend() { stop(); }

int grpc_frontend::start() {
  const auto& o = state_->options;
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string address = o.host + ":" + std::to_string(o.port);
  // No SO_REUSEPORT: a second server on the same port must fail, not share it silently.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  // gRPC's own memory for the messages it is receiving (its reads, before a call reaches the
  // intake): the part of the in-flight budget set aside for it, which the server admits no request
  // into. A message larger than that could never arrive whole, and is refused.
  request_intake& intake = state_->service.intake();
  if (intake.set_aside_bytes() == 0) intake.set_aside(grpc_receive_bytes(o, intake.budget_bytes()));
  const std::size_t receive = std::min<std::size_t>(intake.set_aside_bytes(), INT32_MAX);
  builder.SetMaxReceiveMessageSize(static_cast<int>(receive));
  builder.SetMaxSendMessageSize(static_cast<int>(std::min<std::size_t>(o.max_message_bytes, INT32_MAX)));
  // And the threads of its synchronous paths, though every method here is served on the callback API.
  grpc::ResourceQuota quota("ferry-grpc");
  quota.Resize(receive);
  quota.SetMaxThreads(o.max_threads);
  builder.SetResourceQuota(quota);
  builder.RegisterCallbackGenericService(&state_->core);
  state_->server = builder.BuildAndStart();
  if (!state_->server || port == 0) throw error("gRPC: cannot bind to " + address + " (in use?)");
  state_->core.set_port(port);
  return port;
}

void grpc_frontend::stop() {
  // A load or unload still running answers a call of this front end: it ends first, and no
  // other starts (model_control.hpp).
  state_->service.repository().control().stop();
  if (state_->server) {
    // New calls are refused (UNAVAILABLE) from now on; those accepted finish first.
    state_->server->Shutdown();
    state_->core.join();
    state_->server.reset();
  }
}

}  // namespace ferry::serve
