// OverlayControl on a fake uplink: node table, ARP resolution of next hops,
// templates following the neighbor table, counters per node.
#include <gtest/gtest.h>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "dataplane/modules/overlay/arp_frames.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "tests/unit/vxlan/fake_uplink.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace overlay_control_test {

using namespace std::chrono_literals;

using test::FakeUplink;

const MacAddress kOurMac = *MacAddress::parse("02:00:00:00:77:01");  // FakeUplink's

// An ARP reply from (mac, ip) to `target`, sent to Ethernet `eth_dst` (a
// resolver's reply goes to the asker: our VTEP MAC).
std::vector<uint8_t> arpReply(MacAddress mac, Ipv4Address ip, Ipv4Address target, MacAddress eth_dst = kOurMac) {
  std::vector<uint8_t> f = buildArpRequest(mac, ip, target);
  std::memcpy(f.data(), eth_dst.bytes.data(), 6);
  f[14 + 7] = 2;  // op: reply
  std::memcpy(f.data() + 14 + 18, eth_dst.bytes.data(), 6);  // target hardware address
  return f;
}

struct Fixture {
  Fixture() {
    config.uplink = UplinkConfig{};
    config.uplink->devargs = "fake";
    config.uplink->vtep = *Ipv4Address::parse("192.168.77.1");
    config.uplink->vtep_prefix = 24;
    config.uplink->next_hop = *Ipv4Address::parse("192.168.77.254");
    config.vni = 42;
  }
  OverlayConfig config;
  FakeUplink uplink;
  Ipv4Cidr pod_cidr = *Ipv4Cidr::parse("10.244.0.0/24");
};

RemoteNodeConfig node(const char* name, const char* vtep, const char* cidr) {
  RemoteNodeConfig n;
  n.name = name;
  n.vtep = *Ipv4Address::parse(vtep);
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  return n;
}

TEST(OverlayControl, NodesGetTunnelsAndRoutes) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 2);
  EXPECT_EQ(o.overlayMtu(), 1450u);
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24")));
  ASSERT_TRUE(*o.addNode(node("c", "10.0.0.3", "10.244.3.0/24")));
  EXPECT_FALSE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24"))) << "same again: exists";
  EXPECT_EQ(o.addNode(node("b", "192.168.77.9", "10.244.2.0/24")).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(o.addNode(node("d", "192.168.77.2", "10.244.4.0/24")).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(o.addNode(node("d", "192.168.77.4", "10.244.3.128/25")).status().code(), absl::StatusCode::kAlreadyExists);
  auto t = o.tables();
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.2.7")->networkOrder()), 0);
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.3.7")->networkOrder()), 1);
  auto nodes = o.listNodes({});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].next_hop.toString(), "192.168.77.2") << "inside the VTEP's /24: on-link";
  EXPECT_EQ(nodes[1].next_hop.toString(), "192.168.77.254") << "outside: via next-hop";
  EXPECT_EQ(nodes[0].node.mac, MacAddress::fromIpv4(*Ipv4Address::parse("192.168.77.2")));
  EXPECT_TRUE(o.deleteNode("b"));
  EXPECT_FALSE(o.deleteNode("b"));
  EXPECT_EQ(o.tables()->routeFor(Ipv4Address::parse("10.244.2.7")->networkOrder()), vxlan::kNoTunnel);
  EXPECT_TRUE(*o.addNode(node("e", "192.168.77.5", "10.244.5.0/24")));
  EXPECT_EQ(o.tables()->routeFor(Ipv4Address::parse("10.244.5.7")->networkOrder()), 0) << "index reused";
}

// IPv6 pod CIDRs ride beside the IPv4 ones: routed to the node's tunnel,
// refused where they overlap this node's pod-cidr-v6 or another node's IPv6
// CIDR (each family only against its own).
TEST(OverlayControl, Ipv6PodCidrsAreRoutedAndCheckedPerFamily) {
  Fixture f;
  const LocalPodCidrs ours(f.pod_cidr, *Ipv6Cidr::parse("fd00:10:244::/64"));
  OverlayControl o(f.config, ours, f.uplink, 31, 1);
  RemoteNodeConfig b = node("b", "192.168.77.2", "10.244.2.0/24");
  b.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:245::/64")};
  ASSERT_TRUE(*o.addNode(b));
  RemoteNodeConfig v6_only;
  v6_only.name = "c";
  v6_only.vtep = *Ipv4Address::parse("192.168.77.3");
  v6_only.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:246::/56")};
  ASSERT_TRUE(*o.addNode(v6_only)) << "a CIDR of either family is enough";
  auto tunnelOf = [&](const char* dst) {
    const vxlan::RemoteRoute6* r = o.tables()->longestMatch6(Ipv6Address::parse(dst)->bytes.data());
    return r != nullptr ? r->tunnel : vxlan::kNoTunnel;
  };
  EXPECT_EQ(tunnelOf("fd00:10:245::9"), 0);
  EXPECT_EQ(tunnelOf("fd00:10:246:ff::9"), 1);
  EXPECT_EQ(tunnelOf("fd00:10:247::9"), vxlan::kNoTunnel);

  RemoteNodeConfig d = node("d", "192.168.77.4", "10.244.4.0/24");
  d.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:244::/48")};
  absl::StatusOr<bool> r = o.addNode(d);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "pod_cidrs: fd00:10:244::/48 overlaps this node's pod CIDR fd00:10:244::/64");
  d.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:246:80::/64")};
  r = o.addNode(d);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(r.status().message(), "pod_cidrs: fd00:10:246:80::/64 overlaps fd00:10:246::/56 of node c");
  d.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:247::/64"), *Ipv6Cidr::parse("fd00:10:247::/80")};
  EXPECT_EQ(o.addNode(d).status().message(), "pod_cidrs: fd00:10:247::/80 overlaps fd00:10:247::/64");
  d.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:247::/64")};
  ASSERT_TRUE(*o.addNode(d));
  EXPECT_EQ(tunnelOf("fd00:10:247::9"), 2);

  const std::optional<RemoteNodeView> view = o.nodeView("b", {});
  ASSERT_TRUE(view);
  EXPECT_EQ(view->node.pod_cidrs_v6, b.pod_cidrs_v6);
  // Removing the node frees its IPv6 CIDR for another.
  EXPECT_TRUE(o.deleteNode("c"));
  EXPECT_EQ(tunnelOf("fd00:10:246:ff::9"), vxlan::kNoTunnel);
  RemoteNodeConfig e = node("e", "192.168.77.5", "10.244.5.0/24");
  e.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:246:80::/64")};
  EXPECT_TRUE(*o.addNode(e));
}

TEST(OverlayControl, HundredsOfNodesEachGetTheirTunnelAndRoute) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  constexpr int kNodes = 600;  // well past the 64 nodes of the first tables
  for (int i = 0; i < kNodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    const std::string vtep = "10.1." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1);
    const std::string cidr = "10." + std::to_string(100 + i / 250) + "." + std::to_string(i % 250) + ".0/24";
    ASSERT_TRUE(*o.addNode(node(name.c_str(), vtep.c_str(), cidr.c_str()))) << name;
  }
  auto t = o.tables();
  EXPECT_EQ(t->routes().size(), static_cast<size_t>(kNodes));
  std::set<uint16_t> tunnels;
  for (int i = 0; i < kNodes; ++i) {
    const std::string vtep = "10.1." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1);
    const std::string pod = "10." + std::to_string(100 + i / 250) + "." + std::to_string(i % 250) + ".9";
    const uint16_t tunnel = t->tunnelForVtep(Ipv4Address::parse(vtep)->networkOrder());
    ASSERT_NE(tunnel, vxlan::kNoTunnel) << vtep;
    EXPECT_EQ(t->routeFor(Ipv4Address::parse(pod)->networkOrder()), tunnel) << pod;
    tunnels.insert(tunnel);
  }
  EXPECT_EQ(tunnels.size(), static_cast<size_t>(kNodes)) << "one tunnel each";
}

TEST(OverlayControl, TemplatesFollowArpResolution) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24")));
  EXPECT_FALSE(o.tables()->tunnel(0).valid) << "unresolved: packets dropped as neighbor_unresolved";
  const NeighborTable::Clock::time_point t0{};
  EXPECT_FALSE(o.poll(t0));
  ASSERT_EQ(f.uplink.sent.size(), 1u);
  auto req = parseArp(f.uplink.sent[0].data(), f.uplink.sent[0].size());
  ASSERT_TRUE(req);
  EXPECT_EQ(req->op, 1);
  EXPECT_EQ(req->ip.toString(), "192.168.77.1");
  EXPECT_EQ(req->target.toString(), "192.168.77.2");
  EXPECT_EQ(req->mac, f.uplink.mac());

  const MacAddress peer = *MacAddress::parse("02:aa:bb:cc:dd:02");
  f.uplink.punted.push_back(arpReply(peer, *Ipv4Address::parse("192.168.77.2"), *Ipv4Address::parse("192.168.77.1")));
  EXPECT_TRUE(o.poll(t0 + 10ms)) << "a MAC became known: republish";
  const vxlan::EncapTemplate& tmpl = o.tables()->tunnel(0);
  EXPECT_TRUE(tmpl.valid);
  EXPECT_EQ(0, std::memcmp(tmpl.outer, peer.bytes.data(), 6));
  EXPECT_EQ(0, std::memcmp(tmpl.outer + 6, f.uplink.mac().bytes.data(), 6));
  EXPECT_EQ(o.listNodes(t0 + 10ms)[0].neighbor_state, "reachable");
  EXPECT_FALSE(o.poll(t0 + 20ms));
  EXPECT_EQ(f.uplink.sent.size(), 1u) << "reachable: no more requests";
  // A reply to someone else's VTEP teaches nothing.
  f.uplink.punted.push_back(arpReply(*MacAddress::parse("02:66:66:66:66:66"), *Ipv4Address::parse("192.168.77.2"),
                                     *Ipv4Address::parse("192.168.77.9")));
  EXPECT_FALSE(o.poll(t0 + 30ms));
  EXPECT_TRUE(o.tables()->tunnel(0).valid);
}

// One node's view is its entry of the listing: same next hop, MAC, neighbor
// state and counters, whichever of several next hops is resolved.
TEST(OverlayControl, OneNodesViewIsItsEntryOfTheListing) {
  Fixture f;
  f.config.uplink->next_hop.reset();  // each node its own next hop
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24")));
  ASSERT_TRUE(*o.addNode(node("c", "192.168.77.3", "10.244.3.0/24")));
  ASSERT_TRUE(*o.addNode(node("d", "192.168.77.4", "10.244.4.0/24")));
  const NeighborTable::Clock::time_point t0{};
  o.poll(t0);
  f.uplink.punted.push_back(arpReply(*MacAddress::parse("02:aa:bb:cc:dd:03"), *Ipv4Address::parse("192.168.77.3"),
                                     *Ipv4Address::parse("192.168.77.1")));
  o.poll(t0 + 10ms);
  const std::vector<RemoteNodeView> all = o.listNodes(t0 + 10ms);
  ASSERT_EQ(all.size(), 3u);
  std::map<std::string, std::string> states;
  for (const RemoteNodeView& v : all) {
    std::optional<RemoteNodeView> one = o.nodeView(v.node.name, t0 + 10ms);
    ASSERT_TRUE(one) << v.node.name;
    EXPECT_EQ(one->node.name, v.node.name);
    EXPECT_EQ(one->node.vtep, v.node.vtep);
    EXPECT_EQ(one->node.pod_cidrs, v.node.pod_cidrs);
    EXPECT_EQ(one->node.mac, v.node.mac);
    EXPECT_EQ(one->tunnel, v.tunnel);
    EXPECT_EQ(one->next_hop, v.next_hop);
    EXPECT_EQ(one->next_hop_mac, v.next_hop_mac);
    EXPECT_EQ(one->neighbor_state, v.neighbor_state);
    EXPECT_EQ(one->tx_packets, v.tx_packets);
    states[v.node.name] = v.neighbor_state;
  }
  EXPECT_EQ(states, (std::map<std::string, std::string>{{"b", "incomplete"}, {"c", "reachable"}, {"d", "incomplete"}}));
  EXPECT_FALSE(o.nodeView("e", t0 + 10ms));
}

// Forged ARP on the underlay must not redirect a tunnel: the next hop's MAC
// moves only on a reply unicast to our VTEP MAC that answers a request of
// ours; everything else is counted under its reason.
TEST(OverlayControl, ForgedArpRepliesDoNotMoveTheNextHop) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24")));
  const NeighborTable::Clock::time_point t0{};
  const Ipv4Address hop = *Ipv4Address::parse("192.168.77.2"), vtep = *Ipv4Address::parse("192.168.77.1");
  const MacAddress peer = *MacAddress::parse("02:aa:bb:cc:dd:02"), forged = *MacAddress::parse("02:66:66:66:66:66");
  const MacAddress broadcast = *MacAddress::parse("ff:ff:ff:ff:ff:ff");
  auto counts = [&] {
    std::map<std::string, uint64_t> out;
    for (size_t r = 0; r < kArpRefusalCount; ++r)
      if (o.arpRefusals()[r] != 0) out[arpRefusalName(static_cast<ArpRefusal>(r))] = o.arpRefusals()[r];
    return out;
  };
  auto hopMacInTemplate = [&] {
    MacAddress m;
    std::memcpy(m.bytes.data(), o.tables()->tunnel(0).outer, 6);
    return m;
  };

  // Before we asked: a unicast reply is unsolicited.
  f.uplink.punted.push_back(arpReply(forged, hop, vtep));
  o.poll(t0);  // takes the punted frame, then sends the first request
  EXPECT_FALSE(o.tables()->tunnel(0).valid);
  ASSERT_EQ(f.uplink.sent.size(), 1u);
  // Asked now: a broadcast or multicast "reply" does not answer it.
  f.uplink.punted.push_back(arpReply(forged, hop, vtep, broadcast));
  f.uplink.punted.push_back(arpReply(forged, hop, vtep, *MacAddress::parse("01:00:5e:00:00:01")));
  f.uplink.punted.push_back(arpReply(forged, hop, vtep, *MacAddress::parse("02:00:00:00:77:99")));  // another host's
  EXPECT_FALSE(o.poll(t0 + 1ms));
  EXPECT_FALSE(o.tables()->tunnel(0).valid);
  // The real answer, then a forged second answer to the same request.
  f.uplink.punted.push_back(arpReply(peer, hop, vtep));
  f.uplink.punted.push_back(arpReply(forged, hop, vtep));
  EXPECT_TRUE(o.poll(t0 + 2ms));
  EXPECT_EQ(hopMacInTemplate(), peer);
  // While reachable, nothing is asked, so nothing is taken.
  std::vector<uint8_t> gratuitous = buildArpRequest(forged, hop, vtep);  // a request "from" the next hop
  std::memcpy(gratuitous.data(), kOurMac.bytes.data(), 6);
  std::vector<uint8_t> truncated = arpReply(forged, hop, vtep);
  truncated.resize(40);
  for (const std::vector<uint8_t>& frame :
       {arpReply(forged, hop, vtep), gratuitous, truncated, arpReply(forged, *Ipv4Address::parse("192.168.77.3"), vtep),
        arpReply(forged, hop, *Ipv4Address::parse("192.168.77.9")), arpReply(*MacAddress::parse("01:00:5e:00:00:02"), hop, vtep)})
    f.uplink.punted.push_back(frame);
  EXPECT_FALSE(o.poll(t0 + 3ms));
  EXPECT_EQ(hopMacInTemplate(), peer);
  EXPECT_EQ(o.listNodes(t0 + 3ms)[0].next_hop_mac, peer);
  const std::map<std::string, uint64_t> expected = {
      {"unsolicited", 3}, {"not_unicast_to_us", 3}, {"not_a_reply", 1}, {"malformed", 1},
      {"not_a_next_hop", 1}, {"not_to_our_vtep", 1}, {"bad_sender_mac", 1}};
  EXPECT_EQ(counts(), expected);
}

TEST(OverlayControl, StaticNeighborNeedsNoArp) {
  Fixture f;
  f.config.uplink->static_neighbors.push_back({*Ipv4Address::parse("192.168.77.254"), *MacAddress::parse("02:fe:00:00:00:01")});
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("c", "10.0.0.3", "10.244.3.0/24")));
  EXPECT_TRUE(o.tables()->tunnel(0).valid);
  EXPECT_FALSE(o.poll({}));
  EXPECT_TRUE(f.uplink.sent.empty());
  EXPECT_EQ(o.listNodes({})[0].neighbor_state, "static");
}

TEST(OverlayControl, SnapshotCarriesDecapParameters) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 2);
  vxlan::OverlaySnapshot s;
  o.fillSnapshot(s, 1);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.uplink_port, 31);
  EXPECT_EQ(s.decap.vni, 42u);
  EXPECT_EQ(s.decap.vtep_ip_be, Ipv4Address::parse("192.168.77.1")->networkOrder());
  EXPECT_EQ(s.overlay_mtu, 1450u);
  EXPECT_NE(s.counters, nullptr);
  // Counters of a node start at zero even when its tunnel index was used before.
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.2", "10.244.2.0/24")));
  s.counters->tunnels[0].tx_packets.add(5);
  EXPECT_EQ(o.listNodes({})[0].tx_packets, 5u);
  EXPECT_TRUE(o.deleteNode("b"));
  ASSERT_TRUE(*o.addNode(node("b2", "192.168.77.3", "10.244.2.0/24")));
  EXPECT_EQ(o.listNodes({})[0].tx_packets, 0u);
}

NodeOp putOp(RemoteNodeConfig n, bool replace = false, NodeSource source = NodeSource::kKubernetes) {
  return NodeOp{NodeOp::Kind::kPut, std::move(n), source, replace};
}

NodeOp removeOp(const char* name) {
  NodeOp op;
  op.kind = NodeOp::Kind::kRemove;
  op.node.name = name;
  return op;
}

// Each result's code, and the changes of the ones that succeeded.
std::vector<std::string> outcomes(const std::vector<absl::StatusOr<NodeChange>>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    if (!r.ok()) {
      out.push_back(absl::StatusCodeToString(r.status().code()));
      continue;
    }
    switch (*r) {
      case NodeChange::kUnchanged: out.push_back("unchanged"); break;
      case NodeChange::kCreated: out.push_back("created"); break;
      case NodeChange::kUpdated: out.push_back("updated"); break;
      case NodeChange::kRemoved: out.push_back("removed"); break;
    }
  }
  return out;
}

std::map<std::string, std::string> vtepsOf(const OverlayControl& o) {
  std::map<std::string, std::string> out;
  for (const RemoteNodeView& v : o.listNodes({})) out[v.node.name] = v.node.vtep.toString();
  return out;
}

TEST(OverlayControlBatch, ARefusedOpChangesNothingAndTheOthersApplyEachWithItsReason) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("a", "192.168.77.2", "10.244.2.0/24")));
  RemoteNodeConfig bad_name = node("B", "192.168.77.5", "10.244.5.0/24");
  auto results = o.applyNodes({putOp(node("b", "192.168.77.3", "10.244.3.0/24")),
                               putOp(node("c", "192.168.77.2", "10.244.4.0/24")),      // a's VTEP
                               putOp(node("d", "192.168.77.4", "10.244.2.128/25")),    // inside a's CIDR
                               putOp(bad_name),                                        // upper case
                               putOp(node("e", "192.168.77.6", "10.244.0.0/16")),      // holds ours and a's
                               putOp(node("f", "192.168.77.7", "10.244.7.0/24"))});
  EXPECT_EQ(outcomes(results), (std::vector<std::string>{"created", "ALREADY_EXISTS", "ALREADY_EXISTS",
                                                         "INVALID_ARGUMENT", "INVALID_ARGUMENT", "created"}));
  EXPECT_EQ(results[1].status().message(), "vtep: 192.168.77.2 belongs to node a");
  EXPECT_EQ(results[2].status().message(), "pod_cidrs: 10.244.2.128/25 overlaps 10.244.2.0/24 of node a");
  EXPECT_EQ(results[3].status().message(), "name: 'B' is not 1-253 of [a-z0-9.-]");
  EXPECT_EQ(results[4].status().message(), "pod_cidrs: 10.244.0.0/16 overlaps this node's pod CIDR 10.244.0.0/24");
  EXPECT_EQ(vtepsOf(o), (std::map<std::string, std::string>{
                            {"a", "192.168.77.2"}, {"b", "192.168.77.3"}, {"f", "192.168.77.7"}}));
  auto t = o.tables();
  EXPECT_EQ(t->routes().size(), 3u);
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.3.9")->networkOrder()), 1);
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.7.9")->networkOrder()), 2);
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.4.9")->networkOrder()), vxlan::kNoTunnel);
}

// A VTEP is where every packet for the node's pods goes: one that is no
// other host's unicast address (loopback, link-local as the cloud metadata
// service, "this network", broadcast), one of this node's own (its pod
// CIDR, its pods' gateway, its uplink's router or external gateway), or
// inside the node's own pod CIDR would send them to ourselves, a router or
// a pod. Each is refused with its reason, through AddNode's and
// ApplyNodes' common path, and the table keeps only the good node.
TEST(OverlayControlBatch, VtepsNoNodeCanHaveAreRefusedEachWithItsReason) {
  Fixture f;
  f.config.external = ExternalNetworkConfig{*Ipv4Address::parse("192.168.77.253"), 0};
  LocalPodCidrs ours(f.pod_cidr);
  ours.gateway = *Ipv4Address::parse("10.99.0.1");  // a gateway outside the pod CIDR
  OverlayControl o(f.config, ours, f.uplink, 31, 1);
  auto results = o.applyNodes({putOp(node("a", "127.0.0.1", "10.244.1.0/24")),
                               putOp(node("b", "169.254.169.254", "10.244.2.0/24")),
                               putOp(node("c", "10.244.0.5", "10.244.3.0/24")),
                               putOp(node("d", "0.1.2.3", "10.244.4.0/24")),
                               putOp(node("e", "192.168.77.254", "10.244.5.0/24")),
                               putOp(node("f", "192.168.77.253", "10.244.6.0/24")),
                               putOp(node("g", "192.168.77.255", "10.244.7.0/24")),
                               putOp(node("h", "10.99.0.1", "10.244.8.0/24")),
                               putOp(node("i", "10.244.9.1", "10.244.9.0/24")),
                               putOp(node("j", "224.0.0.1", "10.244.10.0/24")),
                               putOp(node("k", "255.255.255.255", "10.244.11.0/24")),
                               putOp(node("l", "192.168.77.1", "10.244.12.0/24")),
                               putOp(node("m", "192.168.77.13", "10.244.13.0/24"))});
  std::vector<std::string> got;
  for (const absl::StatusOr<NodeChange>& r : results)
    got.push_back(r.ok() ? "created" : absl::StrCat(absl::StatusCodeToString(r.status().code()), " ", r.status().message()));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "INVALID_ARGUMENT vtep: 127.0.0.1 is loopback (127.0.0.0/8), no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 169.254.169.254 is link-local (169.254.0.0/16, where cloud metadata "
                     "services answer), no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 10.244.0.5 is inside this node's pod CIDR 10.244.0.0/24, no remote "
                     "node's VTEP",
                     "INVALID_ARGUMENT vtep: 0.1.2.3 is unspecified (0.0.0.0/8, 'this network'), no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 192.168.77.254 is the uplink's next hop (a router), no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 192.168.77.253 is the external gateway, no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 192.168.77.255 is the broadcast address of the uplink's subnet "
                     "192.168.77.0/24, no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 10.99.0.1 is this node's pods' gateway, no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 10.244.9.1 is inside its own pod CIDR or routed prefix 10.244.9.0/24, no "
                     "remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 224.0.0.1 is multicast (224.0.0.0/4), no remote node's VTEP",
                     "INVALID_ARGUMENT vtep: 255.255.255.255 is reserved or broadcast (240.0.0.0/4), no remote node's "
                     "VTEP",
                     "INVALID_ARGUMENT vtep: 192.168.77.1 is this node's own VTEP",
                     "created",
                 }));
  EXPECT_EQ(vtepsOf(o), (std::map<std::string, std::string>{{"m", "192.168.77.13"}}));
  // AddNode takes the same path.
  EXPECT_EQ(o.addNode(node("n", "127.0.0.1", "10.244.14.0/24")).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OverlayControlBatch, OpsApplyInOrderSoANameTwiceIsTwoChanges) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  auto results = o.applyNodes({putOp(node("a", "192.168.77.2", "10.244.2.0/24")),
                               putOp(node("a", "192.168.77.2", "10.244.2.0/24")),        // same again
                               putOp(node("a", "192.168.77.12", "10.244.2.0/24")),       // other, no replace
                               putOp(node("a", "192.168.77.12", "10.244.12.0/24"), true),
                               putOp(node("a", "192.168.77.13", "10.244.12.0/24"), true, NodeSource::kApi)});
  EXPECT_EQ(outcomes(results),
            (std::vector<std::string>{"created", "unchanged", "ALREADY_EXISTS", "updated", "ALREADY_EXISTS"}));
  EXPECT_EQ(results[2].status().message(), "node a exists with other settings (delete it first)");
  EXPECT_EQ(results[4].status().message(), "node a exists from source kubernetes, not replaced by one from api");
  EXPECT_EQ(vtepsOf(o), (std::map<std::string, std::string>{{"a", "192.168.77.12"}}));
  // The CIDR and VTEP a left behind are free again within the batch.
  EXPECT_EQ(outcomes(o.applyNodes({putOp(node("b", "192.168.77.2", "10.244.2.0/24"))})),
            (std::vector<std::string>{"created"}));
}

TEST(OverlayControlBatch, ARemovalFreesItsNameVtepAndCidrForALaterPutOfTheSameBatch) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  ASSERT_TRUE(*o.addNode(node("a", "192.168.77.2", "10.244.2.0/24")));
  ASSERT_TRUE(*o.addNode(node("b", "192.168.77.3", "10.244.3.0/24")));
  // Without the removal first, b's CIDR is taken.
  EXPECT_EQ(outcomes(o.applyNodes({putOp(node("c", "192.168.77.4", "10.244.3.0/24")), removeOp("b")})),
            (std::vector<std::string>{"ALREADY_EXISTS", "removed"}));
  // Removed and put again under the same name with other settings, no
  // replace needed; a's CIDR and VTEP go to c in the same batch; an unknown
  // name's removal changes nothing.
  auto results = o.applyNodes({removeOp("a"), putOp(node("a", "192.168.77.5", "10.244.5.0/24")),
                               putOp(node("c", "192.168.77.2", "10.244.2.0/24")), removeOp("nobody")});
  EXPECT_EQ(outcomes(results), (std::vector<std::string>{"removed", "created", "created", "unchanged"}));
  EXPECT_EQ(vtepsOf(o), (std::map<std::string, std::string>{{"a", "192.168.77.5"}, {"c", "192.168.77.2"}}));
  auto t = o.tables();
  EXPECT_EQ(t->routes().size(), 2u);
  EXPECT_NE(t->routeFor(Ipv4Address::parse("10.244.2.9")->networkOrder()), vxlan::kNoTunnel);
  EXPECT_EQ(t->routeFor(Ipv4Address::parse("10.244.3.9")->networkOrder()), vxlan::kNoTunnel);
}

TEST(OverlayControlBatch, TheTableFillsToItsSizeInOneBatchAndRefusesTheNext) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  std::vector<NodeOp> ops;
  auto nth = [](int i) {
    // 10.1.0.1.. VTEPs; /28 pod CIDRs from 10.128.0.0.
    RemoteNodeConfig n;
    n.name = "n" + std::to_string(i);
    n.vtep = Ipv4Address{(10u << 24) | (1u << 16) | static_cast<uint32_t>(i + 1)};
    n.pod_cidrs = {Ipv4Cidr{Ipv4Address{(10u << 24) | (128u << 16) | (static_cast<uint32_t>(i) << 4)}, 28}};
    return n;
  };
  for (int i = 0; i <= vxlan::kMaxTunnels; ++i) ops.push_back(putOp(nth(i)));
  auto results = o.applyNodes(std::move(ops));
  ASSERT_EQ(results.size(), vxlan::kMaxTunnels + 1u);
  for (size_t i = 0; i < vxlan::kMaxTunnels; ++i) ASSERT_TRUE(results[i].ok()) << i << " " << results[i].status();
  EXPECT_EQ(results.back().status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(results.back().status().message(), "node table full: 8192 remote nodes");
  EXPECT_EQ(o.tables()->routes().size(), static_cast<size_t>(vxlan::kMaxTunnels));
  // A removal and a put in one batch: the freed index is the one taken.
  const uint16_t freed = o.nodeView("n77", {})->tunnel;
  EXPECT_EQ(outcomes(o.applyNodes({removeOp("n77"), putOp(nth(vxlan::kMaxTunnels))})),
            (std::vector<std::string>{"removed", "created"}));
  EXPECT_EQ(o.nodeView("n" + std::to_string(vxlan::kMaxTunnels), {})->tunnel, freed);
}

// The table's indexes (VTEP, CIDRs by first address) against the plain
// comparison with every other node (validateRemoteNode) on random CIDRs of
// every size: the same nodes accepted, the same refused.
TEST(OverlayControlBatch, TheIndexesRefuseExactlyWhatComparingWithEveryNodeRefuses) {
  Fixture f;
  // This node's IPv6 pod CIDR lies among the random ones, as its IPv4 one may.
  const LocalPodCidrs ours(f.pod_cidr, *Ipv6Cidr::parse("fd00:172:ab::/48"));
  OverlayControl o(f.config, ours, f.uplink, 31, 1);
  std::vector<RemoteNodeConfig> held;
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
  };
  int accepted = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    RemoteNodeConfig n;
    n.name = "r" + std::to_string(next() % 400);
    n.vtep = Ipv4Address{(10u << 24) | (1u << 16) | (next() % 500 + 1)};
    const int count = 1 + static_cast<int>(next() % 2);
    for (int c = 0; c < count; ++c) {
      const uint8_t prefix = static_cast<uint8_t>(14 + next() % 15);  // /14../28
      const uint32_t mask = ~0u << (32 - prefix);
      // Within 172.0.0.0/8, so that the larger ones often overlap.
      n.pod_cidrs.push_back(Ipv4Cidr{Ipv4Address{((172u << 24) | (next() & 0xffffffu)) & mask}, prefix});
    }
    // IPv6 ones beside them (none, one or two), within fd00:172::/32 alike.
    const int count6 = static_cast<int>(next() % 3);
    for (int c = 0; c < count6; ++c) {
      const uint8_t prefix = static_cast<uint8_t>(40 + next() % 17);  // /40../56
      Ipv6Address a = *Ipv6Address::parse("fd00:172::");
      const uint32_t bits = next();
      a.bytes[4] = static_cast<uint8_t>(bits >> 16);
      a.bytes[5] = static_cast<uint8_t>(bits >> 8);
      a.bytes[6] = static_cast<uint8_t>(bits);
      for (uint32_t bit = prefix; bit < 128; ++bit) a.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
      n.pod_cidrs_v6.push_back(Ipv6Cidr{a, prefix});
    }
    absl::Status want = validateRemoteNode(n, ours, f.config, held);
    const bool exists = std::any_of(held.begin(), held.end(), [&](const RemoteNodeConfig& h) { return h.name == n.name; });
    absl::StatusOr<NodeChange> got = o.putNode(n, NodeSource::kKubernetes, true);
    ASSERT_EQ(got.ok(), want.ok()) << i << ": " << n.name << " want " << want << " got " << got.status();
    if (!got.ok()) {
      ++refused;
      continue;
    }
    ++accepted;
    if (exists) {
      for (RemoteNodeConfig& h : held)
        if (h.name == n.name) h = n;
    } else {
      held.push_back(n);
    }
    if (next() % 4 == 0) {  // now and then a node goes
      const size_t k = next() % held.size();
      ASSERT_TRUE(o.deleteNode(held[k].name));
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace overlay_control_test
}  // namespace sluice
