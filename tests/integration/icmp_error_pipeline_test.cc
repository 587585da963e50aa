// ICMP Time Exceeded on the real PMD loop and control path (the ring node,
// tests/support/ring_node.h: ring ethdevs for pods and the VXLAN uplink): a
// pod's packet whose TTL expires comes back to it as the error, byte for
// byte, whether its megaflow was still being set up (inline translation) or
// cached; so does one towards a remote node's pod. The PMD's limiter holds
// back what exceeds its budget, and a rate of 0 set live sends nothing.
// ICMP errors and packets that came through the overlay are not answered.
// Ping to the gateway is answered within a budget of its own.
// Every counter involved moves by exactly the packets sent.
//
// The limiter's budget is 100 errors per second on a clock it is told runs
// 36000 times slower than the TSC: a bucket of 5, and the next token 6
// minutes away, so what the PMD may send during a test is exact.
#include <gtest/gtest.h>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kA = 10, kB = 11;
constexpr uint32_t kBurst = 5;  // IcmpErrorLimiter::burstFor(100)
// What one port alone gets of it at once: the PMD's tokens above half its
// burst (its own share of the errors, with several rx queues polled, is
// spent with them; icmp_error_limiter.h).
constexpr uint32_t kLonePortBurst = kBurst - kBurst / 2;

void put16(Frame& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

Frame expectedTimeExceeded(const Frame& original) {
  return icmpTimeExceeded(original, MacAddress::fromIpv4(kGateway), kGateway);
}

class IcmpErrorPipelineTest : public ::testing::Test {
 protected:
  static NodeOptions options() {
    NodeOptions o;
    o.vxlan = true;
    o.icmp_errors.tsc_hz = rte_get_tsc_hz() * 36000;
    o.icmp_errors.rate_per_sec = 100;
    return o;
  }
  void SetUp() override {
    a_ = node_.addPod("icmperr-a", kA);
    b_ = node_.addPod("icmperr-b", kB);
  }

  uint64_t ttlDrops() { return node_.counters().drops[static_cast<size_t>(DropReason::kTtlExceeded)].read(); }
  uint64_t sent() { return node_.counters().icmp_errors_sent.read(); }
  uint64_t limited() { return node_.counters().icmp_errors_rate_limited.read(); }
  PortCounters& port(uint16_t p) { return node_.counters().ports[p]; }

  Node node_{nullptr, options()};
  uint16_t a_ = 0, b_ = 0;
};

TEST_F(IcmpErrorPipelineTest, ExpiredPacketComesBackAsTimeExceededUncachedAndCached) {
  // The first packet of the flow: a miss, decided by inline translation.
  const Frame first = udpTo(kA, podIp(kB), 1, 1000, 1);
  node_.inject(a_, first);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(first));
  EXPECT_EQ(ttlDrops(), 1u) << "the expired packet is still a ttl_exceeded drop";
  EXPECT_EQ(sent(), 1u);
  EXPECT_EQ(limited(), 0u);
  EXPECT_EQ(node_.counters().misses.read(), 1u);

  // Once its drop megaflow is installed, the next one is answered from the cache.
  ASSERT_TRUE(node_.waitForFlow("ttl=1"));
  const uint64_t misses = node_.counters().misses.read();
  const Frame second = udpTo(kA, podIp(kB), 1, 1000, 2);
  node_.inject(a_, second);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(second));
  EXPECT_EQ(node_.counters().misses.read(), misses) << "the second packet hit a cache tier";

  // TTL 0 as well, and a long datagram is quoted up to 576 bytes.
  UdpFrameSpec s;
  s.src_mac = podMac(kA);
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = podIp(kA);
  s.dst_ip = podIp(kB);
  s.ttl = 0;
  s.frame_len = 1000;
  const Frame zero = udpFrame(s);
  node_.inject(a_, zero);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].second.size(), 14u + 576);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(zero));

  EXPECT_EQ(ttlDrops(), 3u);
  EXPECT_EQ(sent(), 3u);
  EXPECT_EQ(port(a_).rx_packets.read(), 3u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 3u);
  EXPECT_EQ(port(a_).tx_packets.read(), 3u) << "the errors went out of the sender's port";
  EXPECT_EQ(port(b_).tx_packets.read(), 0u);
}

TEST_F(IcmpErrorPipelineTest, ExpiredPacketTowardsARemoteNodeIsAnsweredToo) {
  const Frame f = udpTo(kA, *Ipv4Address::parse("10.78.0.5"), 1, 1000, 1);
  node_.inject(a_, f);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_) << "back to the pod, not encapsulated";
  EXPECT_EQ(out[0].second, expectedTimeExceeded(f));
  EXPECT_EQ(sent(), 1u);
}

TEST_F(IcmpErrorPipelineTest, LimiterHoldsBackBeyondItsBudgetAndRateZeroSendsNothing) {
  std::vector<Frame> burst;
  for (uint32_t i = 0; i < kBurst + 3; ++i) burst.push_back(udpTo(kA, podIp(kB), 1, 1000, i));
  node_.injectBurst(a_, burst);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), kLonePortBurst);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].first, a_);
    EXPECT_EQ(out[i].second, expectedTimeExceeded(burst[i])) << i;  // the first ones, in order
  }
  EXPECT_EQ(ttlDrops(), kBurst + 3);
  EXPECT_EQ(sent(), kLonePortBurst);
  EXPECT_EQ(limited(), kBurst + 3 - kLonePortBurst);
  EXPECT_EQ(port(a_).rx_dropped.read(), kBurst + 3);

  // A's share is spent, not the PMD's: B's error still goes out, from the
  // half of the bucket kept back (the clock earns nothing meanwhile).
  const Frame from_b = udpTo(kB, podIp(kA), 1, 1000, 50);
  node_.inject(b_, from_b);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, b_);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(from_b));
  EXPECT_EQ(sent(), kLonePortBurst + 1);
  node_.inject(a_, udpTo(kA, podIp(kB), 1, 1000, 51));
  EXPECT_TRUE(node_.collectAll().empty()) << "A gets nothing more";

  // icmp-error-rate 0, live: in force on the PMD when applyLiveSettings returns.
  SluicedConfig live;
  live.flow_idle_timeout_ms = 600000;
  live.icmp_error_rate = 0;
  node_.control().applyLiveSettings(live);
  node_.inject(b_, udpTo(kB, podIp(kA), 1, 1000, 100));
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(ttlDrops(), kBurst + 6);
  EXPECT_EQ(sent(), kLonePortBurst + 1);
  EXPECT_EQ(limited(), kBurst + 5 - kLonePortBurst);
}

// Ping to the gateway is answered from a bucket of its own: a flood of
// echo requests spends it, not the errors' (the expired packet after it is
// still answered), and what exceeds it is counted, not answered.
TEST_F(IcmpErrorPipelineTest, GatewayPingIsAnsweredWithinItsOwnBudget) {
  const MacAddress gateway_mac = MacAddress::fromIpv4(kGateway);
  auto drops = [&](DropReason r) { return node_.counters().drops[static_cast<size_t>(r)].read(); };
  // To the gateway's address but the broadcast MAC: not answered, and no
  // token spent on it.
  std::vector<Frame> pings = {icmpEcho(podMac(kA), *MacAddress::parse("ff:ff:ff:ff:ff:ff"), podIp(kA), kGateway, 8,
                                       0x99, 1000)};
  for (uint16_t i = 0; i < kBurst + 2; ++i)
    pings.push_back(icmpEcho(podMac(kA), gateway_mac, podIp(kA), kGateway, 8, 0x99, i));
  node_.injectBurst(a_, pings);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), kBurst);
  for (uint16_t i = 0; i < kBurst; ++i) {  // the first ones, in order
    EXPECT_EQ(out[i].first, a_);
    EXPECT_EQ(out[i].second, icmpEcho(gateway_mac, podMac(kA), kGateway, podIp(kA), 0, 0x99, i)) << i;
  }
  EXPECT_EQ(drops(DropReason::kGatewayEchoAnswered), kBurst);
  EXPECT_EQ(drops(DropReason::kGatewayEchoRateLimited), 2u);
  EXPECT_EQ(drops(DropReason::kToGateway), 1u);
  EXPECT_EQ(port(a_).rx_dropped.read(), kBurst + 3);
  EXPECT_EQ(port(a_).tx_packets.read(), kBurst);
  EXPECT_EQ(sent(), 0u);
  EXPECT_EQ(limited(), 0u);

  const Frame expiring = udpTo(kA, podIp(kB), 1, 1000, 1);
  node_.inject(a_, expiring);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(expiring));
  EXPECT_EQ(sent(), 1u);
}

TEST_F(IcmpErrorPipelineTest, IcmpErrorsAndOverlayPacketsAreNotAnswered) {
  // An ICMP Destination Unreachable from pod a, TTL 1.
  Frame icmp = udpTo(kA, podIp(kB), 1, 1000, 1);
  icmp[23] = 1;
  icmp[34] = 3;
  put16(icmp, 24, 0);
  put16(icmp, 24, internetChecksum(&icmp[14], 20));
  node_.inject(a_, icmp);
  // A VXLAN packet from remote node r2 for pod b whose inner TTL expires.
  node_.injectUplink(vxlanTo(kRemote2, podIp(kB), 1, 1000, 2));
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(ttlDrops(), 2u);
  EXPECT_EQ(sent(), 0u);
  EXPECT_EQ(limited(), 0u) << "refused by the rules, not by the limiter";
  // And an ordinary packet still goes through with the budget intact.
  const Frame ok = udpTo(kA, podIp(kB), 1, 1000, 3);
  node_.inject(a_, ok);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, expectedTimeExceeded(ok));
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "icmp_error_pipeline_test"); }
