// The JSON documents of the HTTP/REST front end besides inference: server and model metadata,
// the model configuration (Triton's GET /v2/models/NAME/config, which perf_analyzer reads before
// it sends anything), the repository index, statistics (Triton's statistics extension) and shared-memory status.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "serve/service/inference_service.hpp"
#include "serve/shm/shm_registry.hpp"

namespace ferry::serve {

[[nodiscard]] nlohmann::json server_metadata_json(const inference_service& service);
[[nodiscard]] nlohmann::json model_metadata_json(const served_model& model);
// Triton's model configuration, the fields clients read: max_batch_size, input and output with
// TYPE_ datatypes and dims without the batch dim, dynamic_batching when the model batches.
[[nodiscard]] nlohmann::json model_config_json(const served_model& model);
[[nodiscard]] nlohmann::json repository_index_json(const model_repository& repository);
// {"model_stats": [...]} for the given models.
[[nodiscard]] nlohmann::json statistics_json(const std::vector<const served_model*>& models);
[[nodiscard]] nlohmann::json shm_status_json(const std::vector<shm_region_status>& regions);

}  // namespace ferry::serve
