// HTTP/1.1 over TCP for the KServe front end, on Boost.Beast and Boost.Asio (header-only).
//
// Asynchronous I/O and asynchronous answers, so a connection costs a thread only while a handler
// runs, and no handler ever waits:
// - A few I/O threads (`io_threads`, by default a quarter of the cores) run the sockets:
//   accepting, reading requests, writing answers. Each has an I/O context of its own and serves
//   the connections given to it in turn, so a request's events wake no other I/O thread. An
//   idle keep-alive connection, or a client sending a byte a second, is a socket and a timer,
//   never a blocked thread, so neither keeps other clients waiting.
// - A request's head is checked byte by byte as it arrives (header_block.hpp), and its framing
//   held to RFC 9112 §6 once parsed (message_framing.hpp): a message two readers could frame
//   differently is refused (400, or 501) and its connection closed, nothing after it read.
// - Once a request's headers are read, `admit` decides from them alone, before any byte of the
//   body is read: answer now (an unknown model, a wrong content type; the connection is then
//   closed unless the request has no body), the body limit (413 beyond it, unread), whether the
//   request counts against the request intake (the in-flight memory budget: 503 with
//   Retry-After when its announced body does not fit what is free, also unread; a counted body
//   then holds what has arrived and a step ahead, body_budget.hpp, within its network's share).
// - A complete request goes to `request` on the connection's I/O thread, with an http_reply to
//   answer through, now or later from any thread. Handlers must not block: work that takes time
//   (decoding a body, an inference) is handed elsewhere, and its completion answers the reply.
//   So health and metadata are answered at once whatever the models are doing.
// - Deadlines are whole, not per read: a connection with no request begun within idle_timeout
//   is closed; once a request's first byte has arrived its headers must arrive within
//   header_timeout, and its headers and body within request_timeout (or it is answered 408 and
//   the connection closed), and an answer must be written within request_timeout too.
// - A request body, and an answer, must also keep moving: past `transfer_grace`, at least
//   `min_transfer_rate` bytes a second on average since it began (Apache's MinRate), and never a
//   pause as long as the grace (nginx's client_body_timeout and send_timeout). A body that
//   trickles is answered 408 and gives its share of the in-flight budget back then, not at the
//   request deadline; an answer the client does not read closes its connection.
// - At most max_connections connections are served at once, and at most
//   max_connections_per_peer from one client network (the address's /24 for IPv4, /64 for IPv6,
//   by default: peer_group.hpp), so one host, or a block of addresses one party holds, cannot
//   lock out the others. The last tenth of max_connections is kept for networks holding fewer
//   than small_peer_connections, and when the server is full a network holding fewer than
//   another by 2 is let in, an idle or half-sent connection of the network holding the most
//   closed for it, so that many attackers together cannot fill the server either.
//   One more is accepted and answered 503 (Retry-After) with Connection: close at once, without
//   reading its request, so clients learn why; only while as many again are being refused are
//   further ones closed unanswered.
//
// Persistent connections (Connection: close honoured), pipelining, `Expect: 100-continue`
// answered after admission and before the body is read, bodies read 64 KiB at a time into a
// string reserved to their Content-Length, HEAD without the body. The transport answers what it
// refuses itself (malformed request, headers or body over their limit, request not received in
// time, connection limits, the intake's refusals) through the `refused` handler, then closes the
// connection gently: it stops sending and discards what the client still sends for a moment, so
// the client reads the answer instead of a reset. stop() closes idle and half-read connections at
// once and lets requests being handled be answered.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::serve {

// The two ends of a request's connection: who sent it, and where it arrived.
struct http_peer {
  std::string address;  // the client's address ("127.0.0.1", "::1")
  std::uint16_t port = 0;
  std::uint16_t local_port = 0;  // the server's port the client connected to
  std::string local_address;     // and its address there
  // Its client network (peer_group.hpp: "127.0.0.0/24"), as the connection caps and the intake's
  // shares count it.
  std::string network;
};

struct http_request {
  http_peer peer;
  std::string method;  // as sent: GET, POST, ...
  std::string path;    // percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::uint64_t> content_length;  // as announced; none for a chunked body or none
  bool chunked = false;                         // Transfer-Encoding: chunked
  std::string body;                             // empty while admit() looks at the request
  // What admit() found from the headers and handed on (http_admission::context): the handler
  // gets it with the body instead of looking it up again.
  std::shared_ptr<const void> admitted;

  // Whether a body follows the headers.
  [[nodiscard]] bool has_body() const noexcept { return chunked || content_length.value_or(0) > 0; }

  // The first header of that name (case-insensitive), if any.
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  std::string content_type;  // none when empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class request_intake;

struct http_transport_options {
  std::string host = "127.0.0.1";  // this machine only; "0.0.0.0": every interface
  int port = 8000;                 // 0: any free port
  // Threads running the sockets (they never block); 0: a quarter of the CPU cores, 2 to 8
  // (default_io_threads). They also decode small inference bodies (http_frontend).
  int io_threads = 0;
  std::size_t max_connections = 1024;  // served at once; one more is answered 503 and closed
  // Served at once from one client network (peer_group); 0: a quarter of max_connections (at
  // least 1).
  std::size_t max_connections_per_peer = 0;
  // The prefixes that make a client network: addresses sharing their first bits are one peer.
  int peer_prefix_ipv4 = 24;
  int peer_prefix_ipv6 = 64;
  // The last tenth of max_connections is given only to networks holding fewer than this many.
  std::size_t small_peer_connections = 4;
  // Larger bodies are refused with 413; an admission may lower it per request.
  std::size_t max_body_bytes = std::size_t{1} << 30;
  std::size_t max_header_bytes = std::size_t{64} << 10;  // the request line and headers; 400 beyond
  // A connection without a request begun this long (a new one, or a kept one between requests)
  // is closed: cpp-httplib's keep-alive timeout, which clients of this server have lived with.
  std::chrono::milliseconds idle_timeout{5000};
  // From a request's first byte, the most its headers may take to arrive (408 past it).
  std::chrono::milliseconds header_timeout{10'000};
  // From a request's first byte, the most its headers and body may take to arrive (408 past it),
  // and the most its answer may take to be written.
  std::chrono::milliseconds request_timeout{60'000};
  // A body being received and an answer being sent must move at least this many bytes a second
  // on average, once `transfer_grace` has passed since they began, and never pause as long as the
  // grace (408 / closed past it); a rate of 0: no minimum rate (pauses still end them).
  std::size_t min_transfer_rate = std::size_t{128} << 10;
  std::chrono::milliseconds transfer_grace{2000};
  // Where counted requests take their share of the in-flight budget; none: nothing is counted.
  request_intake* intake = nullptr;
};

// What admit() decides from a request's headers.
struct http_admission {
  // Set: the answer, sent at once. The body is never read: the connection is closed after the
  // answer when the request has one, and kept otherwise.
  std::optional<http_response> answer;
  std::size_t body_limit = SIZE_MAX;  // larger bodies are refused with 413 unread (at most max_body_bytes)
  // The request takes its body's bytes from the intake as they arrive, and holds them until it
  // is answered; refused when its announced body does not fit what is free, or its bytes stop
  // fitting as they arrive.
  bool counted = false;
  // Called, on the I/O thread, when the transport refuses the request after this admission and
  // before its handler sees it (no room in the intake, a body over the limit, too slow or
  // malformed): for a front end's failure counts.
  std::function<void()> refused;
  // What the front end found from the headers (its model, looked up once), handed to its request
  // handler as http_request::admitted.
  std::shared_ptr<const void> context;
};

// Answers one request: send() once, from any thread. Copies share the one answer; a reply
// dropped unanswered closes its connection.
class http_reply {
 public:
  struct target {
    virtual ~target() = default;
    virtual void deliver(http_response&& answer) = 0;
    // Takes `bytes` more of the in-flight budget for the request (its answer, once the handler
    // knows how large it can be); false, taking nothing, when they do not fit.
    virtual bool reserve(std::size_t bytes) = 0;
  };
  explicit http_reply(std::shared_ptr<target> to) : to_(std::move(to)) {}
  void send(http_response answer) const { to_->deliver(std::move(answer)); }
  // Before send(), from the thread handling the request: `bytes` more of the in-flight budget
  // for it, until its answer is written. True without taking anything for a request that is not
  // counted (http_admission::counted); false when they do not fit.
  [[nodiscard]] bool reserve(std::size_t bytes) const { return to_->reserve(bytes); }

 private:
  std::shared_ptr<target> to_;
};

struct http_handlers {
  // Decides from the headers, before the body is read (see http_admission); unset: every request
  // is read up to max_body_bytes and not counted. Runs on an I/O thread: must not block or throw.
  std::function<http_admission(const http_request& head)> admit;
  // Answers a request through `reply`, now or later. Runs on an I/O thread: must not block or
  // throw; work that takes time goes elsewhere.
  std::function<void(http_request&& request, http_reply reply)> request;
  // The answer to a request the transport refuses itself, `message` saying why: 400 (malformed,
  // headers over the limit), 408 (not received in time), 413 (body over the limit or the whole
  // in-flight budget) or 503 (connection limits, the intake's budget, shutting down; the
  // transport adds Retry-After). Must not throw; runs on an I/O thread and must not block.
  std::function<http_response(int status, const std::string& message)> refused;
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
  // reply has been answered or dropped.
  void serve_blocking();
  // Safe from any thread, any number of times, also before serve_blocking(): requests being
  // handled are answered, idle and half-read connections are closed, serve_blocking() returns.
  void stop();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// The I/O threads a transport runs when io_threads is 0: a quarter of the CPU cores, 2 to 8.
[[nodiscard]] int default_io_threads();

// The path of a request target ("/a%20b?x=1" -> "/a b"), as routes see it; malformed escapes stay.
[[nodiscard]] std::string decode_target_path(std::string_view target);

}  // namespace ferry::serve
