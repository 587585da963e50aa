// The node controller's part in routing pods' prefixes across nodes: the
// sluice.dev/routed-prefixes annotation read from a Node, the patch that
// publishes this node's own, and the plan that sends them to sluiced with
// the node (and refuses a node whose prefixes overlap anything taken).
#include <gtest/gtest.h>

#include "agent/node_parser.h"
#include "agent/prefix_publish.h"
#include "agent/reconcile_plan.h"

namespace sluice::agent {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& vtep, const std::string& cidr,
          std::optional<std::string> prefixes) {
  json annotations = {
      {kVtepAnnotation, formatVtepAnnotation({*Ipv4Address::parse(vtep), MacAddress::fromIpv4(*Ipv4Address::parse(vtep)), 7})}};
  if (prefixes) annotations[kRoutedPrefixesAnnotation] = *prefixes;
  return {{"metadata", {{"name", name}, {"resourceVersion", "1"}, {"annotations", annotations}}},
          {"spec", {{"podCIDRs", {cidr}}}},
          {"status",
           {{"addresses", {{{"type", "InternalIP"}, {"address", vtep}}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

KubeNode parsed(const json& j) {
  ParsedNode p = parseNode(j);
  EXPECT_TRUE(p.node) << p.error;
  return p.node.value_or(KubeNode{});
}

TEST(RoutedPrefixesAnnotation, IsReadPerFamilyAndABadOneIsANamedProblem) {
  const KubeNode n =
      parsed(node("w2", "192.168.77.2", "10.244.2.0/24", R"(["10.100.0.0/16", "fd00:100::/48"])"));
  ASSERT_EQ(n.routed_prefixes.size(), 1u);
  EXPECT_EQ(n.routed_prefixes[0].toString(), "10.100.0.0/16");
  ASSERT_EQ(n.routed_prefixes_v6.size(), 1u);
  EXPECT_EQ(n.routed_prefixes_v6[0].toString(), "fd00:100::/48");
  EXPECT_TRUE(n.problems.empty());

  for (const char* bad : {R"("10.100.0.0/16")", R"(["10.100.0.1/16"])", R"([16])", "not json"}) {
    const KubeNode b = parsed(node("w2", "192.168.77.2", "10.244.2.0/24", std::string(bad)));
    EXPECT_TRUE(b.routed_prefixes.empty() && b.routed_prefixes_v6.empty()) << bad;
    ASSERT_EQ(b.problems.size(), 1u) << bad;
    EXPECT_EQ(b.problems[0].first, NodeProblem::kBadRoutedPrefixes);
    EXPECT_STREQ(nodeProblemName(b.problems[0].first), "bad_routed_prefixes");
    EXPECT_TRUE(b.vtep.has_value()) << "the node itself is still usable";
  }
}

TEST(RoutedPrefixesPublish, PatchesOnlyWhatDiffersAndRemovesTheAnnotationWhenNoneAreLeft) {
  const KubeNode bare = parsed(node("self", "192.168.77.1", "10.244.1.0/24", std::nullopt));
  // A pod gained prefixes: the annotation is set, sorted.
  std::optional<json> patch = routedPrefixesPatch({"fd00:100::/48", "10.100.0.0/16"}, bare);
  ASSERT_TRUE(patch);
  EXPECT_EQ(*patch, (json{{"metadata", {{"annotations", {{kRoutedPrefixesAnnotation, R"(["10.100.0.0/16","fd00:100::/48"])"}}}}}}));
  // The Node shows them (in another order): nothing to write.
  const KubeNode shown = parsed(node("self", "192.168.77.1", "10.244.1.0/24", R"(["fd00:100::/48","10.100.0.0/16"])"));
  EXPECT_FALSE(routedPrefixesPatch({"10.100.0.0/16", "fd00:100::/48"}, shown));
  EXPECT_FALSE(routedPrefixesPatch({}, bare)) << "no prefixes, no annotation: nothing to write";
  // The pod went (DEL): the annotation is removed (null in a merge patch).
  patch = routedPrefixesPatch({}, shown);
  ASSERT_TRUE(patch);
  EXPECT_TRUE((*patch)["metadata"]["annotations"][kRoutedPrefixesAnnotation].is_null());
  // An unreadable annotation is rewritten even when the lists look alike.
  const KubeNode garbled = parsed(node("self", "192.168.77.1", "10.244.1.0/24", "[1]"));
  EXPECT_TRUE(routedPrefixesPatch({}, garbled));
}

PlanInput input(std::vector<KubeNode> nodes) {
  PlanInput in;
  in.own_name = "self";
  in.vni = 7;
  for (KubeNode& n : nodes) in.nodes[n.name] = n;
  in.now = std::chrono::system_clock::now();
  in.routed_prefix_ranges = *parsePrefixRanges("10.0.0.0/8,fd00::/8");
  return in;
}

TEST(RoutedPrefixesPlan, PrefixesGoWithTheNodeAndOverlapsAreRefused) {
  PlanInput in = input({parsed(node("self", "192.168.77.1", "10.244.1.0/24", R"(["10.100.0.0/16"])")),
                        parsed(node("a", "192.168.77.2", "10.244.2.0/24", R"(["10.101.0.0/16", "fd00:101::/48"])")),
                        parsed(node("b", "192.168.77.3", "10.244.3.0/24", R"(["10.100.7.0/24"])")),
                        parsed(node("c", "192.168.77.4", "10.244.4.0/24", R"(["10.244.2.128/25"])"))});
  Plan p = planReconcile(in);
  ASSERT_EQ(p.add.size(), 1u);
  EXPECT_EQ(p.add[0].name, "a");
  EXPECT_EQ(p.add[0].routed_prefixes, std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.101.0.0/16")});
  EXPECT_EQ(p.add[0].routed_prefixes_v6, std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:101::/48")});
  std::map<std::string, std::string> why;
  for (const Plan::Skip& s : p.skipped)
    if (s.reason == LeftOut::kOverlap) why[s.name] = s.detail;
  EXPECT_EQ(why["b"], "10.100.7.0/24 overlaps 10.100.0.0/16 of node self") << "our own pods' prefix";
  EXPECT_EQ(why["c"], "10.244.2.128/25 overlaps 10.244.2.0/24 of node a") << "another node's pod CIDR";

  // The node's prefixes changing (a pod's DEL there) is an update in place.
  in.current = p.add;
  in.nodes["a"] = parsed(node("a", "192.168.77.2", "10.244.2.0/24", std::nullopt));
  p = planReconcile(in);
  ASSERT_EQ(p.update.size(), 1u);
  EXPECT_TRUE(p.update[0].routed_prefixes.empty() && p.update[0].routed_prefixes_v6.empty());
}

// Another node's claim is routed here only inside the administrator's
// ranges and never over the cluster's pod CIDRs (where nodes that have not
// joined yet get theirs) or a special range; the node keeps the rest, and
// every refused prefix is reported with why.
TEST(RoutedPrefixesPlan, OnlyPrefixesInsideTheAllowedRangesAndOutsideTheClusterCidrsAreRouted) {
  // Its VTEP lies outside every prefix it claims: a Node whose VTEP is
  // inside its own claims is left out whole (bad_vtep), tested elsewhere.
  PlanInput in = input({parsed(node("a", "10.77.0.2", "10.244.2.0/24",
                                    R"(["10.100.1.0/24", "128.0.0.0/1", "10.245.0.0/16", "10.200.0.0/16",
                                        "fd00:100::/48", "fd00:200::/48"])"))});
  in.routed_prefix_ranges = *parsePrefixRanges("10.100.0.0/16,10.240.0.0/12,fd00:100::/32");
  in.cluster_pod_cidrs = *parsePrefixRanges("10.244.0.0/15");
  Plan p = planReconcile(in);
  ASSERT_EQ(p.add.size(), 1u);
  EXPECT_EQ(p.add[0].pod_cidrs, std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.2.0/24")}) << "the node stays";
  EXPECT_EQ(p.add[0].routed_prefixes, std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.100.1.0/24")});
  EXPECT_EQ(p.add[0].routed_prefixes_v6, std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:100::/48")});
  std::map<std::string, std::string> why;
  for (const Plan::RefusedPrefix& r : p.refused_prefixes) {
    EXPECT_EQ(r.name, "a");
    why[r.prefix] = r.why;
  }
  EXPECT_EQ(why.size(), 4u);
  EXPECT_EQ(why["128.0.0.0/1"], "overlaps 169.254.0.0/16 (link-local, cloud metadata)");
  EXPECT_EQ(why["10.245.0.0/16"], "overlaps the cluster's pod CIDRs 10.244.0.0/15");
  EXPECT_EQ(why["10.200.0.0/16"], "outside the allowed routed prefix ranges 10.100.0.0/16,10.240.0.0/12,fd00:100::/32");
  EXPECT_EQ(why["fd00:200::/48"], "outside the allowed routed prefix ranges 10.100.0.0/16,10.240.0.0/12,fd00:100::/32");

  // The default: no ranges, no other node's prefix routed.
  in.routed_prefix_ranges = {};
  p = planReconcile(in);
  ASSERT_EQ(p.add.size(), 1u);
  EXPECT_TRUE(p.add[0].routed_prefixes.empty() && p.add[0].routed_prefixes_v6.empty());
  EXPECT_EQ(p.refused_prefixes.size(), 6u);
}

// What one Node may claim is bounded as sluiced bounds it: more than 64
// prefixes is a bad annotation (none routed), and pod CIDRs beyond two of a
// family are ignored as named problems.
TEST(RoutedPrefixesAnnotation, MoreThanANodeMayClaimIsRefusedWithAReason) {
  std::vector<std::string> many;
  for (int i = 0; i < 65; ++i) many.push_back("10.100." + std::to_string(i) + ".0/24");
  const KubeNode b = parsed(node("w2", "192.168.77.2", "10.244.2.0/24", json(many).dump()));
  EXPECT_TRUE(b.routed_prefixes.empty());
  ASSERT_EQ(b.problems.size(), 1u);
  EXPECT_EQ(b.problems[0].first, NodeProblem::kBadRoutedPrefixes);
  EXPECT_EQ(b.problems[0].second, "sluice.dev/routed-prefixes lists 65 prefixes, more than 64: ignored");
  many.pop_back();
  EXPECT_EQ(parsed(node("w2", "192.168.77.2", "10.244.2.0/24", json(many).dump())).routed_prefixes.size(), 64u);

  json cidrs = node("w3", "192.168.77.3", "10.244.3.0/24", std::nullopt);
  cidrs["spec"]["podCIDRs"] = {"10.244.3.0/24", "fd00:10:244:3::/64", "10.244.4.0/24", "10.244.5.0/24"};
  const KubeNode c = parsed(cidrs);
  EXPECT_EQ(c.pod_cidrs.size(), 2u);
  EXPECT_EQ(c.pod_cidrs_v6.size(), 1u);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].first, NodeProblem::kBadCidr);
  EXPECT_EQ(c.problems[0].second, "pod CIDR 10.244.5.0/24 is beyond 2 of its family: ignored");
}

}  // namespace
}  // namespace sluice::agent
