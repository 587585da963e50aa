// A port's MTU and the router's ICMP answers about it on the real PMD loop
// and control path (the ring node, tests/support/ring_node.h): a packet
// routed to a pod whose port MTU it exceeds comes back to its sender as
// "fragmentation needed" (DF set; the port's MTU as next-hop MTU) or ICMPv6
// "packet too big", byte for byte, uncached and cached; without DF it is
// dropped by its own reason. One toward a remote node over the overlay MTU
// is answered with the overlay MTU. A packet to an address of the pod CIDR
// that no pod holds is answered with host / address unreachable, from the
// caches too; one outside the CIDR, or one that came through the overlay,
// is not answered. Every counter moves by exactly the packets sent. The
// external network's action (tagged toward its gateway, jumbo frames
// chained) closes the file.
//
// The limiter's budget is 100 errors per second on a clock it is told runs
// 36000 times slower than the TSC: a bucket of 5, the next token 6 minutes
// away, so what the PMD may send during a test is exact.
#include <gtest/gtest.h>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kA = 10, kB = 11, kC = 12, kD = 13;
constexpr uint16_t kJumbo = 9000;
constexpr uint32_t kBurst = 5;  // IcmpErrorLimiter::burstFor(100)
// What one port alone gets of it at once: the PMD's tokens above half its
// burst (its own share of the errors, with several rx queues polled, is
// spent with them; icmp_error_limiter.h).
constexpr uint32_t kLonePortBurst = kBurst - kBurst / 2;
constexpr uint16_t kMtuB = 1400;
constexpr uint16_t kMtuC = 1280;
constexpr uint16_t kOverlayMtu = 1500 - 50;  // the ring uplink's default MTU less the outer headers
const Ipv6Address kGateway6 = *Ipv6Address::parse("fd00:77::1");
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00:77::a");
const Ipv6Address kIp6C = *Ipv6Address::parse("fd00:77::c");

constexpr uint8_t kUnreachable = 3, kHostUnreachable = 1, kFragmentationNeeded = 4;
constexpr uint8_t kIcmpv6Unreachable = 1, kAddressUnreachable = 3, kPacketTooBig = 2;

void put16(Frame& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

// UDP from pod `from` to dst in a frame of frame_len bytes, DF set or not.
Frame udp(unsigned from, Ipv4Address dst, size_t frame_len, bool df, uint32_t seq) {
  UdpFrameSpec s;
  s.src_mac = podMac(from);
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = podIp(from);
  s.dst_ip = dst;
  s.frame_len = frame_len;
  s.sequence = seq;
  Frame f = udpFrame(s);
  if (df) {
    f[20] = 0x40;
    put16(f, 24, 0);
    put16(f, 24, internetChecksum(&f[14], 20));
  }
  return f;
}

Frame udp6(Ipv6Address dst, size_t frame_len, uint32_t seq) {
  Udp6FrameSpec s;
  s.src_mac = podMac(kA);
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = kIp6A;
  s.dst_ip = dst;
  s.frame_len = frame_len;
  s.sequence = seq;
  return udp6Frame(s);
}

// What pod `host` receives for `sent`: the router's rewrite (MACs, TTL - 1).
Frame forwardedTo(Frame f, unsigned host) {
  std::memcpy(&f[0], podMac(host).bytes.data(), 6);
  std::memcpy(&f[6], MacAddress::fromIpv4(kGateway).bytes.data(), 6);
  f[22] -= 1;
  put16(f, 24, 0);
  put16(f, 24, internetChecksum(&f[14], 20));
  return f;
}
Frame forwardedToB(Frame f) { return forwardedTo(std::move(f), kB); }

// f's UDP payload filled with a pattern that shows any misplaced byte, and
// the UDP checksum off (the router does not read it).
Frame patterned(Frame f) {
  for (size_t i = 42; i < f.size(); ++i) f[i] = static_cast<uint8_t>(i * 7 + i / 251);
  put16(f, 40, 0);
  return f;
}

// The fragments a router makes of f (IPv4 without options, no trailer)
// for an MTU, before its rewrite: the header copied with its own total
// length, offset (8-byte units) and MF, and checksum; the data cut in
// pieces of (mtu - 20) rounded down to 8 bytes.
std::vector<Frame> fragmentsOf(const Frame& f, uint16_t mtu) {
  const size_t data = f.size() - 34;
  const size_t unit = (mtu - 20u) & ~size_t{7};
  std::vector<Frame> out;
  for (size_t off = 0; off < data; off += unit) {
    const size_t len = std::min(unit, data - off);
    Frame g(f.begin(), f.begin() + 34);
    g.insert(g.end(), f.begin() + 34 + static_cast<std::ptrdiff_t>(off),
             f.begin() + 34 + static_cast<std::ptrdiff_t>(off + len));
    put16(g, 16, static_cast<uint16_t>(20 + len));
    put16(g, 20, static_cast<uint16_t>(off / 8 | (off + len < data ? 0x2000 : 0)));
    put16(g, 24, 0);
    put16(g, 24, internetChecksum(&g[14], 20));
    out.push_back(std::move(g));
  }
  return out;
}

// An encapsulated frame on the uplink carries `inner` after the rewrite
// toward the remote node (TTL - 1; its MACs are the tunnel's), with outer
// lengths that fit it.
void expectEncapsulated(const Frame& got, Frame inner) {
  ASSERT_EQ(got.size(), 50 + inner.size());
  inner[22] -= 1;
  put16(inner, 24, 0);
  put16(inner, 24, internetChecksum(&inner[14], 20));
  EXPECT_EQ(Frame(got.begin() + 50 + 12, got.end()), Frame(inner.begin() + 12, inner.end()));
  EXPECT_EQ(got[16] << 8 | got[17], 20 + 8 + 8 + inner.size()) << "outer IPv4 total length";
  EXPECT_EQ(got[38] << 8 | got[39], 8 + 8 + inner.size()) << "outer UDP length";
}

Frame fragmentationNeeded(const Frame& original, uint16_t mtu) {
  return icmpError(original, MacAddress::fromIpv4(kGateway), kGateway, kUnreachable, kFragmentationNeeded, mtu);
}

class MtuPipelineTest : public ::testing::Test {
 protected:
  static NodeOptions options() {
    NodeOptions o;
    o.vxlan = true;
    o.icmp_errors.tsc_hz = rte_get_tsc_hz() * 36000;
    o.icmp_errors.rate_per_sec = 100;
    o.edit_config = [](SluicedConfig& c) {
      c.pod_cidr_v6 = *Ipv6Cidr::parse("fd00:77::/64");
      c.gateway_v6 = kGateway6;
      // Remote node r2's VTEP resolved from the start: its tunnel can send.
      c.overlay.uplink->static_neighbors.push_back({kRemote2, *MacAddress::parse("02:77:77:00:00:02")});
    };
    return o;
  }
  void SetUp() override {
    a_ = node_.addPod("mtu-a", kA, {.ipv6 = kIp6A.toString()});
    b_ = node_.addPod("mtu-b", kB, {.mtu = kMtuB});
    c_ = node_.addPod("mtu-c", kC, {.mtu = kMtuC, .ipv6 = kIp6C.toString()});
  }

  uint64_t drops(DropReason r) { return node_.counters().drops[static_cast<size_t>(r)].read(); }
  uint64_t sent() { return node_.counters().icmp_errors_sent.read(); }
  uint64_t limited() { return node_.counters().icmp_errors_rate_limited.read(); }
  PortCounters& port(uint16_t p) { return node_.counters().ports[p]; }

  Node node_{nullptr, options()};
  uint16_t a_ = 0, b_ = 0, c_ = 0;
};

TEST_F(MtuPipelineTest, PortsListTheirMtu) {
  std::map<uint16_t, uint32_t> mtus;
  for (const PortView& p : node_.control().listPorts()) mtus[p.port_no] = p.request.mtu;
  EXPECT_EQ(mtus, (std::map<uint16_t, uint32_t>{{a_, 1500u}, {b_, kMtuB}, {c_, kMtuC}})) << "a: the node's default";
}

TEST_F(MtuPipelineTest, OversizeWithDfComesBackAsFragmentationNeededUncachedAndCached) {
  // The first packet of the flow: a miss, decided by inline translation.
  const Frame first = udp(kA, podIp(kB), 14 + kMtuB + 1, true, 1);
  node_.inject(a_, first);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, fragmentationNeeded(first, kMtuB));
  ASSERT_EQ(out[0].second.size(), 14u + 576) << "quoted up to 576 bytes";
  EXPECT_EQ(out[0].second[14 + 20 + 6], kMtuB >> 8) << "next-hop MTU";
  EXPECT_EQ(out[0].second[14 + 20 + 7], kMtuB & 0xff);
  EXPECT_EQ(internetChecksum(&out[0].second[14 + 20], 576 - 20), 0) << "ICMP checksum";
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 1u);
  EXPECT_EQ(sent(), 1u);
  EXPECT_EQ(node_.counters().misses.read(), 1u);

  // Exactly the MTU fits, and installs the output megaflow.
  const Frame fits = udp(kA, podIp(kB), 14 + kMtuB, true, 2);
  node_.inject(a_, fits);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, b_);
  EXPECT_EQ(out[0].second, forwardedToB(fits));

  // From the caches: the same answer.
  ASSERT_TRUE(node_.waitForFlow("ipv4_dst=10.77.0.11"));
  const uint64_t misses = node_.counters().misses.read();
  const Frame second = udp(kA, podIp(kB), 1500, true, 3);
  node_.inject(a_, second);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, fragmentationNeeded(second, kMtuB));
  EXPECT_EQ(node_.counters().misses.read(), misses) << "a cache tier decided";

  EXPECT_EQ(drops(DropReason::kMtuExceeded), 2u);
  EXPECT_EQ(sent(), 2u);
  EXPECT_EQ(limited(), 0u);
  EXPECT_EQ(port(a_).rx_packets.read(), 3u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 2u);
  EXPECT_EQ(port(a_).tx_packets.read(), 2u) << "the errors went out of the sender's port";
  EXPECT_EQ(port(b_).tx_packets.read(), 1u);
}

TEST_F(MtuPipelineTest, ARunMixingSizesForwardsThoseThatFitInOrder) {
  // One flow, one run of four packets: two fit, one has DF, one has not.
  const std::vector<Frame> burst = {udp(kA, podIp(kB), 100, true, 1), udp(kA, podIp(kB), 1500, true, 2),
                                    udp(kA, podIp(kB), 14 + kMtuB, true, 3), udp(kA, podIp(kB), 1500, false, 4)};
  node_.injectBurst(a_, burst);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 5u);
  std::vector<Frame> to_b, to_a;
  for (auto& [p, f] : out) (p == b_ ? to_b : to_a).push_back(f);
  ASSERT_EQ(to_b.size(), 4u);
  EXPECT_EQ(to_b[0], forwardedToB(burst[0]));
  EXPECT_EQ(to_b[1], forwardedToB(burst[2]));
  const std::vector<Frame> pieces = fragmentsOf(burst[3], kMtuB);
  ASSERT_EQ(pieces.size(), 2u) << "1466 bytes of UDP: 1376 + 90";
  EXPECT_EQ(to_b[2], forwardedToB(pieces[0])) << "without DF: fragmented";
  EXPECT_EQ(to_b[3], forwardedToB(pieces[1]));
  ASSERT_EQ(to_a.size(), 1u);
  EXPECT_EQ(to_a[0], fragmentationNeeded(burst[1], kMtuB));
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 1u);
  EXPECT_EQ(drops(DropReason::kFragmentationFailed), 0u);
  EXPECT_EQ(node_.counters().ipv4_fragmented.read(), 1u);
  EXPECT_EQ(node_.counters().ipv4_fragments.read(), 2u);
  EXPECT_EQ(sent(), 1u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 1u);
  EXPECT_EQ(port(b_).tx_packets.read(), 4u);
}

TEST_F(MtuPipelineTest, AFrameLongOnlyByItsTrailerIsForwardedWithoutIt) {
  // An IP packet of exactly the MTU with 10 bytes after it in the frame.
  const Frame exact = udp(kA, podIp(kB), 14 + kMtuB, true, 1);
  Frame trailed = exact;
  trailed.resize(exact.size() + 10, 0xee);
  node_.inject(a_, trailed);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, b_);
  EXPECT_EQ(out[0].second, forwardedToB(exact));
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 0u);
}

TEST_F(MtuPipelineTest, LimiterHoldsBackFragmentationNeededBeyondItsBudget) {
  std::vector<Frame> burst;
  for (uint32_t i = 0; i < kBurst + 3; ++i) burst.push_back(udp(kA, podIp(kB), 1500, true, i));
  node_.injectBurst(a_, burst);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), kLonePortBurst);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].first, a_);
    EXPECT_EQ(out[i].second, fragmentationNeeded(burst[i], kMtuB)) << i;
  }
  EXPECT_EQ(drops(DropReason::kMtuExceeded), kBurst + 3);
  EXPECT_EQ(sent(), kLonePortBurst);
  EXPECT_EQ(limited(), kBurst + 3 - kLonePortBurst);
}

TEST_F(MtuPipelineTest, Ipv6OversizeComesBackAsPacketTooBig) {
  const Frame big = udp6(kIp6C, 14 + kMtuC + 1, 1);
  node_.inject(a_, big);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  const Frame want = icmpv6Error(big, MacAddress::fromIpv4(kGateway), kGateway6, kPacketTooBig, 0, kMtuC);
  EXPECT_EQ(out[0].second, want);
  ASSERT_EQ(out[0].second.size(), 14u + 1280) << "quoted up to the minimum MTU";
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 1u);
  // Exactly the MTU passes.
  node_.inject(a_, udp6(kIp6C, 14 + kMtuC, 2));
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, c_);
  EXPECT_EQ(out[0].second.size(), 14u + kMtuC);
  EXPECT_EQ(sent(), 1u);
}

TEST_F(MtuPipelineTest, TowardTheOverlayTheOverlayMtuIsAnswered) {
  const Ipv4Address remote = *Ipv4Address::parse("10.78.0.5");
  const Frame big = udp(kA, remote, 14 + kOverlayMtu + 1, true, 1);
  node_.inject(a_, big);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_) << "back to the pod, not encapsulated";
  EXPECT_EQ(out[0].second, fragmentationNeeded(big, kOverlayMtu));
  // Without DF: fragmented to the overlay MTU, each fragment encapsulated.
  const Frame no_df = patterned(udp(kA, remote, 14 + kOverlayMtu + 1, false, 2));
  node_.inject(a_, no_df);
  out = node_.collectAll();
  const std::vector<Frame> pieces = fragmentsOf(no_df, kOverlayMtu);
  ASSERT_EQ(pieces.size(), 2u);
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out[i].first, kUplinkPort);
    expectEncapsulated(out[i].second, pieces[i]);
  }
  // The largest that fits is encapsulated.
  node_.inject(a_, udp(kA, remote, 14 + kOverlayMtu, true, 3));
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, kUplinkPort);
  EXPECT_EQ(out[0].second.size(), 50u + 14 + kOverlayMtu);
  EXPECT_EQ(drops(DropReason::kOverlayMtuExceeded), 1u);
  EXPECT_EQ(node_.counters().ipv4_fragments.read(), 2u);
  EXPECT_EQ(sent(), 1u);
}

// Frames of 9000 bytes of IP, which the ring node hands over as chained
// mbufs (2 KB buffers), as vhost does.
TEST_F(MtuPipelineTest, JumboFramesCrossChainedAndAreFragmentedOrAnsweredByTheOutPortsMtu) {
  const uint16_t d = node_.addPod("mtu-d", kD, {.mtu = kJumbo});
  const Frame jumbo = patterned(udp(kA, podIp(kD), 14 + kJumbo, true, 1));
  node_.inject(a_, jumbo);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, d);
  EXPECT_EQ(out[0].second, forwardedTo(jumbo, kD)) << "intact";

  // DF toward b's 1400: fragmentation needed, built from the chain's head.
  const Frame big_df = patterned(udp(kA, podIp(kB), 14 + kJumbo, true, 2));
  node_.inject(a_, big_df);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, fragmentationNeeded(big_df, kMtuB));

  // Without DF: seven fragments of at most 1400 bytes, offsets in 8-byte
  // units, MF on all but the last, each with its own checksum.
  const Frame big = patterned(udp(kA, podIp(kB), 14 + kJumbo, false, 3));
  node_.inject(a_, big);
  out = node_.collectAll();
  const std::vector<Frame> pieces = fragmentsOf(big, kMtuB);
  ASSERT_EQ(pieces.size(), 7u) << "8980 bytes of UDP: 6 x 1376 + 724";
  ASSERT_EQ(out.size(), 7u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].first, b_);
    EXPECT_EQ(out[i].second, forwardedToB(pieces[i])) << i;
    EXPECT_LE(out[i].second.size(), 14u + kMtuB);
    EXPECT_EQ(internetChecksum(&out[i].second[14], 20), 0) << i;
  }

  // Toward the overlay (MTU 1450): fragmented, each piece encapsulated.
  const Frame remote_big = patterned(udp(kA, *Ipv4Address::parse("10.78.0.5"), 14 + kJumbo, false, 4));
  node_.inject(a_, remote_big);
  out = node_.collectAll();
  const std::vector<Frame> remote_pieces = fragmentsOf(remote_big, kOverlayMtu);
  ASSERT_EQ(remote_pieces.size(), 7u) << "8980 bytes: 6 x 1424 + 436";
  ASSERT_EQ(out.size(), 7u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].first, kUplinkPort);
    expectEncapsulated(out[i].second, remote_pieces[i]);
  }

  // From the overlay: a 9000-byte inner frame, decapsulated from a chain.
  UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:78:00:00:00:05");
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = *Ipv4Address::parse("10.78.0.5");
  s.dst_ip = podIp(kD);
  s.frame_len = 14 + kJumbo;
  const Frame inner = patterned(udpFrame(s));
  OuterSpec o;
  o.src = kRemote2;
  o.dst = kVtep;
  o.vni = kVni;
  node_.injectUplink(vxlanFrame(inner, o));
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u) << [&] {
    std::string why;
    for (size_t r = 0; r < kDropReasonCount; ++r)
      if (node_.counters().drops[r].read() != 0)
        why += std::string(dropReasonName(static_cast<DropReason>(r))) + "=" +
               std::to_string(node_.counters().drops[r].read()) + " ";
    return why;
  }();
  EXPECT_EQ(out[0].first, d);
  EXPECT_EQ(out[0].second, forwardedTo(inner, kD)) << "intact";

  EXPECT_EQ(node_.counters().ipv4_fragmented.read(), 2u);
  EXPECT_EQ(node_.counters().ipv4_fragments.read(), 14u);
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 1u);
  EXPECT_EQ(drops(DropReason::kHeadersSplit), 0u);
  EXPECT_EQ(sent(), 1u);
  EXPECT_EQ(port(d).tx_packets.read(), 2u);
}

TEST_F(MtuPipelineTest, PacketsThroughTheOverlayAreNotAnswered) {
  // From remote node r2 to pod b, larger than b's MTU, DF set.
  UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:78:00:00:00:05");
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = *Ipv4Address::parse("10.78.0.5");
  s.dst_ip = podIp(kB);
  s.frame_len = 1500;
  Frame inner = udpFrame(s);
  inner[20] = 0x40;
  put16(inner, 24, 0);
  put16(inner, 24, internetChecksum(&inner[14], 20));
  OuterSpec o;
  o.src = kRemote2;
  o.dst = kVtep;
  o.vni = kVni;
  node_.injectUplink(vxlanFrame(inner, o));
  // And one to an address of our pod CIDR that no pod holds.
  s.dst_ip = podIp(99);
  s.frame_len = 100;
  node_.injectUplink(vxlanFrame(udpFrame(s), o));
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(drops(DropReason::kMtuExceeded), 1u);
  EXPECT_EQ(sent(), 0u);
  EXPECT_EQ(limited(), 0u) << "refused by the rules, not by the limiter";
}

TEST_F(MtuPipelineTest, AnUnusedPodAddressIsAnsweredHostUnreachableUncachedAndCached) {
  const Frame first = udp(kA, podIp(99), 100, false, 1);
  node_.inject(a_, first);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, icmpError(first, MacAddress::fromIpv4(kGateway), kGateway, kUnreachable,
                                     kHostUnreachable, 0));
  EXPECT_EQ(drops(DropReason::kNoRoute), 1u);

  ASSERT_TRUE(node_.waitForFlow("ipv4_dst=10.77.0.99"));
  const uint64_t misses = node_.counters().misses.read();
  const Frame second = udp(kA, podIp(99), 100, false, 2);
  node_.inject(a_, second);
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, icmpError(second, MacAddress::fromIpv4(kGateway), kGateway, kUnreachable,
                                     kHostUnreachable, 0));
  EXPECT_EQ(node_.counters().misses.read(), misses) << "a cache tier decided";

  // Outside the pod CIDR (and no remote node's): dropped, unanswered.
  node_.inject(a_, udp(kA, *Ipv4Address::parse("10.99.0.1"), 100, false, 3));
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(drops(DropReason::kNoRoute), 3u);
  EXPECT_EQ(sent(), 2u);
  EXPECT_EQ(port(a_).rx_dropped.read(), 3u);
  EXPECT_EQ(port(a_).tx_packets.read(), 2u);
}

TEST_F(MtuPipelineTest, AnUnusedIpv6PodAddressIsAnsweredAddressUnreachable) {
  const Frame f = udp6(*Ipv6Address::parse("fd00:77::99"), 100, 1);
  node_.inject(a_, f);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second,
            icmpv6Error(f, MacAddress::fromIpv4(kGateway), kGateway6, kIcmpv6Unreachable, kAddressUnreachable, 0));
  node_.inject(a_, udp6(*Ipv6Address::parse("fd00:78::1"), 100, 2));  // outside pod-cidr-v6
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(drops(DropReason::kNoRoute), 2u);
  EXPECT_EQ(sent(), 1u);
}

// The external network's action on the same loop (external-gateway
// 192.168.77.254 in VLAN 100, its MAC static, the uplink's MTU 9000): a
// pod's packet to a host outside the cluster leaves the uplink toward the
// gateway's MAC from the uplink's, TTL - 1, tagged; a jumbo frame chained
// over several mbufs gets its tag in the first segment and every byte after
// it as sent. A tagged packet from outside reaches the pod untagged.
const Ipv4Address kExternalGateway = *Ipv4Address::parse("192.168.77.254");
const MacAddress kExternalGatewayMac = *MacAddress::parse("02:77:77:00:00:fe");
const MacAddress kRingUplinkMac = *MacAddress::parse("02:55:00:00:00:01");  // RingUplink's
constexpr uint16_t kExternalVlan = 100;

// f as the external gateway receives it: addressed to it from the uplink,
// the 802.1Q tag after the MACs, TTL - 1.
Frame towardExternalGateway(Frame f) {
  std::memcpy(&f[0], kExternalGatewayMac.bytes.data(), 6);
  std::memcpy(&f[6], kRingUplinkMac.bytes.data(), 6);
  f[22] -= 1;
  put16(f, 24, 0);
  put16(f, 24, internetChecksum(&f[14], 20));
  const uint8_t tag[4] = {0x81, 0x00, 0x00, kExternalVlan};
  f.insert(f.begin() + 12, tag, tag + 4);
  return f;
}

class ExternalPipelineTest : public ::testing::Test {
 protected:
  static NodeOptions options() {
    NodeOptions o;
    o.vxlan = true;
    o.edit_config = [](SluicedConfig& c) {
      c.overlay.uplink->mtu = kJumbo;
      c.overlay.uplink->static_neighbors.push_back({kExternalGateway, kExternalGatewayMac});
      c.overlay.external = ExternalNetworkConfig{kExternalGateway, kExternalVlan};
    };
    return o;
  }
  void SetUp() override { a_ = node_.addPod("ext-a", kA, {}); }
  uint64_t drops(DropReason r) { return node_.counters().drops[static_cast<size_t>(r)].read(); }

  Node node_{nullptr, options()};
  uint16_t a_ = 0;
};

TEST_F(ExternalPipelineTest, PodPacketsLeaveTaggedTowardTheGatewayChainedOrNot) {
  const Ipv4Address host = *Ipv4Address::parse("203.0.113.9");
  for (const size_t len : {size_t{64}, size_t{14 + kJumbo}}) {
    const Frame f = patterned(udp(kA, host, len, true, static_cast<uint32_t>(len)));
    node_.inject(a_, f);  // uncached, then cached
    node_.inject(a_, f);
    const auto out = node_.collectAll();
    ASSERT_EQ(out.size(), 2u) << len;
    for (const auto& [port, got] : out) {
      EXPECT_EQ(port, kUplinkPort);
      EXPECT_EQ(got, towardExternalGateway(f)) << len;
    }
  }
  EXPECT_EQ(node_.counters().ports[kUplinkPort].tx_packets.read(), 4u);
  EXPECT_EQ(drops(DropReason::kExternalNoHeadroom), 0u);
}

TEST_F(ExternalPipelineTest, TaggedPacketsFromOutsideReachThePodUntagged) {
  UdpFrameSpec s;
  s.src_mac = kExternalGatewayMac;
  s.dst_mac = kRingUplinkMac;
  s.src_ip = *Ipv4Address::parse("203.0.113.9");
  s.dst_ip = podIp(kA);
  const Frame plain = udpFrame(s);
  Frame tagged = plain;
  const uint8_t tag[4] = {0x81, 0x00, 0x20, kExternalVlan};  // priority 1: ignored
  tagged.insert(tagged.begin() + 12, tag, tag + 4);
  node_.injectUplink(tagged);
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a_);
  EXPECT_EQ(out[0].second, forwardedTo(plain, kA));
  // Untagged, or in another VLAN: not the external network's.
  node_.injectUplink(plain);
  Frame other = tagged;
  other[15] = kExternalVlan + 1;
  node_.injectUplink(other);
  EXPECT_TRUE(node_.collectAll().empty());
  EXPECT_EQ(drops(DropReason::kExternalWrongVlan), 2u);
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "mtu_pipeline_test"); }
