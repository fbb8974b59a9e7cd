#include "serve/grpc_frontend.hpp"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>

#include "kserve_v2.grpc.pb.h"
#include "serve/grpc_infer_codec.hpp"
#include "serve/request_error.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;

StatusCode grpc_code(error_status status) {
  switch (status) {
    case error_status::bad_request: return StatusCode::INVALID_ARGUMENT;
    case error_status::not_found: return StatusCode::NOT_FOUND;
    case error_status::unavailable: return StatusCode::UNAVAILABLE;
    case error_status::forbidden: return StatusCode::PERMISSION_DENIED;
    case error_status::payload_too_large: return StatusCode::RESOURCE_EXHAUSTED;
    case error_status::quota_exceeded: return StatusCode::RESOURCE_EXHAUSTED;
    case error_status::timed_out: return StatusCode::DEADLINE_EXCEEDED;
    case error_status::not_implemented: return StatusCode::UNIMPLEMENTED;
    case error_status::internal: return StatusCode::INTERNAL;
  }
  return StatusCode::INTERNAL;
}

// Runs an RPC body, turning every exception into the protocol's status.
template <typename F>
Status guarded(F body) {
  try {
    body();
    return Status::OK;
  } catch (const request_error& e) {
    return {grpc_code(e.status()), e.what()};
  } catch (const ferry::invalid_argument& e) {
    return {StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    return {StatusCode::INTERNAL, e.what()};
  }
}

// A client that set a gRPC deadline has given up on its request by then: the request's timeout
// is shortened to it, so it leaves the queue instead of running for no one.
void wait_no_longer_than_the_client(infer_request& request, std::chrono::system_clock::time_point deadline) {
  if (deadline == std::chrono::system_clock::time_point::max()) return;  // none set
  const auto left = std::max(std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::system_clock::now()),
                             std::chrono::microseconds(1));
  if (!request.timeout || request.timeout->count() == 0 || left < *request.timeout) request.timeout = left;
}

// Triton's TYPE_ enum for a tensor's dtype.
inference::DataType config_data_type(dtype t) {
  switch (t) {
    case dtype::f32: return inference::TYPE_FP32;
    case dtype::f16: return inference::TYPE_FP16;
    case dtype::bf16: return inference::TYPE_BF16;
    case dtype::i8: return inference::TYPE_INT8;
    case dtype::u8: return inference::TYPE_UINT8;
    case dtype::i32: return inference::TYPE_INT32;
    case dtype::i64: return inference::TYPE_INT64;
    case dtype::boolean: return inference::TYPE_BOOL;
  }
  return inference::TYPE_INVALID;
}

void fill(inference::StatisticDuration* out, const duration_stat& s) {
  out->set_count(s.count);
  out->set_ns(s.ns);
}

class service_impl final : public inference::GRPCInferenceService::Service {
 public:
  explicit service_impl(inference_service& service) : service_(service) {}

  Status ServerLive(ServerContext*, const inference::ServerLiveRequest*, inference::ServerLiveResponse* r) override {
    r->set_live(service_.live());
    return Status::OK;
  }

  Status ServerReady(ServerContext*, const inference::ServerReadyRequest*, inference::ServerReadyResponse* r) override {
    r->set_ready(service_.ready());
    return Status::OK;
  }

  Status ModelReady(ServerContext*, const inference::ModelReadyRequest* q, inference::ModelReadyResponse* r) override {
    return guarded([&] { r->set_ready(service_.find(q->name(), q->version()).ready()); });
  }

  Status ServerMetadata(ServerContext*, const inference::ServerMetadataRequest*,
                        inference::ServerMetadataResponse* r) override {
    r->set_name(std::string(server_name));
    r->set_version(FERRY_VERSION);
    for (const auto& e : service_.extensions()) r->add_extensions(e);
    return Status::OK;
  }

  Status ModelMetadata(ServerContext*, const inference::ModelMetadataRequest* q,
                       inference::ModelMetadataResponse* r) override {
    return guarded([&] {
      const served_model& m = service_.find_ready(q->name(), q->version());
      r->set_name(m.config.name);
      r->add_versions(std::string(model_version));
      r->set_platform(m.platform);
      const auto add = [](auto* list, const std::vector<tensor_spec>& specs) {
        for (const auto& t : specs) {
          auto* meta = list->Add();
          meta->set_name(t.name);
          meta->set_datatype(std::string(to_string(t.type)));
          for (const auto d : t.shape) meta->add_shape(d);
        }
      };
      add(r->mutable_inputs(), m.signature.inputs);
      add(r->mutable_outputs(), m.signature.outputs);
    });
  }

  // The same configuration as HTTP's GET /v2/models/NAME/config (model_config_json).
  Status ModelConfig(ServerContext*, const inference::ModelConfigRequest* q,
                     inference::ModelConfigResponse* r) override {
    return guarded([&] {
      const served_model& m = service_.find_ready(q->name(), q->version());
      const bool batched = m.signature.max_batch > 0;
      auto* config = r->mutable_config();
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

  Status ModelInfer(ServerContext* context, const inference::ModelInferRequest* q,
                    inference::ModelInferResponse* r) override {
    // The request message outlives the inference: this handler waits for the response.
    return guarded([&] {
      infer_request request = from_grpc(*q);
      wait_no_longer_than_the_client(request, context->deadline());
      to_grpc(service_.infer(std::move(request)).get(), *r);
    });
  }

  Status ModelStatistics(ServerContext*, const inference::ModelStatisticsRequest* q,
                         inference::ModelStatisticsResponse* r) override {
    return guarded([&] {
      std::vector<const served_model*> models;
      if (q->name().empty()) {
        for (const auto& m : service_.repository().models()) models.push_back(m.get());
      } else {
        models.push_back(&service_.find(q->name(), q->version()));
      }
      for (const served_model* m : models) {
        const statistics_snapshot s = m->stats->snapshot();
        auto* out = r->add_model_stats();
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

  Status RepositoryIndex(ServerContext*, const inference::RepositoryIndexRequest* q,
                         inference::RepositoryIndexResponse* r) override {
    for (const auto& m : service_.repository().models()) {
      if (q->ready() && !m->ready()) continue;
      auto* entry = r->add_models();
      entry->set_name(m->config.name);
      entry->set_version(std::string(model_version));
      entry->set_state(m->ready() ? "READY" : "UNAVAILABLE");
      entry->set_reason(m->failure);
    }
    return Status::OK;
  }

  Status SystemSharedMemoryStatus(ServerContext*, const inference::SystemSharedMemoryStatusRequest* q,
                                  inference::SystemSharedMemoryStatusResponse* r) override {
    return guarded([&] {
      for (const auto& region : system_shm().status(q->name())) {
        auto& s = (*r->mutable_regions())[region.name];
        s.set_name(region.name);
        s.set_key(region.key);
        s.set_offset(region.offset);
        s.set_byte_size(region.byte_size);
      }
    });
  }

  Status SystemSharedMemoryRegister(ServerContext*, const inference::SystemSharedMemoryRegisterRequest* q,
                                    inference::SystemSharedMemoryRegisterResponse*) override {
    return guarded([&] { system_shm().register_region(q->name(), q->key(), q->offset(), q->byte_size()); });
  }

  Status SystemSharedMemoryUnregister(ServerContext*, const inference::SystemSharedMemoryUnregisterRequest* q,
                                      inference::SystemSharedMemoryUnregisterResponse*) override {
    return guarded([&] {
      if (q->name().empty())
        system_shm().unregister_all();
      else
        system_shm().unregister_region(q->name());
    });
  }

  Status CudaSharedMemoryStatus(ServerContext*, const inference::CudaSharedMemoryStatusRequest* q,
                                inference::CudaSharedMemoryStatusResponse* r) override {
    return guarded([&] {
      for (const auto& region : cuda_shm().status(q->name())) {
        auto& s = (*r->mutable_regions())[region.name];
        s.set_name(region.name);
        s.set_device_id(static_cast<std::uint64_t>(region.device_id));
        s.set_byte_size(region.byte_size);
      }
    });
  }
  Status CudaSharedMemoryRegister(ServerContext*, const inference::CudaSharedMemoryRegisterRequest* q,
                                  inference::CudaSharedMemoryRegisterResponse*) override {
    return guarded([&] { cuda_shm().register_region(q->name(), q->raw_handle(), q->device_id(), q->byte_size()); });
  }
  Status CudaSharedMemoryUnregister(ServerContext*, const inference::CudaSharedMemoryUnregisterRequest* q,
                                    inference::CudaSharedMemoryUnregisterResponse*) override {
    return guarded([&] {
      if (q->name().empty())
        cuda_shm().unregister_all();
      else
        cuda_shm().unregister_region(q->name());
    });
  }

 private:
  shm_registry& system_shm() const {
    if (service_.system_shm() == nullptr)
      throw request_error(error_status::forbidden,
                          "system shared memory is not allowed on this server (start it with --allow-client-shm)");
    return *service_.system_shm();
  }

  cuda_shm_registry& cuda_shm() const {
    if (service_.cuda_shm() == nullptr)
      throw request_error(error_status::forbidden,
                          "CUDA shared memory is not allowed on this server (start it with --allow-client-shm)");
    return *service_.cuda_shm();
  }

  inference_service& service_;
};

}  // namespace

struct grpc_frontend::state {
  grpc_options options;
  service_impl impl;
  std::unique_ptr<grpc::Server> server;
  state(inference_service& s, const grpc_options& o) : options(o), impl(s) {}
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
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<std::size_t>(o.max_message_bytes, INT32_MAX)));
  builder.SetMaxSendMessageSize(static_cast<int>(std::min<std::size_t>(o.max_message_bytes, INT32_MAX)));
  builder.RegisterService(&state_->impl);
  state_->server = builder.BuildAndStart();
  if (!state_->server || port == 0) throw error("gRPC: cannot bind to " + address + " (in use?)");
  return port;
}

void grpc_frontend::stop() {
  if (state_->server) {
    state_->server->Shutdown();
    state_->server.reset();
  }
}

}  // namespace ferry::serve
