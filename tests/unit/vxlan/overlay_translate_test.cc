// Translation with the overlay: what each decision masks and decides.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <bit>
#include <cstring>

#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/host_path.h"
#include "dataplane/datapath/overlay/overlay_tables.h"

namespace sluice {
namespace {

uint32_t be(const char* ip) { return Ipv4Address::parse(ip)->networkOrder(); }

struct Fixture {
  ForwardingTable fib{{{*Ipv4Address::parse("10.244.0.5"), 1, *MacAddress::parse("02:00:00:00:00:05")}}};
  vxlan::OverlayTables overlay{
      {{be("192.168.77.2"), {}}, {0, {}}, {be("192.168.77.3"), {}}},
      {{be("10.245.0.0"), be("255.255.255.0"), 0},
       {be("10.246.0.0"), be("255.255.0.0"), 2},
       {be("10.246.7.0"), be("255.255.255.0"), 0}}};
  RouteTables tables{&fib, be("10.244.0.1"), &overlay, 31};
};

// From a local pod by default; a tunnelled key's source is given (a remote
// pod of the sending node, unless a test forges it).
flow::FlowKey key(const char* dst, uint32_t vni = 0, const char* tun_src = "0.0.0.0", const char* src = "10.244.0.9") {
  flow::FlowKey k = flow::zeroKey();
  k.eth_type = 0x0008;
  k.ipv4_src = be(src);
  k.ipv4_dst = be(dst);
  k.ttl_class = static_cast<uint8_t>(flow::TtlClass::kMany);
  k.tun_vni = vni;
  k.tun_src = be(tun_src);
  return k;
}

TEST(OverlayTables, LongestPrefixAndVtepLookup) {
  Fixture f;
  EXPECT_EQ(f.overlay.routeFor(be("10.245.0.77")), 0);
  EXPECT_EQ(f.overlay.routeFor(be("10.246.9.1")), 2);
  EXPECT_EQ(f.overlay.routeFor(be("10.246.7.1")), 0) << "the /24 inside the /16 wins";
  EXPECT_EQ(f.overlay.routeFor(be("10.247.0.1")), vxlan::kNoTunnel);
  EXPECT_EQ(f.overlay.tunnelForVtep(be("192.168.77.2")), 0);
  EXPECT_EQ(f.overlay.tunnelForVtep(be("192.168.77.3")), 2);
  EXPECT_EQ(f.overlay.tunnelForVtep(0), vxlan::kNoTunnel) << "a free index matches nothing";
  EXPECT_EQ(f.overlay.tunnelForVtep(be("192.168.77.4")), vxlan::kNoTunnel);
}

TEST(OverlayTables, EveryVtepOfAFullTableIsFound) {
  // As many tunnels as a node may have, VTEPs in one /16 and beyond (probe
  // chains cross the table's end), every other index free.
  std::vector<vxlan::OverlayTables::Tunnel> tunnels(vxlan::kMaxTunnels);
  auto vtepOf = [](size_t t) { return htonl(static_cast<uint32_t>(0x0a000000 + t * 3 + 1)); };
  for (size_t t = 0; t < tunnels.size(); t += 2) tunnels[t].vtep_be = vtepOf(t);
  vxlan::OverlayTables tables(std::move(tunnels), {});
  for (size_t t = 0; t < vxlan::kMaxTunnels; ++t)
    ASSERT_EQ(tables.tunnelForVtep(vtepOf(t)), t % 2 == 0 ? t : vxlan::kNoTunnel) << t;
  EXPECT_EQ(tables.tunnelForVtep(0), vxlan::kNoTunnel);
}

TEST(OverlayTranslate, LocalPodFromAPodMatchesNotTunnelled) {
  Fixture f;
  FlowTranslation t;
  translateFlow(f.tables, key("10.244.0.5"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, 1);
  EXPECT_EQ(t.mask.tun_vni, 0xffffffffU) << "the decision depends on being untunnelled";
  EXPECT_EQ(t.mask.tun_src, 0u);
}

TEST(OverlayTranslate, RemoteCidrIsEncapsulatedTowardItsTunnel) {
  Fixture f;
  FlowTranslation t;
  translateFlow(f.tables, key("10.246.1.1"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kEncap);
  EXPECT_EQ(t.actions.out_port, 31);
  EXPECT_EQ(t.actions.arg, 2u);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3);
  EXPECT_EQ(t.mask.ttl_class, 0xff);
  flow::FlowKey low_ttl = key("10.246.1.1");
  low_ttl.ttl_class = static_cast<uint8_t>(flow::TtlClass::kOne);
  translateFlow(f.tables, low_ttl, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
}

TEST(OverlayTranslate, DecapsulatedPacketsMatchTheirSourceVtep) {
  Fixture f;
  FlowTranslation t;
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2", "10.245.0.7"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.mask.tun_vni, 0xffffffffU);
  EXPECT_EQ(t.mask.tun_src, 0xffffffffU);
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.9"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kVxlanUnknownSource));
  translateFlow(f.tables, key("10.245.0.9", 42, "192.168.77.2", "10.245.0.7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute)) << "no relaying";
}

// A ping to the gateway is answered only from a local pod: one that came
// through the tunnel would need its reply encapsulated back.
TEST(OverlayTranslate, OnlyAnUntunnelledPingToTheGatewayIsAnswered) {
  Fixture f;
  FlowTranslation t;
  auto ping = [](uint32_t vni, const char* tun_src) {
    flow::FlowKey k = key("10.244.0.1", vni, tun_src, vni != 0 ? "10.245.0.7" : "10.244.0.9");
    k.ip_proto = 1;
    k.icmp_type = 8;
    return k;
  };
  translateFlow(f.tables, ping(0, "0.0.0.0"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
  EXPECT_EQ(t.actions.rewrite_flags, kAnswerEcho);
  EXPECT_EQ(t.mask.tun_vni, 0xffffffffU);
  EXPECT_EQ(t.mask.icmp_type, 0xff);
  translateFlow(f.tables, ping(42, "192.168.77.2"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
  EXPECT_EQ(t.actions.rewrite_flags, 0);
  EXPECT_EQ(t.mask.tun_src, 0xffffffffU);
  EXPECT_EQ(t.mask.ip_proto, 0) << "nothing but the tunnel decided it";
}

// A destination that is no pod is matched as the widest whole-octet prefix
// that decides alike: a remote CIDR as itself (or narrower where a more
// specific route lies inside it), an unrouted address as far as no route,
// pod or gateway is in it.
TEST(OverlayTranslate, DestinationsThatAreNoPodAreMatchedAsPrefixes) {
  Fixture f;
  FlowTranslation t;
  auto prefix = [&](const flow::FlowKey& k) {
    translateFlow(f.tables, k, t);
    return std::popcount(t.mask.ipv4_dst);
  };
  EXPECT_EQ(prefix(key("10.245.0.77")), 24);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kEncap);
  EXPECT_EQ(prefix(key("10.246.1.1")), 24) << "the /16 holds 10.246.7.0/24 of another tunnel";
  EXPECT_EQ(t.actions.arg, 2u);
  EXPECT_EQ(prefix(key("10.247.0.1")), 16);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(prefix(key("10.245.0.9", 42, "192.168.77.2", "10.245.0.7")), 16) << "decapsulated: routes are not consulted";
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute));
  EXPECT_EQ(prefix(key("10.244.0.5")), 32) << "a pod";
  // Every address of an encap prefix decides alike.
  translateFlow(f.tables, key("10.246.1.200"), t);
  EXPECT_EQ(t.actions.arg, 2u);
  EXPECT_EQ(std::popcount(t.mask.ipv4_dst), 24);
}

TEST(OverlayTranslate, WithoutAnOverlayMasksStayAsBefore) {
  Fixture f;
  f.tables.overlay = nullptr;
  FlowTranslation t;
  translateFlow(f.tables, key("10.246.1.1"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(t.mask.tun_vni, 0u);
}

// IPv6 over the same tunnels: a local pod fd00:10:244::5, remote IPv6 pod
// CIDRs fd00:10:245::/64 (tunnel 0), fd00:10:246::/48 (tunnel 2) and,
// inside it, fd00:10:246:7::/64 (tunnel 0).
Ipv6Address v6(const char* text) { return *Ipv6Address::parse(text); }

vxlan::RemoteRoute6 route6(const char* cidr, uint16_t tunnel) {
  const Ipv6Cidr c = *Ipv6Cidr::parse(cidr);
  vxlan::RemoteRoute6 r;
  r.net = c.network.bytes;
  r.prefix_len = c.prefix_len;
  r.tunnel = tunnel;
  return r;
}

struct Fixture6 {
  Fixture6() {
    const Ipv6Cidr cidr = *Ipv6Cidr::parse("fd00:10:244::/64");
    net.enabled = true;
    net.prefix_len = cidr.prefix_len;
    std::memcpy(net.net, cidr.network.bytes.data(), 16);
    std::memcpy(net.gateway, v6("fd00:10:244::1").bytes.data(), 16);
    std::memcpy(net.gateway_link_local, v6("fe80::ff:fe00:1").bytes.data(), 16);
  }
  ForwardingTable fib{{{*Ipv4Address::parse("10.244.0.5"), 1, *MacAddress::parse("02:00:00:00:00:05")}}};
  Ipv6ForwardingTable fib6{{{v6("fd00:10:244::5"), 1, *MacAddress::parse("02:00:00:00:00:05")}}};
  Ipv6PodNet net;
  vxlan::OverlayTables overlay{{{be("192.168.77.2"), {}}, {0, {}}, {be("192.168.77.3"), {}}},
                               {{be("10.245.0.0"), be("255.255.255.0"), 0}},
                               {route6("fd00:10:245::/64", 0), route6("fd00:10:246::/48", 2),
                                route6("fd00:10:246:7::/64", 0)}};
  RouteTables tables{&fib, be("10.244.0.1"), &overlay, 31, &fib6, &net};
};

flow::FlowKey key6(const char* dst, uint32_t vni = 0, const char* tun_src = "0.0.0.0",
                   const char* src = "fd00:10:244::9") {
  flow::FlowKey k = flow::zeroKey();
  k.eth_type = 0xdd86;  // 0x86dd in network order
  std::memcpy(k.ipv6_src, v6(src).bytes.data(), 16);
  std::memcpy(k.ipv6_dst, v6(dst).bytes.data(), 16);
  k.ttl_class = static_cast<uint8_t>(flow::TtlClass::kMany);
  k.tun_vni = vni;
  k.tun_src = be(tun_src);
  return k;
}

uint32_t prefixLen6(const flow::FlowMask& m) {
  uint32_t n = 0;
  while (n < 128 && (m.ipv6_dst[n / 8] & (0x80 >> (n % 8))) != 0) ++n;
  return n;
}

TEST(OverlayTables, LongestIpv6PrefixFirst) {
  Fixture6 f;
  auto tunnelOf = [&](const char* dst) {
    const vxlan::RemoteRoute6* r = f.overlay.longestMatch6(v6(dst).bytes.data());
    return r != nullptr ? r->tunnel : vxlan::kNoTunnel;
  };
  EXPECT_EQ(tunnelOf("fd00:10:245::77"), 0);
  EXPECT_EQ(tunnelOf("fd00:10:246:9::1"), 2);
  EXPECT_EQ(tunnelOf("fd00:10:246:7::1"), 0) << "the /64 inside the /48 wins";
  EXPECT_EQ(tunnelOf("fd00:10:247::1"), vxlan::kNoTunnel);
  EXPECT_EQ(tunnelOf("fd00:10:245:1::1"), vxlan::kNoTunnel) << "just past the /64";
}

// The IPv6 encap decision has the IPv4 one's shape: kEncap toward the
// tunnel on the uplink, the IPv6 rewrite, a mask of eth_type, tun_vni,
// ttl_class and a destination prefix, nothing else.
TEST(OverlayTranslate, RemoteIpv6CidrIsEncapsulatedTowardItsTunnel) {
  Fixture6 f;
  FlowTranslation t;
  translateFlow(f.tables, key6("fd00:10:246:1::1"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kEncap);
  EXPECT_EQ(t.actions.out_port, 31);
  EXPECT_EQ(t.actions.arg, 2u);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3v6);
  EXPECT_EQ(prefixLen6(t.mask), 64u) << "the /48 holds fd00:10:246:7::/64 of another tunnel";
  flow::FlowMask expected = flow::zeroKey();
  expected.eth_type = 0xffff;
  expected.tun_vni = 0xffffffffU;
  expected.ttl_class = 0xff;
  std::memcpy(expected.ipv6_dst, t.mask.ipv6_dst, 16);
  EXPECT_TRUE(flow::keysEqual(t.mask, expected));

  translateFlow(f.tables, key6("fd00:10:245::77"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kEncap);
  EXPECT_EQ(t.actions.arg, 0u);
  EXPECT_EQ(prefixLen6(t.mask), 64u);

  flow::FlowKey low = key6("fd00:10:246:1::1");
  low.ttl_class = static_cast<uint8_t>(flow::TtlClass::kOne);
  translateFlow(f.tables, low, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
}

TEST(OverlayTranslate, Ipv6OutsideEveryRouteIsNoRouteAsAPrefix) {
  Fixture6 f;
  FlowTranslation t;
  translateFlow(f.tables, key6("fd00:10:247::1"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(prefixLen6(t.mask), 48u) << "as far as no remote CIDR, pod or gateway";
  EXPECT_EQ(t.mask.ttl_class, 0);
}

TEST(OverlayTranslate, DecapsulatedIpv6IsDeliveredOnlyToLocalPods) {
  Fixture6 f;
  FlowTranslation t;
  translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, 1);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3v6);
  EXPECT_EQ(t.mask.tun_src, 0xffffffffU);
  EXPECT_EQ(prefixLen6(t.mask), 128u);
  translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.9"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kVxlanUnknownSource));
  translateFlow(f.tables, key6("fd00:10:244::77", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute)) << "nobody";
  translateFlow(f.tables, key6("fd00:10:246:1::1", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute)) << "no relaying";
  translateFlow(f.tables, key6("fd00:10:244::1", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
}

// The inner source of a tunnelled packet must lie in the sending node's pod
// CIDRs or routed prefixes (the longest remote route holding it leads back
// into the tunnel it came from): a local pod's address, another node's or
// any other is dropped before the destination is read. The source is
// matched as the sender's CIDR (narrowed where another route lies inside
// it), so a remote node's pods share one megaflow per destination.
TEST(OverlayTranslate, InnerSourcesMustBeTheSendingNodes) {
  Fixture f;
  FlowTranslation t;
  auto srcLen = [&] { return std::popcount(t.mask.ipv4_src); };
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2", "10.245.0.7"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.mask.ipv4_src, be("255.255.255.0")) << "the sender's /24, not the remote pod";
  // Node 77.3 sends from its /16, except the /24 inside it that is 77.2's.
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.3", "10.246.1.1"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(srcLen(), 24) << "narrowed: 10.246.7.0/24 inside the /16 is another tunnel's";
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2", "10.246.7.5"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput) << "the longest route names the sender";
  struct Forged {
    const char* vtep;
    const char* src;
    int src_len;  // the widest whole-octet prefix holding no allowed source
    const char* why;
  };
  for (const Forged& x : {Forged{"192.168.77.2", "10.244.0.9", 16, "a local pod"},
                          Forged{"192.168.77.2", "10.244.0.1", 16, "our gateway"},
                          Forged{"192.168.77.2", "10.246.1.1", 24, "another node's CIDR"},
                          Forged{"192.168.77.3", "10.246.7.5", 24, "the /24 inside the sender's /16"},
                          Forged{"192.168.77.3", "10.245.0.7", 24, "the other node's pod"},
                          Forged{"192.168.77.2", "192.168.77.1", 8, "this node's own address"}}) {
    translateFlow(f.tables, key("10.244.0.5", 42, x.vtep, x.src), t);
    EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop) << x.why;
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlaySpoofedSource)) << x.why;
    EXPECT_EQ(srcLen(), x.src_len) << x.why;
    EXPECT_EQ(t.mask.tun_src, 0xffffffffU) << x.why;
    EXPECT_EQ(t.mask.ttl_class, 0) << x.why << ": dropped before the destination's decision";
  }
  // Every remote pod of one sender's CIDR makes the same megaflow.
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2", "10.245.0.200"), t);
  const flow::FlowMask mask = t.mask;
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2", "10.245.0.3"), t);
  EXPECT_TRUE(flow::keysEqual(t.mask, mask));
  EXPECT_EQ(be("10.245.0.200") & mask.ipv4_src, be("10.245.0.3") & mask.ipv4_src);
  // Untunnelled packets read no source for it.
  translateFlow(f.tables, key("10.244.0.5"), t);
  EXPECT_EQ(t.mask.ipv4_src, 0u);
}

TEST(OverlayTranslate, InnerIpv6SourcesMustBeTheSendingNodes) {
  Fixture6 f;
  FlowTranslation t;
  auto srcLen = [&] {
    uint32_t n = 0;
    while (n < 128 && (t.mask.ipv6_src[n / 8] & (0x80 >> (n % 8))) != 0) ++n;
    return n;
  };
  translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(srcLen(), 64u) << "the sender's /64";
  translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.3", "fd00:10:246:1::1"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(srcLen(), 64u) << "the /48 narrowed around fd00:10:246:7::/64 of another tunnel";
  for (const char* forged : {"fd00:10:244::9", "fd00:10:246:1::1", "fe80::1", "2001:db8::10"}) {
    translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.2", forged), t);
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlaySpoofedSource)) << forged;
    EXPECT_EQ(t.mask.ttl_class, 0) << forged;
  }
  translateFlow(f.tables, key6("fd00:10:244::5", 42, "192.168.77.2", "fd00:10:244::9"), t);
  EXPECT_EQ(srcLen(), 48u) << "a local pod: as far as no remote CIDR";
  // A node with no IPv6 CIDR sends no IPv6: the remote IPv4 pod's node has
  // one here, so take a tunnel with none.
  vxlan::OverlayTables v4_only{{{be("192.168.77.2"), {}}}, {{be("10.245.0.0"), be("255.255.255.0"), 0}}};
  RouteTables tables = f.tables;
  tables.overlay = &v4_only;
  translateFlow(tables, key6("fd00:10:244::5", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlaySpoofedSource));
}

// Remote nodes route only pod CIDRs into the tunnel: a tunnelled packet to
// the node's host address (even from a remote pod's own address) is
// dropped before the host path's branch; a local pod still reaches it.
TEST(OverlayTranslate, TunnelledPacketsNeverReachTheHostPath) {
  Fixture6 f;
  HostPath host;
  host.enabled = true;
  host.port_no = 30;
  host.has_ipv4 = host.has_ipv6 = true;
  host.ipv4_be = be("192.0.2.10");
  std::memcpy(host.ipv6, v6("2001:db8:5::10").bytes.data(), 16);
  f.tables.host = &host;
  FlowTranslation t;
  translateFlow(f.tables, key("192.0.2.10"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, 30);
  translateFlow(f.tables, key("192.0.2.10", 42, "192.168.77.2", "10.245.0.7"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayToHost));
  EXPECT_EQ(t.mask.ipv4_dst, 0xffffffffU);
  EXPECT_EQ(t.mask.tun_vni, 0xffffffffU);
  translateFlow(f.tables, key6("2001:db8:5::10"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  translateFlow(f.tables, key6("2001:db8:5::10", 42, "192.168.77.2", "fd00:10:245::7"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayToHost));
  // A forged source is refused first, whatever the destination.
  translateFlow(f.tables, key("192.0.2.10", 42, "192.168.77.2", "192.0.2.10"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlaySpoofedSource));
}

}  // namespace
}  // namespace sluice
