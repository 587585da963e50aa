// The metrics endpoint's HTTP side: what each request is answered (the
// decision alone, then through the real civetweb server on a free port).
#include "dataplane/api/metrics_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace sluice {
namespace {

TEST(MetricsHttp, AnswersOnlyGetAndHeadOfMetrics) {
  int renders = 0;
  auto render = [&] {
    ++renders;
    return std::string("page\n");
  };
  HttpAnswer a = answerMetricsRequest("GET", "/metrics", render);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "page\n");
  EXPECT_EQ(a.content_type, kMetricsContentType);
  a = answerMetricsRequest("GET", "/metrics?name[]=x", render);
  EXPECT_EQ(a.status, 200);
  a = answerMetricsRequest("HEAD", "/metrics", render);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "");
  EXPECT_EQ(a.content_length, 5u);
  EXPECT_EQ(renders, 3);
  a = answerMetricsRequest("POST", "/metrics", render);
  EXPECT_EQ(a.status, 405);
  EXPECT_EQ(a.allow, "GET, HEAD");
  EXPECT_EQ(answerMetricsRequest("DELETE", "/metrics", render).status, 405);
  EXPECT_EQ(answerMetricsRequest("GET", "/", render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "/metrics/", render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "/metricsx", render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "", render).status, 404);
  // Refused requests never build the page.
  EXPECT_EQ(renders, 3);
}

// Sends `request` raw and returns all the server wrote back.
std::string exchange(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string statusLine(const std::string& response) { return response.substr(0, response.find("\r\n")); }

TEST(MetricsHttp, RealServerAnswersAndRefusesCleanly) {
  std::atomic<int> renders{0};
  auto server = MetricsHttpServer::start("127.0.0.1", 0, [&] {
    ++renders;
    return std::string("sluice_up 1\n");
  });
  ASSERT_TRUE(server.ok()) << server.status();
  const uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);
  std::string r = exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(statusLine(r), "HTTP/1.1 200 OK");
  EXPECT_NE(r.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), "sluice_up 1\n");
  r = exchange(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(statusLine(r), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_NE(r.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << r;
  EXPECT_EQ(statusLine(exchange(port, "GET /secret HTTP/1.1\r\nHost: x\r\n\r\n")), "HTTP/1.1 404 Not Found");
  EXPECT_EQ(statusLine(exchange(port, "GET /../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n")).substr(0, 10), "HTTP/1.1 4");
  // Not HTTP at all: civetweb refuses it itself.
  r = exchange(port, "\x01\x02garbage\r\n\r\n");
  EXPECT_EQ(statusLine(r), "HTTP/1.0 400 Bad Request");
  EXPECT_EQ(renders.load(), 1);
  // And it still serves after all that.
  EXPECT_EQ(statusLine(exchange(port, "GET /metrics HTTP/1.0\r\n\r\n")), "HTTP/1.1 200 OK");
  EXPECT_EQ(renders.load(), 2);
}

TEST(MetricsHttp, PortInUseIsAClearError) {
  auto first = MetricsHttpServer::start("127.0.0.1", 0, [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = MetricsHttpServer::start("127.0.0.1", (*first)->port(), [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen on 127.0.0.1:"), std::string::npos) << second.status();
}

}  // namespace
}  // namespace sluice
