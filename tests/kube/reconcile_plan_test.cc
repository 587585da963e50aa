#include "agent/reconcile_plan.h"

#include <gtest/gtest.h>

#include <set>

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;

const auto kNow = std::chrono::system_clock::from_time_t(1'800'000'000);

KubeNode kubeNode(const std::string& name, const std::string& vtep, const std::string& cidr, uint32_t vni = 7) {
  KubeNode n;
  n.name = name;
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  n.ready = true;
  n.vtep = VtepInfo{*Ipv4Address::parse(vtep), MacAddress::fromIpv4(*Ipv4Address::parse(vtep)), vni};
  n.internal_ips = {*Ipv4Address::parse(vtep)};  // as the kubelet reports it
  return n;
}

TableNode tableNode(const std::string& name, const std::string& vtep, const std::string& cidr, bool kube = true) {
  return TableNode{name, *Ipv4Address::parse(vtep), MacAddress::fromIpv4(*Ipv4Address::parse(vtep)),
                   {*Ipv4Cidr::parse(cidr)}, {}, kube};
}

PlanInput input(std::vector<KubeNode> nodes, std::vector<TableNode> current) {
  PlanInput in;
  in.own_name = "self";
  in.vni = 7;
  for (KubeNode& n : nodes) in.nodes[n.name] = n;
  in.current = std::move(current);
  in.now = kNow;
  in.not_ready_grace = 300s;
  return in;
}

std::vector<std::string> names(const std::vector<TableNode>& v) {
  std::vector<std::string> out;
  for (const TableNode& t : v) out.push_back(t.name);
  return out;
}

std::map<std::string, LeftOut> skips(const Plan& p) {
  std::map<std::string, LeftOut> out;
  for (const Plan::Skip& s : p.skipped) out[s.name] = s.reason;
  return out;
}

TEST(ReconcilePlan, AddsUpdatesRemoves) {
  PlanInput in = input({kubeNode("a", "192.168.1.1", "10.1.1.0/24"), kubeNode("b", "192.168.1.2", "10.1.2.0/24"),
                        kubeNode("c", "192.168.1.33", "10.1.3.0/24")},
                       {tableNode("b", "192.168.1.2", "10.1.2.0/24"), tableNode("c", "192.168.1.3", "10.1.3.0/24"),
                        tableNode("gone", "192.168.1.9", "10.1.9.0/24")});
  Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), std::vector<std::string>{"a"});
  EXPECT_EQ(names(p.update), std::vector<std::string>{"c"});
  EXPECT_EQ(p.update[0].vtep.toString(), "192.168.1.33");
  EXPECT_EQ(p.remove, std::vector<std::string>{"gone"});
  EXPECT_EQ(p.desired, 3u);
  EXPECT_TRUE(p.skipped.empty());
}

TEST(ReconcilePlan, NeverTouchesOtherSourcesNorItself) {
  KubeNode self = kubeNode("self", "192.168.1.100", "10.1.100.0/24");
  PlanInput in = input({self, kubeNode("static-1", "192.168.1.5", "10.1.5.0/24"),
                        kubeNode("x", "192.168.1.6", "10.1.5.128/25")},
                       {tableNode("static-1", "192.168.1.50", "10.1.5.0/24", false),
                        tableNode("api-1", "192.168.1.51", "10.1.51.0/24", false)});
  Plan p = planReconcile(in);
  EXPECT_TRUE(p.add.empty());
  EXPECT_TRUE(p.update.empty());
  EXPECT_TRUE(p.remove.empty());  // api-1 is not the controller's to remove
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{
                          {"self", LeftOut::kOwnNode}, {"static-1", LeftOut::kForeignName}, {"x", LeftOut::kOverlap}}));
}

TEST(ReconcilePlan, RefusesOverlapsStably) {
  // "b" is in the table already: it keeps its CIDR although "a" sorts first.
  PlanInput in = input({kubeNode("a", "192.168.1.1", "10.1.0.0/16"), kubeNode("b", "192.168.1.2", "10.1.2.0/24"),
                        kubeNode("c", "192.168.1.3", "10.1.3.0/24"), kubeNode("d", "192.168.1.3", "10.1.4.0/24")},
                       {tableNode("b", "192.168.1.2", "10.1.2.0/24")});
  Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"c"}));
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{{"a", LeftOut::kOverlap}, {"d", LeftOut::kVtepConflict}}));
  // Our own pod CIDR is taken before any other.
  KubeNode self = kubeNode("self", "192.168.1.100", "10.1.3.0/24");
  self.vtep.reset();
  in.nodes["self"] = self;
  p = planReconcile(in);
  // "c" loses its CIDR to us, which frees its VTEP for "d".
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"d"}));
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{
                          {"a", LeftOut::kOverlap}, {"c", LeftOut::kOverlap}, {"self", LeftOut::kOwnNode}}));
}

// IPv6 pod CIDRs go into the table beside the IPv4 ones, and are refused
// where they overlap an IPv6 CIDR already taken (ours, a static or API
// node's, another Node's): each family only against its own.
TEST(ReconcilePlan, Ipv6PodCidrsAreCarriedAndRefusedPerFamily) {
  auto dual = [](const std::string& name, const std::string& vtep, const std::string& cidr, const std::string& cidr6) {
    KubeNode n = kubeNode(name, vtep, cidr);
    n.pod_cidrs_v6 = {*Ipv6Cidr::parse(cidr6)};
    return n;
  };
  KubeNode self = dual("self", "192.168.1.100", "10.1.100.0/24", "fd00:1:100::/64");
  TableNode api = tableNode("api-1", "192.168.1.51", "10.1.51.0/24", false);
  api.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:1:51::/64")};
  PlanInput in = input({self, dual("a", "192.168.1.1", "10.1.1.0/24", "fd00:1:1::/64"),
                        dual("b", "192.168.1.2", "10.1.2.0/24", "fd00:1:100::/56"),   // holds ours
                        dual("c", "192.168.1.3", "10.1.3.0/24", "fd00:1:51::/48"),    // holds api-1's
                        dual("d", "192.168.1.4", "10.1.4.0/24", "fd00:1:1:0:8::/80"),  // inside a's
                        dual("e", "192.168.1.5", "10.1.5.0/24", "fd00:1:5::/64")},
                       {api, tableNode("e", "192.168.1.5", "10.1.5.0/24")});
  in.nodes["f"] = kubeNode("f", "192.168.1.6", "10.1.6.0/24");
  in.nodes["f"].pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:1:6::/64"), *Ipv6Cidr::parse("fd00:1:6::/80")};
  const Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"a"}));
  ASSERT_EQ(p.add.size(), 1u);
  EXPECT_EQ(p.add[0].pod_cidrs_v6, (std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:1:1::/64")}));
  EXPECT_EQ(names(p.update), (std::vector<std::string>{"e"})) << "the table's e has no IPv6 CIDR yet";
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{{"self", LeftOut::kOwnNode},
                                                      {"b", LeftOut::kOverlap},
                                                      {"c", LeftOut::kOverlap},
                                                      {"d", LeftOut::kOverlap},
                                                      {"f", LeftOut::kOverlap}}));
  std::map<std::string, std::string> details;
  for (const Plan::Skip& s : p.skipped) details[s.name] = s.detail;
  EXPECT_EQ(details["b"], "fd00:1:100::/56 overlaps fd00:1:100::/64 of node self");
  EXPECT_EQ(details["c"], "fd00:1:51::/48 overlaps fd00:1:51::/64 of node api-1");
  EXPECT_EQ(details["d"], "fd00:1:1:0:8::/80 overlaps fd00:1:1::/64 of node a");
  EXPECT_EQ(details["f"], "fd00:1:6::/80 overlaps its own fd00:1:6::/64");
}

// The plan's overlap search against what it took before, over random
// prefixes of 16 to 28 bits (and nodes with two), checked against comparing
// with every prefix taken.
// IPv6 VTEPs are carried to the table as they are, and two nodes claiming
// one IPv6 VTEP are a VTEP conflict as with IPv4.
TEST(ReconcilePlan, Ipv6VtepsAreCarriedAndConflictsFound) {
  auto v6node = [](const std::string& name, const std::string& vtep, const std::string& cidr) {
    KubeNode n = kubeNode(name, "0.0.0.0", cidr);
    n.vtep->vtep = Ipv4Address{};
    n.vtep->vtep6 = *Ipv6Address::parse(vtep);
    n.internal_ips_v6 = {*Ipv6Address::parse(vtep)};
    return n;
  };
  const Plan p = planReconcile(input({v6node("a", "fd00:77::2", "10.244.1.0/24"),
                                      v6node("b", "fd00:77::2", "10.244.2.0/24"),
                                      v6node("c", "fd00:77::3", "10.244.3.0/24")},
                                     {}));
  ASSERT_EQ(names(p.add), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(p.add[0].vtep6, Ipv6Address::parse("fd00:77::2"));
  EXPECT_EQ(p.add[0].vtepText(), "fd00:77::2");
  EXPECT_EQ(skips(p).at("b"), LeftOut::kVtepConflict);
}

TEST(ReconcilePlan, OverlapSearchAgreesWithComparingAgainstEveryClaim) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<KubeNode> nodes;
    for (int i = 0; i < 300; ++i) {
      // Mostly /24s in one /16 (neighbours, duplicates), some wider ones.
      const uint32_t len = next() % 5 == 0 ? 16 + next() % 8 : 24 + next() % 5;
      const uint32_t addr = 0x0a010000u | static_cast<uint32_t>(next() % 0x10000);
      const uint32_t mask = len == 0 ? 0 : ~0u << (32 - len);
      KubeNode n = kubeNode("n" + std::to_string(1000 + i), "192.168.0.1", "10.0.0.0/8");
      n.pod_cidrs = {Ipv4Cidr{Ipv4Address{addr & mask}, static_cast<uint8_t>(len)}};
      if (next() % 10 == 0) {  // a second prefix, possibly overlapping its first
        const uint32_t addr2 = 0x0a010000u | static_cast<uint32_t>(next() % 0x10000);
        n.pod_cidrs.push_back(Ipv4Cidr{Ipv4Address{addr2 & 0xffffff00u}, 24});
      }
      n.vtep->vtep = Ipv4Address{0xc0a80000u + static_cast<uint32_t>(i) + 1};
      n.internal_ips = {n.vtep->vtep};
      nodes.push_back(n);
    }
    // A static node holding one prefix, as the API's Nodes are weighed after it.
    PlanInput in = input(nodes, {tableNode("static", "192.168.200.1", "10.1.128.0/20", false)});
    const Plan p = planReconcile(in);
    // The same decision by comparing with everything taken so far.
    std::vector<Ipv4Cidr> taken = {*Ipv4Cidr::parse("10.1.128.0/20")};
    std::set<std::string> expect_overlap;
    for (const auto& [name, n] : in.nodes) {
      bool clash = false;
      for (size_t i = 0; i < n.pod_cidrs.size(); ++i) {
        for (size_t j = 0; j < i; ++j) clash = clash || cidrsOverlap(n.pod_cidrs[i], n.pod_cidrs[j]);
        for (const Ipv4Cidr& t : taken) clash = clash || cidrsOverlap(n.pod_cidrs[i], t);
      }
      if (clash) {
        expect_overlap.insert(name);
      } else {
        taken.insert(taken.end(), n.pod_cidrs.begin(), n.pod_cidrs.end());
      }
    }
    std::set<std::string> got_overlap;
    for (const Plan::Skip& s : p.skipped) {
      ASSERT_EQ(s.reason, LeftOut::kOverlap) << s.name;
      got_overlap.insert(s.name);
    }
    EXPECT_EQ(got_overlap, expect_overlap) << "round " << round;
    EXPECT_EQ(p.add.size() + got_overlap.size(), nodes.size());
    EXPECT_GT(got_overlap.size(), 0u);
    EXPECT_GT(p.add.size(), 0u);
  }
}

TEST(ReconcilePlan, NotReadyGrace) {
  KubeNode fresh = kubeNode("fresh", "192.168.1.1", "10.1.1.0/24");
  fresh.ready = false;
  fresh.ready_since = kNow - 299s;
  KubeNode stale = kubeNode("stale", "192.168.1.2", "10.1.2.0/24");
  stale.ready = false;
  stale.ready_since = kNow - 300s;
  KubeNode unknown = kubeNode("unknown", "192.168.1.3", "10.1.3.0/24");
  unknown.ready = false;
  PlanInput in = input({fresh, stale, unknown}, {tableNode("stale", "192.168.1.2", "10.1.2.0/24")});
  Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"fresh", "unknown"}));
  EXPECT_EQ(p.remove, std::vector<std::string>{"stale"});
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{{"stale", LeftOut::kNotReady}}));
  ASSERT_TRUE(p.next_expiry);
  EXPECT_EQ(*p.next_expiry, kNow + 1s);
  // A second later "fresh" goes too.
  in.now = kNow + 1s;
  in.current.push_back(tableNode("fresh", "192.168.1.1", "10.1.1.0/24"));
  p = planReconcile(in);
  EXPECT_EQ(p.remove, (std::vector<std::string>{"stale", "fresh"}));
}

TEST(ReconcilePlan, SkipsNodesNotRunningSluiceOrOnAnotherVni) {
  KubeNode bare = kubeNode("bare", "192.168.1.1", "10.1.1.0/24");
  bare.vtep.reset();
  bare.problems.emplace_back(NodeProblem::kNoAnnotation, "");
  KubeNode bad = kubeNode("bad", "192.168.1.2", "10.1.2.0/24");
  bad.vtep.reset();
  bad.problems.emplace_back(NodeProblem::kBadAnnotation, "");
  KubeNode v6 = kubeNode("v6", "192.168.1.3", "10.1.3.0/24");
  v6.pod_cidrs.clear();
  PlanInput in = input({bare, bad, v6, kubeNode("other-vni", "192.168.1.4", "10.1.4.0/24", 8)},
                       {tableNode("bare", "192.168.1.1", "10.1.1.0/24")});
  Plan p = planReconcile(in);
  EXPECT_TRUE(p.add.empty());
  EXPECT_EQ(p.remove, std::vector<std::string>{"bare"});  // its annotation went away
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{{"bare", LeftOut::kNoAnnotation},
                                                      {"bad", LeftOut::kBadAnnotation},
                                                      {"v6", LeftOut::kNoPodCidr},
                                                      {"other-vni", LeftOut::kVniMismatch}}));
}

// A VTEP that can be no node's is left out with its reason: a loopback,
// link-local, "this network" or multicast address, or one inside the
// Node's own pod CIDR or this node's (the tunnel would lead to a pod).
TEST(ReconcilePlan, LeavesOutVtepsNoNodeCanHave) {
  KubeNode self = kubeNode("self", "192.168.1.100", "10.1.100.0/24");
  PlanInput in = input({self, kubeNode("lo", "127.0.0.1", "10.1.1.0/24"),
                        kubeNode("meta", "169.254.169.254", "10.1.2.0/24"),
                        kubeNode("zero", "0.1.2.3", "10.1.3.0/24"), kubeNode("mcast", "224.0.0.1", "10.1.4.0/24"),
                        kubeNode("in-own", "10.1.5.9", "10.1.5.0/24"),
                        kubeNode("in-ours", "10.1.100.7", "10.1.6.0/24"), kubeNode("good", "192.168.1.7", "10.1.7.0/24")},
                       {});
  Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), std::vector<std::string>{"good"});
  std::map<std::string, std::string> details;
  for (const Plan::Skip& s : p.skipped)
    if (s.reason == LeftOut::kBadVtep) details[s.name] = s.detail;
  EXPECT_EQ(details, (std::map<std::string, std::string>{
                         {"lo", "VTEP 127.0.0.1 is loopback (127.0.0.0/8)"},
                         {"meta", "VTEP 169.254.169.254 is link-local (169.254.0.0/16, where cloud metadata services "
                                  "answer)"},
                         {"zero", "VTEP 0.1.2.3 is unspecified (0.0.0.0/8, 'this network')"},
                         {"mcast", "VTEP 224.0.0.1 is multicast (224.0.0.0/4)"},
                         {"in-own", "VTEP 10.1.5.9 is inside its own 10.1.5.0/24"},
                         {"in-ours", "VTEP 10.1.100.7 is inside this node's 10.1.100.0/24"},
                     }));
  EXPECT_EQ(std::string(leftOutName(LeftOut::kBadVtep)), "bad_vtep");
}

// The annotation is whatever someone who may patch the Node wrote; the
// InternalIP is the kubelet's. By default a VTEP must be one of the Node's
// InternalIPs (either family); with the underlay declared a network of its
// own, any VTEP is taken.
TEST(ReconcilePlan, AVtepThatIsNoneOfTheNodesInternalIpsIsLeftOutUnlessAllowed) {
  KubeNode moved = kubeNode("moved", "192.168.1.2", "10.1.2.0/24");
  moved.internal_ips = {*Ipv4Address::parse("192.168.9.2"), *Ipv4Address::parse("192.168.9.3")};
  KubeNode none = kubeNode("none", "192.168.1.3", "10.1.3.0/24");
  none.internal_ips.clear();
  KubeNode second = kubeNode("second", "192.168.1.4", "10.1.4.0/24");
  second.internal_ips = {*Ipv4Address::parse("192.168.9.4"), *Ipv4Address::parse("192.168.1.4")};
  KubeNode v6 = kubeNode("v6", "0.0.0.0", "10.1.5.0/24");
  v6.vtep->vtep6 = *Ipv6Address::parse("fd00:77::5");
  v6.internal_ips = {};
  v6.internal_ips_v6 = {*Ipv6Address::parse("fd00:77::5")};
  PlanInput in = input({moved, none, second, v6}, {tableNode("moved", "192.168.1.2", "10.1.2.0/24")});
  Plan p = planReconcile(in);
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"second", "v6"}));
  EXPECT_EQ(p.remove, std::vector<std::string>{"moved"});
  EXPECT_EQ(skips(p), (std::map<std::string, LeftOut>{{"moved", LeftOut::kVtepNotInternalIp},
                                                      {"none", LeftOut::kVtepNotInternalIp}}));
  EXPECT_EQ(p.skipped[0].detail, "VTEP 192.168.1.2 is none of its InternalIPs");

  in.allow_vtep_outside_internal_ips = true;
  p = planReconcile(in);
  EXPECT_EQ(names(p.add), (std::vector<std::string>{"none", "second", "v6"}));
  EXPECT_TRUE(p.remove.empty());
  EXPECT_TRUE(p.skipped.empty());
}

}  // namespace
}  // namespace sluice::agent
