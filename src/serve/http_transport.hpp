// HTTP/1.1 over TCP for the KServe front end, on Boost.Beast and Boost.Asio (header-only).
//
// Asynchronous I/O, so a connection costs a thread only while its request is handled:
// - A few I/O threads (`io_threads`) run every socket: accepting, reading requests, writing
//   answers. An idle keep-alive connection, or a client sending a byte a second, is a socket
//   and a timer, never a blocked thread, so neither keeps other clients waiting.
// - Handlers may block (an inference waits for its model), so they never run on the I/O
//   threads: a complete request goes to a pool of `threads` handler threads, and its answer
//   back to the I/O threads. A blocked handler holds one handler thread; the I/O threads go on
//   reading and answering everything else. Requests beyond `threads` at once wait for a
//   handler thread, their bytes already read; a connection reads its next request only after
//   answering the last, so at most max_connections requests wait.
// - Deadlines are whole, not per read: a connection with no request begun within
//   idle_timeout is closed; once a request's first byte has arrived, its headers and body must
//   all arrive within request_timeout (or it is answered 408 and the connection closed), and
//   an answer must be written within request_timeout too.
// - At most max_connections connections are served at once. One more is accepted and
//   answered 503 with Connection: close at once, without reading its request, so clients learn
//   why; only while as many again are being refused are further ones closed unanswered.
//
// Persistent connections (Connection: close honoured), pipelining, `Expect: 100-continue`
// answered before the body is read, bodies read 64 KiB at a time, HEAD without the body. The
// transport answers what it refuses itself (malformed request, headers or body over their
// limit, request not received in time, connection limit) through the `refused` handler, then
// closes the connection gently: it stops sending and discards what the client still sends for
// a moment, so the client reads the answer instead of a reset. stop() closes idle and half-read
// connections at once and lets requests being handled be answered.
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
  int threads = 128;  // requests handled at once (the handler pool); more wait for a handler thread
  int io_threads = 2;  // threads running the sockets; they never block
  std::size_t max_connections = 1024;  // served at once; one more is answered 503 and closed
  // Larger bodies are refused with 413; handlers.body_limit may lower it per request.
  std::size_t max_body_bytes = std::size_t{1} << 30;
  std::size_t max_header_bytes = std::size_t{64} << 10;  // the request line and headers; 400 beyond
  // A connection without a request begun this long (a new one, or a kept one between requests)
  // is closed: cpp-httplib's keep-alive timeout, which clients of this server have lived with.
  std::chrono::milliseconds idle_timeout{5000};
  // From a request's first byte, the most its headers and body may take to arrive (408 past it),
  // and the most its answer may take to be written.
  std::chrono::milliseconds request_timeout{60'000};
};

struct http_handlers {
  // Answers a request; must not throw. Runs on a handler thread and may block.
  std::function<http_response(const http_request&)> request;
  // The answer to a request the transport refuses itself, `message` saying why: 400 (malformed,
  // headers over the limit), 408 (not received in time), 413 (body over the limit) or 503 (too
  // many connections). Must not throw; runs on an I/O thread and must not block.
  std::function<http_response(int status, const std::string& message)> refused;
  // The largest body a request of this method and path (as http_request has them) may carry,
  // asked once its headers are read: a larger body is refused with 413 before it is read. Unset,
  // or above max_body_bytes: max_body_bytes. Must not throw; runs on an I/O thread and must not
  // block.
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
  // Accepts and serves until stop(); blocking. Returns once every connection is closed and every
  // handler has returned.
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
