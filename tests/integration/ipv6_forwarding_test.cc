// IPv6 between two pods of one node on real DPDK: sluiced (a child process
// with vhost-user ports and pod-cidr-v6) and two net_virtio_user pods in this
// process, one dual-stack and one IPv6-only. Neighbor solicitations are
// answered with exact bytes, UDP arrives rewritten byte for byte, counters
// move by exact amounts, an expired hop limit is answered with ICMPv6 Time
// Exceeded, ping to the gateway (both families) gets its echo reply; a node
// without pod-cidr-v6 refuses IPv6 attachments.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace ipv6_forwarding_test {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00:250::a");
const Ipv6Address kIp6B = *Ipv6Address::parse("fd00:250::b");
const Ipv6Address kGateway6 = *Ipv6Address::parse("fd00:250::1");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv6(kIp6B);  // IPv6-only: derived from its IPv6 address
const MacAddress kGatewayMac = MacAddress::fromIpv4(*Ipv4Address::parse("10.250.0.1"));

class Ipv6PodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.extra_flags = {"--pod-cidr-v6", "fd00:250::/64"};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortRequest ra = portRequest("v6dp-pod-a", kIpA.toString());
    ra.set_ipv6(kIp6A.toString());
    v1::AddPortRequest rb = portRequest("v6dp-pod-b", "");
    rb.set_ipv6(kIp6B.toString());
    v1::AddPortResponse a, b;
    grpc::Status sa = node_->addPort(ra, &a);
    ASSERT_TRUE(sa.ok()) << sa.error_message();
    grpc::Status sb = node_->addPort(rb, &b);
    ASSERT_TRUE(sb.ok()) << sb.error_message();
    EXPECT_EQ(a.port().ipv6(), "fd00:250::a");
    EXPECT_EQ(b.port().ip(), "");
    EXPECT_EQ(b.port().ipv6(), "fd00:250::b");
    EXPECT_EQ(b.port().mac(), kMacB.toString());
    port_a_ = a.port().port_no();
    port_b_ = b.port().port_no();
    auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(port_a_)) << node_->log();
    ASSERT_TRUE(node_->waitLinkUp(port_b_)) << node_->log();
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  std::vector<Frame> aToB(size_t n, uint8_t hop_limit = 64, Ipv6Address dst = kIp6B) {
    std::vector<Frame> frames;
    for (size_t i = 0; i < n; ++i) {
      Udp6FrameSpec s{kMacA, kGatewayMac, kIp6A, dst};
      s.hop_limit = hop_limit;
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(2000 + i % 5);
      frames.push_back(udp6Frame(s));
    }
    return frames;
  }

  // The advertisement a solicitation from pod A for `target` must get.
  static Frame advertisement(const Ipv6Address& target, uint8_t flags) {
    Frame f(86, 0);
    std::memcpy(&f[0], kMacA.bytes.data(), 6);
    std::memcpy(&f[6], kGatewayMac.bytes.data(), 6);
    f[12] = 0x86;
    f[13] = 0xdd;
    f[14] = 0x60;
    f[19] = 32;
    f[20] = 58;
    f[21] = 255;
    std::memcpy(&f[22], target.bytes.data(), 16);
    std::memcpy(&f[38], kIp6A.bytes.data(), 16);
    f[54] = 136;
    f[58] = flags;
    std::memcpy(&f[62], target.bytes.data(), 16);
    f[78] = 2;
    f[79] = 1;
    std::memcpy(&f[80], kGatewayMac.bytes.data(), 6);
    const uint16_t sum = icmpv6ChecksumOf(f, 32);
    f[56] = static_cast<uint8_t>(sum >> 8);
    f[57] = static_cast<uint8_t>(sum);
    return f;
  }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0, port_b_ = 0;
};

TEST_F(Ipv6PodsTest, NeighborSolicitationsForTheGatewayAndAPeerAreAnswered) {
  ASSERT_EQ(pod_a_->send({neighborSolicitation(kMacA, kIp6A, kGateway6)}), 1u);
  std::vector<Frame> got = pod_a_->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(got[0], advertisement(kGateway6, 0xe0));  // Router, Solicited, Override
  ASSERT_EQ(pod_a_->send({neighborSolicitation(kMacA, kIp6A, kIp6B)}), 1u);
  got = pod_a_->receive(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], advertisement(kIp6B, 0x60));  // proxied: Solicited, Override
  // A pod's DAD probe for its own address is not answered.
  ASSERT_EQ(pod_a_->send({neighborSolicitation(kMacA, Ipv6Address{}, kIp6A)}), 1u);
  // A UDP frame behind it: once it arrives, the probe was processed (one queue, order kept).
  ASSERT_EQ(pod_a_->send(aToB(1)), 1u);
  ASSERT_EQ(pod_b_->receive(1).size(), 1u);
  EXPECT_EQ(pod_a_->drainCount(), 0u);
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "nd_not_answered"), 1u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 4u);
  EXPECT_EQ(portStats(s, port_a_)->tx_packets(), 2u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 1u);
}

TEST_F(Ipv6PodsTest, UdpArrivesWithHopLimitDecrementedAndMacsRewrittenAndCountersExact) {
  constexpr size_t kCount = 600;
  std::vector<Frame> sent = aToB(kCount);
  std::vector<Frame> got;
  for (size_t at = 0; at < kCount; at += 300) {
    std::vector<Frame> round(sent.begin() + static_cast<long>(at), sent.begin() + static_cast<long>(at + 300));
    ASSERT_EQ(pod_a_->send(round), round.size());
    std::vector<Frame> part = pod_b_->receive(round.size());
    ASSERT_EQ(part.size(), round.size()) << node_->stats().DebugString();
    got.insert(got.end(), part.begin(), part.end());
  }
  for (size_t i = 0; i < kCount; ++i) {
    Frame expected = sent[i];
    std::memcpy(&expected[0], kMacB.bytes.data(), 6);
    std::memcpy(&expected[6], kGatewayMac.bytes.data(), 6);
    expected[21] = 63;
    ASSERT_EQ(got[i], expected) << i;
  }
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(s.pmds(0).packets(), kCount);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_dropped(), 0u);
  for (const v1::DropCounter& d : s.drops()) EXPECT_EQ(d.packets(), 0u) << d.reason();
  // Through the flow caches like IPv4: one looked-up decision per packet.
  EXPECT_EQ(s.pmds(0).emc_hits() + s.pmds(0).smc_hits() + s.pmds(0).megaflow_hits() + s.pmds(0).misses(), kCount);
  EXPECT_GT(s.pmds(0).emc_hits() + s.pmds(0).smc_hits() + s.pmds(0).megaflow_hits(), 0u);
}

// The ICMPv6 Time Exceeded (hop limit exceeded in transit) a router sends
// pod A about `original`: from the gateway's IPv6 address, hop limit 64,
// quoting the whole invoking packet (it fits in 1280 bytes).
Frame timeExceeded(const Frame& original) {
  const size_t quoted = original.size() - 14;
  Frame f(14 + 40 + 8 + quoted, 0);
  std::memcpy(&f[0], kMacA.bytes.data(), 6);
  std::memcpy(&f[6], kGatewayMac.bytes.data(), 6);
  f[12] = 0x86;
  f[13] = 0xdd;
  f[14] = 0x60;
  f[18] = static_cast<uint8_t>((8 + quoted) >> 8);
  f[19] = static_cast<uint8_t>(8 + quoted);
  f[20] = 58;
  f[21] = 64;
  std::memcpy(&f[22], kGateway6.bytes.data(), 16);
  std::memcpy(&f[38], kIp6A.bytes.data(), 16);
  f[54] = 3;  // Time Exceeded, code 0
  std::memcpy(&f[62], &original[14], quoted);
  const uint16_t sum = icmpv6ChecksumOf(f, 8 + quoted);
  f[56] = static_cast<uint8_t>(sum >> 8);
  f[57] = static_cast<uint8_t>(sum);
  return f;
}

TEST_F(Ipv6PodsTest, HopLimitGatewayAndUnknownDestinationsAreDroppedByReason) {
  const std::vector<Frame> expiring = aToB(4, /*hop_limit=*/1);
  ASSERT_EQ(pod_a_->send(expiring), 4u);
  // Each comes back to its sender as ICMPv6 Time Exceeded, byte for byte.
  std::vector<Frame> errors = pod_a_->receive(4);
  ASSERT_EQ(errors.size(), 4u) << node_->stats().DebugString();
  for (size_t i = 0; i < errors.size(); ++i) EXPECT_EQ(errors[i], timeExceeded(expiring[i])) << i;
  ASSERT_EQ(pod_a_->send(aToB(3, 64, kGateway6)), 3u);
  const std::vector<Frame> unused = aToB(2, 64, *Ipv6Address::parse("fd00:250::99"));
  ASSERT_EQ(pod_a_->send(unused), 2u);
  ASSERT_EQ(pod_a_->send(aToB(1)), 1u);
  ASSERT_EQ(pod_b_->receive(1).size(), 1u);
  // An address of pod-cidr-v6 that no pod holds: ICMPv6 address unreachable.
  errors = pod_a_->receive(2);
  ASSERT_EQ(errors.size(), 2u) << node_->stats().DebugString();
  for (size_t i = 0; i < errors.size(); ++i)
    EXPECT_EQ(errors[i], icmpv6Error(unused[i], kGatewayMac, kGateway6, 1, 3, 0)) << i;
  // The gateway answers ping on both families (the IPv6 one on its global
  // and its link-local address), byte for byte; the requests are consumed.
  const Ipv4Address gateway4 = *Ipv4Address::parse("10.250.0.1");
  Ipv6Address link_local = *Ipv6Address::parse("fe80::");  // modified EUI-64 of the gateway MAC
  const auto& g = kGatewayMac.bytes;
  const uint8_t iid[8] = {static_cast<uint8_t>(g[0] ^ 0x02), g[1], g[2], 0xff, 0xfe, g[3], g[4], g[5]};
  std::memcpy(link_local.bytes.data() + 8, iid, 8);
  const std::vector<Frame> pings = {icmpEcho(kMacA, kGatewayMac, kIpA, gateway4, 8, 0x77, 1, 1),
                                    icmpv6Echo(kMacA, kGatewayMac, kIp6A, kGateway6, 128, 0x77, 2),
                                    icmpv6Echo(kMacA, kGatewayMac, kIp6A, link_local, 128, 0x77, 3)};
  ASSERT_EQ(pod_a_->send(pings), 3u);
  const std::vector<Frame> replies = pod_a_->receive(3);
  ASSERT_EQ(replies.size(), 3u) << node_->stats().DebugString();
  EXPECT_EQ(replies[0], icmpEcho(kGatewayMac, kMacA, gateway4, kIpA, 0, 0x77, 1));
  EXPECT_EQ(replies[1], icmpv6Echo(kGatewayMac, kMacA, kGateway6, kIp6A, 129, 0x77, 2));
  EXPECT_EQ(replies[2], icmpv6Echo(kGatewayMac, kMacA, link_local, kIp6A, 129, 0x77, 3));
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "ttl_exceeded"), 4u);
  EXPECT_EQ(dropCount(s, "to_gateway"), 3u);
  EXPECT_EQ(dropCount(s, "gateway_echo_answered"), 3u);
  EXPECT_EQ(dropCount(s, "gateway_echo_rate_limited"), 0u);
  EXPECT_EQ(dropCount(s, "no_route"), 2u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 13u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 12u) << "the echo requests are consumed, not forwarded";
  EXPECT_EQ(portStats(s, port_a_)->tx_packets(), 9u) << "the six errors and three replies";
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 6u);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), 1u);
  EXPECT_EQ(pod_b_->drainCount(), 0u);
}

TEST(Ipv6RefusedTest, ANodeWithoutPodCidrV6RefusesAnIpv6Attachment) {
  std::string error;
  std::unique_ptr<SluicedProcess> node = SluicedProcess::start({}, &error);
  ASSERT_NE(node, nullptr) << error;
  v1::AddPortRequest r = portRequest("v6dp-pod-c", "10.250.0.12");
  r.set_ipv6("fd00:250::c");
  v1::AddPortResponse resp;
  grpc::Status s = node->addPort(r, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("pod-cidr-v6"), std::string::npos) << s.error_message();
  EXPECT_EQ(node->stop(), 0) << node->log();
}

}  // namespace ipv6_forwarding_test
}  // namespace sluice::test
