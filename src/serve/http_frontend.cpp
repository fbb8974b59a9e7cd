#include "serve/http_frontend.hpp"

#include <regex>

#include <nlohmann/json.hpp>

#include "serve/http_documents.hpp"
#include "serve/http_transport.hpp"
#include "serve/metrics_text.hpp"
#include "serve/request_error.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

constexpr const char* json_type = "application/json";

// What a route's handler sees: the request, and the captures of its path ([1] the model or
// region, [2] the version where the route has one).
struct route_request {
  const http_request& http;
  std::smatch matches;
};

using route_handler = std::function<void(const route_request&, http_response&)>;

struct route {
  std::string method;
  std::regex path;  // matches the whole path
  route_handler handler;
};

void set_content(http_response& res, std::string body, const char* type) {
  res.body = std::move(body);
  res.content_type = type;
}

void send_json(http_response& res, const json& doc, int status = 200) {
  res.status = status;
  set_content(res, doc.dump(-1, ' ', false, json::error_handler_t::replace), json_type);
}

void send_error(http_response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

// Every error answer carries a body, also those no handler wrote one for.
void fill_error_body(http_response& res, const std::string& method, const std::string& path) {
  if (res.status < 400 || !res.body.empty()) return;
  const std::string what = res.status == 404   ? "no such endpoint: " + method + " " + path
                           : res.status == 413 ? "request body exceeds the server's limit"
                                               : "bad request (HTTP " + std::to_string(res.status) + ")";
  send_error(res, res.status, what);
}

// Runs a route, turning every exception into the protocol's error answer.
template <typename F>
route_handler guarded(F route) {
  return [route](const route_request& req, http_response& res) {
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

std::string version_of(const route_request& req) {
  return req.matches.size() > 2 ? std::string(req.matches[2]) : std::string();
}

json parse_json_body(const route_request& req) {
  try {
    return req.http.body.empty() ? json::object() : json::parse(req.http.body);
  } catch (const json::parse_error& e) {
    throw bad_request(std::string("malformed JSON: ") + e.what());
  }
}

// The answer to a request the transport refuses before any route sees it (400, 408, 413, 503).
http_response refused(int status, const std::string& message) {
  http_response res;
  send_error(res, status, message);
  return res;
}

}  // namespace

struct http_frontend::state {
  inference_service& service;
  http_options options;
  std::vector<route> routes;  // tried in order, the first match answers
  http_transport transport;

  state(inference_service& s, const http_options& o)
      : service(s),
        options(o),
        transport(o, {[this](const http_request& req) { return dispatch(req); }, refused}) {  // o as its transport options
    add_routes();
  }

  http_response dispatch(const http_request& req) const {
    // HEAD is GET without the body (the transport leaves it out).
    const std::string_view method = req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
    http_response res;
    res.status = 404;
    for (const auto& r : routes) {
      route_request call{req, {}};
      if (r.method != method || !std::regex_match(req.path, call.matches, r.path)) continue;
      res.status = 200;
      r.handler(call, res);
      break;
    }
    fill_error_body(res, req.method, req.path);
    return res;
  }

  void get(const char* path, route_handler handler) {
    routes.push_back({"GET", std::regex(path), std::move(handler)});
  }
  void post(const char* path, route_handler handler) {
    routes.push_back({"POST", std::regex(path), std::move(handler)});
  }

  void infer(const route_request& req, http_response& res) {
    const std::optional<std::string_view> header_length = req.http.header("Inference-Header-Content-Length");
    http_infer_request parsed = parse_http_infer_request(req.http.body, header_length, options.limits);
    parsed.request.model = req.matches[1];
    parsed.request.version = version_of(req);
    std::vector<std::string> requested;
    for (const auto& o : parsed.request.outputs) requested.push_back(o.name);
    // The body outlives the request: this handler waits for the response.
    const infer_response response = service.infer(std::move(parsed.request)).get();
    const auto binary = binary_choices(requested, parsed.binary_outputs, parsed.binary_by_default, response);
    http_infer_body encoded = encode_http_infer_response(response, binary);
    if (encoded.header_length) {
      res.headers.emplace_back("Inference-Header-Content-Length", std::to_string(*encoded.header_length));
      set_content(res, std::move(encoded.body), "application/octet-stream");
    } else {
      set_content(res, std::move(encoded.body), json_type);
    }
  }

  void add_routes() {
    get("/v2/health/live", guarded([this](const auto&, auto& res) {
      res.status = service.live() ? 200 : 503;
    }));
    get("/v2/health/ready", guarded([this](const auto&, auto& res) {
      res.status = service.ready() ? 200 : 503;
    }));
    get("/v2", guarded([this](const auto&, auto& res) { send_json(res, server_metadata_json(service)); }));
    get("/metrics", guarded([this](const auto&, auto& res) {
      set_content(res, render_metrics(service), "text/plain; version=0.0.4");
    }));
    post("/v2/repository/index", guarded([this](const auto&, auto& res) {
      send_json(res, repository_index_json(service.repository()));
    }));

    // Statistics first: "/v2/models/stats" would otherwise read as metadata of a model "stats".
    get("/v2/models/stats", guarded([this](const auto&, auto& res) {
      std::vector<const served_model*> all;
      for (const auto& m : service.repository().models()) all.push_back(m.get());
      send_json(res, statistics_json(all));
    }));
    const auto model_stats = guarded([this](const route_request& req, http_response& res) {
      send_json(res, statistics_json({&service.find(std::string(req.matches[1]), version_of(req))}));
    });
    get(R"(/v2/models/([^/]+)/stats)", model_stats);
    get(R"(/v2/models/([^/]+)/versions/([^/]+)/stats)", model_stats);

    const auto ready = guarded([this](const route_request& req, http_response& res) {
      (void)service.find_ready(std::string(req.matches[1]), version_of(req));
      res.status = 200;
    });
    get(R"(/v2/models/([^/]+)/ready)", ready);
    get(R"(/v2/models/([^/]+)/versions/([^/]+)/ready)", ready);

    const auto metadata = guarded([this](const route_request& req, http_response& res) {
      send_json(res, model_metadata_json(service.find_ready(std::string(req.matches[1]), version_of(req))));
    });
    get(R"(/v2/models/([^/]+))", metadata);
    get(R"(/v2/models/([^/]+)/versions/([^/]+))", metadata);

    const auto config = guarded([this](const route_request& req, http_response& res) {
      send_json(res, model_config_json(service.find_ready(std::string(req.matches[1]), version_of(req))));
    });
    get(R"(/v2/models/([^/]+)/config)", config);
    get(R"(/v2/models/([^/]+)/versions/([^/]+)/config)", config);

    const auto infer_route = guarded([this](const route_request& req, http_response& res) { infer(req, res); });
    post(R"(/v2/models/([^/]+)/infer)", infer_route);
    post(R"(/v2/models/([^/]+)/versions/([^/]+)/infer)", infer_route);

    add_shm_routes();
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

  void add_cuda_shm_routes() {
    const auto status = [](const std::vector<cuda_shm_region_status>& regions) {
      json list = json::array();
      for (const auto& r : regions)
        list.push_back({{"name", r.name}, {"device_id", r.device_id}, {"byte_size", r.byte_size}});
      return list;
    };
    get("/v2/cudasharedmemory/status", guarded([this, status](const auto&, auto& res) {
      send_json(res, status(cuda_shm().status()));
    }));
    get(R"(/v2/cudasharedmemory/region/([^/]+)/status)", guarded([this, status](const route_request& req, auto& res) {
      send_json(res, status(cuda_shm().status(req.matches[1])));
    }));
    post(R"(/v2/cudasharedmemory/region/([^/]+)/register)", guarded([this](const route_request& req, auto& res) {
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
    post(R"(/v2/cudasharedmemory/region/([^/]+)/unregister)", guarded([this](const route_request& req, auto& res) {
      cuda_shm().unregister_region(req.matches[1]);
      res.status = 200;
    }));
    post("/v2/cudasharedmemory/unregister", guarded([this](const auto&, auto& res) {
      cuda_shm().unregister_all();
      res.status = 200;
    }));
  }

  void add_shm_routes() {
    get("/v2/systemsharedmemory/status", guarded([this](const auto&, auto& res) {
      send_json(res, shm_status_json(system_shm().status()));
    }));
    get(R"(/v2/systemsharedmemory/region/([^/]+)/status)", guarded([this](const route_request& req, auto& res) {
      send_json(res, shm_status_json(system_shm().status(req.matches[1])));
    }));
    post(R"(/v2/systemsharedmemory/region/([^/]+)/register)", guarded([this](const route_request& req, auto& res) {
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
    post(R"(/v2/systemsharedmemory/region/([^/]+)/unregister)", guarded([this](const route_request& req, auto& res) {
      system_shm().unregister_region(req.matches[1]);
      res.status = 200;
    }));
    post("/v2/systemsharedmemory/unregister", guarded([this](const auto&, auto& res) {
      system_shm().unregister_all();
      res.status = 200;
    }));
    add_cuda_shm_routes();
  }
};

http_frontend::http_frontend(inference_service& service, const http_options& options)
    : state_(std::make_unique<state>(service, options)) {}

http_frontend::~http_frontend() { stop(); }

int http_frontend::bind() { return state_->transport.bind(); }

void http_frontend::serve_blocking() { state_->transport.serve_blocking(); }

void http_frontend::stop() { state_->transport.stop(); }

}  // namespace ferry::serve
