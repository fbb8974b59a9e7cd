// Runs built-in workloads on the CPU (host_reference_engine::run_on_host), for machines without a
// GPU: the protocol, the scheduler and the clients are tested on the same code paths as on a GPU.
#pragma once

#include <memory>

#include "ferry/engines/builtin.hpp"
#include "serve/execution/executor.hpp"

namespace ferry::serve {

[[nodiscard]] std::unique_ptr<executor> make_host_executor(std::unique_ptr<host_reference_engine> engine,
                                                           model_signature signature, int workers);

}  // namespace ferry::serve
