#include "serve/transport/http/http_frontend.hpp"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <new>
#include <thread>

#include <nlohmann/json.hpp>

#include "serve/admission/answer_size.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/observability/allocation_failures.hpp"
#include "serve/observability/request_failure.hpp"
#include "serve/service/metrics_text.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/transport/http/http_documents.hpp"
#include "serve/transport/http/http_transport.hpp"
#include "serve/transport/http/route_pattern.hpp"
#include "serve/transport/http/work_lanes.hpp"
#include "serve/transport/inline_work.hpp"
#include "serve/vocabulary/peer_identity.hpp"
#include "serve/vocabulary/request_error.hpp"

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

// How a route is answered: on the I/O thread at once (quick: reads a few counters or documents,
// never blocks), on the pool (it has a body to decode, or touches shared memory), as an inference
// (decided from its headers, decoded on the pool, answered when its model calls back), or as model
// control (its handler runs on the repository's control thread, which may wait: model_control.hpp).
enum class route_kind { quick, pooled, inference, control };

struct route {
  std::string method;
  route_pattern path;
  route_handler handler;       // unset for the inference routes
  std::size_t max_body_bytes;  // larger bodies are refused unread
  route_kind kind;
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
  // Every 503 is a state that passes (a full queue or budget, loading, shutting down): a client
  // may try again, no sooner than this.
  if (status == 503) res.headers.emplace_back("Retry-After", "1");
}

http_response error_response(int status, const std::string& message) {
  http_response res;
  send_error(res, status, message);
  return res;
}

// Every error answer carries a body, also those no handler wrote one for.
void fill_error_body(http_response& res, const std::string& method, const std::string& path) {
  if (res.status < 400 || !res.body.empty()) return;
  const std::string what = res.status == 404 ? "no such endpoint: " + quote_text(method) + " " + quote_text(path)
                                             : "bad request (HTTP " + std::to_string(res.status) + ")";
  send_error(res, res.status, what);
}

// The protocol's error answer to the exception in flight (call inside a catch block); memory
// that could not be allocated at `stage` fails the request alone (503).
void answer_current_exception(http_response& res, allocation_stage stage = allocation_stage::decode) {
  const request_error e = current_request_error(stage);
  send_error(res, http_status(e.status()), e.what());
}

// Runs a route, turning every exception into the protocol's error answer.
template <typename F>
route_handler guarded(F route) {
  return [route](const route_request& req, http_response& res) {
    try {
      route(req, res);
    } catch (...) {
      res = {};
      answer_current_exception(res);
    }
  };
}

bool same_text_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Inference bodies are JSON (all of it, or a JSON header before binary tensors), or octet-stream
// for the binary form; curl's default for -d is accepted too. Anything else (a form, multipart,
// text) cannot be an inference request, and is told so before its body is read.
std::optional<std::string> unsupported_body_type(const http_request& head) {
  if (const auto type = head.header("Content-Type")) {
    std::string media(type->substr(0, type->find(';')));
    media.erase(media.find_last_not_of(" \t") + 1);
    std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
    if (media != "application/json" && media != "application/octet-stream" &&
        media != "application/x-www-form-urlencoded")
      return "Content-Type '" + quote_text(*type) +
             "' is not an inference body: send application/json, or application/octet-stream with "
             "Inference-Header-Content-Length";
  }
  if (const auto encoding = head.header("Content-Encoding");
      encoding && !same_text_ignoring_case(*encoding, "identity"))
    return "Content-Encoding '" + quote_text(*encoding) +
           "' is not supported by this server: send the body uncompressed";
  return std::nullopt;
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

std::string version_of(const std::vector<std::string>& captures) {
  return captures.size() > 1 ? captures[1] : std::string();
}

std::string version_of(const route_request& req) { return version_of(req.captures); }

// Who sent the request, for its shared-memory regions (shm_client.hpp).
shm_client shm_client_of(const http_request& req) {
  return tcp_shm_client({req.peer.address, req.peer.port, req.peer.local_port, req.peer.local_address});
}

json parse_json_body(const route_request& req) {
  return req.http.body.empty() ? json::object() : parse_client_json(req.http.body, "the request body");
}

// One inference request while its model works on it: the HTTP request (its body holds the
// binary inputs the model reads), what the answer must look like, and where it goes.
struct infer_call {
  http_request http;
  std::vector<std::string> requested;  // the outputs asked for, by name
  std::vector<bool> binary_outputs;
  bool binary_by_default = false;
  http_reply reply;
};

int default_threads() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 16); }

}  // namespace

struct http_frontend::state {
  inference_service& service;
  http_options options;
  std::vector<route> routes;  // tried in order, the first match answers
  work_lanes pool;            // decodes bodies and encodes answers, small jobs apart from large
  http_transport transport;

  state(inference_service& s, const http_options& o)
      : service(s),
        options(o),
        pool(static_cast<std::size_t>(o.threads > 0 ? o.threads : default_threads())),
        transport(with_intake(o, s),
                  {[this](const http_request& head) { return admit(head); },
                   [this](http_request&& req, http_reply reply) { handle(std::move(req), reply); },
                   [this](int status, const std::string& message) { return refused(status, message); }}) {
    add_routes();
  }

  ~state() {
    transport.stop();
    // A load or unload still running calls into this front end's routes: it ends first, and no
    // other starts (model_control.hpp).
    service.repository().control().stop();
    pool.join();
  }

  static http_transport_options with_intake(http_transport_options o, inference_service& s) {
    o.intake = &s.intake();
    return o;
  }

  // The route a request goes to, with its captures; none for a request no route takes.
  std::optional<std::pair<const route*, std::vector<std::string>>> find_route(const http_request& req) const {
    // HEAD is GET without the body (the transport leaves it out).
    const std::string_view method = req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
    if (req.path.size() > max_path_bytes) return std::nullopt;
    for (const auto& r : routes) {
      if (r.method != method) continue;
      if (auto captures = r.path.match(req.path)) return std::pair{&r, std::move(*captures)};
    }
    return std::nullopt;
  }

  // The largest inference body: the transport's limit, never more than the whole in-flight budget.
  std::size_t inference_body_limit() const {
    return std::min(options.max_body_bytes, service.intake().admissible_bytes());
  }
  std::size_t json_body_limit() const {
    return std::min(inference_body_limit(), options.limits.max_inference_header_bytes);
  }

  // Decided from the headers, before any byte of the body is read: a request that cannot be
  // served is answered now, and its body never costs memory.
  http_admission admit(const http_request& head) const {
    http_admission a;
    if (head.path.size() > max_path_bytes) {
      a.answer =
          error_response(414, "request path of " + std::to_string(head.path.size()) +
                                  " bytes exceeds the server's limit of " + std::to_string(max_path_bytes) + " bytes");
      return a;
    }
    const auto found = find_route(head);
    if (!found) {
      http_response res;
      res.status = 404;
      fill_error_body(res, head.method, head.path);
      a.answer = std::move(res);
      return a;
    }
    const auto& [r, captures] = *found;
    a.body_limit = r->max_body_bytes;
    if (r->kind != route_kind::inference) return a;
    try {
      const auto model = service.find_ready(captures[0], version_of(captures));
      if (const auto why = unsupported_body_type(head)) {
        model->stats->record_failure(0, failure_reason::rejected);
        a.answer = error_response(415, *why);
        return a;
      }
      // Refused by the transport from here on (budget, body limit or pace): the model's rejection.
      a.refused = [model] { model->stats->record_failure(0, failure_reason::rejected); };
      a.context = model;  // the handler runs the request on the model found here
      // Without a binary part the whole body is JSON, held to the JSON limit.
      if (!inference_header_length(head)) a.body_limit = json_body_limit();
    } catch (...) {
      http_response res;
      answer_current_exception(res);
      a.answer = std::move(res);
      return a;
    }
    a.counted = true;
    return a;
  }

  // The answer to a request the transport refuses before any route sees it (400, 408, 413, 503),
  // in the transport's words except for 413: the transport knows only the limit of the route
  // that refused the body, so the answer names them all, letting a client tell which one it hit.
  http_response refused(int status, const std::string& message) const {
    if (status != 413 || message.rfind("request body exceeds the server's limit of ", 0) != 0)
      return error_response(status, message);
    return error_response(413, "request body exceeds the server's limit: " + std::to_string(inference_body_limit()) +
                                   " bytes for inference (" + std::to_string(json_body_limit()) +
                                   " when it is all JSON), " + std::to_string(options.max_small_body_bytes) +
                                   " bytes for every other endpoint");
  }

  // On an I/O thread: quick routes answer now, and so does a small inference body (decoded here
  // and queued for its model); the rest go to the pool.
  void handle(http_request&& req, const http_reply& reply) {
    auto found = find_route(req);
    if (!found) {  // admit() answered these; kept for a transport without admission
      http_response res;
      res.status = 404;
      fill_error_body(res, req.method, req.path);
      return reply.send(std::move(res));
    }
    auto& [r, captures] = *found;
    if (r->kind == route_kind::quick) return reply.send(run(*r, req, captures));
    if (r->kind == route_kind::control) return control(*r, std::move(req), std::move(captures), reply);
    if (r->kind == route_kind::inference && req.body.size() <= inline_request_bytes)
      return infer(std::move(req), std::move(captures), reply);
    const std::size_t bytes = req.body.size();
    pool.post(bytes, [this, r = r, req = std::move(req), captures = std::move(captures), reply]() mutable {
      if (r->kind == route_kind::inference) return infer(std::move(req), std::move(captures), reply);
      reply.send(run(*r, req, captures));
    });
  }

  // Model control: the handler runs on the control thread, and its outcome (or the control's
  // refusal or timeout) answers the request from there.
  void control(const route& r, http_request&& req, std::vector<std::string> captures, const http_reply& reply) {
    auto request = std::make_shared<const http_request>(std::move(req));
    auto names = std::make_shared<const std::vector<std::string>>(std::move(captures));
    const std::string what = std::string(request->path.ends_with("/unload") ? "unload" : "load") + " of model '" +
                             quote_text(names->at(0)) + "'";
    const auto answer = [reply, request](std::exception_ptr outcome) {
      http_response res;
      res.status = 200;
      if (outcome) {
        try {
          std::rethrow_exception(outcome);
        } catch (...) {
          answer_current_exception(res);
        }
      }
      fill_error_body(res, request->method, request->path);
      reply.send(std::move(res));
    };
    try {
      service.repository().control().submit(
          what,
          [&r, request, names] {
            http_response ignored;  // a control handler throws what goes wrong, and answers nothing else
            r.handler(route_request{*request, *names}, ignored);
          },
          answer);
    } catch (...) {
      answer(std::current_exception());
    }
  }

  http_response run(const route& r, const http_request& req, std::vector<std::string> captures) const {
    http_response res;
    res.status = 200;
    r.handler(route_request{req, std::move(captures)}, res);
    fill_error_body(res, req.method, req.path);
    return res;
  }

  // On the pool (or an I/O thread for a small body): decodes the body, checks every input against
  // the model, and queues the request. The body stays with the call until the model's callback:
  // the binary inputs are read there.
  void infer(http_request&& req, std::vector<std::string> captures, const http_reply& reply) {
    auto call = std::make_shared<infer_call>(infer_call{std::move(req), {}, {}, false, reply});
    std::shared_ptr<const served_model> model;
    bool queueing = false;  // service.infer runs: its scheduler counts a full queue itself
    try {
      const std::optional<std::string_view> header_length = inference_header_length(call->http);
      // The model first, as admission found it from the headers (looked up once): its signature
      // checks each input before the input's data is decoded.
      const std::string& name = captures[0];
      model = std::static_pointer_cast<const served_model>(call->http.admitted);
      if (!model) model = service.find_ready(name, version_of(captures));
      const auto check = [&](const input_tensor& in) { check_input(model->signature, name, in); };
      http_infer_request parsed = parse_http_infer_request(call->http.body, header_length, options.limits, check);
      parsed.request.model = name;
      parsed.request.version = version_of(captures);
      parsed.request.inputs_checked = true;  // by `check`, as each input was decoded
      if (uses_shared_memory(parsed.request)) parsed.request.client = shm_client_of(call->http);
      for (const auto& o : parsed.request.outputs) call->requested.push_back(o.name);
      call->binary_outputs = std::move(parsed.binary_outputs);
      call->binary_by_default = parsed.binary_by_default;
      take_answer_bound(*call, *model, parsed.request);
      queueing = true;
      service.infer(std::move(parsed.request), model, [this, call, model](infer_result result) mutable {
        // On the model's worker: a small answer is encoded here and goes straight to its
        // connection; a larger one (or an error) is encoded on the pool, so the worker goes on.
        if (small_answer(result)) return answer(*call, *model, std::move(result));
        const std::size_t bytes = answer_data_bytes(result);  // before the task takes the result
        pool.post(bytes, [call = std::move(call), model = std::move(model), result = std::move(result)]() mutable {
          answer(*call, *model, std::move(result));
        });
      });
    } catch (...) {
      http_response res;
      answer_current_exception(res);
      if (model && !(queueing && res.status == 503)) model->stats->record_failure(0, failure_reason::rejected);
      call->reply.send(std::move(res));
    }
  }

  // Takes the bound of the request's answer from the in-flight budget, in the form the request
  // asks for it (answer_size.hpp); throws request_error when it does not fit: 503 while the
  // budget is busy, 413 when it could never fit.
  void take_answer_bound(const infer_call& call, const served_model& model, infer_request& request) const {
    const auto binary = [&call](const std::string& output) {
      bool choice = call.binary_by_default;
      for (std::size_t i = 0; i < call.requested.size() && i < call.binary_outputs.size(); ++i)
        if (call.requested[i] == output) choice = call.binary_outputs[i];
      return choice;
    };
    const std::size_t bound =
        answer_bytes_bound(model.signature, request, answer_protocol::http, call.http.body.size(), binary);
    if (call.reply.reserve(bound)) return;
    const request_intake& intake = service.intake();
    const std::size_t body = call.http.body.size();
    const std::string& network = call.http.peer.network;
    const std::string what = "model '" + quote_text(model.config.name) + "': this request's answer may take up to " +
                             std::to_string(bound) + " bytes beside its " + std::to_string(body) + ": ";
    if (body + bound > intake.largest_request(network))
      throw request_error(error_status::payload_too_large, what + intake.too_large_message(body + bound, network) +
                                                               " (binary outputs take less than JSON)");
    throw request_error(error_status::unavailable, what + intake.no_room_message(bound, network));
  }

  static void answer(infer_call& call, const served_model& model, infer_result result) {
    call.http = {};  // the inputs have been read: the body goes before the answer is built
    http_response res;
    const bool failed = static_cast<bool>(result.failure);  // counted by the scheduler already
    try {
      if (result.failure) std::rethrow_exception(result.failure);
      const infer_response& response = result.response;
      const auto binary = binary_choices(call.requested, call.binary_outputs, call.binary_by_default, response);
      http_infer_body encoded = encode_http_infer_response(response, binary);
      result = {};  // the outputs are in the body now
      if (encoded.header_length) {
        res.headers.emplace_back("Inference-Header-Content-Length", std::to_string(*encoded.header_length));
        set_content(res, std::move(encoded.body), "application/octet-stream");
      } else {
        set_content(res, std::move(encoded.body), json_type);
      }
    } catch (...) {
      res = {};
      answer_current_exception(res, allocation_stage::answer);
      if (!failed) model.stats->record_failure(0, failure_reason::other);  // the answer could not be made
    }
    call.reply.send(std::move(res));
  }

  void get(const char* path, route_handler handler, route_kind kind = route_kind::quick) {
    routes.push_back({"GET", route_pattern(path), std::move(handler), options.max_small_body_bytes, kind});
  }
  void post(const char* path, route_handler handler, route_kind kind = route_kind::pooled) {
    routes.push_back({"POST", route_pattern(path), std::move(handler),
                      kind == route_kind::inference ? inference_body_limit() : options.max_small_body_bytes, kind});
  }

  // Triton's load may carry a config or model files inline; ferry loads what the repository holds,
  // and says so rather than ignoring them.
  static void refuse_load_overrides(const json& body) {
    if (!body.is_object()) throw bad_request("the load request's body must be a JSON object");
    const auto parameters = body.find("parameters");
    if (parameters == body.end() || !parameters->is_object()) return;
    for (const auto& [key, value] : parameters->items())
      if (key == "config" || key.rfind("file:", 0) == 0)
        throw request_error(error_status::not_implemented,
                            "load parameter '" + quote_text(key) +
                                "' is not supported: ferry loads the model's folder as the repository holds it");
  }

  void add_routes() {
    get("/v2/health/live", guarded([this](const auto&, auto& res) { res.status = service.live() ? 200 : 503; }));
    get("/v2/health/ready", guarded([this](const auto&, auto& res) {
          const std::string why = service.not_ready_reason();
          res.status = why.empty() ? 200 : 503;
          if (!why.empty()) send_error(res, 503, why);
        }));
    get("/v2", guarded([this](const auto&, auto& res) { send_json(res, server_metadata_json(service)); }));
    get("/metrics", guarded([this](const auto&, auto& res) {
          set_content(res, render_metrics(service), "text/plain; version=0.0.4");
        }));
    post("/v2/repository/index",
         guarded([this](const auto&, auto& res) { send_json(res, repository_index_json(service.repository())); }));

    // Load and unload wait for the model (its build, or its requests in flight): on the
    // repository's control thread, never on a thread requests need. Their handlers throw.
    post(
        "/v2/repository/models/{}/load",
        [this](const route_request& req, auto&) {
          refuse_load_overrides(parse_json_body(req));
          service.load_model(req.captures[0]);
        },
        route_kind::control);
    post(
        "/v2/repository/models/{}/unload",
        [this](const route_request& req, auto&) { service.unload_model(req.captures[0]); }, route_kind::control);

    // Statistics first: "/v2/models/stats" would otherwise read as metadata of a model "stats".
    get("/v2/models/stats", guarded([this](const auto&, auto& res) {
          const auto models = service.repository().models();
          std::vector<const served_model*> all;
          for (const auto& m : models) all.push_back(m.get());
          send_json(res, statistics_json(all));
        }));
    const auto model_stats = guarded([this](const route_request& req, http_response& res) {
      const auto model = service.find(req.captures[0], version_of(req));
      send_json(res, statistics_json({model.get()}));
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
      send_json(res, model_metadata_json(*service.find_ready(req.captures[0], version_of(req))));
    });
    get("/v2/models/{}", metadata);
    get("/v2/models/{}/versions/{}", metadata);

    const auto config = guarded([this](const route_request& req, http_response& res) {
      send_json(res, model_config_json(*service.find_ready(req.captures[0], version_of(req))));
    });
    get("/v2/models/{}/config", config);
    get("/v2/models/{}/versions/{}/config", config);

    post("/v2/models/{}/infer", {}, route_kind::inference);
    post("/v2/models/{}/versions/{}/infer", {}, route_kind::inference);

    add_shm_routes();
  }

  void add_cuda_shm_routes() {
    const auto status = [](const std::vector<cuda_shm_region_status>& regions) {
      json list = json::array();
      for (const auto& r : regions)
        list.push_back({{"name", r.name}, {"device_id", r.device_id}, {"byte_size", r.byte_size}});
      return list;
    };
    get("/v2/cudasharedmemory/status", guarded([this, status](const route_request& req, auto& res) {
          send_json(res, status(service.allowed_cuda_shm().status({}, shm_client_of(req.http))));
        }),
        route_kind::pooled);
    get("/v2/cudasharedmemory/region/{}/status", guarded([this, status](const route_request& req, auto& res) {
          send_json(res, status(service.allowed_cuda_shm().status(req.captures[0], shm_client_of(req.http))));
        }),
        route_kind::pooled);
    post(
        "/v2/cudasharedmemory/region/{}/register", guarded([this](const route_request& req, auto& res) {
          cuda_shm_registry& registry = service.allowed_cuda_shm();
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
                                   device->get<std::int64_t>(), byte_size->get<std::size_t>(), shm_client_of(req.http));
          res.status = 200;
        }));
    post("/v2/cudasharedmemory/region/{}/unregister", guarded([this](const route_request& req, auto& res) {
           service.allowed_cuda_shm().unregister_region(req.captures[0], shm_client_of(req.http));
           res.status = 200;
         }));
    post("/v2/cudasharedmemory/unregister", guarded([this](const route_request& req, auto& res) {
           service.allowed_cuda_shm().unregister_all(shm_client_of(req.http));
           res.status = 200;
         }));
  }

  void add_shm_routes() {
    get("/v2/systemsharedmemory/status", guarded([this](const route_request& req, auto& res) {
          send_json(res, shm_status_json(service.allowed_system_shm().status({}, shm_client_of(req.http))));
        }),
        route_kind::pooled);
    get("/v2/systemsharedmemory/region/{}/status", guarded([this](const route_request& req, auto& res) {
          send_json(res,
                    shm_status_json(service.allowed_system_shm().status(req.captures[0], shm_client_of(req.http))));
        }),
        route_kind::pooled);
    post("/v2/systemsharedmemory/region/{}/register", guarded([this](const route_request& req, auto& res) {
           shm_registry& registry = service.allowed_system_shm();
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
           registry.register_region(req.captures[0], key->get<std::string>(), offset, byte_size->get<std::size_t>(),
                                    shm_client_of(req.http));
           res.status = 200;
         }));
    post("/v2/systemsharedmemory/region/{}/unregister", guarded([this](const route_request& req, auto& res) {
           service.allowed_system_shm().unregister_region(req.captures[0], shm_client_of(req.http));
           res.status = 200;
         }));
    post("/v2/systemsharedmemory/unregister", guarded([this](const route_request& req, auto& res) {
           service.allowed_system_shm().unregister_all(shm_client_of(req.http));
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
