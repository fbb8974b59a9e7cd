// The HTTP transport under ferry serve's routes, over real loopback sockets: persistent
// connections, Connection: close, Expect: 100-continue, large bodies, the body limit, pipelining,
// a port in use, and stop() with connections still open.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ferry/error.hpp"
#include "serve/http_transport.hpp"

namespace {

using namespace ferry::serve;
using namespace std::chrono_literals;

TEST(HttpTransport, DecodesThePathOfATarget) {
  EXPECT_EQ(decode_target_path("/v2/models/touch/infer"), "/v2/models/touch/infer");
  EXPECT_EQ(decode_target_path("/v2/health/live?verbose=1&x=%20"), "/v2/health/live");
  EXPECT_EQ(decode_target_path("/v2/models/my%20model/ready"), "/v2/models/my model/ready");
  EXPECT_EQ(decode_target_path("/a%2Fb%2fc"), "/a/b/c");
  EXPECT_EQ(decode_target_path("/100%"), "/100%");       // too short for an escape
  EXPECT_EQ(decode_target_path("/x%zzy%4"), "/x%zzy%4");  // not hex
  EXPECT_EQ(decode_target_path("/a+b"), "/a+b");          // '+' is a space only in queries
}

TEST(HttpTransport, FindsHeadersWhateverTheirCase) {
  http_request request;
  request.headers = {{"Content-Type", "application/json"}, {"inference-header-content-length", "12"}};
  EXPECT_EQ(request.header("content-type"), "application/json");
  EXPECT_EQ(request.header("Inference-Header-Content-Length"), "12");
  EXPECT_FALSE(request.header("Expect").has_value());
}

// A client on a plain socket, so the test sees exactly the bytes the server sends.
class raw_client {
 public:
  explicit raw_client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
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

// An echo server: answers every request with "METHOD PATH BODY-SIZE CHECKSUM".
class HttpTransportServer : public ::testing::Test {
 protected:
  void start(std::size_t max_body_bytes = std::size_t{64} << 20, int threads = 4) {
    http_transport_options options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = threads;
    options.max_body_bytes = max_body_bytes;
    http_handlers handlers;
    handlers.request = [](const http_request& req) {
      unsigned long sum = 0;
      for (const char c : req.body) sum = sum * 31 + static_cast<unsigned char>(c);
      http_response res;
      res.content_type = "text/plain";
      res.headers.emplace_back("X-Echo-Expect", std::string(req.header("Expect").value_or("none")));
      res.body = req.method + " " + req.path + " " + std::to_string(req.body.size()) + " " + std::to_string(sum);
      return res;
    };
    handlers.refused = [](int status) {
      http_response res;
      res.status = status;
      res.body = "refused " + std::to_string(status);
      return res;
    };
    handlers.body_limit = body_limit_;
    transport_ = std::make_unique<http_transport>(options, handlers);
    port_ = transport_->bind();
    serving_ = std::thread([this] { transport_->serve_blocking(); });
  }

  void TearDown() override {
    if (transport_) transport_->stop();
    if (serving_.joinable()) serving_.join();
  }

  static std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
    return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
           extra + "\r\n" + body;
  }

  std::function<std::size_t(std::string_view, std::string_view)> body_limit_;  // set before start()
  std::unique_ptr<http_transport> transport_;
  std::thread serving_;
  int port_ = 0;
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
  EXPECT_EQ(r.body, "refused 413");
  EXPECT_TRUE(client.closed_by_server());

  raw_client at_limit(port_);
  at_limit.send(post("/x", std::string(1000, 'a')));
  EXPECT_EQ(at_limit.receive().body.substr(0, 12), "POST /x 1000");
}

TEST_F(HttpTransportServer, RefusesABodyOverItsRoutesOwnLimitWithoutReadingIt) {
  std::vector<std::string> asked;
  body_limit_ = [&asked](std::string_view method, std::string_view path) -> std::size_t {
    asked.push_back(std::string(method) + " " + std::string(path));
    return path == "/small" ? 10 : std::size_t{1} << 40;
  };
  start(1000);
  raw_client small(port_);
  small.send("POST /sm%61ll HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
  const auto r = small.receive();
  EXPECT_EQ(r.head.substr(0, 12), "HTTP/1.1 413") << r.head;
  EXPECT_EQ(r.body, "refused 413");
  EXPECT_TRUE(small.closed_by_server());
  EXPECT_EQ(asked, std::vector<std::string>{"POST /small"});  // the decoded path, as routes see it

  // Chunked bodies, whose size no header announces, are stopped at the route's limit too.
  raw_client chunked(port_);
  chunked.send("POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n");
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
  EXPECT_EQ(r.body, "refused 400");
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
  start(std::size_t{64} << 20, 2);
  raw_client idle(port_);
  idle.send(post("/one", "1"));
  (void)idle.receive();
  raw_client half(port_);
  half.send("POST /half HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly some");
  raw_client queued(port_);  // both workers are busy: this one waits for a worker
  std::this_thread::sleep_for(50ms);
  const auto before = std::chrono::steady_clock::now();
  transport_->stop();
  serving_.join();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);
  EXPECT_TRUE(idle.closed_by_server());
  EXPECT_TRUE(half.closed_by_server());
}

}  // namespace
