// HTTP/1.1 over TCP for the KServe front end, on Boost.Beast's parser and serializer (header-only).
//
// Synchronous: one thread accepts, a fixed pool of `threads` workers serves one connection each,
// reading a request, handing it to the handler and writing the answer, for as long as the client
// keeps the connection (HTTP/1.1 persistent connections, Connection: close honoured). Bodies are
// read 64 KiB per recv(); `Expect: 100-continue` is answered before the body is read. The
// transport answers what it refuses itself (a malformed request, a body over the limit) through
// the `refused` handler, then closes the connection. The sockets are Linux's own, each wait a
// poll() that also watches stop(), so stop() ends idle and half-read connections at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::serve {

struct http_request {
  std::string method;  // as sent: GET, POST, ...
  std::string path;    // percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of that name (case-insensitive), if any.
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  std::string content_type;  // none when empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct http_transport_options {
  std::string host = "0.0.0.0";
  int port = 8000;    // 0: any free port
  int threads = 128;  // connections served at once; more wait for a free worker
  std::size_t max_body_bytes = std::size_t{1} << 30;  // larger bodies are refused with 413
  std::size_t max_header_bytes = std::size_t{64} << 10;  // the request line and headers; 400 beyond
  // A connection silent this long, between requests or within one, is closed (cpp-httplib's
  // keep-alive and read timeouts, which clients of this server have lived with).
  std::chrono::milliseconds timeout{5000};
};

struct http_handlers {
  // Answers a request; must not throw.
  std::function<http_response(const http_request&)> request;
  // The answer to a request the transport refuses itself: 413 (body over the limit) or 400.
  std::function<http_response(int status)> refused;
  // The largest body a request of this method and path (as http_request has them) may carry,
  // asked once its headers are read: a larger body is refused with 413 before it is read. Unset,
  // or above max_body_bytes: max_body_bytes.
  std::function<std::size_t(std::string_view method, std::string_view path)> body_limit;
};

class http_transport {
 public:
  http_transport(http_transport_options options, http_handlers handlers);
  ~http_transport();
  http_transport(const http_transport&) = delete;
  http_transport& operator=(const http_transport&) = delete;

  // Binds and listens (backlog SOMAXCONN, SO_REUSEADDR but never SO_REUSEPORT: a port in use is
  // an error). Returns the port. Throws ferry::error when it cannot.
  [[nodiscard]] int bind();
  // Accepts and serves until stop(); blocking. Returns once every worker has finished.
  void serve_blocking();
  // Safe from any thread, any number of times, also before serve_blocking(): requests being
  // handled finish, idle and half-read connections are closed, serve_blocking() returns.
  void stop();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// The path of a request target ("/a%20b?x=1" -> "/a b"), as routes see it; malformed escapes stay.
[[nodiscard]] std::string decode_target_path(std::string_view target);

}  // namespace ferry::serve
