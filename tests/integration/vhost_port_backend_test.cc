// vhost-user ports on DPDK's vhost library (VhostPortBackend) in this
// process, with pods as net_virtio_user devices beside them: pod ports take
// no ethdev, so a node can have more of them than DPDK has ethdevs
// (RTE_MAX_ETHPORTS), and frames pass between two of them through the
// PMD's burst functions (vhostReceive / vhostSend), byte for byte. A peer
// that stalls the library does not hold destroy(), and a port takes one
// connection at a time. (This process has no sluiced connect() or accept():
// the library's reads here are unbounded, so a stall lasts until the test
// ends it.)
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/core/vhost_port_backend.h"
#include "dataplane/datapath/vhost_port.h"
#include "tests/integration/vhost_user_peer.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

bool waitFor(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

class VhostPortBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice-vhostlib-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string socket(size_t i) const { return (dir_ / ("p" + std::to_string(i) + ".sock")).string(); }

  // Moves what pod `from` sends into pod `to` through the two ports, as a
  // PMD does, until `count` frames went or 10 s passed; returns how many.
  static size_t forward(const CreatedPort& from, const CreatedPort& to, size_t count) {
    size_t moved = 0;
    waitFor([&] {
      rte_mbuf* pkts[32];
      const uint16_t n = vhostReceive(*from.vhost, 0, podPool(), pkts, 32);
      uint16_t sent = 0;
      while (sent < n) sent = static_cast<uint16_t>(sent + vhostSend(*to.vhost, 0, pkts + sent, n - sent));
      moved += n;
      return moved >= count;
    });
    return moved;
  }

  std::filesystem::path dir_;
};

TEST_F(VhostPortBackendTest, MorePodPortsThanDpdkHasEthdevsAndFramesPassBetweenTwo) {
  VhostPortBackend backend({});  // no PMD: this thread polls
  const uint16_t ethdevs_before = rte_eth_dev_count_avail();
  constexpr size_t kPorts = RTE_MAX_ETHPORTS + 8;
  std::vector<CreatedPort> ports;
  for (size_t i = 0; i < kPorts; ++i) {
    auto p = backend.createVhostUser(static_cast<uint16_t>(i), socket(i), false, 1);
    ASSERT_TRUE(p.ok()) << "port " << i << ": " << p.status();
    ASSERT_NE(p->vhost, nullptr);
    EXPECT_TRUE(p->dpdk_name.empty());
    ports.push_back(*p);
    EXPECT_TRUE(std::filesystem::exists(socket(i))) << socket(i);  // a server listens once created
  }
  EXPECT_EQ(rte_eth_dev_count_avail(), ethdevs_before);
  for (const CreatedPort& p : ports) EXPECT_FALSE(backend.linkUp(p));

  // Pods on the first and the last port (each pod is an ethdev of this
  // process's own: it plays the guest).
  const CreatedPort& a = ports.front();
  const CreatedPort& b = ports.back();
  auto pod_a = VirtioPod::create(socket(0), false, podPool());
  auto pod_b = VirtioPod::create(socket(kPorts - 1), false, podPool());
  ASSERT_TRUE(pod_a.ok()) << pod_a.status();
  ASSERT_TRUE(pod_b.ok()) << pod_b.status();
  ASSERT_TRUE(waitFor([&] { return backend.linkUp(a) && backend.linkUp(b); }));
  EXPECT_EQ(backend.enabledTxQueues(a), 1);

  std::vector<Frame> frames;
  size_t bytes = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    UdpFrameSpec s{MacAddress::fromIpv4(*Ipv4Address::parse("10.250.1.2")),
                   MacAddress::fromIpv4(*Ipv4Address::parse("10.250.1.3")), *Ipv4Address::parse("10.250.1.2"),
                   *Ipv4Address::parse("10.250.1.3")};
    s.sequence = i;
    s.frame_len = 60 + i % 1400;
    frames.push_back(udpFrame(s));
    bytes += frames.back().size();
  }
  const PortBackend::ByteCounts a_before = backend.bytes(a), b_before = backend.bytes(b);
  ASSERT_EQ((*pod_a)->send(frames), frames.size());
  ASSERT_EQ(forward(a, b, frames.size()), frames.size());
  const std::vector<Frame> got = (*pod_b)->receive(frames.size());
  ASSERT_EQ(got.size(), frames.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], frames[i]) << "frame " << i;
  EXPECT_EQ(backend.bytes(a).rx - a_before.rx, bytes);
  EXPECT_EQ(backend.bytes(b).tx - b_before.tx, bytes);

  // A pod going away takes the link down; its port's counters stay.
  pod_b->reset();
  ASSERT_TRUE(waitFor([&] { return !backend.linkUp(b); }));
  EXPECT_EQ(backend.bytes(b).tx - b_before.tx, bytes);
  pod_a->reset();
  for (size_t i = 0; i < kPorts; ++i) backend.destroy(ports[i]);
  // A server's socket goes with its port, once the library let go of it.
  ASSERT_TRUE(backend.waitUnregistered(std::chrono::seconds(10)));
  for (size_t i = 0; i < kPorts; ++i) EXPECT_FALSE(std::filesystem::exists(socket(i))) << socket(i);
  EXPECT_EQ(rte_eth_dev_count_avail(), ethdevs_before);
}

TEST_F(VhostPortBackendTest, DestroyReturnsWhileAPeerStallsTheLibraryAndTheSocketIsRefusedUntilItLetsGo) {
  VhostPortBackend backend({});
  auto port = backend.createVhostUser(0, socket(0), false, 1);
  ASSERT_TRUE(port.ok()) << port.status();
  // The peer announces SET_FEATURES' 8 bytes and withholds them: the
  // library's thread blocks reading them.
  auto peer = VhostUserPeer::connectTo(socket(0));
  ASSERT_TRUE(peer.has_value());
  ASSERT_TRUE(peer->sendHeader(kVhostUserSetFeatures, kVhostUserVersion, 8));
  ASSERT_TRUE(waitFor([] { return threadSyscall(::getpid(), "vhost-events") == SYS_read; }))
      << "the library's thread never blocked reading the payload";

  // destroy() must not wait for the library: run where a hang is seen.
  auto destroyed = std::async(std::launch::async, [&] { backend.destroy(*port); });
  const bool returned = destroyed.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "destroy() waited for the stalled library";
  if (returned) {
    // Until the library lets go, the socket cannot be registered again:
    // a clear, retryable refusal.
    auto again = backend.createVhostUser(1, socket(0), false, 1);
    EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable) << again.status();
    EXPECT_FALSE(backend.waitUnregistered(std::chrono::milliseconds(0)));
  }

  // The payload arrives: the library finishes the message, and the
  // unregister its connection.
  const uint64_t features = 0;
  ASSERT_TRUE(peer->sendBytes(&features, sizeof features));
  destroyed.wait();
  ASSERT_TRUE(backend.waitUnregistered(std::chrono::seconds(10)));
  EXPECT_TRUE(peer->closedWithin(std::chrono::seconds(10)));
  auto again = backend.createVhostUser(1, socket(0), false, 1);
  ASSERT_TRUE(again.ok()) << again.status();
  backend.destroy(*again);
}

TEST_F(VhostPortBackendTest, ASecondConnectionIsRefusedAndThePodsConnectionServedOn) {
  VhostPortBackend backend({});
  auto port = backend.createVhostUser(0, socket(0), false, 1);
  ASSERT_TRUE(port.ok()) << port.status();
  auto pod = VirtioPod::create(socket(0), false, podPool());
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(waitFor([&] { return backend.linkUp(*port); }));

  // A second front-end on the same socket is closed before it is served.
  auto intruder = VhostUserPeer::connectTo(socket(0));
  ASSERT_TRUE(intruder.has_value());
  EXPECT_TRUE(intruder->closedWithin(std::chrono::seconds(10)));
  EXPECT_TRUE(backend.linkUp(*port));
  intruder.reset();

  // The pod's connection still carries frames.
  UdpFrameSpec s{MacAddress::fromIpv4(*Ipv4Address::parse("10.250.1.2")),
                 MacAddress::fromIpv4(*Ipv4Address::parse("10.250.1.3")), *Ipv4Address::parse("10.250.1.2"),
                 *Ipv4Address::parse("10.250.1.3")};
  const std::vector<Frame> frames{udpFrame(s)};
  ASSERT_EQ((*pod)->send(frames), 1u);
  size_t got = 0;
  EXPECT_TRUE(waitFor([&] {
    rte_mbuf* pkts[4];
    const uint16_t n = vhostReceive(*port->vhost, 0, podPool(), pkts, 4);
    rte_pktmbuf_free_bulk(pkts, n);
    got += n;
    return got >= 1;
  }));
  EXPECT_TRUE(backend.linkUp(*port));

  // Once the pod went, the port takes a connection again.
  pod->reset();
  ASSERT_TRUE(waitFor([&] { return !backend.linkUp(*port); }));
  auto next = VhostUserPeer::connectTo(socket(0));
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->getFeatures(std::chrono::seconds(10)).has_value());
  backend.destroy(*port);
}

}  // namespace
}  // namespace sluice::test
