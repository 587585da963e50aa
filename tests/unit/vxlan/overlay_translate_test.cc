// Translation with the overlay: what each decision masks and decides.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <bit>

#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/overlay_tables.h"

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

flow::FlowKey key(const char* dst, uint32_t vni = 0, const char* tun_src = "0.0.0.0") {
  flow::FlowKey k = flow::zeroKey();
  k.eth_type = 0x0008;
  k.ipv4_src = be("10.244.0.9");
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
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.2"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.mask.tun_vni, 0xffffffffU);
  EXPECT_EQ(t.mask.tun_src, 0xffffffffU);
  translateFlow(f.tables, key("10.244.0.5", 42, "192.168.77.9"), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kVxlanUnknownSource));
  translateFlow(f.tables, key("10.245.0.9", 42, "192.168.77.2"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute)) << "no relaying";
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
  EXPECT_EQ(prefix(key("10.245.0.9", 42, "192.168.77.2")), 16) << "decapsulated: routes are not consulted";
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

}  // namespace
}  // namespace sluice
