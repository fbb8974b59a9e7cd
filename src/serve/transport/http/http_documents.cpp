#include "serve/transport/http/http_documents.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

json tensors_json(const std::vector<tensor_spec>& specs) {
  json list = json::array();
  for (const auto& t : specs)
    list.push_back({{"name", t.name}, {"datatype", std::string(to_string(t.type))}, {"shape", t.shape}});
  return list;
}

// Triton's model-configuration tensors: TYPE_ datatypes and dims without the batch dim, which
// max_batch_size stands for.
json config_tensors_json(const std::vector<tensor_spec>& specs, bool batched) {
  json list = json::array();
  for (const auto& t : specs) {
    std::vector<std::int64_t> dims = t.shape;
    if (batched && !dims.empty()) dims.erase(dims.begin());
    list.push_back({{"name", t.name}, {"data_type", "TYPE_" + std::string(to_string(t.type))}, {"dims", dims}});
  }
  return list;
}

json stat_json(const duration_stat& s) { return {{"count", s.count}, {"ns", s.ns}}; }

}  // namespace

json server_metadata_json(const inference_service& service) {
  return {{"name", std::string(server_name)}, {"version", FERRY_VERSION}, {"extensions", service.extensions()}};
}

// How the model moves its data, in Triton's "parameters" form, with the reason where it was chosen
// automatically.
json transfer_parameters(const served_model& model) {
  json p = {{"strategy", {{"string_value", std::string(to_string(model.config.strategy))}}},
            {"inflight", {{"string_value", std::to_string(model.config.inflight)}}}};
  // Tensors that go another way than `strategy`, as "table=pinned,indices=mapped"; left out when
  // every tensor goes by `strategy`.
  if (const auto overrides = tensor_strategies_text(model.config.tensor_strategies); !overrides.empty())
    p["tensor_strategies"] = {{"string_value", overrides}};
  if (!model.automatic.empty()) p["strategy_choice"] = {{"string_value", model.automatic}};
  // Which values each integer input takes: requests outside are refused (400) before the model.
  if (const auto bounds = index_bounds_text(model.signature); !bounds.empty())
    p["index_bounds"] = {{"string_value", bounds}};
  return p;
}

json model_metadata_json(const served_model& model) {
  return {{"name", model.config.name},
          {"versions", {std::string(model_version)}},
          {"platform", model.platform},
          {"inputs", tensors_json(model.signature.inputs)},
          {"outputs", tensors_json(model.signature.outputs)},
          {"parameters", transfer_parameters(model)}};
}

json model_config_json(const served_model& model) {
  const bool batched = model.signature.max_batch > 0;
  json config = {{"name", model.config.name},
                 {"platform", model.platform},
                 {"backend", "ferry"},
                 {"max_batch_size", model.signature.max_batch},
                 {"input", config_tensors_json(model.signature.inputs, batched)},
                 {"output", config_tensors_json(model.signature.outputs, batched)}};
  if (batched) config["dynamic_batching"] = {{"max_queue_delay_microseconds", model.config.batch_delay.count()}};
  config["parameters"] = transfer_parameters(model);
  return config;
}

json repository_index_json(const model_repository& repository) {
  json list = json::array();
  for (const auto& m : repository.index())
    list.push_back(
        {{"name", m.name}, {"version", std::string(model_version)}, {"state", m.state}, {"reason", m.reason}});
  return list;
}

json statistics_json(const std::vector<const served_model*>& models) {
  json list = json::array();
  for (const served_model* m : models) {
    const statistics_snapshot s = m->stats->snapshot();
    json batches = json::array();
    for (const auto& [size, b] : s.batches)
      batches.push_back({{"batch_size", size},
                         {"compute_input", stat_json(b.compute_input)},
                         {"compute_infer", stat_json(b.compute_infer)},
                         {"compute_output", stat_json(b.compute_output)}});
    list.push_back({{"name", m->config.name},
                    {"version", std::string(model_version)},
                    {"last_inference", s.last_inference_ms},
                    {"inference_count", s.inference_count},
                    {"execution_count", s.execution_count},
                    {"inference_stats",
                     {{"success", stat_json(s.success)},
                      {"fail", stat_json(s.fail)},
                      {"queue", stat_json(s.queue)},
                      {"compute_input", stat_json(s.compute_input)},
                      {"compute_infer", stat_json(s.compute_infer)},
                      {"compute_output", stat_json(s.compute_output)},
                      {"cache_hit", stat_json({})},
                      {"cache_miss", stat_json({})}}},
                    {"batch_stats", std::move(batches)}});
  }
  return {{"model_stats", std::move(list)}};
}

json shm_status_json(const std::vector<shm_region_status>& regions) {
  json list = json::array();
  for (const auto& r : regions)
    list.push_back({{"name", r.name}, {"key", r.key}, {"offset", r.offset}, {"byte_size", r.byte_size}});
  return list;
}

}  // namespace ferry::serve
