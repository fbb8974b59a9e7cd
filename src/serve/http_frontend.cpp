#include "serve/http_frontend.hpp"

#include <strings.h>

#include <nlohmann/json.hpp>

#include "serve/client_json.hpp"
#include "serve/http_documents.hpp"
#include "serve/http_transport.hpp"
#include "serve/metrics_text.hpp"
#include "serve/request_error.hpp"
#include "serve/route_pattern.hpp"
#include "serve/cuda_shm_registry.hpp"
#include "serve/shm_registry.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

constexpr const char* json_type = "application/json";

// Longer request paths are answered 414 before any route is tried: no route has a segment near
// this long, and a path is quoted in the 404 of a route that does not exist.
constexpr std::size_t max_path_bytes = 8192;

// What a route's handler sees: the request, and the captures of its path ([0] the model or
// region, [1] the version where the route has one).
struct route_request {
  const http_request& http;
  std::vector<std::string> captures;
};

using route_handler = std::function<void(const route_request&, http_response&)>;

struct route {
  std::string method;
  route_pattern path;
  route_handler handler;
  std::size_t max_body_bytes;  // larger bodies are refused unread
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
  const std::string what = res.status == 404 ? "no such endpoint: " + quote_text(method) + " " + quote_text(path)
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
    } catch (const json::exception& e) {
      // Only clients' JSON is read here: what the library refuses (a type_error or out_of_range of
      // an access no check guarded) is the client's error, not the server's.
      send_error(res, 400, "unexpected JSON in the request: " + quote_text(e.what(), 256));
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  };
}

// The Inference-Header-Content-Length header. Given twice, it is refused: which one the client
// meant cannot be told, and taking either would silently drop the other.
std::optional<std::string_view> inference_header_length(const http_request& req) {
  constexpr std::string_view name = "Inference-Header-Content-Length";
  std::optional<std::string_view> value;
  for (const auto& [key, text] : req.headers) {
    if (key.size() != name.size() || strncasecmp(key.data(), name.data(), name.size()) != 0) continue;
    if (value)
      throw bad_request(std::string(name) + " is given more than once ('" + quote_text(*value) + "' and '" +
                        quote_text(text) + "'): give it once");
    value = text;
  }
  return value;
}

std::string version_of(const route_request& req) {
  return req.captures.size() > 1 ? req.captures[1] : std::string();
}

json parse_json_body(const route_request& req) {
  return req.http.body.empty() ? json::object() : parse_client_json(req.http.body, "the request body");
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
        transport(o, {[this](const http_request& req) { return dispatch(req); },
                      [this](int status, const std::string& message) { return refused(status, message); },
                      [this](std::string_view method, std::string_view path) { return body_limit(method, path); }}) {
    add_routes();
  }

  // The body limit of the route a request goes to; the small one for a request no route takes.
  std::size_t body_limit(std::string_view method, std::string_view path) const {
    if (method == "HEAD") method = "GET";
    if (path.size() <= max_path_bytes)
      for (const auto& r : routes)
        if (r.method == method && r.path.match(path)) return r.max_body_bytes;
    return options.max_small_body_bytes;
  }

  // The answer to a request the transport refuses before any route sees it (400, 408, 413, 503),
  // in the transport's words except for 413: the transport knows only the limit of the route
  // that refused the body, so the answer names both, letting a client tell which one it hit.
  http_response refused(int status, const std::string& message) const {
    http_response res;
    send_error(res, status,
               status != 413 ? message
                             : "request body exceeds the server's limit: " + std::to_string(options.max_body_bytes) +
                                   " bytes for inference, " + std::to_string(options.max_small_body_bytes) +
                                   " bytes for every other endpoint");
    return res;
  }

  http_response dispatch(const http_request& req) const {
    // HEAD is GET without the body (the transport leaves it out).
    const std::string_view method = req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
    http_response res;
    if (req.path.size() > max_path_bytes) {
      send_error(res, 414, "request path of " + std::to_string(req.path.size()) +
                               " bytes exceeds the server's limit of " + std::to_string(max_path_bytes) + " bytes");
      return res;
    }
    res.status = 404;
    for (const auto& r : routes) {
      if (r.method != method) continue;
      auto captures = r.path.match(req.path);
      if (!captures) continue;
      res.status = 200;
      r.handler(route_request{req, std::move(*captures)}, res);
      break;
    }
    fill_error_body(res, req.method, req.path);
    return res;
  }

  void get(const char* path, route_handler handler) {
    routes.push_back({"GET", route_pattern(path), std::move(handler), options.max_small_body_bytes});
  }
  void post(const char* path, route_handler handler, bool inference = false) {
    routes.push_back({"POST", route_pattern(path), std::move(handler),
                      inference ? options.max_body_bytes : options.max_small_body_bytes});
  }

  void infer(const route_request& req, http_response& res) {
    const std::optional<std::string_view> header_length = inference_header_length(req.http);
    // The model first: its signature checks each input before the input's data is decoded.
    const std::string& name = req.captures[0];
    const served_model& model = service.find_ready(name, version_of(req));
    const auto check = [&](const input_tensor& in) { check_input(model.signature, name, in); };
    http_infer_request parsed = parse_http_infer_request(req.http.body, header_length, options.limits, check);
    parsed.request.model = name;
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
      send_json(res, statistics_json({&service.find(req.captures[0], version_of(req))}));
    });
    get("/v2/models/{}/stats", model_stats);
    get("/v2/models/{}/versions/{}/stats", model_stats);

    const auto ready = guarded([this](const route_request& req, http_response& res) {
      (void)service.find_ready(req.captures[0], version_of(req));
      res.status = 200;
    });
    get("/v2/models/{}/ready", ready);
    get("/v2/models/{}/versions/{}/ready", ready);

    const auto metadata = guarded([this](const route_request& req, http_response& res) {
      send_json(res, model_metadata_json(service.find_ready(req.captures[0], version_of(req))));
    });
    get("/v2/models/{}", metadata);
    get("/v2/models/{}/versions/{}", metadata);

    const auto config = guarded([this](const route_request& req, http_response& res) {
      send_json(res, model_config_json(service.find_ready(req.captures[0], version_of(req))));
    });
    get("/v2/models/{}/config", config);
    get("/v2/models/{}/versions/{}/config", config);

    const auto infer_route = guarded([this](const route_request& req, http_response& res) { infer(req, res); });
    post("/v2/models/{}/infer", infer_route, true);
    post("/v2/models/{}/versions/{}/infer", infer_route, true);

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
    get("/v2/cudasharedmemory/region/{}/status", guarded([this, status](const route_request& req, auto& res) {
      send_json(res, status(cuda_shm().status(req.captures[0])));
    }));
    post("/v2/cudasharedmemory/region/{}/register", guarded([this](const route_request& req, auto& res) {
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
      registry.register_region(req.captures[0], decode_base64((*handle)["b64"].get<std::string>()),
                               device->get<std::int64_t>(), byte_size->get<std::size_t>());
      res.status = 200;
    }));
    post("/v2/cudasharedmemory/region/{}/unregister", guarded([this](const route_request& req, auto& res) {
      cuda_shm().unregister_region(req.captures[0]);
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
    get("/v2/systemsharedmemory/region/{}/status", guarded([this](const route_request& req, auto& res) {
      send_json(res, shm_status_json(system_shm().status(req.captures[0])));
    }));
    post("/v2/systemsharedmemory/region/{}/register", guarded([this](const route_request& req, auto& res) {
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
      registry.register_region(req.captures[0], key->get<std::string>(), offset, byte_size->get<std::size_t>());
      res.status = 200;
    }));
    post("/v2/systemsharedmemory/region/{}/unregister", guarded([this](const route_request& req, auto& res) {
      system_shm().unregister_region(req.captures[0]);
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
