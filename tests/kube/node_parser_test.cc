#include "agent/node_parser.h"

#include <gtest/gtest.h>

#include "agent/line_splitter.h"

namespace sluice::agent {
namespace {

using nlohmann::json;

json node(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"resourceVersion", "42"},
            {"annotations",
             {{"sluice.dev/vtep", R"({"version":1,"vtep":"192.168.77.2","mac":"02:00:00:00:00:02","vni":7})"}}}}},
          {"spec", {{"podCIDR", "10.244.2.0/24"}, {"podCIDRs", {"10.244.2.0/24", "fd00:2::/64"}}}},
          {"status",
           {{"addresses",
             {{{"type", "Hostname"}, {"address", name}},
              {{"type", "InternalIP"}, {"address", "192.168.77.2"}},
              {{"type", "ExternalIP"}, {"address", "203.0.113.2"}},
              {{"type", "InternalIP"}, {"address", "fd00:77::2"}}}},
            {"conditions",
             {{{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", "2026-12-02T03:04:05Z"}}}}}}};
}

TEST(NodeParser, ReadsADualStackNode) {
  ParsedNode p = parseNode(node("w2"));
  ASSERT_TRUE(p.node) << p.error;
  const KubeNode& n = *p.node;
  EXPECT_EQ(n.name, "w2");
  EXPECT_EQ(n.resource_version, "42");
  ASSERT_EQ(n.pod_cidrs.size(), 1u);
  EXPECT_EQ(n.pod_cidrs[0].toString(), "10.244.2.0/24");
  // Every InternalIP, each family in its own list; an ExternalIP is none.
  ASSERT_EQ(n.internal_ips.size(), 1u);
  EXPECT_EQ(n.internal_ips[0].toString(), "192.168.77.2");
  ASSERT_EQ(n.internal_ips_v6.size(), 1u);
  EXPECT_EQ(n.internal_ips_v6[0].toString(), "fd00:77::2");
  EXPECT_TRUE(n.ready);
  ASSERT_TRUE(n.ready_since);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*n.ready_since), 1796180645);
  ASSERT_TRUE(n.vtep);
  EXPECT_EQ(n.vtep->vtep.toString(), "192.168.77.2");
  EXPECT_EQ(n.vtep->mac.toString(), "02:00:00:00:00:02");
  EXPECT_EQ(n.vtep->vni, 7u);
  // Both families are taken, each in its own list; nothing is wrong.
  ASSERT_EQ(n.pod_cidrs_v6.size(), 1u);
  EXPECT_EQ(n.pod_cidrs_v6[0].toString(), "fd00:2::/64");
  EXPECT_TRUE(n.problems.empty());
}

TEST(NodeParser, Ipv6PodCidrsKeepTheirOrderAndAreTakenOnce) {
  json j = node("w5");
  // An IPv6-first dual-stack Node: spec.podCIDR repeats the IPv6 one.
  j["spec"] = {{"podCIDR", "fd00:5::/64"}, {"podCIDRs", {"fd00:5::/64", "10.244.5.0/24", "fd00:5:1::/64"}}};
  auto n = parseNode(j).node;
  ASSERT_TRUE(n);
  EXPECT_EQ(n->pod_cidrs, (std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.5.0/24")}));
  EXPECT_EQ(n->pod_cidrs_v6,
            (std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:5::/64"), *Ipv6Cidr::parse("fd00:5:1::/64")}));
  EXPECT_TRUE(n->problems.empty());
  // IPv6 alone is no Sluice node (every Sluice node has an IPv4 pod CIDR).
  j["spec"] = {{"podCIDRs", {"fd00:5::/64"}}};
  n = parseNode(j).node;
  ASSERT_TRUE(n);
  EXPECT_EQ(n->pod_cidrs_v6.size(), 1u);
  ASSERT_EQ(n->problems.size(), 1u);
  EXPECT_EQ(n->problems[0].first, NodeProblem::kNoPodCidr);
  // An IPv6 CIDR with host bits is no CIDR, as for IPv4.
  j["spec"] = {{"podCIDRs", {"10.244.5.0/24", "fd00:5::1/64"}}};
  n = parseNode(j).node;
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->pod_cidrs_v6.empty());
  ASSERT_EQ(n->problems.size(), 1u);
  EXPECT_EQ(n->problems[0].first, NodeProblem::kBadCidr);
}

TEST(NodeParser, NamesEachProblem) {
  json j = node("w3");
  j["metadata"]["annotations"].erase("sluice.dev/vtep");
  j["metadata"]["annotations"]["flannel.alpha.coreos.com/backend-data"] = "{}";
  EXPECT_EQ(parseNode(j).node->problems.back().first, NodeProblem::kNoAnnotation);
  j["metadata"]["annotations"]["sluice.dev/vtep"] = "nonsense";
  EXPECT_EQ(parseNode(j).node->problems.back().first, NodeProblem::kBadAnnotation);
  j["metadata"]["annotations"]["sluice.dev/vtep"] = 17;
  EXPECT_EQ(parseNode(j).node->problems.back().first, NodeProblem::kBadAnnotation);
  j["metadata"]["annotations"]["sluice.dev/vtep"] = R"({"version":2,"vtep":"1.2.3.4"})";
  EXPECT_EQ(parseNode(j).node->problems.back().first, NodeProblem::kUnknownAnnotation);
  j["metadata"]["annotations"]["sluice.dev/vtep"] = R"({"version":1,"vtep":"1.2.3.4","mac":"01:00:5e:00:00:01","vni":7})";
  EXPECT_EQ(parseNode(j).node->problems.back().first, NodeProblem::kBadAnnotation);  // multicast MAC
  json k = node("w4");
  k["spec"] = {{"podCIDRs", {"fd00::/64", "10.1.2.3/24", 5}}};
  auto p = parseNode(k).node;
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->pod_cidrs.empty());
  std::vector<NodeProblem> kinds;
  for (const auto& [kind, detail] : p->problems) kinds.push_back(kind);
  EXPECT_EQ(kinds, (std::vector<NodeProblem>{NodeProblem::kBadCidr, NodeProblem::kBadCidr, NodeProblem::kNoPodCidr}));
}

TEST(NodeParser, RefusesWhatIsNoNode) {
  EXPECT_FALSE(parseNode(json::array()).node);
  EXPECT_FALSE(parseNode(json{{"metadata", {{"name", 3}}}}).node);
  EXPECT_FALSE(parseNode(json{{"metadata", {{"name", ""}}}}).node);
  // A Node with nothing else: not ready, no CIDR, no annotation.
  auto n = parseNode(json{{"metadata", {{"name", "bare"}}}}).node;
  ASSERT_TRUE(n);
  EXPECT_FALSE(n->ready);
  EXPECT_FALSE(n->vtep);
}

TEST(NodeParser, ReadsWatchEvents) {
  std::string error;
  auto e = parseWatchEvent(json{{"type", "MODIFIED"}, {"object", node("w2")}}.dump(), &error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->type, WatchEvent::Type::kModified);
  EXPECT_EQ(e->resource_version, "42");
  EXPECT_EQ(e->node->name, "w2");
  e = parseWatchEvent(R"({"type":"BOOKMARK","object":{"kind":"Node","metadata":{"resourceVersion":"77"}}})", &error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(e->resource_version, "77");
  e = parseWatchEvent(R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})", &error);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_code, 410);
  EXPECT_FALSE(parseWatchEvent("{", &error));
  EXPECT_FALSE(parseWatchEvent(R"({"type":"SURPRISE","object":{}})", &error));
  EXPECT_FALSE(parseWatchEvent(R"({"type":"ADDED","object":{"metadata":{}}})", &error));
  EXPECT_FALSE(parseWatchEvent(R"({"type":"BOOKMARK","object":{}})", &error));
}

TEST(NodeParser, AnnotationRoundTrips) {
  VtepInfo v{*Ipv4Address::parse("10.0.0.9"), *MacAddress::parse("02:aa:bb:cc:dd:ee"), 4096};
  ParsedVtep p = parseVtepAnnotation(formatVtepAnnotation(v));
  ASSERT_TRUE(p.vtep) << p.error;
  EXPECT_EQ(*p.vtep, v);
}

// An IPv6 underlay's node publishes an IPv6 VTEP under the same version;
// a VTEP of neither family is a bad annotation.
TEST(NodeParser, Ipv6VtepAnnotationRoundTrips) {
  VtepInfo v;
  v.vtep6 = *Ipv6Address::parse("fd00:77::9");
  v.mac = *MacAddress::parse("02:aa:bb:cc:dd:ee");
  v.vni = 4096;
  const std::string text = formatVtepAnnotation(v);
  EXPECT_EQ(text, R"({"mac":"02:aa:bb:cc:dd:ee","version":1,"vni":4096,"vtep":"fd00:77::9"})");
  ParsedVtep p = parseVtepAnnotation(text);
  ASSERT_TRUE(p.vtep) << p.error;
  EXPECT_EQ(*p.vtep, v);
  EXPECT_EQ(p.vtep->vtep, Ipv4Address{});
  ParsedVtep bad = parseVtepAnnotation(R"({"mac":"02:aa:bb:cc:dd:ee","version":1,"vni":4096,"vtep":"fd00::/64"})");
  EXPECT_FALSE(bad.vtep);
  EXPECT_EQ(bad.error, "\"vtep\" is not an IPv4 or IPv6 address");
}

TEST(NodeParser, Rfc3339) {
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*parseRfc3339("1970-01-02T00:00:00Z")), 86400);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*parseRfc3339("1970-01-02T01:00:00.123+01:00")), 86400);
  EXPECT_FALSE(parseRfc3339("1970-01-02 00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("1970-13-02T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("1970-01-02T00:00:00"));
  // Beyond what system_clock holds (1677-2262): refused, not overflowed
  // (found by fuzz_kube_node).
  EXPECT_TRUE(parseRfc3339("2262-01-01T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("2263-01-01T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("4808-12-02T03:04:05.5+01:00"));
  EXPECT_FALSE(parseRfc3339("1600-01-01T00:00:00Z"));
}

TEST(LineSplitter, SplitsLinesAcrossPieces) {
  LineSplitter s(16);
  std::vector<std::string> lines;
  auto take = [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  };
  EXPECT_TRUE(s.feed("{\"a\":1}\n{\"b\"", take));
  EXPECT_TRUE(s.feed(":2}\r\n\n{\"c\":3}", take));
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(s.pending(), "{\"c\":3}");
  EXPECT_FALSE(s.feed("xxxxxxxxxxxxxxxxxxxxxxxx", take));  // beyond the limit
  // The callback stops the feed.
  LineSplitter t;
  int seen = 0;
  EXPECT_FALSE(t.feed("a\nb\nc\n", [&](std::string_view) { return ++seen < 2; }));
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace sluice::agent
