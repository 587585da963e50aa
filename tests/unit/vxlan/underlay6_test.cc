// The IPv6 underlay: the 70-byte header template (exact bytes, a UDP
// checksum that an independent sum verifies), the outer IPv6 classifier (every
// named drop, hostile lengths), neighbor discovery frames, and the overlay
// control resolving next hops by solicitation and advertisement.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "dataplane/datapath/overlay/encap_template6.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"
#include "dataplane/modules/overlay/nd_frames.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "tests/unit/vxlan/fake_uplink.h"

namespace sluice::vxlan {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace underlay6_test {

using Frame = std::vector<uint8_t>;

const Ipv6Address kOurVtep = *Ipv6Address::parse("fd00:77::1");
const Ipv6Address kPeerVtep = *Ipv6Address::parse("fd00:77::2");
const MacAddress kOurMac = *MacAddress::parse("02:00:00:00:77:01");
const MacAddress kPeerMac = *MacAddress::parse("02:00:00:00:77:02");

EncapParams6 params() {
  EncapParams6 p{};
  std::memcpy(p.src_mac, kOurMac.bytes.data(), 6);
  std::memcpy(p.dst_mac, kPeerMac.bytes.data(), 6);
  std::memcpy(p.src_ip, kOurVtep.bytes.data(), 16);
  std::memcpy(p.dst_ip, kPeerVtep.bytes.data(), 16);
  const uint8_t in[6] = {0x02, 0, 0, 0, 0, 0x03};
  std::memcpy(p.inner_dst, in, 6);
  p.vni = 0x123456;
  p.resolved = true;
  p.tunnel = 3;
  return p;
}

// The UDP checksum as RFC 8200 section 8.1 defines it, written out
// independently of the template's partial sums: the pseudo-header (source,
// destination, length as 32 bits, next header as 32 bits) and the whole UDP
// datagram, summed byte pair by byte pair.
uint16_t referenceUdpChecksum(const uint8_t* ipv6, const uint8_t* udp, uint32_t udp_len) {
  std::vector<uint8_t> buf(ipv6 + 8, ipv6 + 40);
  const uint8_t tail[8] = {static_cast<uint8_t>(udp_len >> 24), static_cast<uint8_t>(udp_len >> 16),
                           static_cast<uint8_t>(udp_len >> 8), static_cast<uint8_t>(udp_len), 0, 0, 0, 17};
  buf.insert(buf.end(), tail, tail + 8);
  buf.insert(buf.end(), udp, udp + udp_len);
  buf[40 + 6] = buf[40 + 7] = 0;  // the checksum field itself counts as zero
  if (buf.size() % 2 != 0) buf.push_back(0);
  uint64_t sum = 0;
  for (size_t i = 0; i < buf.size(); i += 2) sum += (uint32_t{buf[i]} << 8) | buf[i + 1];
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  const auto c = static_cast<uint16_t>(~sum);
  return c == 0 ? 0xffff : c;
}

// The folded big-endian sum of data[0, len), as encapOne hands it over.
uint16_t innerSum(const uint8_t* data, size_t len) {
  uint64_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (uint32_t{data[i]} << 8) | data[i + 1];
  if (len % 2 != 0) sum += uint32_t{data[len - 1]} << 8;
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

Frame innerFrame(size_t len, uint8_t seed) {
  Frame f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed + i * 7);
  f[12] = 0x08;  // IPv4 EtherType, as the classifier wants an inner frame
  f[13] = 0x00;
  return f;
}

// Outer headers written over `inner`: the frame an IPv6 VTEP sends.
Frame encapsulated(const EncapTemplate6& t, const Frame& inner, uint32_t hash) {
  Frame f(kOuterLen6 + inner.size());
  std::memcpy(f.data() + kOuterLen6, inner.data(), inner.size());
  writeOuterHeaders6(t, static_cast<uint32_t>(inner.size()), hash, innerSum(inner.data(), inner.size()), f.data());
  return f;
}

TEST(Underlay6Encap, OuterHeadersAreExact) {
  const EncapTemplate6 t = buildEncapTemplate6(params());
  EXPECT_TRUE(t.valid);
  EXPECT_EQ(t.tunnel, 3);
  const Frame f = encapsulated(t, innerFrame(100, 1), 0xabc12345);
  const uint8_t eth[] = {0x02, 0, 0, 0, 0x77, 0x02, 0x02, 0, 0, 0, 0x77, 0x01, 0x86, 0xdd};
  EXPECT_EQ(0, std::memcmp(f.data(), eth, 14));
  // Version 6, traffic class 0, flow label 0x12345 (the hash's low 20 bits),
  // payload 8 + 8 + 100, next header UDP, hop limit 64.
  const uint8_t ip[] = {0x60, 0x01, 0x23, 0x45, 0, 116, 17, 64};
  EXPECT_EQ(0, std::memcmp(f.data() + 14, ip, 8));
  EXPECT_EQ(0, std::memcmp(f.data() + 22, kOurVtep.bytes.data(), 16));
  EXPECT_EQ(0, std::memcmp(f.data() + 38, kPeerVtep.bytes.data(), 16));
  const uint16_t sport = static_cast<uint16_t>((f[54] << 8) | f[55]);
  EXPECT_EQ(sport, outerSourcePort(0xabc12345));
  const uint8_t udp_rest[] = {0x12, 0xb5, 0, 116};  // 4789, length
  EXPECT_EQ(0, std::memcmp(f.data() + 56, udp_rest, 4));
  const uint16_t checksum = static_cast<uint16_t>((f[60] << 8) | f[61]);
  EXPECT_EQ(checksum, referenceUdpChecksum(f.data() + 14, f.data() + 54, 116));
  const uint8_t vx[] = {0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0};
  EXPECT_EQ(0, std::memcmp(f.data() + 62, vx, 8));
}

// Every inner length from the smallest frame to a jumbo one, odd lengths
// included (the last byte pads to a word), and varied contents and hashes.
TEST(Underlay6Encap, UdpChecksumMatchesAnIndependentSumForEveryLength) {
  const EncapTemplate6 t = buildEncapTemplate6(params());
  for (size_t len = 14; len <= 9000; len += (len < 200 ? 1 : 97)) {
    const Frame f = encapsulated(t, innerFrame(len, static_cast<uint8_t>(len)), static_cast<uint32_t>(len * 2654435761u));
    const uint32_t udp_len = static_cast<uint32_t>(16 + len);
    const uint16_t checksum = static_cast<uint16_t>((f[60] << 8) | f[61]);
    ASSERT_EQ(checksum, referenceUdpChecksum(f.data() + 14, f.data() + 54, udp_len)) << "inner length " << len;
  }
}

// A datagram whose sum comes out zero is sent with 0xffff: zero would mean
// "no checksum", which the kernel's VXLAN over IPv6 drops.
TEST(Underlay6Encap, AComputedZeroIsSentAsAllOnes) {
  const EncapTemplate6 t = buildEncapTemplate6(params());
  const uint16_t sport = outerSourcePort(7);
  // The inner sum that makes everything else sum to 0xffff, so ~sum is 0.
  uint64_t rest = uint64_t{t.udp_sum} + 2 * (16 + 20) + sport;
  while ((rest >> 16) != 0) rest = (rest & 0xffff) + (rest >> 16);
  const auto inner = static_cast<uint16_t>(0xffff - rest);
  EXPECT_EQ(outerUdpChecksum6(t, 20, sport, inner), 0xffff);
}

TEST(Underlay6Encap, AnUnresolvedNextHopMakesAnInvalidTemplate) {
  EncapParams6 p = params();
  p.resolved = false;
  EXPECT_FALSE(buildEncapTemplate6(p).valid);
}

DecapConfig6 decapConfig() {
  DecapConfig6 c;
  std::memcpy(c.vtep, kOurVtep.bytes.data(), 16);
  c.vni = 0x123456;
  return c;
}

// A frame the peer sends us: our VTEP as the destination.
Frame fromPeer(const Frame& inner) {
  EncapParams6 p = params();
  std::memcpy(p.src_ip, kPeerVtep.bytes.data(), 16);
  std::memcpy(p.dst_ip, kOurVtep.bytes.data(), 16);
  return encapsulated(buildEncapTemplate6(p), inner, 99);
}

DecapInfo6 classify(const Frame& f) {
  return classifyUplinkFrame6(f.data(), static_cast<uint32_t>(f.size()), decapConfig());
}

TEST(Underlay6Decap, WhatEncapWritesDecapTakes) {
  const Frame inner = innerFrame(77, 5);
  Frame f = fromPeer(inner);
  f.resize(f.size() + 5, 0xee);  // Ethernet padding is not inner frame
  const DecapInfo6 d = classify(f);
  ASSERT_EQ(d.cls, UplinkClass6::kVxlan);
  EXPECT_EQ(d.inner_ofs, 70);
  EXPECT_EQ(d.inner_len, 77);
  EXPECT_EQ(d.udp_len, 93);
  EXPECT_TRUE(d.udp_checksummed);
  EXPECT_EQ(d.vni, 0x123456u);
  EXPECT_EQ(0, std::memcmp(d.outer_src, kPeerVtep.bytes.data(), 16));
  EXPECT_EQ(Frame(f.begin() + 70, f.begin() + 70 + 77), inner);
}

TEST(Underlay6Decap, EveryCheckHasItsNamedDrop) {
  const Frame good = fromPeer(innerFrame(60, 9));
  auto reasonOf = [](const Frame& f) {
    const DecapInfo6 d = classify(f);
    EXPECT_EQ(d.cls, UplinkClass6::kDrop);
    return d.reason;
  };
  auto with = [&good](const std::function<void(Frame&)>& change) {
    Frame f = good;
    change(f);
    return f;
  };
  EXPECT_EQ(reasonOf(Frame(good.begin(), good.begin() + 13)), DropReason::kVxlanTruncated);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[12] = 0x08, f[13] = 0x06; })), DropReason::kUplinkNotVxlan)
      << "ARP has no business on an IPv6 underlay";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[12] = 0x08, f[13] = 0x00; })), DropReason::kUplinkNotVxlan);
  EXPECT_EQ(reasonOf(Frame(good.begin(), good.begin() + 14 + 39)), DropReason::kVxlanTruncated);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[14] = 0x40; })), DropReason::kVxlanBadOuterIp);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[18] = 0xff; })), DropReason::kVxlanTruncated) << "payload past the frame";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[20] = 44; })), DropReason::kVxlanFragment);
  for (uint8_t ext : {0, 43, 50, 51, 60})
    EXPECT_EQ(reasonOf(with([ext](Frame& f) { f[20] = ext; })), DropReason::kVxlanOuterExtension) << int{ext};
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[20] = 6; })), DropReason::kUplinkNotVxlan) << "TCP";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[20] = 58, f[54] = 128; })), DropReason::kUplinkNotVxlan)
      << "ICMPv6 other than neighbor discovery";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[53] ^= 1; })), DropReason::kVxlanWrongVtep);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[18] = 0, f[19] = 7; })), DropReason::kVxlanTruncated) << "no UDP header";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[57] = 0xb6; })), DropReason::kUplinkNotVxlan) << "port 4790";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[58] = 0, f[59] = 15; })), DropReason::kVxlanTruncated) << "UDP length < 16";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[58] = 0x40; })), DropReason::kVxlanTruncated) << "UDP past the payload";
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[62] = 0x0c; })), DropReason::kVxlanBadFlags);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[68] ^= 1; })), DropReason::kVxlanUnknownVni);
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[70 + 12] = 0x08, f[70 + 13] = 0x06; })), DropReason::kVxlanInnerArp);
  // An inner frame shorter than an Ethernet header: UDP length 8 + 8 + 13.
  EXPECT_EQ(reasonOf(with([](Frame& f) { f[18] = 0, f[19] = 29, f[58] = 0, f[59] = 29; })),
            DropReason::kVxlanTruncated);
}

TEST(Underlay6Decap, NeighborDiscoveryGoesToTheNdHandler) {
  const Frame ns = buildNeighborSolicitation(kPeerMac, kPeerVtep, kOurVtep);
  const DecapInfo6 d = classify(ns);
  EXPECT_EQ(d.cls, UplinkClass6::kNd);
}

// Every prefix of a good frame is refused by name, never read past.
TEST(Underlay6Decap, EveryTruncationIsADrop) {
  const Frame good = fromPeer(innerFrame(40, 3));
  for (size_t len = 0; len < good.size(); ++len) {
    const Frame f(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
    const DecapInfo6 d = classify(f);
    ASSERT_EQ(d.cls, UplinkClass6::kDrop) << len;
  }
}

// Our VTEP answers a solicitation for itself from the kernel peer: a
// solicited, non-router advertisement with our MAC, unicast back.
TEST(Underlay6Nd, OurVtepAnswersASolicitationForItself) {
  Frame f = buildNeighborSolicitation(kPeerMac, kPeerVtep, kOurVtep);
  Ipv6PodNet net;
  net.enabled = true;
  net.prefix_len = 128;
  std::memcpy(net.net, kOurVtep.bytes.data(), 16);
  std::memcpy(net.gateway, kOurVtep.bytes.data(), 16);
  const size_t len = f.size();
  f.resize(128);
  uint32_t new_len = 0;
  const NdVerdict v = answerNeighborDiscovery(net, kOurMac.bytes.data(), f.data(), static_cast<uint32_t>(len),
                                              static_cast<uint32_t>(f.size()), &new_len, /*router=*/false);
  ASSERT_TRUE(v.answered);
  f.resize(new_len);
  const std::optional<NeighborAdvertisement> na = parseNeighborAdvertisement(f.data(), f.size());
  ASSERT_TRUE(na.has_value());
  EXPECT_EQ(na->target, kOurVtep);
  EXPECT_EQ(na->target_mac, kOurMac);
  EXPECT_EQ(na->dst, kPeerVtep);
  EXPECT_EQ(na->eth_dst, kPeerMac);
  EXPECT_TRUE(na->solicited);
  EXPECT_EQ(f[14 + 40 + 4] & 0x80, 0) << "a VTEP is no router";
}

TEST(Underlay6Nd, SolicitationIsExactAndAdvertisementsAreChecked) {
  const Frame ns = buildNeighborSolicitation(kOurMac, kOurVtep, kPeerVtep);
  ASSERT_EQ(ns.size(), 14u + 40 + 32);
  const uint8_t eth_dst[] = {0x33, 0x33, 0xff, 0, 0, 0x02};
  EXPECT_EQ(0, std::memcmp(ns.data(), eth_dst, 6));
  const Ipv6Address group = *Ipv6Address::parse("ff02::1:ff00:2");
  EXPECT_EQ(0, std::memcmp(ns.data() + 38, group.bytes.data(), 16));
  EXPECT_EQ(ns[21], 255) << "hop limit";
  EXPECT_EQ(icmpv6Checksum(ns.data() + 22, ns.data() + 38, ns.data() + 54, 32), 0) << "checksum verifies";

  // An advertisement is refused when its checksum, hop limit or target
  // link-layer option is wrong.
  Frame na = buildNeighborSolicitation(kPeerMac, kPeerVtep, kOurVtep);
  na[54] = 136;
  na[54 + 24] = 2;  // the option: target link-layer
  na[56] = na[57] = 0;
  const uint16_t sum = icmpv6Checksum(na.data() + 22, na.data() + 38, na.data() + 54, 32);
  na[56] = static_cast<uint8_t>(sum >> 8);
  na[57] = static_cast<uint8_t>(sum);
  ASSERT_TRUE(parseNeighborAdvertisement(na.data(), na.size()).has_value());
  Frame bad = na;
  bad[60] ^= 1;
  EXPECT_FALSE(parseNeighborAdvertisement(bad.data(), bad.size()).has_value()) << "checksum";
  bad = na;
  bad[21] = 64;
  EXPECT_FALSE(parseNeighborAdvertisement(bad.data(), bad.size()).has_value()) << "hop limit";
  bad = na;
  bad[54 + 24] = 1;
  const uint16_t sum2 = (bad[56] = bad[57] = 0, icmpv6Checksum(bad.data() + 22, bad.data() + 38, bad.data() + 54, 32));
  bad[56] = static_cast<uint8_t>(sum2 >> 8);
  bad[57] = static_cast<uint8_t>(sum2);
  EXPECT_FALSE(parseNeighborAdvertisement(bad.data(), bad.size()).has_value()) << "no target link-layer option";
  for (size_t len = 0; len < na.size(); ++len)
    EXPECT_FALSE(parseNeighborAdvertisement(na.data(), len).has_value()) << len;
}

}  // namespace underlay6_test
}  // namespace sluice::vxlan

namespace sluice {
namespace underlay6_test {

using test::FakeUplink;

// The advertisement `from` (its MAC) sends for `target` to our VTEP and MAC.
std::vector<uint8_t> advertisement(MacAddress from, const Ipv6Address& target, bool solicited = true) {
  std::vector<uint8_t> f = buildNeighborSolicitation(from, target, vxlan::underlay6_test::kOurVtep);
  std::memcpy(f.data(), vxlan::underlay6_test::kOurMac.bytes.data(), 6);
  std::memcpy(f.data() + 38, vxlan::underlay6_test::kOurVtep.bytes.data(), 16);
  uint8_t* icmp = f.data() + 54;
  icmp[0] = 136;
  icmp[4] = solicited ? 0x60 : 0x20;  // solicited, override
  std::memcpy(icmp + 8, target.bytes.data(), 16);
  icmp[24] = 2;
  icmp[2] = icmp[3] = 0;
  const uint16_t sum = icmpv6Checksum(f.data() + 22, f.data() + 38, icmp, 32);
  icmp[2] = static_cast<uint8_t>(sum >> 8);
  icmp[3] = static_cast<uint8_t>(sum);
  return f;
}

struct Fixture6 {
  Fixture6() {
    config.uplink = UplinkConfig{};
    config.uplink->devargs = "fake";
    config.uplink->vtep6 = vxlan::underlay6_test::kOurVtep;
    config.uplink->vtep6_prefix = 64;
    config.uplink->next_hop6 = *Ipv6Address::parse("fd00:77::fe");
    config.vni = 42;
  }
  OverlayConfig config;
  FakeUplink uplink;
  Ipv4Cidr pod_cidr = *Ipv4Cidr::parse("10.244.0.0/24");
};

RemoteNodeConfig node6(const char* name, const char* vtep, const char* cidr) {
  RemoteNodeConfig n;
  n.name = name;
  EXPECT_TRUE(parseVtep(vtep, n));
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  return n;
}

TEST(OverlayControl6, OneFamilyPerUnderlayAndTunnelIdsInTheTables) {
  Fixture6 f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  EXPECT_EQ(o.overlayMtu(), 1430u);
  const absl::StatusOr<bool> v4 = o.addNode(node6("b", "192.168.77.2", "10.244.2.0/24"));
  ASSERT_EQ(v4.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v4.status().message(),
            "vtep: 192.168.77.2 is IPv4 but this node's underlay is IPv6 (vtep fd00:77::1); one family per underlay");
  EXPECT_EQ(o.addNode(node6("b", "fd00:77::1", "10.244.2.0/24")).status().code(), absl::StatusCode::kInvalidArgument)
      << "our own VTEP";
  EXPECT_EQ(o.addNode(node6("b", "fe80::2", "10.244.2.0/24")).status().code(), absl::StatusCode::kInvalidArgument)
      << "link-local";
  ASSERT_TRUE(*o.addNode(node6("b", "fd00:77::2", "10.244.2.0/24")));
  ASSERT_TRUE(*o.addNode(node6("c", "fd00:99::3", "10.244.3.0/24")));
  EXPECT_EQ(o.addNode(node6("d", "fd00:77::2", "10.244.4.0/24")).status().code(), absl::StatusCode::kAlreadyExists);
  auto t = o.tables();
  EXPECT_EQ(t->tunnelForVtep6(vxlan::underlay6_test::kPeerVtep.bytes.data()), 0);
  EXPECT_EQ(t->tunnelForVtep6(Ipv6Address::parse("fd00:99::3")->bytes.data()), 1);
  EXPECT_EQ(t->tunnelForVtep6(Ipv6Address::parse("fd00:99::4")->bytes.data()), vxlan::kNoTunnel);
  // What decapsulated packets carry in tun_src, and what translation checks.
  EXPECT_EQ(t->tunnelForVtep(vxlan::tunnelKeyId(1)), 1);
  EXPECT_EQ(t->tunnelForVtep(vxlan::tunnelKeyId(2)), vxlan::kNoTunnel);
  auto nodes = o.listNodes({});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].next_hop6->toString(), "fd00:77::2") << "inside the VTEP's /64: on-link";
  EXPECT_EQ(nodes[1].next_hop6->toString(), "fd00:77::fe") << "outside: via next-hop";
  EXPECT_EQ(nodes[0].node.mac, MacAddress::fromIpv6(vxlan::underlay6_test::kPeerVtep));
  vxlan::OverlaySnapshot s;
  o.fillSnapshot(s, 0);
  EXPECT_TRUE(s.underlay_ipv6);
  EXPECT_EQ(0, std::memcmp(s.decap6.vtep, vxlan::underlay6_test::kOurVtep.bytes.data(), 16));
  EXPECT_EQ(s.overlay_mtu, 1430u);
  EXPECT_TRUE(s.vtep_nd.isGateway(vxlan::underlay6_test::kOurVtep.bytes.data()));
}

// The IPv6 VTEPs no node can have, each refused with its reason: the
// unspecified and loopback addresses, multicast, IPv4-mapped, the uplink's
// router, this node's pod CIDR and its pods' gateway, and the node's own pod
// CIDR.
TEST(OverlayControl6, VtepsNoNodeCanHaveAreRefusedEachWithItsReason) {
  Fixture6 f;
  LocalPodCidrs ours(f.pod_cidr, *Ipv6Cidr::parse("fd00:10:244::/64"));
  ours.gateway_v6 = *Ipv6Address::parse("fd00:99::1");
  OverlayControl o(f.config, ours, f.uplink, 31, 1);
  auto refusal = [&](const char* vtep, const char* v6_cidr) {
    RemoteNodeConfig n = node6("b", vtep, "10.244.2.0/24");
    n.pod_cidrs_v6 = {*Ipv6Cidr::parse(v6_cidr)};
    const absl::StatusOr<bool> r = o.addNode(n);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << vtep;
    return std::string(r.status().message());
  };
  const char* suffix = ", no remote node's VTEP";
  EXPECT_EQ(refusal("::", "fd00:20::/64"), std::string("vtep: :: is unspecified (::)") + suffix);
  EXPECT_EQ(refusal("::1", "fd00:20::/64"), std::string("vtep: ::1 is loopback (::1)") + suffix);
  EXPECT_EQ(refusal("ff02::1", "fd00:20::/64"), std::string("vtep: ff02::1 is multicast (ff00::/8)") + suffix);
  EXPECT_EQ(refusal("::ffff:192.168.77.2", "fd00:20::/64"),
            std::string("vtep: ::ffff:192.168.77.2 is IPv4-mapped (::ffff:0:0/96)") + suffix);
  EXPECT_EQ(refusal("fd00:77::fe", "fd00:20::/64"),
            std::string("vtep: fd00:77::fe is the uplink's next hop (a router)") + suffix);
  EXPECT_EQ(refusal("fd00:10:244::9", "fd00:20::/64"),
            std::string("vtep: fd00:10:244::9 is inside this node's pod CIDR fd00:10:244::/64") + suffix);
  EXPECT_EQ(refusal("fd00:99::1", "fd00:20::/64"), std::string("vtep: fd00:99::1 is this node's pods' gateway") + suffix);
  EXPECT_EQ(refusal("fd00:20::7", "fd00:20::/64"),
            std::string("vtep: fd00:20::7 is inside its own pod CIDR or routed prefix fd00:20::/64") + suffix);
  EXPECT_TRUE(o.listNodes({}).empty());
}

// ARP's state machine, by solicitation and advertisement: asked at once and
// every retry interval until answered; an answer learned only while one of
// ours awaits it; refusals counted under ARP's names.
TEST(OverlayControl6, NextHopsAreResolvedByNeighborDiscovery) {
  Fixture6 f;
  NeighborTiming timing;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1, timing);
  ASSERT_TRUE(*o.addNode(node6("b", "fd00:77::2", "10.244.2.0/24")));
  EXPECT_FALSE(o.tables()->tunnel6(0).valid);
  const auto t0 = NeighborTable::Clock::time_point{} + std::chrono::hours(1);
  // Unsolicited before we asked: refused.
  f.uplink.punted.push_back(advertisement(vxlan::underlay6_test::kPeerMac, vxlan::underlay6_test::kPeerVtep));
  EXPECT_FALSE(o.poll(t0));
  ASSERT_EQ(f.uplink.sent.size(), 1u);
  EXPECT_EQ(f.uplink.sent[0], buildNeighborSolicitation(vxlan::underlay6_test::kOurMac, vxlan::underlay6_test::kOurVtep, vxlan::underlay6_test::kPeerVtep));
  EXPECT_EQ(o.arpRefusals()[static_cast<size_t>(ArpRefusal::kUnsolicited)], 1u);
  // Not solicited (S clear), and not for a next hop: refused by name.
  f.uplink.punted.push_back(advertisement(vxlan::underlay6_test::kPeerMac, vxlan::underlay6_test::kPeerVtep, false));
  f.uplink.punted.push_back(advertisement(vxlan::underlay6_test::kPeerMac, *Ipv6Address::parse("fd00:77::9")));
  std::vector<uint8_t> broken = advertisement(vxlan::underlay6_test::kPeerMac, vxlan::underlay6_test::kPeerVtep);
  broken[60] ^= 1;
  f.uplink.punted.push_back(broken);
  EXPECT_FALSE(o.poll(t0));
  EXPECT_EQ(o.arpRefusals()[static_cast<size_t>(ArpRefusal::kNotAReply)], 1u);
  EXPECT_EQ(o.arpRefusals()[static_cast<size_t>(ArpRefusal::kNotANextHop)], 1u);
  EXPECT_EQ(o.arpRefusals()[static_cast<size_t>(ArpRefusal::kMalformed)], 1u);
  // The answer: learned, the template valid with the peer's MAC.
  f.uplink.punted.push_back(advertisement(vxlan::underlay6_test::kPeerMac, vxlan::underlay6_test::kPeerVtep));
  EXPECT_TRUE(o.poll(t0));
  const vxlan::EncapTemplate6& tmpl = o.tables()->tunnel6(0);
  EXPECT_TRUE(tmpl.valid);
  EXPECT_EQ(0, std::memcmp(tmpl.outer, vxlan::underlay6_test::kPeerMac.bytes.data(), 6));
  EXPECT_EQ(o.listNodes(t0)[0].neighbor_state, "reachable");
  // Stale after reachable_time: asked again, still used; forgotten later.
  f.uplink.sent.clear();
  EXPECT_FALSE(o.poll(t0 + timing.reachable_time));
  EXPECT_EQ(f.uplink.sent.size(), 1u);
  EXPECT_EQ(o.listNodes(t0 + timing.reachable_time)[0].neighbor_state, "stale");
  EXPECT_TRUE(o.poll(t0 + timing.reachable_time + timing.stale_time));
  EXPECT_FALSE(o.tables()->tunnel6(0).valid);
}

}  // namespace underlay6_test
}  // namespace sluice
