// `ferry serve`: the whole server, from a model repository to listening front ends, until
// SIGINT or SIGTERM.
#pragma once

#include <filesystem>
#include <string>

#include "serve/http_frontend.hpp"

namespace ferry::serve {

struct server_options {
  std::filesystem::path model_repository;
  http_options http;
  int grpc_port = 8001;  // 0: any free port; -1: no gRPC front end
  bool allow_client_shm = false;
};

// Runs the server until SIGINT/SIGTERM. Prints one line per model, a notice when it runs on the
// CPU, and "HTTP on HOST:PORT" (the bound port, also when asked for port 0). Throws ferry::error
// when the repository cannot be read or a port cannot be bound.
void run_server(const server_options& options);

}  // namespace ferry::serve
