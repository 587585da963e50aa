// A port's MTU on real DPDK: sluiced (a child process with vhost-user ports
// and pod-cidr-v6) and two dual-stack net_virtio_user pods in this process,
// pod B's port made with mtu 1280 through the API. A packet from pod A
// larger than that comes back as ICMP "fragmentation needed" (DF set, the
// next-hop MTU 1280) or ICMPv6 "packet too big", byte for byte; one of
// exactly 1280 bytes arrives. A packet to an address of the pod CIDR that no
// pod holds comes back as host / address unreachable. Counters move by
// exactly the packets sent. A 9000-byte IP packet (chained 2 KB mbufs on
// both sides) crosses to a jumbo port whole, and toward pod B is answered
// (DF) or arrives in exact fragments (no DF).
#include <gtest/gtest.h>

#include <cstring>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace mtu_test {

const Ipv4Address kGateway = *Ipv4Address::parse("10.251.0.1");
const Ipv4Address kIpA = *Ipv4Address::parse("10.251.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.251.0.11");
const Ipv6Address kGateway6 = *Ipv6Address::parse("fd00:251::1");
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00:251::a");
const Ipv6Address kIp6B = *Ipv6Address::parse("fd00:251::b");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv4(kIpB);
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);
constexpr uint32_t kMtuB = 1280;

// UDP from pod A to dst in a frame of frame_len bytes, DF set.
Frame udpFromA(Ipv4Address dst, size_t frame_len, uint32_t seq) {
  UdpFrameSpec s{kMacA, kGatewayMac, kIpA, dst};
  s.frame_len = frame_len;
  s.sequence = seq;
  Frame f = udpFrame(s);
  f[20] = 0x40;  // DF
  f[24] = f[25] = 0;
  const uint16_t sum = internetChecksum(&f[14], 20);
  f[24] = static_cast<uint8_t>(sum >> 8);
  f[25] = static_cast<uint8_t>(sum);
  return f;
}

Frame udp6FromA(Ipv6Address dst, size_t frame_len, uint32_t seq) {
  Udp6FrameSpec s{kMacA, kGatewayMac, kIp6A, dst};
  s.frame_len = frame_len;
  s.sequence = seq;
  return udp6Frame(s);
}

class MtuPodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.pod_cidr = "10.251.0.0/24";
    o.extra_flags = {"--pod-cidr-v6", "fd00:251::/64"};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortRequest ra = portRequest("mtu-pod-a", kIpA.toString());
    ra.set_ipv6(kIp6A.toString());
    v1::AddPortRequest rb = portRequest("mtu-pod-b", kIpB.toString());
    rb.set_ipv6(kIp6B.toString());
    rb.set_mtu(kMtuB);
    v1::AddPortResponse a, b;
    grpc::Status sa = node_->addPort(ra, &a);
    ASSERT_TRUE(sa.ok()) << sa.error_message();
    grpc::Status sb = node_->addPort(rb, &b);
    ASSERT_TRUE(sb.ok()) << sb.error_message();
    EXPECT_EQ(a.port().mtu(), 1500u) << "port-mtu's default";
    EXPECT_EQ(b.port().mtu(), kMtuB);
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

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0, port_b_ = 0;
};

TEST_F(MtuPodsTest, TheApiListsTheMtuAndRefusesOneTooSmallForIpv6) {
  v1::ListPortsResponse ports = node_->ports();
  ASSERT_EQ(ports.ports_size(), 2);
  for (const v1::Port& p : ports.ports()) EXPECT_EQ(p.mtu(), p.port_no() == port_b_ ? kMtuB : 1500u);
  v1::AddPortRequest r = portRequest("mtu-pod-c", "10.251.0.12");
  r.set_ipv6("fd00:251::c");
  r.set_mtu(1279);
  v1::AddPortResponse resp;
  grpc::Status s = node_->addPort(r, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "mtu: 1279 is below IPv6's minimum link MTU 1280, and the port carries IPv6 (fd00:251::c)");
  r.set_mtu(9217);
  EXPECT_EQ(node_->addPort(r, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(MtuPodsTest, ALargerDfPacketComesBackAsFragmentationNeededAndOneOfTheMtuArrives) {
  const Frame big = udpFromA(kIpB, 14 + kMtuB + 1, 1);
  ASSERT_EQ(pod_a_->send({big}), 1u);
  std::vector<Frame> errors = pod_a_->receive(1);
  ASSERT_EQ(errors.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(errors[0], icmpError(big, kGatewayMac, kGateway, 3, 4, kMtuB));
  const Frame fits = udpFromA(kIpB, 14 + kMtuB, 2);
  ASSERT_EQ(pod_a_->send({fits}), 1u);
  std::vector<Frame> got = pod_b_->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  ASSERT_EQ(got[0].size(), fits.size());
  EXPECT_EQ(ethDst(got[0]), kMacB);
  EXPECT_EQ(ipv4Ttl(got[0]), 63);
  EXPECT_TRUE(ipv4ChecksumValid(got[0]));
  EXPECT_EQ(udpSequence(got[0]), 2u);
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "mtu_exceeded"), 1u);
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 1u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 2u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 1u);
  EXPECT_EQ(portStats(s, port_a_)->tx_packets(), 1u) << "the error";
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), 1u);
  EXPECT_EQ(pod_b_->drainCount(), 0u);
}

TEST_F(MtuPodsTest, ALargerIpv6PacketComesBackAsPacketTooBig) {
  const Frame big = udp6FromA(kIp6B, 14 + kMtuB + 1, 1);
  ASSERT_EQ(pod_a_->send({big}), 1u);
  std::vector<Frame> errors = pod_a_->receive(1);
  ASSERT_EQ(errors.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(errors[0], icmpv6Error(big, kGatewayMac, kGateway6, 2, 0, kMtuB));
  ASSERT_EQ(pod_a_->send({udp6FromA(kIp6B, 14 + kMtuB, 2)}), 1u);
  std::vector<Frame> got = pod_b_->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(got[0].size(), 14u + kMtuB);
  EXPECT_EQ(dropCount(node_->stats(), "mtu_exceeded"), 1u);
}

TEST_F(MtuPodsTest, AnUnusedPodAddressComesBackAsUnreachable) {
  const Frame v4 = udpFromA(*Ipv4Address::parse("10.251.0.99"), 100, 1);
  const Frame v6 = udp6FromA(*Ipv6Address::parse("fd00:251::99"), 100, 2);
  ASSERT_EQ(pod_a_->send({v4, v6}), 2u);
  std::vector<Frame> errors = pod_a_->receive(2);
  ASSERT_EQ(errors.size(), 2u) << node_->stats().DebugString();
  EXPECT_EQ(errors[0], icmpError(v4, kGatewayMac, kGateway, 3, 1, 0));
  EXPECT_EQ(errors[1], icmpv6Error(v6, kGatewayMac, kGateway6, 1, 3, 0));
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "no_route"), 2u);
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 2u);
}

TEST_F(MtuPodsTest, AJumboFrameCrossesTheNodeWholeAndOneTooBigForItsPortIsAnswered) {
  // Pod C's port takes jumbo frames (MTU 9216). A pod's mbufs, like
  // sluiced's, hold 2048 bytes of data: a 9000-byte IP packet travels as a
  // chain, through virtio_user, vhost (dequeued as a chain), sluiced's
  // pipeline and vhost again, and arrives whole.
  v1::AddPortRequest rc = portRequest("mtu-pod-c", "10.251.0.12");
  rc.set_mtu(9216);
  v1::AddPortResponse c;
  grpc::Status sc = node_->addPort(rc, &c);
  ASSERT_TRUE(sc.ok()) << sc.error_message();
  auto pc = VirtioPod::create(c.port().socket_path(), false, podPool());
  ASSERT_TRUE(pc.ok()) << pc.status();
  ASSERT_TRUE(node_->waitLinkUp(c.port().port_no())) << node_->log();
  auto patterned = [](Frame f) {
    for (size_t i = 42; i < f.size(); ++i) f[i] = static_cast<uint8_t>(i * 7 + i / 251);
    f[40] = f[41] = 0;  // no UDP checksum: the pattern is what is compared
    return f;
  };
  const Frame jumbo = patterned(udpFromA(*Ipv4Address::parse("10.251.0.12"), 14 + 9000, 7));
  ASSERT_EQ(pod_a_->send({jumbo}), 1u);
  std::vector<Frame> got = (*pc)->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  ASSERT_EQ(got[0].size(), jumbo.size());
  EXPECT_EQ(std::vector<uint8_t>(got[0].begin() + 34, got[0].end()), std::vector<uint8_t>(jumbo.begin() + 34, jumbo.end()))
      << "the UDP datagram byte for byte";
  EXPECT_EQ(dropCount(node_->stats(), "mtu_exceeded"), 0u);

  // The same toward pod B (MTU 1280), DF set: fragmentation needed with
  // 1280 back to pod A, built from the chain's first segment.
  const Frame to_b = patterned(udpFromA(kIpB, 14 + 9000, 8));
  ASSERT_EQ(pod_a_->send({to_b}), 1u);
  got = pod_a_->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(got[0], icmpError(to_b, kGatewayMac, kGateway, 3, 4, kMtuB));
  EXPECT_EQ(dropCount(node_->stats(), "mtu_exceeded"), 1u);

  // Without DF: it arrives at pod B in eight fragments of at most 1280
  // bytes (1256 bytes of data each, the last 188), reassemblable: the
  // header copied with its own length, offset, MF and checksum, rewritten
  // as the packet would have been (MACs, TTL - 1).
  Frame no_df = to_b;
  no_df[20] = 0;
  no_df[24] = no_df[25] = 0;
  const uint16_t no_df_sum = internetChecksum(&no_df[14], 20);
  no_df[24] = static_cast<uint8_t>(no_df_sum >> 8);
  no_df[25] = static_cast<uint8_t>(no_df_sum);
  ASSERT_EQ(pod_a_->send({no_df}), 1u);
  got = pod_b_->receive(8);
  ASSERT_EQ(got.size(), 8u) << node_->stats().DebugString();
  const size_t data = no_df.size() - 34, unit = 1256;
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t off = i * unit, len = std::min(unit, data - off);
    Frame want(no_df.begin(), no_df.begin() + 34);
    want.insert(want.end(), no_df.begin() + static_cast<std::ptrdiff_t>(34 + off),
                no_df.begin() + static_cast<std::ptrdiff_t>(34 + off + len));
    std::memcpy(&want[0], kMacB.bytes.data(), 6);
    std::memcpy(&want[6], kGatewayMac.bytes.data(), 6);
    want[16] = static_cast<uint8_t>((20 + len) >> 8);
    want[17] = static_cast<uint8_t>(20 + len);
    const uint16_t flags = static_cast<uint16_t>(off / 8 | (i + 1 < got.size() ? 0x2000 : 0));
    want[20] = static_cast<uint8_t>(flags >> 8);
    want[21] = static_cast<uint8_t>(flags);
    want[22] -= 1;
    want[24] = want[25] = 0;
    const uint16_t want_sum = internetChecksum(&want[14], 20);
    want[24] = static_cast<uint8_t>(want_sum >> 8);
    want[25] = static_cast<uint8_t>(want_sum);
    EXPECT_EQ(got[i], want) << "fragment " << i;
  }
  EXPECT_EQ(dropCount(node_->stats(), "fragmentation_failed"), 0u);
  const v1::HealthResponse h = node_->health();
  EXPECT_EQ(h.ipv4_fragmented(), 1u);
  EXPECT_EQ(h.ipv4_fragments(), 8u);
  pc->reset();
}

}  // namespace mtu_test
}  // namespace sluice::test
