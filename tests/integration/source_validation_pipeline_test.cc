// Source validation on the real PMD loop and control path (the ring node,
// tests/support/ring_node.h): a pod's packets with another source IP or
// MAC, and its ARP naming another sender, are dropped by reason, both when
// decided inline (a miss) and from the caches, and counted exactly on the
// PMD and the pod's port; its own traffic is untouched; a port made with
// validation off (a router) forwards foreign sources; the overlay's
// packets are not pod traffic and are not checked; and re-making a port
// with the other setting revalidates the megaflows its packets made.
#include <gtest/gtest.h>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kA = 10, kB = 11, kR = 12, kStolen = 13;

class SourceValidationPipelineTest : public ::testing::Test {
 protected:
  static NodeOptions options() {
    NodeOptions o;
    o.vxlan = true;
    return o;
  }
  void SetUp() override {
    a_ = node_.addPod("srcval-a", kA);
    b_ = node_.addPod("srcval-b", kB);
  }

  uint64_t drops(DropReason r) { return node_.counters().drops[static_cast<size_t>(r)].read(); }
  PortCounters& port(uint16_t p) { return node_.counters().ports[p]; }
  // A frame from pod `host` to pod kB, with its source IP or MAC taken from another host.
  static Frame from(unsigned mac_host, unsigned ip_host, uint16_t sport, uint32_t seq, uint8_t ttl = 64) {
    UdpFrameSpec s;
    s.src_mac = podMac(mac_host);
    s.dst_mac = MacAddress::fromIpv4(kGateway);
    s.src_ip = podIp(ip_host);
    s.dst_ip = podIp(kB);
    s.ttl = ttl;
    s.src_port = sport;
    s.sequence = seq;
    return udpFrame(s);
  }
  // Sends f on port p; returns the ports it came out of.
  std::vector<uint16_t> send(uint16_t p, const Frame& f) {
    node_.inject(p, f);
    std::vector<uint16_t> out;
    for (const auto& [port_no, frame] : node_.collectAll()) out.push_back(port_no);
    return out;
  }

  Node node_{nullptr, options()};
  uint16_t a_ = 0, b_ = 0;
};

TEST_F(SourceValidationPipelineTest, SpoofedIpAndMacAreDroppedUncachedAndCachedAndCountedExactly) {
  // The pod's own flow: forwarded, and its megaflow installed.
  EXPECT_EQ(send(a_, from(kA, kA, 1000, 1)), std::vector<uint16_t>{b_});
  ASSERT_TRUE(node_.waitForFlow("ipv4_src=" + podIp(kA).toString()));
  // The same flow with another pod's IP (same ports, same destination):
  // never answered by the cached forward; first a miss, then its own drop
  // megaflow.
  EXPECT_TRUE(send(a_, from(kA, kStolen, 1000, 2)).empty());
  EXPECT_EQ(drops(DropReason::kSpoofedSourceIp), 1u);
  ASSERT_TRUE(node_.waitForFlow("ipv4_src=" + podIp(kStolen).toString()));
  const uint64_t misses = node_.counters().misses.read();
  EXPECT_TRUE(send(a_, from(kA, kStolen, 1000, 3)).empty());
  EXPECT_EQ(node_.counters().misses.read(), misses) << "the second spoofed packet hit a cache tier";
  EXPECT_EQ(drops(DropReason::kSpoofedSourceIp), 2u);
  // Another pod's MAC with A's own IP; then a spoofed packet whose TTL
  // expires: dropped as spoofed, not answered with an ICMP error.
  EXPECT_TRUE(send(a_, from(kStolen, kA, 1000, 4)).empty());
  EXPECT_TRUE(send(a_, from(kA, kStolen, 1001, 5, 1)).empty());
  EXPECT_EQ(drops(DropReason::kSpoofedSourceMac), 1u);
  EXPECT_EQ(drops(DropReason::kSpoofedSourceIp), 3u);
  EXPECT_EQ(drops(DropReason::kTtlExceeded), 0u);
  EXPECT_EQ(node_.counters().icmp_errors_sent.read(), 0u);
  // And the pod's own traffic still flows, from the cache.
  EXPECT_EQ(send(a_, from(kA, kA, 1000, 6)), std::vector<uint16_t>{b_});
  EXPECT_EQ(port(a_).rx_packets.read(), 6u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 4u);
  EXPECT_EQ(port(b_).tx_packets.read(), 2u);
}

TEST_F(SourceValidationPipelineTest, ArpMustNameThePodsOwnAddresses) {
  // Its own: answered on its port. A probe from 0.0.0.0: answered too.
  EXPECT_EQ(send(a_, arpRequest(podMac(kA), podIp(kA), kGateway)), std::vector<uint16_t>{a_});
  EXPECT_EQ(send(a_, arpRequest(podMac(kA), Ipv4Address{0}, kGateway)), std::vector<uint16_t>{a_});
  // Another pod's IP or MAC as sender.
  EXPECT_TRUE(send(a_, arpRequest(podMac(kA), podIp(kB), kGateway)).empty());
  Frame sha = arpRequest(podMac(kB), podIp(kA), kGateway);
  std::memcpy(&sha[6], podMac(kA).bytes.data(), 6);  // the Ethernet source is A's own
  EXPECT_TRUE(send(a_, sha).empty());
  EXPECT_EQ(drops(DropReason::kSpoofedArp), 2u);
  // A foreign Ethernet source.
  EXPECT_TRUE(send(a_, arpRequest(podMac(kB), podIp(kB), kGateway)).empty());
  EXPECT_EQ(drops(DropReason::kSpoofedSourceMac), 1u);
  EXPECT_EQ(drops(DropReason::kArpNotAnswered), 0u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 3u);
}

TEST_F(SourceValidationPipelineTest, ARouterPortForwardsForeignSourcesAndOverlayIsUnchecked) {
  const uint16_t r = node_.addPod("srcval-r", kR, {.source_validation = false});
  // Traffic the router forwards for others: their MACs and addresses.
  for (uint32_t seq = 0; seq < 3; ++seq) {
    UdpFrameSpec s;
    s.src_mac = *MacAddress::parse("02:01:02:03:04:05");
    s.dst_mac = MacAddress::fromIpv4(kGateway);
    s.src_ip = *Ipv4Address::parse("192.0.2.7");
    s.dst_ip = podIp(kB);
    s.sequence = seq;
    EXPECT_EQ(send(r, udpFrame(s)), std::vector<uint16_t>{b_}) << seq;
  }
  EXPECT_EQ(send(r, arpRequest(podMac(kA), podIp(kA), kGateway)), std::vector<uint16_t>{r});
  // A remote node's pod through the overlay (its own MAC and address, which
  // no local port has).
  node_.injectUplink(vxlanTo(kRemote2, podIp(kB), 64, 1000, 9));
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, b_);
  for (DropReason d : {DropReason::kSpoofedSourceIp, DropReason::kSpoofedSourceMac, DropReason::kSpoofedArp})
    EXPECT_EQ(drops(d), 0u) << kDropReasonNames[static_cast<size_t>(d)];
  EXPECT_EQ(port(r).rx_dropped.read(), 0u);
}

TEST_F(SourceValidationPipelineTest, RemakingAPortWithTheOtherSettingRevalidatesItsMegaflows) {
  const uint16_t r = node_.addPod("srcval-r", kR, {.source_validation = false});
  const Frame foreign = from(kR, kStolen, 2000, 1);
  EXPECT_EQ(send(r, foreign), std::vector<uint16_t>{b_});
  ASSERT_TRUE(node_.waitForFlow("in_port=" + std::to_string(r) + ",eth_type=0x0800,ttl=2+,ipv4_dst=" + podIp(kB).toString()));
  // The same pod again, now checked, at the same port number.
  node_.deletePod("srcval-r");
  ASSERT_EQ(node_.addPod("srcval-r", kR), r);
  EXPECT_TRUE(send(r, foreign).empty()) << "the router's forward megaflow is gone";
  EXPECT_EQ(drops(DropReason::kSpoofedSourceIp), 1u);
  ASSERT_TRUE(node_.waitForFlow("ipv4_src=" + podIp(kStolen).toString()));
  // And back: the drop megaflow goes too.
  node_.deletePod("srcval-r");
  ASSERT_EQ(node_.addPod("srcval-r", kR, {.source_validation = false}), r);
  EXPECT_EQ(send(r, foreign), std::vector<uint16_t>{b_});
  EXPECT_EQ(drops(DropReason::kSpoofedSourceIp), 1u);
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) {
  return sluice::test::runRingNodeTests(argc, argv, "source_validation_pipeline_test");
}
