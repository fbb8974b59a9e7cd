#include "serve/http_frontend.hpp"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "serve/http_documents.hpp"
#include "serve/metrics_text.hpp"
#include "serve/request_error.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

constexpr const char* json_type = "application/json";

void send_json(httplib::Response& res, const json& doc, int status = 200) {
  res.status = status;
  res.set_content(doc.dump(-1, ' ', false, json::error_handler_t::replace), json_type);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

// Runs a route, turning every exception into the protocol's error answer.
template <typename F>
httplib::Server::Handler guarded(F route) {
  return [route](const httplib::Request& req, httplib::Response& res) {
    try {
      route(req, res);
    } catch (const request_error& e) {
      send_error(res, http_status(e.status()), e.what());
    } catch (const ferry::invalid_argument& e) {
      send_error(res, 400, e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  };
}

std::string version_of(const httplib::Request& req) {
  return req.matches.size() > 2 ? std::string(req.matches[2]) : std::string();
}

json parse_json_body(const httplib::Request& req) {
  try {
    return req.body.empty() ? json::object() : json::parse(req.body);
  } catch (const json::parse_error& e) {
    throw bad_request(std::string("malformed JSON: ") + e.what());
  }
}

}  // namespace

struct http_frontend::state {
  inference_service& service;
  http_options options;
  httplib::Server server;
  int listening_socket = -1;  // seen by the socket-options hook, for the backlog (bind())

  state(inference_service& s, const http_options& o) : service(s), options(o) {}

  void infer(const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string_view> header_length;
    std::string header_text;
    if (req.has_header("Inference-Header-Content-Length")) {
      header_text = req.get_header_value("Inference-Header-Content-Length");
      header_length = header_text;
    }
    http_infer_request parsed = parse_http_infer_request(req.body, header_length, options.limits);
    parsed.request.model = req.matches[1];
    parsed.request.version = version_of(req);
    std::vector<std::string> requested;
    for (const auto& o : parsed.request.outputs) requested.push_back(o.name);
    // The body outlives the request: this handler waits for the response.
    const infer_response response = service.infer(std::move(parsed.request)).get();
    const auto binary = binary_choices(requested, parsed.binary_outputs, parsed.binary_by_default, response);
    http_infer_body encoded = encode_http_infer_response(response, binary);
    if (encoded.header_length) {
      res.set_header("Inference-Header-Content-Length", std::to_string(*encoded.header_length));
      res.set_content(std::move(encoded.body), "application/octet-stream");
    } else {
      res.set_content(std::move(encoded.body), json_type);
    }
  }

  void routes() {
    auto& svr = server;
    svr.Get("/v2/health/live", guarded([this](const auto&, auto& res) {
      res.status = service.live() ? 200 : 503;
    }));
    svr.Get("/v2/health/ready", guarded([this](const auto&, auto& res) {
      res.status = service.ready() ? 200 : 503;
    }));
    svr.Get("/v2", guarded([this](const auto&, auto& res) { send_json(res, server_metadata_json(service)); }));
    svr.Get("/metrics", guarded([this](const auto&, auto& res) {
      res.set_content(render_metrics(service.repository()), "text/plain; version=0.0.4");
    }));
    svr.Post("/v2/repository/index", guarded([this](const auto&, auto& res) {
      send_json(res, repository_index_json(service.repository()));
    }));

    // Statistics first: "/v2/models/stats" would otherwise read as metadata of a model "stats".
    svr.Get("/v2/models/stats", guarded([this](const auto&, auto& res) {
      std::vector<const served_model*> all;
      for (const auto& m : service.repository().models()) all.push_back(m.get());
      send_json(res, statistics_json(all));
    }));
    const auto model_stats = guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, statistics_json({&service.find(std::string(req.matches[1]), version_of(req))}));
    });
    svr.Get(R"(/v2/models/([^/]+)/stats)", model_stats);
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+)/stats)", model_stats);

    const auto ready = guarded([this](const httplib::Request& req, httplib::Response& res) {
      (void)service.find_ready(std::string(req.matches[1]), version_of(req));
      res.status = 200;
    });
    svr.Get(R"(/v2/models/([^/]+)/ready)", ready);
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+)/ready)", ready);

    const auto metadata = guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, model_metadata_json(service.find_ready(std::string(req.matches[1]), version_of(req))));
    });
    svr.Get(R"(/v2/models/([^/]+))", metadata);
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+))", metadata);

    const auto config = guarded([this](const httplib::Request& req, httplib::Response& res) {
      send_json(res, model_config_json(service.find_ready(std::string(req.matches[1]), version_of(req))));
    });
    svr.Get(R"(/v2/models/([^/]+)/config)", config);
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+)/config)", config);

    const auto infer_route = guarded([this](const httplib::Request& req, httplib::Response& res) { infer(req, res); });
    svr.Post(R"(/v2/models/([^/]+)/infer)", infer_route);
    svr.Post(R"(/v2/models/([^/]+)/versions/([^/]+)/infer)", infer_route);

    shm_routes();

    // Whatever httplib rejects itself (no route, 413, a malformed request line) still gets a body.
    svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      const std::string what = res.status == 404   ? "no such endpoint: " + req.method + " " + req.path
                               : res.status == 413 ? "request body exceeds the server's limit"
                                                   : "bad request (HTTP " + std::to_string(res.status) + ")";
      send_error(res, res.status, what);
    });
  }

  shm_registry& system_shm() const {
    if (service.system_shm() == nullptr)
      throw request_error(error_status::forbidden,
                          "system shared memory is not allowed on this server (start it with --allow-client-shm)");
    return *service.system_shm();
  }

  cuda_shm_registry& cuda_shm() const {
    if (service.cuda_shm() == nullptr)
      throw request_error(error_status::forbidden,
                          "CUDA shared memory is not allowed on this server (start it with --allow-client-shm)");
    return *service.cuda_shm();
  }

  void cuda_shm_routes() {
    auto& svr = server;
    const auto status = [](const std::vector<cuda_shm_region_status>& regions) {
      json list = json::array();
      for (const auto& r : regions)
        list.push_back({{"name", r.name}, {"device_id", r.device_id}, {"byte_size", r.byte_size}});
      return list;
    };
    svr.Get("/v2/cudasharedmemory/status", guarded([this, status](const auto&, auto& res) {
      send_json(res, status(cuda_shm().status()));
    }));
    svr.Get(R"(/v2/cudasharedmemory/region/([^/]+)/status)", guarded([this, status](const httplib::Request& req, auto& res) {
      send_json(res, status(cuda_shm().status(req.matches[1])));
    }));
    svr.Post(R"(/v2/cudasharedmemory/region/([^/]+)/register)", guarded([this](const httplib::Request& req, auto& res) {
      cuda_shm_registry& registry = cuda_shm();
      const json body = parse_json_body(req);
      const auto handle = body.find("raw_handle");
      if (handle == body.end() || !handle->is_object() || !handle->contains("b64") || !(*handle)["b64"].is_string())
        throw bad_request("register: \"raw_handle\": {\"b64\": ...} is missing");
      const auto device = body.find("device_id");
      const auto byte_size = body.find("byte_size");
      if (device == body.end() || !device->is_number_integer())
        throw bad_request("register: \"device_id\" (an integer) is missing");
      if (byte_size == body.end() || !byte_size->is_number_unsigned())
        throw bad_request("register: \"byte_size\" (a non-negative integer) is missing");
      registry.register_region(req.matches[1], decode_base64((*handle)["b64"].get<std::string>()),
                               device->get<std::int64_t>(), byte_size->get<std::size_t>());
      res.status = 200;
    }));
    svr.Post(R"(/v2/cudasharedmemory/region/([^/]+)/unregister)", guarded([this](const httplib::Request& req, auto& res) {
      cuda_shm().unregister_region(req.matches[1]);
      res.status = 200;
    }));
    svr.Post("/v2/cudasharedmemory/unregister", guarded([this](const auto&, auto& res) {
      cuda_shm().unregister_all();
      res.status = 200;
    }));
  }

  void shm_routes() {
    auto& svr = server;
    svr.Get("/v2/systemsharedmemory/status", guarded([this](const auto&, auto& res) {
      send_json(res, shm_status_json(system_shm().status()));
    }));
    svr.Get(R"(/v2/systemsharedmemory/region/([^/]+)/status)", guarded([this](const httplib::Request& req, auto& res) {
      send_json(res, shm_status_json(system_shm().status(req.matches[1])));
    }));
    svr.Post(R"(/v2/systemsharedmemory/region/([^/]+)/register)", guarded([this](const httplib::Request& req, auto& res) {
      shm_registry& registry = system_shm();
      const json body = parse_json_body(req);
      const auto key = body.find("key");
      const auto byte_size = body.find("byte_size");
      if (key == body.end() || !key->is_string()) throw bad_request("register: \"key\" (a string) is missing");
      if (byte_size == body.end() || !byte_size->is_number_unsigned())
        throw bad_request("register: \"byte_size\" (a non-negative integer) is missing");
      std::size_t offset = 0;
      if (const auto o = body.find("offset"); o != body.end()) {
        if (!o->is_number_unsigned()) throw bad_request("register: \"offset\" must be a non-negative integer");
        offset = o->get<std::size_t>();
      }
      registry.register_region(req.matches[1], key->get<std::string>(), offset, byte_size->get<std::size_t>());
      res.status = 200;
    }));
    svr.Post(R"(/v2/systemsharedmemory/region/([^/]+)/unregister)", guarded([this](const httplib::Request& req, auto& res) {
      system_shm().unregister_region(req.matches[1]);
      res.status = 200;
    }));
    svr.Post("/v2/systemsharedmemory/unregister", guarded([this](const auto&, auto& res) {
      system_shm().unregister_all();
      res.status = 200;
    }));
    cuda_shm_routes();
  }
};

http_frontend::http_frontend(inference_service& service, const http_options& options)
    : state_(std::make_unique<state>(service, options)) {
  auto& svr = state_->server;
  const auto threads = static_cast<std::size_t>(options.threads);
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_payload_max_length(options.max_body_bytes);
  svr.set_keep_alive_max_count(1'000'000);  // clients keep their connections; no reconnect every 5 requests
  svr.set_tcp_nodelay(true);
  // cpp-httplib's default also sets SO_REUSEPORT, which lets a second server bind the same port
  // and silently take half the connections; a port in use must be an error instead.
  svr.set_socket_options([st = state_.get()](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    st->listening_socket = sock;
  });
  state_->routes();
}

http_frontend::~http_frontend() { stop(); }

int http_frontend::bind() {
  auto& o = state_->options;
  int port = o.port;
  if (o.port == 0) {
    port = state_->server.bind_to_any_port(o.host);
    if (port < 0) throw error("HTTP: cannot bind to " + o.host + " (any port)");
  } else if (!state_->server.bind_to_port(o.host, o.port)) {
    throw error("HTTP: cannot bind to " + o.host + ":" + std::to_string(o.port) + " (in use?)");
  }
  // cpp-httplib 0.11 listens with a backlog of 5: perf_analyzer's 64 clients connecting at once
  // overflowed it and saw "Failure when receiving data from the peer". Listening again on the
  // same socket only raises the backlog (Linux), to the system's limit.
  if (state_->listening_socket >= 0) ::listen(state_->listening_socket, SOMAXCONN);
  return port;
}

void http_frontend::serve_blocking() { state_->server.listen_after_bind(); }

void http_frontend::stop() { state_->server.stop(); }

}  // namespace ferry::serve
