// The HTTP transport under ferry serve's routes, over real loopback sockets: persistent
// connections, Connection: close, Expect: 100-continue, large bodies, the body limit and an
// admission's own, answers decided from the headers alone, the in-flight budget, pipelining, a
// port in use, and stop() with connections still open; and what hostile clients once did to it:
// idle and trickling connections that held every worker, a request deadline that restarted with
// every byte, headers trickled for a minute, no limit on connections (in all, or from one
// address), answers that held a thread while they waited.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/core/error.hpp"
#include "serve/admission/request_intake.hpp"
#include "serve/transport/http/body_budget.hpp"
#include "serve/transport/http/header_block.hpp"
#include "serve/transport/http/http_transport.hpp"
#include "serve/transport/http/message_framing.hpp"
#include "serve/transport/http/work_lanes.hpp"
#include "support/test_gate.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;
using namespace std::string_literals;

TEST(HttpTransport, DecodesThePathOfATarget) {
  EXPECT_EQ(decode_target_path("/v2/models/touch/infer"), "/v2/models/touch/infer");
  EXPECT_EQ(decode_target_path("/v2/health/live?verbose=1&x=%20"), "/v2/health/live");
  EXPECT_EQ(decode_target_path("/v2/models/my%20model/ready"), "/v2/models/my model/ready");
  EXPECT_EQ(decode_target_path("/a%2Fb%2fc"), "/a/b/c");
  EXPECT_EQ(decode_target_path("/100%"), "/100%");        // too short for an escape
  EXPECT_EQ(decode_target_path("/x%zzy%4"), "/x%zzy%4");  // not hex
  EXPECT_EQ(decode_target_path("/a+b"), "/a+b");          // '+' is a space only in queries
}

// Transfer-Encoding exactly "chunked", once; Content-Length one field of digits; never both.
TEST(HttpFraming, TakesOnlyFramingEveryReaderAgreesOn) {
  using fields = std::vector<std::pair<std::string, std::string>>;
  EXPECT_FALSE(framing_refusal_of(11, {{"Transfer-Encoding", "chunked"}}));
  EXPECT_FALSE(framing_refusal_of(11, {{"transfer-encoding", "CHUNKED"}}));
  EXPECT_FALSE(framing_refusal_of(11, {{"Content-Length", "0042"}}));
  EXPECT_FALSE(framing_refusal_of(10, {{"Content-Length", "5"}}));
  EXPECT_FALSE(framing_refusal_of(11, {}));
  const std::vector<std::pair<fields, int>> refused = {
      {{{"Transfer-Encoding", "xchunked"}}, 400},
      {{{"Transfer-Encoding", "chunked, identity"}}, 400},
      {{{"Transfer-Encoding", "identity, chunked"}}, 501},
      {{{"Transfer-Encoding", "gzip, chunked"}}, 501},
      {{{"Transfer-Encoding", "chunked, chunked"}}, 400},
      {{{"Transfer-Encoding", ", chunked"}}, 400},
      {{{"Transfer-Encoding", ""}}, 400},
      {{{"Transfer-Encoding", "chunked;x=1"}}, 400},
      {{{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}, 400},
      {{{"Transfer-Encoding", "x"}, {"Transfer-Encoding", "chunked"}}, 400},
      {{{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}, 400},
      {{{"Content-Length", "5"}, {"Transfer-Encoding", "xchunked"}}, 400},
      {{{"Content-Length", "5"}, {"Content-Length", "5"}}, 400},
      {{{"Content-Length", "5, 5"}}, 400},
      {{{"Content-Length", "+5"}}, 400},
      {{{"Content-Length", "5 6"}}, 400},
      {{{"Content-Length", "0x5"}}, 400},
  };
  for (const auto& [headers, status] : refused) {
    const auto why = framing_refusal_of(11, headers);
    ASSERT_TRUE(why) << headers.front().second;
    EXPECT_EQ(why->status, status) << headers.front().second << ": " << why->message;
  }
  const auto old = framing_refusal_of(10, {{"Transfer-Encoding", "chunked"}});
  ASSERT_TRUE(old);
  EXPECT_EQ(old->message, "Transfer-Encoding in an HTTP/1.0 request: its framing cannot be trusted");
  EXPECT_EQ(framing_refusal_of(11, {{"Transfer-Encoding", "gzip, chunked"}})->message,
            "Transfer-Encoding 'gzip, chunked': the transfer coding 'gzip' is not implemented by this server: send "
            "the body 'chunked' alone");
}

// The head ends at its empty line; a bare CR or LF, a NUL or a folded line refuse it, wherever
// the bytes were split between reads.
TEST(HttpHeaderBlock, FindsTheEndAndRefusesWhatParsersReadDifferently) {
  const auto scanned = [](const std::string& bytes, std::size_t split) {
    header_block_scanner head;
    head.scan(std::string_view(bytes).substr(0, split));
    head.scan(bytes);
    return head;
  };
  const std::string good = "GET / HTTP/1.1\r\nHost: t\r\n\r\nBODY";
  for (std::size_t split = 0; split <= good.size(); ++split) {
    const auto head = scanned(good, split);
    EXPECT_FALSE(head.refusal());
    EXPECT_EQ(head.end(), std::optional<std::size_t>(good.size() - 4)) << split;
  }
  EXPECT_EQ(scanned("GET / HTTP/1.1\r\n\r\n", 3).end(), std::optional<std::size_t>(18));
  EXPECT_FALSE(scanned("GET / HTTP/1.1\r\nHost: t\r\n", 5).end());
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"GET / HTTP/1.1\nHost: t\r\n\r\n", "a line ended by LF alone, not CRLF at byte 14"},
      {"GET / HTTP/1.1\r\nHost: t\n\n", "a line ended by LF alone, not CRLF at byte 23"},
      {"GET / HTTP/1.1\r\nHost: t\rX: y\r\n\r\n", "a CR not followed by LF at byte 24"},
      {"GET / HTTP/1.1\r\nHost: t\0x\r\n\r\n"s, "a NUL byte at byte 23"},
      {"GET / HTTP/1.1\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
       "a header line beginning with a space (obs-fold: the server does not unfold lines) at byte 36"},
      {"GET / HTTP/1.1\r\n\tTransfer-Encoding: chunked\r\n\r\n",
       "a header line beginning with a tab (obs-fold: the server does not unfold lines) at byte 16"},
  };
  for (const auto& [bytes, why] : refused) {
    for (std::size_t split = 0; split <= bytes.size(); split += 7) {
      const auto head = scanned(bytes, split);
      ASSERT_TRUE(head.refusal()) << bytes;
      EXPECT_EQ(*head.refusal(), "malformed HTTP request: " + why + " of its head");
      EXPECT_FALSE(head.end());
    }
  }
}

// A body holds a step ahead of what has arrived, never past what it announced, and takes larger
// steps as more arrives.
TEST(HttpBodyBudget, HoldsAStepAheadOfWhatHasArrived) {
  EXPECT_EQ(body_bytes_to_hold(0, 0, 1'000'000'000), read_chunk_bytes);
  EXPECT_EQ(body_bytes_to_hold(0, 0, 100), 100U);
  EXPECT_EQ(body_bytes_to_hold(0, 0, std::nullopt), read_chunk_bytes);
  EXPECT_EQ(body_bytes_to_hold(0, 0, std::nullopt, 1000), 1000U);
  EXPECT_EQ(body_bytes_to_hold(1000, read_chunk_bytes + 1000, std::nullopt), read_chunk_bytes + 1000);  // room yet
  EXPECT_EQ(body_bytes_to_hold(8 << 20, 8 << 20, std::nullopt), (8U << 20) + (1U << 20));  // an eighth ahead
  EXPECT_EQ(body_bytes_to_hold(8 << 20, 8 << 20, 8 << 20), 8U << 20);                      // all of it held
}

// Large jobs holding every thread of their lane do not hold up a small one: it runs on its own
// lane meanwhile (a small inference once waited 9 s behind the encoding of large answers).
TEST(HttpWorkLanes, ASmallJobRunsWhileLargeOnesHoldTheirLane) {
  ferry::testing::gate large_held;
  std::promise<void> small_ran;
  {
    work_lanes lanes(2);
    for (int i = 0; i < 3; ++i) lanes.post(work_lanes::small_job_bytes + 1, [&large_held] { large_held.pass(); });
    large_held.wait_for_arrivals(2);  // both large threads busy, a third large job queued
    lanes.post(work_lanes::small_job_bytes, [&small_ran] { small_ran.set_value(); });
    EXPECT_EQ(small_ran.get_future().wait_for(10s), std::future_status::ready);
    large_held.open();
  }  // joined: every job ran
}

TEST(HttpTransport, FindsHeadersWhateverTheirCase) {
  http_request request;
  request.headers = {{"Content-Type", "application/json"}, {"inference-header-content-length", "12"}};
  EXPECT_EQ(request.header("content-type"), "application/json");
  EXPECT_EQ(request.header("Inference-Header-Content-Length"), "12");
  EXPECT_FALSE(request.header("Expect").has_value());
}

// A client on a plain socket, so the test sees exactly the bytes the server sends. `from`: the
// loopback address it connects from (another host, as far as the server can tell).
class raw_client {
 public:
  // `receive_buffer`: the socket's receive buffer in bytes, fixed (0: the kernel's, which grows
  // as the kernel sees fit: to 32 MiB on some machines, enough to take a large answer unread).
  explicit raw_client(int port, const char* from = nullptr, int receive_buffer = 0)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    if (from != nullptr) {
      sockaddr_in source{};
      source.sin_family = AF_INET;
      ::inet_pton(AF_INET, from, &source.sin_addr);
      EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&source), sizeof source), 0);
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    const timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~raw_client() { ::close(fd_); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  void send(const std::string& bytes) const {
    for (std::size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      ASSERT_GT(n, 0);
      sent += static_cast<std::size_t>(n);
    }
  }

  // From another thread, while the test reads: failures (the server closed) are expected.
  void send_quietly(const std::string& bytes) const { (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }

  // One response: its head (status line and headers) and a body of its Content-Length (none for
  // an answer to HEAD).
  struct response {
    std::string head;
    std::string body;
  };
  response receive(bool to_head = false) {
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return {pending_, ""};
    response r{pending_.substr(0, end + 4), ""};
    pending_.erase(0, end + 4);
    std::size_t length = 0;
    if (const auto at = r.head.find("Content-Length: "); at != std::string::npos && !to_head)
      length = std::stoul(r.head.substr(at + 16));
    while (pending_.size() < length)
      if (!fill()) break;
    r.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return r;
  }

  // What recv() gives: bytes, 0 at the end, -1 on a reset or the receive timeout.
  ssize_t read_some(char* into, std::size_t bytes) const { return ::recv(fd_, into, bytes, 0); }

  // Whether the server closed the connection (instead of sending more, or nothing in time).
  bool closed_by_server() { return !fill() && pending_.empty(); }

 private:
  bool fill() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string pending_;
};

// Holds the answers of "/block" requests until the test opens it.
using handler_gate = ferry::testing::gate;

// An echo server: answers every request with "METHOD PATH BODY-SIZE CHECKSUM" (a "/block" one
// from another thread once the gate opens; "/drop" never: its reply is dropped), and a request
// it refuses with "refused STATUS: MESSAGE". `admit_` decides from the headers when set.
class HttpTransportServer : public ::testing::Test {
 protected:
  http_transport_options options() const {
    http_transport_options o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.max_body_bytes = std::size_t{64} << 20;
    return o;
  }

  void start(std::size_t max_body_bytes = std::size_t{64} << 20) {
    http_transport_options o = options();
    o.max_body_bytes = max_body_bytes;
    start(o);
  }

  static http_response echo(const http_request& req) {
    unsigned long sum = 0;
    for (const char c : req.body) sum = sum * 31 + static_cast<unsigned char>(c);
    http_response res;
    res.content_type = "text/plain";
    res.headers.emplace_back("X-Echo-Expect", std::string(req.header("Expect").value_or("none")));
    res.body = req.method + " " + req.path + " " + std::to_string(req.body.size()) + " " + std::to_string(sum);
    if (req.path == "/large") res.body = large_answer();
    return res;
  }

  void start(const http_transport_options& options) {
    http_handlers handlers;
    handlers.admit = admit_;
    handlers.request = [this](http_request&& req, http_reply reply) {
      if (on_request_) on_request_(req);
      if (req.path == "/drop") return;
      if (req.path != "/block") return reply.send(echo(req));
      // Answered later, from another thread: the I/O threads go on meanwhile.
      const std::lock_guard lock(later_mutex_);
      later_.emplace_back([this, req = std::move(req), reply] {
        gate_.pass();
        reply.send(echo(req));
      });
    };
    handlers.refused = [](int status, const std::string& message) {
      http_response res;
      res.status = status;
      res.body = "refused " + std::to_string(status) + ": " + message;
      return res;
    };
    transport_ = std::make_unique<http_transport>(options, handlers);
    port_ = transport_->bind();
    serving_ = std::thread([this] { transport_->serve_blocking(); });
  }

  void TearDown() override {
    gate_.open();
    {
      const std::lock_guard lock(later_mutex_);
      for (auto& t : later_) t.join();
    }
    if (transport_) transport_->stop();
    if (serving_.joinable()) serving_.join();
  }

  static std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
    return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
           "\r\n" + body;
  }

  std::function<http_admission(const http_request&)> admit_;  // set before start()
  std::function<void(const http_request&)> on_request_;  // set before start(): sees each request where it is handled

  // More than a socket's buffers hold, so it cannot be written at once. Made once: a handler
  // runs on its connection's I/O thread and must not take long (under a sanitizer, filling 16 MiB
  // takes seconds), or the other connections of that thread wait.
  static const std::string& large_answer() {
    static const std::string body = [] {
      std::string b(16 << 20, '\0');
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 13 + i / 4096);
      return b;
    }();
    return body;
  }

  // A request on a new connection: its answer, and how long it took.
  std::pair<raw_client::response, std::chrono::steady_clock::duration> probe(const std::string& path = "/probe",
                                                                             const char* from = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    raw_client client(port_, from);
    client.send(post(path, "p"));
    auto r = client.receive();
    return {r, std::chrono::steady_clock::now() - start};
  }

  std::unique_ptr<request_intake> intake_;  // outlives the transport, whose connections hold tickets
  std::unique_ptr<http_transport> transport_;
  std::thread serving_;
  int port_ = 0;
  handler_gate gate_;
  std::mutex later_mutex_;
  std::vector<std::thread> later_;
};

TEST_F(HttpTransportServer, KeepsTheConnectionForRequestAfterRequest) {
  start();
  raw_client client(port_);
  for (int i = 0; i < 3; ++i) {
    client.send(post("/echo/" + std::to_string(i), "abc"));
    const auto r = client.receive();
    EXPECT_EQ(r.head.substr(0, 15), "HTTP/1.1 200 OK") << r.head;
    EXPECT_EQ(r.head.find("Connection: close"), std::string::npos) << r.head;
    EXPECT_EQ(r.body, "POST /echo/" + std::to_string(i) + " 3 " + std::to_string((97ul * 31 + 98) * 31 + 99));
  }
}

TEST_F(HttpTransportServer, AnswersPipelinedRequestsInOrder) {
  start();
  raw_client client(port_);
  client.send(post("/first", "x") + post("/second", "yy"));
  EXPECT_EQ(client.receive().body.substr(0, 9), "POST /fir");
  EXPECT_EQ(client.receive().body.substr(0, 9), "POST /sec");
}

TEST_F(HttpTransportServer, HonoursConnectionClose) {
  start();
  raw_client client(port_);
  client.send("GET /v2?x=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const auto r = client.receive();
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_EQ(r.body, "GET /v2 0 0");
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpTransportServer, ReceivesALargeBodyIntact) {
  start();
  std::string body(5'000'000, '\0');
  unsigned long sum = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    body[i] = static_cast<char>(i * 7 + i / 1000);
    sum = sum * 31 + static_cast<unsigned char>(body[i]);
  }
  raw_client client(port_);
  client.send(post("/big", body));
  EXPECT_EQ(client.receive().body, "POST /big 5000000 " + std::to_string(sum));
}

TEST_F(HttpTransportServer, AnswersExpectContinueBeforeTheBodyIsSent) {
  start();
  raw_client client(port_);
  client.send("POST /late HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  const auto go_on = client.receive();
  EXPECT_EQ(go_on.head, "HTTP/1.1 100 Continue\r\n\r\n");
  client.send("body");
  const auto r = client.receive();
  EXPECT_EQ(r.head.substr(0, 15), "HTTP/1.1 200 OK") << r.head;
  EXPECT_EQ(r.body.substr(0, 13), "POST /late 4 ");
}

TEST_F(HttpTransportServer, RefusesABodyOverTheLimitWithoutReadingIt) {
  start(1000);
  raw_client client(port_);
  // Content-Length alone decides, before any body byte is read (and no 100 Continue is sent).
  client.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n");
  const auto r = client.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 413") << r.head;
  EXPECT_EQ(r.body, "refused 413: request body exceeds the server's limit of 1000 bytes");
  EXPECT_TRUE(client.closed_by_server());

  raw_client at_limit(port_);
  at_limit.send(post("/x", std::string(1000, 'a')));
  EXPECT_EQ(at_limit.receive().body.substr(0, 12), "POST /x 1000");
}

TEST_F(HttpTransportServer, RefusesABodyOverItsAdmissionsOwnLimitWithoutReadingIt) {
  // The hook runs on the transport's I/O threads: a lock, so a thread sanitizer sees the order.
  std::mutex asked_mutex;
  std::vector<std::string> asked;
  admit_ = [&asked, &asked_mutex](const http_request& head) {
    std::lock_guard lock(asked_mutex);
    asked.push_back(head.method + " " + head.path);
    http_admission a;
    a.body_limit = head.path == "/small" ? 10 : std::size_t{1} << 40;
    return a;
  };
  start(1000);
  raw_client small(port_);
  small.send("POST /sm%61ll HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
  const auto r = small.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 413") << r.head;
  EXPECT_EQ(r.body, "refused 413: request body exceeds the server's limit of 10 bytes");
  EXPECT_TRUE(small.closed_by_server());
  {
    std::lock_guard lock(asked_mutex);  // only here: the requests below call the hook again
    EXPECT_EQ(asked, std::vector<std::string>{"POST /small"});
  }  // the decoded path, as routes see it

  // Chunked bodies, whose size no header announces, are stopped at the route's limit too.
  raw_client chunked(port_);
  chunked.send(
      "POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.receive().head.substr(0, 12), "HTTP/1.1 413");

  // Within the route's limit; and the transport's own limit still holds above a larger one.
  raw_client fits(port_);
  fits.send(post("/small", std::string(10, 'a')));
  EXPECT_EQ(fits.receive().body.substr(0, 12), "POST /small ");
  raw_client other(port_);
  other.send(post("/other", std::string(1001, 'a')));
  EXPECT_EQ(other.receive().head.substr(0, 12), "HTTP/1.1 413");
  raw_client at_limit(port_);
  at_limit.send(post("/other", std::string(1000, 'a')));
  EXPECT_EQ(at_limit.receive().body.substr(0, 15), "POST /other 100");
}

TEST_F(HttpTransportServer, RefusesAMalformedRequest) {
  start();
  raw_client client(port_);
  client.send("NOT HTTP AT ALL\r\n\r\n");
  const auto r = client.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 400") << r.head;
  EXPECT_EQ(r.body.substr(0, 37), "refused 400: malformed HTTP request: ") << r.body;
}

// A request whose framing two readers could tell apart is refused and its connection closed, so
// a request hidden in its body never runs. Once "Transfer-Encoding: xchunked" got 400 and the
// request in its body ran on the same connection, and "chunked, identity" was kept open.
TEST_F(HttpTransportServer, ARequestHiddenInARefusedBodyNeverRuns) {
  std::mutex mutex;
  std::vector<std::string> handled;
  on_request_ = [&](const http_request& req) {
    const std::lock_guard lock(mutex);
    handled.push_back(req.path);
  };
  start();
  const std::string hidden = "GET /hidden HTTP/1.1\r\nHost: t\r\n\r\n";
  const std::string chunked_hidden = "0\r\n\r\n" + hidden;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Transfer-Encoding: xchunked\r\n", hidden},
      {"Transfer-Encoding: chunked, identity\r\n", chunked_hidden},
      {"Transfer-Encoding: identity, chunked\r\n", chunked_hidden},
      {"Transfer-Encoding: gzip\r\n", hidden},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n", chunked_hidden},
      {"Transfer-Encoding: x\r\nTransfer-Encoding: chunked\r\n", chunked_hidden},
      {"Transfer-Encoding:\r\n chunked\r\n", chunked_hidden},
      {"Transfer-Encoding : chunked\r\n", chunked_hidden},
      {"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", chunked_hidden},
      {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", chunked_hidden},
      {"Content-Length: 0\r\nTransfer-Encoding: xchunked\r\n", hidden},
      {"Content-Length: 5\r\nContent-Length: 6\r\n", "abcde" + hidden},
      {"Content-Length: 0, 0\r\n", hidden},
      {"Content-Length: +0\r\n", hidden},
      {"Transfer-Encoding: chunked\r\nX: a\nContent-Length: 0\r\n", chunked_hidden},
      {"X: a\0b\r\nTransfer-Encoding: chunked\r\n"s, chunked_hidden},
  };
  for (const auto& [fields, body] : cases) {
    raw_client client(port_);
    client.send("POST /smuggle HTTP/1.1\r\nHost: t\r\n" + fields + "\r\n" + body);
    const auto r = client.receive();
    EXPECT_TRUE(r.head.starts_with("HTTP/1.1 400") || r.head.starts_with("HTTP/1.1 501")) << fields << r.head;
    EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << fields << r.head;
    EXPECT_TRUE(client.closed_by_server()) << fields;  // no second answer: nothing more was read
  }
  // The HTTP/1.0 form, and chunked done right beside it (so the hidden request does run then).
  raw_client old(port_);
  old.send("POST /smuggle HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_hidden);
  EXPECT_EQ(old.receive().head.substr(0, 12), "HTTP/1.1 400");
  const std::lock_guard lock(mutex);
  EXPECT_TRUE(handled.empty()) << handled.size() << " requests ran, the first " << handled.front();
}

// Chunk extensions up to 4 KiB a chunk line are read past; a longer line is refused (400), and
// trailers count against the header limit with the head.
TEST_F(HttpTransportServer, BoundsChunkExtensionsAndTrailers) {
  http_transport_options o = options();
  o.max_header_bytes = 4096;
  start(o);
  const auto send_chunked = [this](const std::string& chunk_line, const std::string& trailers) {
    raw_client client(port_);
    client.send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk_line + "\r\nabc\r\n0\r\n" +
                trailers + "\r\n");
    return client.receive();
  };
  const std::string within = "3;" + std::string(max_chunk_extension_bytes - 1, 'e');
  EXPECT_EQ(send_chunked(within, "").body.substr(0, 9), "POST /c 3");
  const auto long_line = send_chunked("3;" + std::string(max_chunk_extension_bytes, 'e'), "");
  EXPECT_EQ(long_line.body,
            "refused 400: a chunk line of the request carries more than 4096 bytes of chunk extensions");
  // A line that never ends is cut when the buffer is full, not held whole.
  raw_client endless(port_);
  endless.send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3;" + std::string(200'000, 'e'));
  EXPECT_EQ(endless.receive().head.substr(0, 12), "HTTP/1.1 400");

  EXPECT_EQ(send_chunked("3", "T: " + std::string(1000, 't') + "\r\n").body.substr(0, 9), "POST /c 3");
  const auto many = send_chunked(
      "3", std::string(500, 't').insert(0, "T: ").append("\r\n") + [] {
        std::string t;
        for (int i = 0; i < 10; ++i) t += "T" + std::to_string(i) + ": " + std::string(400, 't') + "\r\n";
        return t;
      }());
  EXPECT_EQ(many.body,
            "refused 400: the request's head and trailers exceed the server's limit of 4096 bytes for its header "
            "fields");
}

TEST_F(HttpTransportServer, AnswersHeadWithoutTheBody) {
  start();
  raw_client client(port_);
  client.send("HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto head = client.receive(true);  // the body would be "HEAD /h 0 0": 11 bytes, not sent
  EXPECT_NE(head.head.find("Content-Length: 11"), std::string::npos) << head.head;
  client.send(post("/after", ""));  // so the next bytes are the next answer
  EXPECT_EQ(client.receive().body, "POST /after 0 0");
}

TEST_F(HttpTransportServer, RefusesAPortInUse) {
  start();
  http_transport_options options;
  options.host = "127.0.0.1";
  options.port = port_;
  http_transport second(options, {});
  try {
    (void)second.bind();
    FAIL() << "a second server bound port " << port_;
  } catch (const ferry::error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port_)), std::string::npos) << e.what();
  }
}

TEST_F(HttpTransportServer, StopsPromptlyWithConnectionsOpen) {
  start(std::size_t{64} << 20);
  raw_client idle(port_);
  idle.send(post("/one", "1"));
  (void)idle.receive();
  raw_client half(port_);
  half.send("POST /half HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly some");
  raw_client fresh(port_);  // connected, nothing sent
  std::this_thread::sleep_for(50ms);
  const auto before = std::chrono::steady_clock::now();
  transport_->stop();
  serving_.join();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_TRUE(idle.closed_by_server());
  EXPECT_TRUE(half.closed_by_server());
  EXPECT_TRUE(fresh.closed_by_server());
}

TEST_F(HttpTransportServer, AnswersTheRequestBeingHandledWhenStopped) {
  start();
  raw_client blocked(port_);
  blocked.send(post("/block", "b"));
  gate_.wait_for_arrivals(1);
  std::thread stopping([this] { transport_->stop(); });
  std::this_thread::sleep_for(50ms);
  gate_.open();
  const auto r = blocked.receive();
  EXPECT_EQ(r.body, "POST /block 1 98");
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_TRUE(blocked.closed_by_server());
  stopping.join();
}

// 128 connections sending a byte a second once got 0 of 4 probes answered: each held one of the
// 128 workers. Now they hold none: with a single I/O thread, 100 trickling connections and 100
// idle ones, probes are answered at once, and the idle connections still serve.
TEST_F(HttpTransportServer, IdleAndTricklingConnectionsHoldNoThread) {
  http_transport_options o = options();
  o.io_threads = 1;
  start(o);
  std::vector<std::unique_ptr<raw_client>> idle, trickling;
  for (int i = 0; i < 100; ++i) idle.push_back(std::make_unique<raw_client>(port_));
  for (int i = 0; i < 100; ++i) trickling.push_back(std::make_unique<raw_client>(port_));
  const std::string slow = "POST /slow HTTP/1.1\r\nHost: t\r\nX-Slow: ";
  for (std::size_t k = 0; k < 5; ++k) {
    for (auto& c : trickling) c->send(slow.substr(k, 1));
    const auto [r, took] = probe();
    EXPECT_EQ(r.body, "POST /probe 1 112") << r.head;
    EXPECT_LT(took, 1s);
  }
  idle.front()->send(post("/after", "x"));
  EXPECT_EQ(idle.front()->receive().body, "POST /after 1 120");
}

// The deadline once restarted with every byte, so a byte every few seconds kept a request open
// forever. Now the whole request must arrive within request_timeout of its first byte.
TEST_F(HttpTransportServer, AnswersARequestNotReceivedInTimeWith408) {
  http_transport_options o = options();
  o.request_timeout = 300ms;
  start(o);
  raw_client slow(port_);
  const auto started = std::chrono::steady_clock::now();
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string bytes = "POST /slow HTTP/1.1\r\nHost: t\r\nX-Slow: " + std::string(1000, 'a');
    for (std::size_t k = 0; k < bytes.size() && !done; ++k) {
      slow.send_quietly(bytes.substr(k, 1));
      std::this_thread::sleep_for(20ms);  // far quicker than any per-read timeout
    }
  });
  const auto r = slow.receive();
  const auto took = std::chrono::steady_clock::now() - started;
  done = true;
  trickle.join();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 408") << r.head;
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_EQ(r.body, "refused 408: the request did not arrive in full within 300 ms of its first byte");
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s);
  EXPECT_TRUE(slow.closed_by_server());
  EXPECT_EQ(probe().first.body, "POST /probe 1 112");
}

TEST_F(HttpTransportServer, ClosesAConnectionIdleForItsTimeoutWithoutAnAnswer) {
  http_transport_options o = options();
  o.idle_timeout = 200ms;
  start(o);
  raw_client kept(port_);
  kept.send(post("/one", "1"));
  EXPECT_EQ(kept.receive().body, "POST /one 1 49");
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(kept.closed_by_server());  // nothing sent: no 408 for a request never begun
  EXPECT_GE(std::chrono::steady_clock::now() - before, 150ms);
  EXPECT_EQ(probe().first.body, "POST /probe 1 112");
}

TEST_F(HttpTransportServer, RefusesConnectionsOverTheLimitWith503) {
  http_transport_options o = options();
  o.max_connections = 2;
  o.max_connections_per_peer = 2;
  start(o);
  auto first = std::make_unique<raw_client>(port_);
  first->send(post("/one", "1"));
  EXPECT_EQ(first->receive().body, "POST /one 1 49");
  raw_client second(port_);  // idle, but open: it counts
  std::this_thread::sleep_for(50ms);

  raw_client third(port_);
  third.send(post("/three", "3"));
  const auto r = third.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 503") << r.head;
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_EQ(r.body, "refused 503: the server is serving its limit of 2 HTTP connections at once; try again later");
  EXPECT_TRUE(third.closed_by_server());

  // The connections it serves are served as before, and a closed one makes room.
  second.send(post("/two", "2"));
  EXPECT_EQ(second.receive().body, "POST /two 1 50");
  first.reset();
  std::string answered;
  for (const auto until = std::chrono::steady_clock::now() + 2s;
       answered.empty() && std::chrono::steady_clock::now() < until;) {
    const auto [again, took] = probe();
    if (again.head.substr(0, 12) == "HTTP/1.1 200")
      answered = again.body;
    else
      std::this_thread::sleep_for(10ms);  // the server has not seen the close yet
  }
  EXPECT_EQ(answered, "POST /probe 1 112");
}

// An answer larger than the socket takes at once is finished by the I/O threads as the client
// reads; a client that never reads is let go at the deadline and holds no thread.
TEST_F(HttpTransportServer, WritesALargeAnswerToASlowReaderAndLetsANonReaderGo) {
  (void)large_answer();  // made before the clock starts
  http_transport_options o = options();
  o.request_timeout = 1s;
  start(o);
  const auto started = std::chrono::steady_clock::now();
  raw_client never_reads(port_, nullptr, 64 << 10);  // the answer cannot all wait in its buffers
  never_reads.send(post("/large", ""));
  raw_client slow_reader(port_);
  slow_reader.send(post("/large", ""));
  std::this_thread::sleep_for(100ms);
  const auto [r, took] = probe();  // the writes hold no thread
  EXPECT_EQ(r.body, "POST /probe 1 112");
  EXPECT_LT(took, 400ms);
  EXPECT_EQ(slow_reader.receive().body, large_answer());
  const auto slow_reader_done = std::chrono::steady_clock::now();

  // Past the deadline of the answer nobody reads: it is armed when that answer starts to be
  // written, which is before the slow reader's answer is done, so 1.2 s after both the start and
  // the slow reader's last byte (under a sanitizer the slow reader alone took 5 s, and draining
  // earlier let the whole answer through).
  std::this_thread::sleep_until(std::max(started, slow_reader_done) + 1200ms);
  char chunk[65536];
  ssize_t n = 0;
  std::size_t got = 0;
  while ((n = never_reads.read_some(chunk, sizeof chunk)) > 0) got += static_cast<std::size_t>(n);
  EXPECT_LT(got, large_answer().size());  // cut short: the server closed it
}

// An answer that comes later (an inference waits for its model) holds no thread: while it is
// pending, the I/O threads read, refuse, continue and answer other requests; it is answered
// once it comes.
TEST_F(HttpTransportServer, AnAnswerStillToComeDoesNotStopOthers) {
  http_transport_options o = options();
  o.max_body_bytes = 1000;
  o.io_threads = 1;
  start(o);
  raw_client blocked(port_);
  blocked.send(post("/block", "b"));
  gate_.wait_for_arrivals(1);

  raw_client too_big(port_);
  too_big.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n");
  EXPECT_EQ(too_big.receive().head.substr(0, 12), "HTTP/1.1 413");
  raw_client continued(port_);
  continued.send("POST /late HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(continued.receive().head, "HTTP/1.1 100 Continue\r\n\r\n");
  continued.send("body");
  EXPECT_EQ(continued.receive().body.substr(0, 13), "POST /late 4 ");

  gate_.open();
  EXPECT_EQ(blocked.receive().body, "POST /block 1 98");
}

// A reply dropped without an answer (a handler that lost its request) closes its connection
// instead of leaving the client waiting.
TEST_F(HttpTransportServer, AReplyDroppedUnansweredClosesItsConnection) {
  start();
  raw_client dropped(port_);
  dropped.send(post("/drop", "d"));
  EXPECT_TRUE(dropped.closed_by_server());
  EXPECT_EQ(probe().first.body, "POST /probe 1 112");
}

// Decided from the headers: an answer given by admit() is sent before any byte of the body is
// read, without 100 Continue, and the connection closes (its body is never read); a request
// without a body keeps its connection.
TEST_F(HttpTransportServer, AnswersFromTheHeadersWithoutReadingTheBody) {
  admit_ = [](const http_request& head) {
    http_admission a;
    if (head.path == "/no") {
      http_response res;
      res.status = 404;
      res.body = "no " + std::to_string(head.content_length.value_or(0)) + (head.has_body() ? " with body" : "");
      a.answer = std::move(res);
    }
    return a;
  };
  start();
  raw_client announced(port_);
  // A gigabyte announced: the answer comes at once, never a 100 Continue, the body never read.
  announced.send("POST /no HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000000\r\nExpect: 100-continue\r\n\r\n");
  const auto r = announced.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 404") << r.head;
  EXPECT_EQ(r.body, "no 1000000000 with body");
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
  EXPECT_TRUE(announced.closed_by_server());

  raw_client kept(port_);
  kept.send("GET /no HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(kept.receive().body, "no 0");
  kept.send(post("/after", "x"));
  EXPECT_EQ(kept.receive().body, "POST /after 1 120");
}

// Counted requests take their bodies from the intake as they arrive; one whose announced body does
// not fit what is free now is answered 503 with Retry-After unread (larger than the whole budget:
// 413), and the bytes come back once an answer is written. A chunked body that outgrows the
// budget is cut with 503.
TEST_F(HttpTransportServer, CountsRequestsAgainstTheInFlightBudget) {
  intake_ = std::make_unique<request_intake>(1000);
  request_intake& intake = *intake_;
  intake.set_peer_share(1000);  // one network may take it all: the whole budget is what is tried here
  admit_ = [](const http_request&) {
    http_admission a;
    a.counted = true;
    return a;
  };
  http_transport_options o = options();
  o.intake = &intake;
  start(o);
  raw_client held(port_);
  held.send(post("/block", std::string(600, 'h')));
  gate_.wait_for_arrivals(1);
  EXPECT_EQ(intake.bytes_in_use(), 600U);
  EXPECT_EQ(intake.requests_in_flight(), 1U);

  raw_client over(port_);
  over.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 600\r\nExpect: 100-continue\r\n\r\n");
  const auto r = over.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 503") << r.head;
  EXPECT_NE(r.head.find("Retry-After: 1"), std::string::npos) << r.head;
  EXPECT_NE(r.body.find("in-flight memory budget of 1000 bytes holds 600 bytes of 1 requests"), std::string::npos)
      << r.body;
  EXPECT_TRUE(over.closed_by_server());
  raw_client whole(port_);
  whole.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n");
  EXPECT_EQ(whole.receive().head.substr(0, 12), "HTTP/1.1 413");

  raw_client chunked(port_);
  chunked.send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.receive().body.substr(0, 9), "POST /c 5");  // 5 of the 400 bytes left
  raw_client too_much(port_);
  too_much.send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1f5\r\n" + std::string(501, 'c') +
                "\r\n0\r\n\r\n");
  const auto c = too_much.receive();
  EXPECT_EQ(c.head.substr(0, 12), "HTTP/1.1 503") << c.head;
  EXPECT_NE(c.body.find("cannot hold more of this request's body"), std::string::npos) << c.body;

  gate_.open();
  EXPECT_EQ(held.receive().body.substr(0, 16), "POST /block 600 ");
  // The client has its answer: the request no longer counts, and once the server has seen the
  // write complete the budget is whole again.
  EXPECT_EQ(intake.requests_in_flight(), 0U);
  for (const auto until = std::chrono::steady_clock::now() + 2s;
       intake.bytes_in_use() > 0 && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(intake.bytes_in_use(), 0U);
  raw_client fits(port_);
  fits.send(post("/x", std::string(1000, 'f')));
  EXPECT_EQ(fits.receive().body.substr(0, 12), "POST /x 1000");
}

// 1,024 connections trickling bytes from one host once made every new connection, from any host,
// get 503. Now one network (a /24) has its own cap: past it that network is refused, whatever its
// address, and others are served.
TEST_F(HttpTransportServer, CapsTheConnectionsOfOneNetwork) {
  http_transport_options o = options();
  o.max_connections = 10;
  o.max_connections_per_peer = 3;
  start(o);
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<raw_client>(port_));
    held.back()->send(post("/one", "1"));
    EXPECT_EQ(held.back()->receive().body, "POST /one 1 49");
  }
  raw_client fourth(port_);
  fourth.send(post("/four", "4"));
  const auto r = fourth.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 503") << r.head;
  EXPECT_NE(r.head.find("Retry-After: 1"), std::string::npos) << r.head;
  EXPECT_EQ(r.body,
            "refused 503: this client address (127.0.0.1, network 127.0.0.0/24) has the limit of 3 HTTP "
            "connections open at once; try again later");
  const auto [same_network, took_same] = probe("/probe", "127.0.0.2");
  EXPECT_NE(same_network.body.find("(127.0.0.2, network 127.0.0.0/24) has the limit of 3"), std::string::npos)
      << same_network.body;
  const auto [other, took] = probe("/probe", "127.0.1.2");
  EXPECT_EQ(other.body, "POST /probe 1 112") << other.head;
}

// 1,024 slow clients spread over 4 addresses once filled the whole server: a fifth got 503 for
// everything. Now the last tenth of the connections is kept for networks holding fewer than 4.
TEST_F(HttpTransportServer, KeepsTheLastTenthForClientsHoldingFew) {
  http_transport_options o = options();
  o.max_connections = 20;
  o.max_connections_per_peer = 20;  // only the reserve stops one network here
  start(o);
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 18; ++i) {
    held.push_back(std::make_unique<raw_client>(port_));
    held.back()->send(post("/one", "1"));
    EXPECT_EQ(held.back()->receive().body, "POST /one 1 49");
  }
  const auto [refused, took_refused] = probe("/probe");
  EXPECT_EQ(refused.body,
            "refused 503: the server's last 2 of 20 HTTP connections are kept for clients holding fewer than 4, and "
            "this client's network (127.0.0.0/24) holds more; try again later");
  const auto [served, took] = probe("/probe", "127.0.5.1");
  EXPECT_EQ(served.body, "POST /probe 1 112") << served.head;
  EXPECT_LT(took, 1s);
}

// Three connections announcing bodies of the whole budget and sending a byte now and then once
// held it until the request deadline (a minute): every inference was refused meanwhile. Now a
// body must keep arriving at the minimum rate once its grace has passed; one that does not is
// answered 408 and its share of the budget comes back then.
TEST_F(HttpTransportServer, ABodyArrivingTooSlowlyIsCutAndGivesItsBudgetBack) {
  intake_ = std::make_unique<request_intake>(20'000);
  request_intake& intake = *intake_;
  intake.set_peer_share(20'000);
  admit_ = [](const http_request&) {
    http_admission a;
    a.counted = true;
    return a;
  };
  http_transport_options o = options();
  o.intake = &intake;
  o.min_transfer_rate = 10'000;  // bytes a second
  o.transfer_grace = 300ms;
  start(o);
  raw_client slow(port_);
  const auto started = std::chrono::steady_clock::now();
  slow.send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\nab");
  for (const auto until = started + 2s; intake.requests_in_flight() != 1 && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(5ms);
  // What arrived and a step ahead (a sixty-fourth of the budget), not the 900 announced.
  EXPECT_GT(intake.bytes_in_use(), 0U);
  EXPECT_LE(intake.bytes_in_use(), 2U + 20'000 / 64);
  const auto r = slow.receive();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 408") << r.head;
  EXPECT_NE(r.body.find("the request body arrived too slowly (or stopped): 2 bytes in "), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("at least 10000 bytes a second after the first 300 ms"), std::string::npos) << r.body;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 1500ms);
  EXPECT_EQ(intake.bytes_in_use(), 0U);  // given back with the answer
  // A body arriving at pace is read whole, however long it takes past the grace.
  raw_client steady(port_);
  steady.send("POST /steady HTTP/1.1\r\nHost: t\r\nContent-Length: 8000\r\n\r\n");
  for (int i = 0; i < 8; ++i) {
    steady.send(std::string(1000, 's'));
    std::this_thread::sleep_for(50ms);  // 20,000 bytes a second, for longer than the grace
  }
  const auto s = steady.receive();
  EXPECT_EQ(s.body.substr(0, 17), "POST /steady 8000") << s.head << s.body;
}

// Three connections announcing bodies that filled the budget and trickling them once held it
// all: every other request was refused. Now a body holds what has arrived and a step ahead, so a
// request announcing more than the trickling ones leave unannounced is served beside them.
TEST_F(HttpTransportServer, AnAnnouncedBodyHoldsOnlyWhatHasArrived) {
  intake_ = std::make_unique<request_intake>(1'000'000);
  request_intake& intake = *intake_;
  intake.set_peer_share(1'000'000);
  admit_ = [](const http_request&) {
    http_admission a;
    a.counted = true;
    return a;
  };
  http_transport_options o = options();
  o.intake = &intake;
  start(o);
  std::vector<std::unique_ptr<raw_client>> trickling;
  for (int i = 0; i < 3; ++i) {
    trickling.push_back(std::make_unique<raw_client>(port_));
    trickling.back()->send("POST /t HTTP/1.1\r\nHost: t\r\nContent-Length: 300000\r\n\r\n" + std::string(1000, 't'));
  }
  for (const auto until = std::chrono::steady_clock::now() + 2s;
       intake.requests_in_flight() < 3 && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(intake.requests_in_flight(), 3U);
  EXPECT_LE(intake.bytes_in_use(), 3U * (1000 + 1'000'000 / 64));  // not 900,000
  raw_client served(port_);
  served.send(post("/x", std::string(600'000, 'x')));
  const auto r = served.receive();
  EXPECT_EQ(r.body.substr(0, 11), "POST /x 600") << r.head << r.body;
}

// One client network may hold at most its share of the budget (a quarter by default): past it
// that network is refused, 413 for a request that could never fit its share, and other networks
// are served.
TEST_F(HttpTransportServer, OneNetworkHoldsAtMostItsShareOfTheBudget) {
  intake_ = std::make_unique<request_intake>(1'000'000);
  request_intake& intake = *intake_;
  admit_ = [](const http_request&) {
    http_admission a;
    a.counted = true;
    return a;
  };
  http_transport_options o = options();
  o.intake = &intake;
  start(o);
  ASSERT_EQ(intake.peer_share_bytes(), 250'000U);
  raw_client held(port_);
  held.send(post("/block", std::string(200'000, 'h')));
  gate_.wait_for_arrivals(1);
  EXPECT_EQ(intake.peer_bytes_in_use("127.0.0.0/24"), 200'000U);

  raw_client more(port_, "127.0.0.2");
  more.send("POST /m HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n");
  const auto r = more.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 503") << r.head;
  EXPECT_NE(r.body.find("client network 127.0.0.0/24 holds 200000 bytes of the in-flight budget, and may hold "
                        "250000 at once"),
            std::string::npos)
      << r.body;
  raw_client never(port_, "127.0.0.3");
  never.send("POST /n HTTP/1.1\r\nHost: t\r\nContent-Length: 300000\r\n\r\n");
  const auto n = never.receive();
  EXPECT_EQ(n.head.substr(0, 12), "HTTP/1.1 413") << n.head;
  EXPECT_NE(n.body.find("exceeds what one client network (127.0.0.0/24) may hold"), std::string::npos) << n.body;

  raw_client other(port_, "127.0.1.1");
  other.send(post("/o", std::string(200'000, 'o')));
  EXPECT_EQ(other.receive().body.substr(0, 11), "POST /o 200");
  gate_.open();
  EXPECT_EQ(held.receive().body.substr(0, 15), "POST /block 200");
}

// 1,100 connections from 367 networks, 3 each, once kept a new network out (503) 40% of the
// time: each held fewer than the reserve's 4. Now a client from a network holding fewer than
// another by 2 is let in when the server is full, and an idle connection of the network holding
// the most (never one whose request is being handled) is closed for it.
TEST_F(HttpTransportServer, ANewNetworkIsServedWhenOthersFillTheServer) {
  http_transport_options o = options();
  o.max_connections = 10;
  o.max_connections_per_peer = 10;
  start(o);
  std::vector<std::unique_ptr<raw_client>> busy;  // network A: 4 requests being handled
  for (int i = 0; i < 4; ++i) {
    busy.push_back(std::make_unique<raw_client>(port_, "127.0.1.1"));
    busy.back()->send(post("/block", "b"));
  }
  gate_.wait_for_arrivals(4);
  const auto idle = [this](const char* from, int count) {
    std::vector<std::unique_ptr<raw_client>> held;
    for (int i = 0; i < count; ++i) {
      held.push_back(std::make_unique<raw_client>(port_, from));
      held.back()->send(post("/one", "1"));
      EXPECT_EQ(held.back()->receive().body, "POST /one 1 49");
    }
    return held;
  };
  auto b = idle("127.0.2.1", 3);  // network B: 3 idle
  auto c = idle("127.0.3.1", 2);
  auto d = idle("127.0.4.1", 1);  // the tenth, from the reserve
  const auto [served, took] = probe("/probe", "127.0.99.1");
  EXPECT_EQ(served.body, "POST /probe 1 112") << served.head;
  EXPECT_LT(took, 1s);
  // One of B's idle connections made the room; its others, and A's requests, are served.
  int answered = 0;
  for (auto& client : b) {
    client->send_quietly(post("/again", "a"));
    answered += client->receive().head.substr(0, 15) == "HTTP/1.1 200 OK";
  }
  EXPECT_EQ(answered, 2);
  gate_.open();
  for (auto& client : busy) EXPECT_EQ(client->receive().body, "POST /block 1 98");
}

// Answers nobody reads once held their share of the budget for the whole request deadline. Now an
// answer must move at the minimum rate too: one the client leaves unread closes its connection
// once the grace and what was written allow no more.
TEST_F(HttpTransportServer, AnAnswerReadTooSlowlyClosesItsConnection) {
  (void)large_answer();  // made before the clock starts
  http_transport_options o = options();
  o.min_transfer_rate = std::size_t{16} << 20;
  o.transfer_grace = 300ms;  // the request deadline stays a minute
  start(o);
  raw_client never_reads(port_, nullptr, 64 << 10);
  never_reads.send(post("/large", ""));
  std::this_thread::sleep_for(1500ms);
  const auto draining = std::chrono::steady_clock::now();
  char chunk[65536];
  ssize_t n = 0;
  std::size_t got = 0;
  while ((n = never_reads.read_some(chunk, sizeof chunk)) > 0) got += static_cast<std::size_t>(n);
  EXPECT_EQ(n, 0);  // closed by the server, not the receive timeout
  EXPECT_LT(std::chrono::steady_clock::now() - draining, 2s);
  EXPECT_LT(got, large_answer().size());
  EXPECT_EQ(probe().first.body, "POST /probe 1 112");
}

// Headers trickled a byte at a time once held a connection for the whole request deadline (a
// minute). Now the headers have their own, shorter one.
TEST_F(HttpTransportServer, AnswersHeadersNotReceivedInTimeWith408) {
  http_transport_options o = options();
  o.header_timeout = 300ms;
  o.request_timeout = 20s;
  start(o);
  raw_client slow(port_);
  const auto started = std::chrono::steady_clock::now();
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string bytes = "POST /slow HTTP/1.1\r\nHost: t\r\nX-Slow: " + std::string(1000, 'a');
    for (std::size_t k = 0; k < bytes.size() && !done; ++k) {
      slow.send_quietly(bytes.substr(k, 1));
      std::this_thread::sleep_for(20ms);
    }
  });
  const auto r = slow.receive();
  const auto took = std::chrono::steady_clock::now() - started;
  done = true;
  trickle.join();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 408") << r.head;
  EXPECT_EQ(r.body, "refused 408: the request's headers did not arrive within 300 ms of its first byte");
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 5s);
}

// Each connection is served by one I/O thread, which runs all of its events itself: a request
// is read and handed to its handler where the previous one was, not passed between the I/O
// threads (each pass wakes a thread, and small requests paid more for that than for their work).
// Connections are spread over the threads in turn.
TEST_F(HttpTransportServer, ServesEachConnectionOnOneIoThreadOfItsOwn) {
  std::mutex mutex;
  std::map<std::string, std::set<std::thread::id>> threads_of;  // by connection
  on_request_ = [&](const http_request& req) {
    const std::lock_guard lock(mutex);
    threads_of[req.path.substr(0, req.path.rfind('/'))].insert(std::this_thread::get_id());
  };
  http_transport_options o = options();
  o.io_threads = 3;
  start(o);
  std::vector<std::unique_ptr<raw_client>> clients;
  for (int c = 0; c < 3; ++c) clients.push_back(std::make_unique<raw_client>(port_));
  for (int i = 0; i < 20; ++i)
    for (int c = 0; c < 3; ++c) {
      clients[c]->send(post("/c" + std::to_string(c) + "/" + std::to_string(i), "x"));
      ASSERT_EQ(clients[c]->receive().head.substr(0, 15), "HTTP/1.1 200 OK");
    }
  const std::lock_guard lock(mutex);
  ASSERT_EQ(threads_of.size(), 3u);
  std::set<std::thread::id> all;
  for (const auto& [connection, threads] : threads_of) {
    EXPECT_EQ(threads.size(), 1u) << connection << " was served by " << threads.size() << " threads";
    all.insert(threads.begin(), threads.end());
  }
  EXPECT_EQ(all.size(), 3u) << "three connections on three I/O threads share some";
}

}  // namespace
