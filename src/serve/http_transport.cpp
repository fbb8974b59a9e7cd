#include "serve/http_transport.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>

#include "ferry/error.hpp"

namespace ferry::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using beast::error_code;

std::string errno_text(int code) { return std::system_category().message(code); }

// Beast 1.74 speaks boost::string_view.
std::string_view std_view(beast::string_view s) { return {s.data(), s.size()}; }

// A connected socket as Beast's SyncReadStream and SyncWriteStream. recv() and send() never
// block: when the socket has nothing to give or take, poll() waits for it, for stop() (the
// eventfd `stop_fd` turns readable) or for the timeout, whichever comes first.
class socket_stream {
 public:
  socket_stream(int fd, int stop_fd, std::chrono::milliseconds timeout)
      : fd_(fd), stop_fd_(stop_fd), timeout_ms_(static_cast<int>(timeout.count())) {}

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, error_code& ec) {
    ec = {};
    asio::mutable_buffer into;
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
      if (asio::mutable_buffer b = *it; b.size() > 0) {
        into = b;
        break;
      }
    }
    if (into.size() == 0) return 0;
    for (;;) {
      const ssize_t n = ::recv(fd_, into.data(), into.size(), MSG_DONTWAIT);
      if (n > 0) return static_cast<std::size_t>(n);
      if (n == 0) {
        ec = asio::error::eof;
        return 0;
      }
      if (!wait_after_failure(POLLIN, ec)) return 0;
    }
  }

  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers, error_code& ec) {
    ec = {};
    std::array<iovec, 16> parts{};
    std::size_t count = 0;
    for (auto it = asio::buffer_sequence_begin(buffers);
         it != asio::buffer_sequence_end(buffers) && count < parts.size(); ++it) {
      const asio::const_buffer b = *it;
      if (b.size() > 0) parts[count++] = {const_cast<void*>(b.data()), b.size()};
    }
    if (count == 0) return 0;
    msghdr message{};
    message.msg_iov = parts.data();
    message.msg_iovlen = count;
    for (;;) {
      const ssize_t n = ::sendmsg(fd_, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (!wait_after_failure(POLLOUT, ec)) return 0;
    }
  }

  // The throwing forms complete Beast's stream concepts.
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw beast::system_error(ec);
    return n;
  }
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers) {
    error_code ec;
    const std::size_t n = write_some(buffers, ec);
    if (ec) throw beast::system_error(ec);
    return n;
  }

 private:
  // After recv/send failed with errno: whether to try again (interrupted, or now ready).
  bool wait_after_failure(short events, error_code& ec) {
    const int failure = errno;
    if (failure == EINTR) return true;
    if (failure != EAGAIN && failure != EWOULDBLOCK) {
      ec.assign(failure, boost::system::system_category());
      return false;
    }
    std::array<pollfd, 2> fds{{{fd_, events, 0}, {stop_fd_, POLLIN, 0}}};
    int ready = 0;
    do {
      ready = ::poll(fds.data(), fds.size(), timeout_ms_);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) {
      ec.assign(errno, boost::system::system_category());
      return false;
    }
    if (ready == 0) {
      ec = beast::error::timeout;
      return false;
    }
    if (fds[1].revents != 0) {
      ec = asio::error::operation_aborted;
      return false;
    }
    return true;  // readable/writable, or an error the next call reports
  }

  int fd_;
  int stop_fd_;
  int timeout_ms_;
};

using request_parser = http::request_parser<http::string_body>;

constexpr std::size_t read_chunk_bytes = 64 * 1024;  // the most Beast's http::read asks of read_some

// Whether a read failed on the request itself (malformed, over a limit), which gets an answer,
// rather than on the connection (closed, reset, silent, stopped), which does not.
bool refusable(const error_code& ec) {
  static const auto& http_errors = http::make_error_code(http::error::need_more).category();
  return ec.category() == http_errors && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

http_request to_request(http::request<http::string_body>&& message) {
  http_request request;
  request.method = std::string(message.method_string());
  request.path = decode_target_path(std_view(message.target()));
  for (const auto& field : message) request.headers.emplace_back(field.name_string(), field.value());
  request.body = std::move(message.body());
  return request;
}

bool write_response(socket_stream& stream, http_response&& answer, unsigned version, bool keep_alive,
                    bool head_only) {
  http::response<http::string_body> response{static_cast<http::status>(answer.status), version};
  if (!answer.content_type.empty()) response.set(http::field::content_type, answer.content_type);
  for (auto& [name, value] : answer.headers) response.set(name, value);
  response.body() = std::move(answer.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  if (head_only) response.body().clear();  // Content-Length stays that of the GET answer
  error_code ec;
  http::write(stream, response, ec);
  return !ec;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string_view> http_request::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (beast::iequals(key, beast::string_view(name.data(), name.size()))) return value;
  return std::nullopt;
}

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

struct http_transport::state {
  http_transport_options options;
  http_handlers handlers;
  int listen_fd = -1;
  int stop_fd = -1;  // an eventfd, readable from stop() on: every poll() of the transport watches it
  std::atomic<bool> stopping{false};
  std::mutex mutex;
  std::condition_variable connection_waiting;
  std::deque<int> waiting;  // accepted connections no worker has taken yet

  state(http_transport_options o, http_handlers h) : options(std::move(o)), handlers(std::move(h)) {
    stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd < 0) throw error("HTTP: eventfd: " + errno_text(errno));
  }

  ~state() {
    for (const int fd : waiting) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
    ::close(stop_fd);
  }

  void accept_loop() {
    for (;;) {
      std::array<pollfd, 2> fds{{{listen_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}}};
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors or memory: give the workers time to close some instead of spinning.
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      const int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      {
        const std::lock_guard lock(mutex);
        waiting.push_back(fd);
      }
      connection_waiting.notify_one();
    }
  }

  void worker() {
    for (;;) {
      int fd = -1;
      {
        std::unique_lock lock(mutex);
        connection_waiting.wait(lock, [this] { return stopping || !waiting.empty(); });
        if (stopping) return;
        fd = waiting.front();
        waiting.pop_front();
      }
      try {
        serve(fd);
      } catch (...) {
        // One connection's failure (out of memory, say) closes that connection only.
      }
      ::close(fd);
    }
  }

  void serve(int fd) {
    socket_stream stream(fd, stop_fd, options.timeout);
    beast::flat_buffer buffer;
    // Beast reads as much as the buffer has room for, up to 64 KiB: room for all of it, or
    // bodies arrive 512 bytes per recv().
    buffer.reserve(read_chunk_bytes);
    for (bool keep_alive = true; keep_alive && !stopping;) {
      request_parser parser;
      parser.header_limit(static_cast<std::uint32_t>(
          std::min<std::size_t>(options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
      parser.body_limit(options.max_body_bytes);
      error_code ec;
      http::read_header(stream, buffer, parser, ec);
      if (!ec && handlers.body_limit) limit_body(parser, ec);
      if (!ec && parser.get().version() == 11 && beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
        asio::write(stream, asio::buffer(go_on.data(), go_on.size()), ec);
      }
      if (!ec && !parser.is_done()) http::read(stream, buffer, parser, ec);
      if (ec) {
        if (refusable(ec)) refuse(stream, fd, ec == http::error::body_limit ? 413 : 400);
        return;
      }
      http::request<http::string_body> message = parser.release();
      const unsigned version = message.version();
      const bool head_only = message.method() == http::verb::head;
      keep_alive = message.keep_alive();
      http_response answer = handlers.request(to_request(std::move(message)));
      if (!write_response(stream, std::move(answer), version, keep_alive && !stopping, head_only)) return;
    }
  }

  // Narrows the body limit to the request's own, now that its method and path are known. Beast
  // checks Content-Length against its limit only while reading the header, so that is done here;
  // chunked bodies are checked against the new limit chunk by chunk.
  void limit_body(request_parser& parser, error_code& ec) const {
    const auto& head = parser.get();
    const std::string path = decode_target_path(std_view(head.target()));
    const std::size_t route_limit = handlers.body_limit(std_view(head.method_string()), path);
    const std::size_t limit = std::min(options.max_body_bytes, route_limit);
    if (parser.content_length() && *parser.content_length() > limit)
      ec = http::error::body_limit;
    else
      parser.body_limit(limit);
  }

  // Answers a request the transport will not read on, and closes the connection gently: the
  // client may still be sending, and closing with unread data would reset the connection before
  // the client reads the answer. So: stop sending, then discard what arrives for a short while.
  void refuse(socket_stream& stream, int fd, int status) {
    if (!write_response(stream, handlers.refused(status), 11, false, false)) return;
    ::shutdown(fd, SHUT_WR);
    socket_stream draining(fd, stop_fd, std::chrono::milliseconds(1000));
    std::array<char, 64 * 1024> discard{};
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    error_code ec;
    while (!ec && std::chrono::steady_clock::now() < until)
      (void)draining.read_some(asio::buffer(discard), ec);
  }
};

http_transport::http_transport(http_transport_options options, http_handlers handlers)
    : state_(std::make_unique<state>(std::move(options), std::move(handlers))) {}

http_transport::~http_transport() { stop(); }

int http_transport::bind() {
  auto& s = *state_;
  const auto& o = s.options;
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
  for (const addrinfo* a = found; a != nullptr && s.listen_fd < 0; a = a->ai_next) {
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
      s.listen_fd = fd;
    } else {
      why = errno_text(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (s.listen_fd < 0) throw error("HTTP: cannot bind to " + where + ": " + why);

  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0)
    throw error("HTTP: getsockname: " + errno_text(errno));
  const in_port_t port = bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                                     : reinterpret_cast<const sockaddr_in&>(bound).sin_port;
  return ntohs(port);
}

void http_transport::serve_blocking() {
  auto& s = *state_;
  if (s.listen_fd < 0) throw error("HTTP: serve_blocking() before bind()");
  std::vector<std::thread> workers;
  for (int i = 0; i < s.options.threads; ++i) workers.emplace_back([&s] { s.worker(); });
  s.accept_loop();  // returns on stop()
  stop();           // also when accept_loop() failed on its own
  for (auto& w : workers) w.join();
}

void http_transport::stop() {
  auto& s = *state_;
  {
    const std::lock_guard lock(s.mutex);
    s.stopping = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(s.stop_fd, &one, sizeof one);
  s.connection_waiting.notify_all();
}

}  // namespace ferry::serve
