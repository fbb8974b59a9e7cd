#include "serve/transport/http/http_transport.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>

#include "ferry/core/error.hpp"
#include "serve/admission/peer_group.hpp"
#include "serve/admission/request_intake.hpp"
#include "serve/observability/allocation_failures.hpp"
#include "serve/transport/http/body_budget.hpp"
#include "serve/transport/http/header_block.hpp"
#include "serve/transport/http/message_framing.hpp"

namespace ferry::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using beast::error_code;

std::string errno_text(int code) { return std::system_category().message(code); }

// Beast 1.74 speaks boost::string_view.
std::string_view std_view(beast::string_view s) { return {s.data(), s.size()}; }

using request_parser = http::request_parser<http::string_body>;

// What an idle connection keeps to notice its next request: a request's first bytes.
constexpr std::size_t first_read_bytes = 512;
// How long a refused connection may take to receive its answer, and then to stop sending.
constexpr std::chrono::seconds refusal_linger{1};
// After a failed accept (out of descriptors or memory), how long to give connections to close.
constexpr std::chrono::milliseconds accept_backoff{50};
// What a client refused for a limit that frees up (connections, the in-flight budget, a full
// queue) is told to wait before trying again, in seconds.
constexpr const char* retry_after_seconds = "1";

// Whether a read failed on the request itself (malformed, over a limit), which gets an answer,
// rather than on the connection (closed, reset, cancelled), which does not.
bool refusable(const error_code& ec) {
  static const auto& http_errors = http::make_error_code(http::error::need_more).category();
  return ec.category() == http_errors && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// The request as admit() sees it: everything but the body.
http_request to_head(const http::request<http::string_body>& message, const request_parser& parser) {
  http_request request;
  request.method = std::string(message.method_string());
  request.path = decode_target_path(std_view(message.target()));
  for (const auto& field : message) request.headers.emplace_back(field.name_string(), field.value());
  if (const auto length = parser.content_length()) request.content_length = *length;
  request.chunked = parser.chunked();
  return request;
}

std::unique_ptr<http::response<http::string_body>> to_message(http_response&& answer, unsigned version, bool keep_alive,
                                                              bool head_only) {
  auto response =
      std::make_unique<http::response<http::string_body>>(static_cast<http::status>(answer.status), version);
  if (!answer.content_type.empty()) response->set(http::field::content_type, answer.content_type);
  for (auto& [name, value] : answer.headers) response->set(name, value);
  response->body() = std::move(answer.body);
  response->keep_alive(keep_alive);
  response->prepare_payload();
  if (head_only) response->body().clear();  // Content-Length stays that of the GET answer
  return response;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class connection;

// Why a connection is refused as it is accepted.
enum class refused_at_accept { no, over_limit, over_peer_limit, reserved };

// Everything the connections share: the options and handlers, the I/O contexts, and the table of
// open connections that stop() and the connection limits read.
//
// One I/O context per I/O thread, each connection served by one of them (taken in turn as
// connections are accepted), rather than every thread running one shared context: Asio hands
// the events of a shared context from the thread that waits on the sockets to the others, which
// woke two threads per event, several times per request. A thread of its own context runs its
// connections' events itself; other threads wake it only to deliver answers.
class server_core {
 public:
  server_core(http_transport_options o, http_handlers h) : options_(resolved(std::move(o))), handlers_(std::move(h)) {
    for (int i = 0; i < options_.io_threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      keep_running_.push_back(asio::make_work_guard(*contexts_.back()));
    }
    acceptor_.emplace(asio::make_strand(*contexts_.front()));
    accept_retry_.emplace(acceptor_->get_executor());
  }

  [[nodiscard]] const http_transport_options& options() const noexcept { return options_; }
  [[nodiscard]] const http_handlers& handlers() const noexcept { return handlers_; }
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }
  [[nodiscard]] tcp::acceptor& acceptor() noexcept { return *acceptor_; }

  void serve();
  void stop();
  // A connection's destructor: it no longer counts.
  void forget(const connection* c, bool refused, const std::string& group);
  // The connections the last tenth of max_connections is kept for (small_peer_connections).
  [[nodiscard]] std::size_t reserved_connections() const noexcept { return options_.max_connections / 10; }

 private:
  static http_transport_options resolved(http_transport_options o) {
    if (o.io_threads <= 0) o.io_threads = default_io_threads();
    if (o.max_connections_per_peer == 0) o.max_connections_per_peer = std::max<std::size_t>(1, o.max_connections / 4);
    return o;
  }
  void accept();
  void admit(tcp::socket socket, asio::io_context& context);
  // Under table_mutex_: why a new connection from `group` is refused, if it is. When the server
  // is full, a network holding fewer than another by 2 or more is let in, and one connection of
  // the network holding the most that is idle or still sending its request's head is closed for
  // it (make_room_for): however many networks fill the server, a new one is served.
  // `victim`: the connection to close for it, if one is (closed by the caller once unlocked).
  refused_at_accept refusal_at_accept(const std::string& group, std::shared_ptr<connection>& victim);
  [[nodiscard]] std::size_t serving_of(const std::string& group) const;
  bool make_room_for(std::size_t held, std::shared_ptr<connection>& victim);

  http_transport_options options_;
  const http_handlers handlers_;
  std::atomic<bool> stopping_{false};
  // Before contexts_: destroying an I/O context destroys the connections its pending operations
  // hold, which take themselves off this table.
  std::mutex table_mutex_;
  std::unordered_map<const connection*, std::weak_ptr<connection>> connections_;
  std::size_t serving_ = 0;   // connections counted against max_connections
  std::size_t refusing_ = 0;  // connections being answered 503 for being over a limit
  // By client network (peer_group): against max_connections_per_peer and the reserved tenth.
  std::unordered_map<std::string, std::size_t> serving_by_peer_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;  // one per I/O thread
  // Keep each context running while it has no connection, until stop().
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running_;
  std::size_t next_context_ = 0;           // the context of the next connection (on the acceptor's strand)
  std::optional<tcp::acceptor> acceptor_;  // on the first context
  std::optional<asio::steady_timer> accept_retry_;
};

// One accepted connection. Everything it does runs on its own strand (its socket's executor), so
// a connection is never touched by two threads at once, whichever I/O thread runs it; its
// handler runs there too, and an answer given later from another thread is posted back to it.
// Pending operations (and a reply not yet answered) hold the connection (shared_ptr): it ends
// with the last of them.
class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(server_core& server, asio::io_context& context, tcp::socket socket, refused_at_accept refused,
             http_peer peer, std::string group)
      : server_(server),
        context_(context),
        socket_(std::move(socket)),
        deadline_(socket_.get_executor()),
        refused_at_accept_(refused),
        peer_(std::move(peer)),
        group_(std::move(group)) {
    // What the buffer may hold unparsed: a head, or a chunk line or trailers (parsed only once
    // whole), and the read that brought them. Past it the read fails (buffer_overflow): 400.
    buffer_.max_size(read_chunk_bytes + server.options().max_header_bytes + max_chunk_extension_bytes);
  }
  ~connection() { server_.forget(this, refused_at_accept_ != refused_at_accept::no, group_); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] tcp::socket::executor_type executor() { return socket_.get_executor(); }

  // On the strand: serve, or answer 503 and close.
  void start() {
    const auto& o = server_.options();
    if (refused_at_accept_ == refused_at_accept::over_limit)
      return refuse(503, "the server is serving its limit of " + std::to_string(o.max_connections) +
                             " HTTP connections at once; try again later");
    if (refused_at_accept_ == refused_at_accept::over_peer_limit)
      return refuse(503, "this client address (" + peer_.address + ", network " + group_ + ") has the limit of " +
                             std::to_string(o.max_connections_per_peer) +
                             " HTTP connections open at once; try again later");
    if (refused_at_accept_ == refused_at_accept::reserved)
      return refuse(503, "the server's last " + std::to_string(server_.reserved_connections()) + " of " +
                             std::to_string(o.max_connections) +
                             " HTTP connections are kept for clients holding fewer than " +
                             std::to_string(o.small_peer_connections) + ", and this client's network (" + group_ +
                             ") holds more; try again later");
    await_request();
  }

  [[nodiscard]] const std::string& group() const noexcept { return group_; }

  // From any thread, under the server's table lock: whether the connection may be closed to make
  // room for a client of a network holding fewer (idle, or its request's head still arriving).
  [[nodiscard]] bool evictable() const noexcept { return eviction_.load() == eviction::evictable; }
  // Claims it for eviction; false when it has just become busy. Then evicted() closes it.
  [[nodiscard]] bool claim_for_eviction() noexcept {
    auto expected = eviction::evictable;
    return eviction_.compare_exchange_strong(expected, eviction::evicted);
  }
  // On the strand, once claimed: closed without an answer, as an idle connection is.
  void evicted() { close(); }

  // On the strand: idle and half-read connections close now; a request being handled or
  // answered is answered first, then the connection closes (keep-alive is off once stopping).
  void on_stop() {
    if (phase_ != phase::handling && phase_ != phase::writing) close();
  }

  // On the strand: the handler's answer to the request being handled.
  void answered(http_response&& answer) {
    if (phase_ != phase::handling) return;  // a second send() of one reply
    // The request's bytes are gone by now (the handler kept them only while it needed them):
    // from here the answer is what the request holds of the budget, until it is written. It is
    // answered now: a client that has read the answer must not find its request still in flight.
    if (ticket_.valid()) {
      ticket_.resize(answer.body.size());
      ticket_.answered();
    }
    write(std::move(answer), version_, keep_alive_, head_only_);
  }

 private:
  enum class phase { idle, reading, handling, writing, refusing };

  // Between requests: wait for the next one's first byte, holding no read buffer meanwhile.
  void await_request() {
    if (server_.stopping() || !socket_.is_open() || !become(eviction::evictable)) return close();
    if (buffer_.size() > 0) return start_request();  // pipelined: it is here already
    phase_ = phase::idle;
    buffer_.shrink_to_fit();
    arm(server_.options().idle_timeout);
    socket_.async_read_some(buffer_.prepare(first_read_bytes),
                            [self = shared_from_this()](error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              // Closed, reset, idle too long (the deadline cancelled the read) or stopped. A request
                              // whose first bytes came just as the deadline passed is served: start_request re-arms.
                              if (ec) return self->close();
                              self->start_request();
                            });
  }

  // A request has begun: its headers must arrive within header_timeout, and all of it within
  // request_timeout.
  void start_request() {
    phase_ = phase::reading;
    on_refused_ = {};
    reading_headers_ = true;
    first_byte_ = std::chrono::steady_clock::now();
    buffer_.reserve(read_chunk_bytes);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(server_.options().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    body_limit_ = server_.options().max_body_bytes;
    // Beast would refuse a Content-Length over the limit while parsing the headers, before the
    // front end could answer from them (a 404 for an unknown model is the better answer to a
    // huge body): the limit is applied in admit(), before any body byte is read.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    parser_->on_chunk_header(on_chunk_line_);
    long_chunk_line_ = false;
    head_ = {};
    arm(std::min(server_.options().header_timeout, server_.options().request_timeout));
    read_head();
  }

  // The head's bytes until its empty line, each checked (header_block.hpp) before the parser sees
  // any of them.
  void read_head() {
    const auto& o = server_.options();
    head_.scan({static_cast<const char*>(buffer_.data().data()), buffer_.size()});
    if (head_.refusal()) return refuse(400, *head_.refusal());
    if (head_.end()) return parse_head(*head_.end());
    if (buffer_.size() > o.max_header_bytes) return refuse_header_limit();
    socket_.async_read_some(buffer_.prepare(std::min(read_chunk_bytes, buffer_.max_size() - buffer_.size())),
                            [self = shared_from_this()](error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec || self->timed_out_) return self->fail(ec);
                              self->read_head();
                            });
  }

  void refuse_header_limit() {
    refuse(400, "request line and headers exceed the server's limit of " +
                    std::to_string(server_.options().max_header_bytes) + " bytes");
  }

  // The whole head has arrived, `bytes` long, and holds nothing refused: parsed in one go.
  void parse_head(std::size_t bytes) {
    if (bytes > server_.options().max_header_bytes) return refuse_header_limit();
    error_code ec;
    buffer_.consume(parser_->put(asio::buffer(buffer_.data().data(), bytes), ec));
    if (!ec && !parser_->is_header_done()) ec = http::error::partial_message;  // cannot be: the head is whole
    if (ec) return refuse(400, "malformed HTTP request: " + ec.message());
    reading_headers_ = false;
    admit();
  }

  // The headers are in: the front end decides from them, before the body is read.
  void admit() {
    if (!become(eviction::busy)) return close();  // claimed for a newcomer as its head arrived
    const auto& message = parser_->get();
    request_ = to_head(message, *parser_);
    request_.peer = peer_;
    version_ = message.version();
    head_only_ = message.method() == http::verb::head;
    keep_alive_ = message.keep_alive();
    // A body two readers could frame differently is never read: the connection closes after the
    // answer, so nothing in it is taken for a request of its own.
    if (const auto bad = framing_refusal_of(version_, request_.headers)) return refuse(bad->status, bad->message);
    head_fields_ = request_.headers.size();
    http_admission admission;
    if (const auto& decide = server_.handlers().admit) admission = decide(request_);
    on_refused_ = std::move(admission.refused);
    request_.admitted = std::move(admission.context);
    if (admission.answer) {
      if (request_.has_body()) return refuse(std::move(*admission.answer));
      disarm();
      phase_ = phase::handling;
      return answered(std::move(*admission.answer));
    }
    // Beast checks Content-Length against its limit only while parsing the header, so the
    // request's own limit is checked here; a chunked body is checked against it chunk by chunk.
    body_limit_ = std::min(body_limit_, admission.body_limit);
    if (request_.content_length && *request_.content_length > body_limit_)
      return refuse(413, "request body exceeds the server's limit of " + std::to_string(body_limit_) + " bytes");
    parser_->body_limit(body_limit_);
    if (admission.counted && server_.options().intake != nullptr && !take_from_intake()) return;
    // The body's buffer is taken here, where memory that cannot be had fails this request (503);
    // the parser would otherwise take it inside a read, and the connection would just close. Its
    // pages are touched only as bytes arrive, and the budget is charged as they do.
    try {
      if (request_.content_length) parser_->get().body().reserve(*request_.content_length);
    } catch (const std::bad_alloc&) {
      return refuse(503, allocation_failure(allocation_stage::receive).what());
    }
    // The body must arrive within the request's deadline, and keep arriving at the minimum rate.
    arm_rest_of(server_.options().request_timeout);
    continue_if_asked();
  }

  // A counted request's share of the in-flight budget: its body's first step (body_budget.hpp),
  // against its network's share too. False when it was refused: larger than it may ever be
  // (413), or no room now (503).
  bool take_from_intake() {
    request_intake& intake = *server_.options().intake;
    if (request_.content_length && *request_.content_length > intake.largest_request(group_)) {
      refuse(413, intake.too_large_message(static_cast<std::size_t>(*request_.content_length), group_));
      return false;
    }
    auto granted = intake.admit(body_bytes_to_hold(0, 0, request_.content_length, body_step_limit()), group_,
                                static_cast<std::size_t>(request_.content_length.value_or(0)));
    if (granted.refusal) {
      refuse(*granted.refusal == intake_refusal::too_large ? 413 : 503, granted.message);
      return false;
    }
    ticket_ = std::move(granted.ticket);
    return true;
  }

  // `Expect: 100-continue`: the client waits for this before it sends the body. (A request
  // refused from its headers got its answer instead, never 100.)
  void continue_if_asked() {
    const auto& message = parser_->get();
    if (message.version() != 11 || !beast::iequals(message[http::field::expect], "100-continue")) return read_body();
    static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::async_write(socket_, asio::buffer(go_on.data(), go_on.size()),
                      [self = shared_from_this()](error_code ec, std::size_t) {
                        if (ec || self->timed_out_) return self->fail(ec);
                        self->read_body();
                      });
  }

  void read_body() {
    if (parser_->is_done()) return body_received();
    arm_transfer(body_deadline());
    read_body_piece();
  }

  // The latest the body may be whole: the request's deadline, and for an announced body no later
  // than the minimum rate lets its length take after the grace (the rate check alone would end it
  // then, since it can have sent no more than it announced; said here so the bound is plain).
  [[nodiscard]] std::chrono::steady_clock::time_point body_deadline() const {
    const auto& o = server_.options();
    const auto deadline = first_byte_ + o.request_timeout;
    if (!request_.content_length || o.min_transfer_rate == 0) return deadline;
    const double seconds = static_cast<double>(*request_.content_length) / static_cast<double>(o.min_transfer_rate);
    if (seconds >= 86'400.0) return deadline;
    return std::min(deadline, std::chrono::steady_clock::now() + o.transfer_grace +
                                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(seconds)));
  }

  // The body piece by piece, so that its rate is known (arm_transfer), and a counted body takes
  // its bytes from the intake as they arrive (body_budget.hpp).
  void read_body_piece() {
    http::async_read_some(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec || self->timed_out_) return self->fail(ec);
      const std::size_t received = self->parser_->get().body().size();
      if (received > self->transferred_) self->last_progress_ = std::chrono::steady_clock::now();
      self->transferred_ = received;
      if (!self->hold_body_bytes(received)) return;
      if (self->parser_->is_done()) return self->body_received();
      self->read_body_piece();
    });
  }

  // The largest step a body takes ahead of its bytes: a sixty-fourth of what requests are admitted into.
  [[nodiscard]] std::size_t body_step_limit() const {
    return std::max<std::size_t>(1, server_.options().intake->admissible_bytes() / 64);
  }

  // Takes what the body needs next from the intake; false when it was refused for want of room.
  bool hold_body_bytes(std::size_t received) {
    if (!ticket_.valid()) return true;
    const std::size_t want = body_bytes_to_hold(received, ticket_.bytes(), request_.content_length, body_step_limit());
    if (want <= ticket_.bytes() || ticket_.grow(want - ticket_.bytes())) return true;
    refuse(503, "the server cannot hold more of this request's body (" + std::to_string(received) +
                    " bytes received): " + ticket_.no_room_message(want - ticket_.bytes()));
    return false;
  }

  // The body is whole: its trailers (a chunked body's header fields after it) count against the
  // header limit with the head, and the request holds its body's bytes exactly from here on.
  void body_received() {
    const auto& fields = parser_->get();
    std::size_t head_bytes = *head_.end();
    std::size_t field = 0;
    for (const auto& f : fields)
      if (field++ >= head_fields_) head_bytes += f.name_string().size() + f.value().size() + 4;  // "N: V\r\n"
    if (head_bytes > server_.options().max_header_bytes)
      return refuse(400, "the request's head and trailers exceed the server's limit of " +
                             std::to_string(server_.options().max_header_bytes) + " bytes for its header fields");
    if (ticket_.valid()) ticket_.resize(fields.body().size());
    dispatch();
  }

  // A read of a request failed: answer what is the request's fault, close on the rest.
  void fail(const error_code& ec) {
    const auto& o = server_.options();
    if (timed_out_ && slow_transfer_)
      return refuse(408, "the request body arrived too slowly (or stopped): " + std::to_string(transferred_) +
                             " bytes in " +
                             std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::steady_clock::now() - transfer_start_)
                                                .count()) +
                             " ms, where the server wants at least " + std::to_string(o.min_transfer_rate) +
                             " bytes a second after the first " + std::to_string(o.transfer_grace.count()) +
                             " ms, and no pause as long");
    if (timed_out_ && reading_headers_ && o.header_timeout < o.request_timeout)
      return refuse(408, "the request's headers did not arrive within " + std::to_string(o.header_timeout.count()) +
                             " ms of its first byte");
    if (timed_out_)
      return refuse(408, "the request did not arrive in full within " + std::to_string(o.request_timeout.count()) +
                             " ms of its first byte");
    if (server_.stopping() || !refusable(ec)) return close();
    if (long_chunk_line_)
      return refuse(400, "a chunk line of the request carries more than " + std::to_string(max_chunk_extension_bytes) +
                             " bytes of chunk extensions");
    if (ec == http::error::buffer_overflow)
      return refuse(400, "a chunk line or the trailers of the request exceed the server's limit of " +
                             std::to_string(o.max_header_bytes) + " bytes");
    if (ec == http::error::body_limit)
      return refuse(413, "request body exceeds the server's limit of " + std::to_string(body_limit_) + " bytes");
    if (ec == http::error::header_limit)
      return refuse(400, "request line and headers exceed the server's limit of " + std::to_string(o.max_header_bytes) +
                             " bytes");
    refuse(400, "malformed HTTP request: " + ec.message());
  }

  // Routes a reply's answer back to this connection's strand.
  struct reply_target final : http_reply::target {
    explicit reply_target(std::shared_ptr<connection> c)
        : to(std::move(c)), busy(asio::make_work_guard(to->context_)) {}
    void deliver(http_response&& answer) override {
      asio::post(to->executor(), [c = to, answer = std::move(answer)]() mutable { c->answered(std::move(answer)); });
    }
    // On the handler's thread while the connection waits for the answer (phase handling): the
    // connection's own thread touches the ticket again only once the answer is posted to it.
    bool reserve(std::size_t bytes) override { return !to->ticket_.valid() || to->ticket_.grow(bytes); }
    std::shared_ptr<connection> to;
    asio::executor_work_guard<asio::io_context::executor_type> busy;  // serve() runs until the reply goes
  };

  // The request is complete: its handler runs here and answers through the reply, now or later.
  void dispatch() {
    disarm();
    on_refused_ = {};
    phase_ = phase::handling;
    request_.body = std::move(parser_->get().body());
    parser_.reset();
    try {
      server_.handlers().request(std::move(request_), http_reply(std::make_shared<reply_target>(shared_from_this())));
    } catch (...) {
      // A handler must not throw; if one does (out of memory, say), only its connection closes.
      close();
    }
    request_ = {};
  }

  void write(http_response&& answer, unsigned version, bool keep_alive, bool head_only) {
    keep_alive = keep_alive && !server_.stopping();
    phase_ = phase::writing;
    response_ = to_message(std::move(answer), version, keep_alive, head_only);
    serializer_.emplace(*response_);
    // A client that never reads its answer, or reads it a trickle at a time, lets it go.
    arm_transfer(std::chrono::steady_clock::now() + server_.options().request_timeout);
    write_piece(keep_alive);
  }

  // The answer piece by piece, so that its rate is known (arm_transfer).
  void write_piece(bool keep_alive) {
    http::async_write_some(
        socket_, *serializer_,
        [self = shared_from_this(), keep_alive](error_code ec, std::size_t n) { self->wrote(ec, n, keep_alive); });
  }

  void wrote(const error_code& ec, std::size_t n, bool keep_alive) {
    transferred_ += n;
    if (n > 0) last_progress_ = std::chrono::steady_clock::now();
    if (!ec && !timed_out_ && !serializer_->is_done()) return write_piece(keep_alive);
    serializer_.reset();
    response_.reset();
    ticket_.release();
    if (ec || timed_out_ || !keep_alive) return close();
    await_request();
  }

  // Answers a request the transport will not read on, and closes the connection gently: the
  // client may still be sending, and closing with unread data would reset the connection before
  // the client reads the answer. So: stop sending, then discard what arrives for a moment.
  void refuse(int status, const std::string& message) {
    if (auto told = std::exchange(on_refused_, {})) told();
    http_response answer = server_.handlers().refused(status, message);
    if (status == 503) answer.headers.emplace_back("Retry-After", retry_after_seconds);
    refuse(std::move(answer));
  }

  void refuse(http_response&& answer) {
    phase_ = phase::refusing;
    parser_.reset();
    ticket_.release();
    response_ = to_message(std::move(answer), 11, false, false);
    arm(refusal_linger);
    http::async_write(socket_, *response_, [self = shared_from_this()](error_code ec, std::size_t) {
      self->response_.reset();
      if (ec || self->timed_out_) return self->close();
      error_code ignored;
      self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
      self->arm(refusal_linger);
      self->discard_until_closed();
    });
  }

  // What arrives is dropped in the kernel (recv with MSG_TRUNC: TCP discards it without copying
  // it out), so a refused client pipelining large bodies costs the I/O thread next to nothing:
  // once, connections refused while they sent tens of MB each kept the I/O threads copying, and
  // other clients' requests waited behind them.
  void discard_until_closed() {
    buffer_.clear();
    buffer_.shrink_to_fit();
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
      if (ec || self->timed_out_ || self->server_.stopping()) return self->close();
      const ssize_t n = ::recv(self->socket_.native_handle(), nullptr, std::size_t{1} << 30, MSG_TRUNC | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return self->close();
      self->discard_until_closed();
    });
  }

  // The deadline of what the connection does next. When it passes, the pending read or write is
  // cancelled and completes with timed_out_ set. A deadline replaced or cancelled before it fires
  // is recognised by its generation (its handler may already be queued when it is cancelled).
  void arm(std::chrono::steady_clock::duration timeout) {
    const std::uint64_t generation = ++deadline_generation_;
    timed_out_ = false;
    deadline_.expires_after(timeout);
    deadline_.async_wait([self = shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->deadline_generation_) return;
      self->timed_out_ = true;
      error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  // The deadline `timeout` after the request's first byte.
  void arm_rest_of(std::chrono::steady_clock::duration timeout) {
    arm(std::max(std::chrono::steady_clock::duration::zero(),
                 first_byte_ + timeout - std::chrono::steady_clock::now()));
  }

  // The deadline of a body being read or an answer being written: `hard`, or sooner where the
  // bytes moved so far (transferred_) fall behind the minimum rate once the grace has passed, or
  // where nothing has moved for the grace (bytes the kernel's buffers took at first would
  // otherwise credit an answer nobody reads with seconds of "average rate").
  // The timer is set for the deadline as it stands and, when it fires, looks again: bytes that
  // moved meanwhile pushed the deadline on, so it waits for that instead, and a steady transfer
  // costs a timer event per pushed deadline, not one per read.
  void arm_transfer(std::chrono::steady_clock::time_point hard) {
    transfer_start_ = std::chrono::steady_clock::now();
    last_progress_ = transfer_start_;
    transferred_ = 0;
    slow_transfer_ = false;
    transfer_hard_deadline_ = hard;
    const std::uint64_t generation = ++deadline_generation_;
    timed_out_ = false;
    wait_for_transfer(generation);
  }

  [[nodiscard]] std::chrono::steady_clock::time_point transfer_due() const {
    const auto& o = server_.options();
    if (o.min_transfer_rate == 0) return std::min(transfer_hard_deadline_, last_progress_ + o.transfer_grace);
    const auto allowed =
        o.transfer_grace + std::chrono::microseconds(static_cast<std::int64_t>(
                               static_cast<double>(transferred_) * 1e6 / static_cast<double>(o.min_transfer_rate)));
    return std::min({transfer_hard_deadline_,
                     transfer_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(allowed),
                     last_progress_ + o.transfer_grace});
  }

  void wait_for_transfer(std::uint64_t generation) {
    deadline_.expires_at(transfer_due());
    deadline_.async_wait([self = shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->deadline_generation_) return;
      const auto due = self->transfer_due();
      if (std::chrono::steady_clock::now() < due) return self->wait_for_transfer(generation);
      self->slow_transfer_ = due < self->transfer_hard_deadline_;
      self->timed_out_ = true;
      error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void disarm() {
    ++deadline_generation_;
    deadline_.cancel();
  }

  void close() {
    disarm();
    ticket_.release();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  server_core& server_;
  asio::io_context& context_;  // the one whose thread serves this connection
  tcp::socket socket_;
  asio::steady_timer deadline_;
  std::uint64_t deadline_generation_ = 0;
  bool timed_out_ = false;
  const refused_at_accept refused_at_accept_;
  const http_peer peer_;     // the client's address and port, and the server's port
  const std::string group_;  // the client's network (peer_group), as the caps count it
  // Whether the server may close it for a client of a network holding fewer (server_core::admit):
  // only while idle or reading a request's head, never once a request has been admitted.
  enum class eviction { busy, evictable, evicted };
  std::atomic<eviction> eviction_{eviction::busy};
  // On the strand: from busy to evictable or back; false when the server has claimed it.
  bool become(eviction state) noexcept {
    auto current = eviction_.load();
    while (current != eviction::evicted)
      if (eviction_.compare_exchange_weak(current, state)) return true;
    return false;
  }
  phase phase_ = phase::idle;
  beast::flat_buffer buffer_;
  std::optional<request_parser> parser_;
  header_block_scanner head_;     // of the request being read: its head's bytes, checked as they arrive
  std::size_t head_fields_ = 0;   // how many header fields its head had (those after it are trailers)
  bool long_chunk_line_ = false;  // a chunk line of it had more extensions than it may
  // Called by the parser for each chunk line (it keeps a reference: a member, as long as the parser).
  std::function<void(std::uint64_t, beast::string_view, error_code&)> on_chunk_line_ =
      [this](std::uint64_t, beast::string_view extensions, error_code& ec) {
        if (extensions.size() <= max_chunk_extension_bytes) return;
        long_chunk_line_ = true;
        ec = http::error::bad_chunk_extension;
      };
  std::chrono::steady_clock::time_point first_byte_;  // of the request being read
  bool reading_headers_ = false;
  std::size_t body_limit_ = 0;  // of the request being read: max_body_bytes or its admission's, if lower
  // The request being read or handled, and how to answer it.
  http_request request_;
  unsigned version_ = 11;
  bool head_only_ = false;
  bool keep_alive_ = false;
  intake_ticket ticket_;              // its share of the in-flight budget, until its answer is written
  std::function<void()> on_refused_;  // its admission's `refused`, until its handler has it
  std::unique_ptr<http::response<http::string_body>> response_;             // while it is written
  std::optional<http::response_serializer<http::string_body>> serializer_;  // of response_
  // The body being read or the answer being written (arm_transfer): since when, how many bytes,
  // the latest it may end, and whether it was cut for moving too slowly.
  std::chrono::steady_clock::time_point transfer_start_;
  std::size_t transferred_ = 0;
  std::chrono::steady_clock::time_point last_progress_;  // when a byte last moved
  std::chrono::steady_clock::time_point transfer_hard_deadline_;
  bool slow_transfer_ = false;
};

void server_core::serve() {
  if (stopping_) return;
  asio::dispatch(acceptor_->get_executor(), [this] { accept(); });
  const auto run = [](asio::io_context& context) {
    for (;;) {
      try {
        context.run();
        return;
      } catch (...) {
        // A completion that threw (out of memory, say) loses its connection only.
      }
    }
  };
  std::vector<std::thread> io_threads;
  for (std::size_t i = 1; i < contexts_.size(); ++i) io_threads.emplace_back(run, std::ref(*contexts_[i]));
  // Each returns once stopped, its connections closed and their replies answered or dropped.
  run(*contexts_.front());
  for (auto& t : io_threads) t.join();
}

void server_core::accept() {
  if (stopping_ || !acceptor_->is_open()) return;
  // Each connection gets a strand of its own, on the next I/O context in turn.
  asio::io_context& context = *contexts_[next_context_];
  next_context_ = (next_context_ + 1) % contexts_.size();
  acceptor_->async_accept(asio::make_strand(context), [this, &context](error_code ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors or memory: give connections time to close instead of spinning.
      accept_retry_->expires_after(accept_backoff);
      accept_retry_->async_wait([this](error_code waited) {
        if (!waited) accept();
      });
      return;
    }
    admit(std::move(socket), context);
    accept();
  });
}

void server_core::admit(tcp::socket socket, asio::io_context& context) {
  error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  const auto local = socket.local_endpoint(ec);
  if (ec) return;
  http_peer peer{remote.address().to_string(), remote.port(), local.port(), local.address().to_string(), {}};
  std::string group = peer_group(peer.address, options_.peer_prefix_ipv4, options_.peer_prefix_ipv6);
  peer.network = group;
  std::shared_ptr<connection> victim;  // let go after the lock, like c: see make_room_for
  std::shared_ptr<connection> c;
  bool admitted = false;
  {
    const std::lock_guard lock(table_mutex_);
    const auto refused = refusal_at_accept(group, victim);
    // Past a limit, a client is told so while as many again as the server serves are being told;
    // past that, a flood of connections is closed unanswered, so refusing costs bounded
    // descriptors too.
    if (refused != refused_at_accept::no && refusing_ >= options_.max_connections) return;  // closes the socket
    admitted = refused == refused_at_accept::no;
    if (admitted) {
      ++serving_;
      ++serving_by_peer_[group];
    } else {
      ++refusing_;
    }
    c = std::make_shared<connection>(*this, context, std::move(socket), refused, std::move(peer), std::move(group));
    connections_.emplace(c.get(), c);
  }
  if (admitted && victim) asio::post(victim->executor(), [victim] { victim->evicted(); });
  asio::dispatch(c->executor(), [c] { c->start(); });
}

refused_at_accept server_core::refusal_at_accept(const std::string& group, std::shared_ptr<connection>& victim) {
  const std::size_t held = serving_of(group);
  if (serving_ >= options_.max_connections)
    return held < options_.max_connections_per_peer && make_room_for(held, victim) ? refused_at_accept::no
                                                                                   : refused_at_accept::over_limit;
  if (held >= options_.max_connections_per_peer) return refused_at_accept::over_peer_limit;
  if (serving_ >= options_.max_connections - reserved_connections() && held >= options_.small_peer_connections)
    return refused_at_accept::reserved;
  return refused_at_accept::no;
}

std::size_t server_core::serving_of(const std::string& group) const {
  const auto it = serving_by_peer_.find(group);
  return it == serving_by_peer_.end() ? 0 : it->second;
}

bool server_core::make_room_for(std::size_t held, std::shared_ptr<connection>& victim) {
  // The evictable connection of the network holding the most, if that is at least 2 more. No
  // shared_ptr is let go here, under the table's lock: the last one ends its connection, whose
  // destructor takes the lock (forget). The victim's goes with the caller's, after the lock.
  const std::weak_ptr<connection>* chosen = nullptr;
  std::size_t most = held + 1;
  for (const auto& [c, weak] : connections_) {
    const std::size_t theirs = serving_of(c->group());
    if (theirs <= most || !c->evictable()) continue;
    chosen = &weak;
    most = theirs;
  }
  if (chosen == nullptr) return false;
  victim = chosen->lock();
  return victim && victim->claim_for_eviction();
}

void server_core::forget(const connection* c, bool refused, const std::string& group) {
  const std::lock_guard lock(table_mutex_);
  connections_.erase(c);
  if (refused) {
    --refusing_;
    return;
  }
  --serving_;
  if (const auto it = serving_by_peer_.find(group); it != serving_by_peer_.end() && --it->second == 0)
    serving_by_peer_.erase(it);
}

void server_core::stop() {
  stopping_ = true;
  asio::post(acceptor_->get_executor(), [this] {
    error_code ignored;
    acceptor_->close(ignored);
    accept_retry_->cancel();
  });
  // Each context's thread lets go of its own: then it runs until its connections are done.
  for (std::size_t i = 0; i < contexts_.size(); ++i) asio::post(*contexts_[i], [this, i] { keep_running_[i].reset(); });
  std::vector<std::shared_ptr<connection>> open;
  {
    const std::lock_guard lock(table_mutex_);
    for (const auto& [key, weak] : connections_)
      if (auto c = weak.lock()) open.push_back(std::move(c));
  }
  // A connection admitted after this sees stopping_ before it reads anything.
  for (auto& c : open) asio::post(c->executor(), [c] { c->on_stop(); });
}

}  // namespace

struct http_transport::state : server_core {
  using server_core::server_core;
};

std::optional<std::string_view> http_request::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (beast::iequals(key, beast::string_view(name.data(), name.size()))) return value;
  return std::nullopt;
}

int default_io_threads() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 4, 2, 8); }

std::string decode_target_path(std::string_view target) {
  target = target.substr(0, target.find('?'));
  std::string path;
  path.reserve(target.size());
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == '%' && i + 2 < target.size() && hex_digit(target[i + 1]) >= 0 && hex_digit(target[i + 2]) >= 0) {
      path.push_back(static_cast<char>(hex_digit(target[i + 1]) * 16 + hex_digit(target[i + 2])));
      i += 2;
    } else {
      path.push_back(target[i]);
    }
  }
  return path;
}

http_transport::http_transport(http_transport_options options, http_handlers handlers)
    : state_(std::make_unique<state>(std::move(options), std::move(handlers))) {}

http_transport::~http_transport() { stop(); }

int http_transport::bind() {
  auto& s = *state_;
  const auto& o = s.options();
  if (s.acceptor().is_open()) throw error("HTTP: bind() called twice");
  const std::string where = o.port == 0 ? o.host + " (any port)" : o.host + ":" + std::to_string(o.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(o.port);
  if (const int rc = ::getaddrinfo(o.host.empty() ? nullptr : o.host.c_str(), port_text.c_str(), &hints, &found);
      rc != 0)
    throw error("HTTP: cannot bind to " + where + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  int listen_fd = -1;
  int family = AF_INET;
  for (const addrinfo* a = found; a != nullptr && listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      why = errno_text(errno);
      continue;
    }
    // SO_REUSEADDR binds over connections still in TIME_WAIT; SO_REUSEPORT is never set, so a
    // second server cannot bind the same port and silently take half the connections.
    const int yes = 1;
    const int no = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    // The system's backlog: perf_analyzer's 64 clients connect at once.
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd = fd;
      family = a->ai_family;
    } else {
      why = errno_text(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd < 0) throw error("HTTP: cannot bind to " + where + ": " + why);

  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    why = errno_text(errno);
    ::close(listen_fd);
    throw error("HTTP: getsockname: " + why);
  }
  error_code ec;
  s.acceptor().assign(family == AF_INET6 ? tcp::v6() : tcp::v4(), listen_fd, ec);
  if (ec) {
    ::close(listen_fd);
    throw error("HTTP: cannot listen on " + where + ": " + ec.message());
  }
  const in_port_t port = bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                                     : reinterpret_cast<const sockaddr_in&>(bound).sin_port;
  return ntohs(port);
}

void http_transport::serve_blocking() {
  if (!state_->acceptor().is_open()) throw error("HTTP: serve_blocking() before bind()");
  state_->serve();
}

void http_transport::stop() { state_->stop(); }

}  // namespace ferry::serve
