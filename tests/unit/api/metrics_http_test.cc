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

// The endpoint's options on loopback: `port` (0: any free one), `allowed`.
MetricsHttpOptions loopback(uint16_t port = 0, Ipv4AllowList allowed = {}) {
  MetricsHttpOptions o;
  o.address = "127.0.0.1";
  o.port = port;
  o.allowed = std::move(allowed);
  return o;
}

TEST(MetricsHttp, AnswersOnlyGetAndHeadOfMetrics) {
  int renders = 0;
  auto render = [&] {
    ++renders;
    return std::string("page\n");
  };
  HttpAnswer a = answerMetricsRequest("GET", "/metrics", true, render);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "page\n");
  EXPECT_EQ(a.content_type, kMetricsContentType);
  a = answerMetricsRequest("GET", "/metrics?name[]=x", true, render);
  EXPECT_EQ(a.status, 200);
  a = answerMetricsRequest("HEAD", "/metrics", true, render);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "");
  EXPECT_EQ(a.content_length, 5u);
  EXPECT_EQ(renders, 3);
  a = answerMetricsRequest("POST", "/metrics", true, render);
  EXPECT_EQ(a.status, 405);
  EXPECT_EQ(a.allow, "GET, HEAD");
  EXPECT_EQ(answerMetricsRequest("DELETE", "/metrics", true, render).status, 405);
  EXPECT_EQ(answerMetricsRequest("GET", "/", true, render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "/metrics/", true, render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "/metricsx", true, render).status, 404);
  EXPECT_EQ(answerMetricsRequest("GET", "", true, render).status, 404);
  // Refused requests never build the page.
  EXPECT_EQ(renders, 3);
}

TEST(MetricsHttp, PeerOutsideTheAllowListIsForbiddenWhateverItAsks) {
  int renders = 0;
  auto render = [&] {
    ++renders;
    return std::string("page\n");
  };
  for (const char* path : {"/metrics", "/other"}) {
    HttpAnswer a = answerMetricsRequest("GET", path, false, render);
    EXPECT_EQ(a.status, 403) << path;
    EXPECT_EQ(a.body, "forbidden: this address is not in sluiced's metrics-allowed-cidrs\n");
  }
  EXPECT_EQ(answerMetricsRequest("POST", "/metrics", false, render).status, 403);
  EXPECT_EQ(renders, 0);
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
  auto server = MetricsHttpServer::start(loopback(), [&] {
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
  auto first = MetricsHttpServer::start(loopback(), [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = MetricsHttpServer::start(loopback((*first)->port()), [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen on 127.0.0.1:"), std::string::npos) << second.status();
}

TEST(MetricsHttp, RealServerForbidsPeersOutsideTheAllowList) {
  auto outside = Ipv4AllowList::parse("10.0.0.0/8");
  ASSERT_TRUE(outside.ok());
  auto server = MetricsHttpServer::start(loopback(0, *outside), [] { return std::string("x\n"); });
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(statusLine(exchange((*server)->port(), "GET /metrics HTTP/1.0\r\n\r\n")), "HTTP/1.1 403 Forbidden");
  auto inside = Ipv4AllowList::parse("10.0.0.0/8, 127.0.0.0/8");
  ASSERT_TRUE(inside.ok());
  auto allowed = MetricsHttpServer::start(loopback(0, *inside), [] { return std::string("x\n"); });
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(statusLine(exchange((*allowed)->port(), "GET /metrics HTTP/1.0\r\n\r\n")), "HTTP/1.1 200 OK");
}

TEST(Ipv4AllowList, ParsesCidrsAndMatchesPeers) {
  auto empty = Ipv4AllowList::parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->allowsEveryone());
  EXPECT_TRUE(empty->allows("203.0.113.9"));
  EXPECT_EQ(empty->civetwebAcl(), "");
  auto list = Ipv4AllowList::parse(" 10.1.0.0/16 ,192.0.2.7/32");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->allows("10.1.255.3"));
  EXPECT_TRUE(list->allows("192.0.2.7"));
  EXPECT_FALSE(list->allows("10.2.0.1"));
  EXPECT_FALSE(list->allows("192.0.2.8"));
  EXPECT_FALSE(list->allows("::1"));
  EXPECT_FALSE(list->allows(""));
  EXPECT_EQ(list->civetwebAcl(), "-0.0.0.0/0,+10.1.0.0/16,+192.0.2.7/32");
  for (const char* bad : {"10.0.0.1/8", "10.0.0.0", "fd00::/8", "10.0.0.0/33", "x"}) {
    auto r = Ipv4AllowList::parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status();
  }
}

}  // namespace
}  // namespace sluice
