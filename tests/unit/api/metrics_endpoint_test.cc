// The metrics endpoint's retry: a port that is taken when sluiced starts
// is listened on once it frees, and every failed attempt is counted.
#include "dataplane/api/metrics_endpoint.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace metrics_endpoint_test {

// The endpoint's options on loopback: `port` (0: any free one), `allowed`.
MetricsHttpOptions loopback(uint16_t port = 0, Ipv4AllowList allowed = {}) {
  MetricsHttpOptions o;
  o.address = "127.0.0.1";
  o.port = port;
  o.allowed = std::move(allowed);
  return o;
}

// A TCP socket listening on a free loopback port: the port's holder.
int holdPort(uint16_t* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

bool waitFor(const std::function<bool()>& done) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(MetricsEndpoint, ListensOnceTheTakenPortFrees) {
  uint16_t port = 0;
  const int holder = holdPort(&port);
  ASSERT_GE(holder, 0);
  MetricsEndpoint endpoint(std::chrono::milliseconds(5));
  const bool listening = endpoint.start(
      [&] { return MetricsHttpServer::start(loopback(port), [] { return std::string(); }); });
  EXPECT_FALSE(listening);
  EXPECT_EQ(endpoint.port(), 0);
  // Retried while the port is held, then taken as soon as it frees.
  ASSERT_TRUE(waitFor([&] { return endpoint.bindFailures() >= 3; }));
  EXPECT_EQ(endpoint.port(), 0);
  ::close(holder);
  ASSERT_TRUE(waitFor([&] { return endpoint.port() == port; })) << endpoint.bindFailures();
  const uint64_t failures = endpoint.bindFailures();
  EXPECT_GE(failures, 3u);
  endpoint.stop();
  EXPECT_EQ(endpoint.port(), 0);
  EXPECT_EQ(endpoint.bindFailures(), failures);
}

TEST(MetricsEndpoint, StopEndsTheRetriesOfAPortNeverFreed) {
  uint16_t port = 0;
  const int holder = holdPort(&port);
  ASSERT_GE(holder, 0);
  MetricsEndpoint endpoint(std::chrono::hours(1));
  EXPECT_FALSE(endpoint.start(
      [&] { return MetricsHttpServer::start(loopback(port), [] { return std::string(); }); }));
  EXPECT_EQ(endpoint.bindFailures(), 1u);
  endpoint.stop();  // returns without waiting out the hour
  EXPECT_EQ(endpoint.bindFailures(), 1u);
  ::close(holder);
}

}  // namespace metrics_endpoint_test
}  // namespace sluice
