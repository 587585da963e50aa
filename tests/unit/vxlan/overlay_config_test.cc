// The overlay's config keys through the real config parser.
#include <gtest/gtest.h>

#include "dataplane/config/config.h"

namespace sluice {
namespace {

absl::StatusOr<SluicedConfig> parseJson(const std::string& json) {
  auto c = applyConfigJson(json, SluicedConfig{});
  if (!c.ok()) return c.status();
  if (absl::Status s = validateOverlay(c->overlay, LocalPodCidrs(c->pod_cidr, c->pod_cidr_v6)); !s.ok()) return s;
  return c;
}

TEST(OverlayConfig, ChartShapeAndDocumentedShapeBothParse) {
  auto c = parseJson(R"({"pod-cidr": "10.244.0.0/24", "vni": 4242,
      "uplink": {"devargs": "net_af_packet0,iface=vx0", "vtep": "192.168.77.1/24", "mac": "02:00:00:00:77:01",
                 "next-hop": "192.168.77.254", "mtu": 9000,
                 "static-neighbors": [{"ip": "192.168.77.254", "mac": "02:00:00:00:77:fe"}]},
      "remote-nodes": [{"name": "worker-2", "vtep": "192.168.77.2", "pod-cidr": "10.244.2.0/24"},
                       {"name": "worker-3", "vtep": "192.168.78.3", "pod-cidrs": ["10.244.3.0/24", "10.250.0.0/16"],
                        "mac": "02:00:00:00:78:03"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->ignored_keys.empty());
  EXPECT_EQ(c->overlay.vni, 4242u);
  ASSERT_TRUE(c->overlay.uplink);
  EXPECT_EQ(c->overlay.uplink->vtep.toString(), "192.168.77.1");
  EXPECT_EQ(c->overlay.uplink->vtep_prefix, 24);
  EXPECT_EQ(c->overlay.uplink->mtu, 9000u);
  EXPECT_EQ(c->overlay.uplink->next_hop->toString(), "192.168.77.254");
  ASSERT_EQ(c->overlay.uplink->static_neighbors.size(), 1u);
  ASSERT_EQ(c->overlay.remote_nodes.size(), 2u);
  EXPECT_EQ(c->overlay.remote_nodes[1].pod_cidrs.size(), 2u);
  EXPECT_EQ(c->overlay.remote_nodes[1].mac->toString(), "02:00:00:00:78:03");
}

// One list holds both families; each IPv6 CIDR is checked against this
// node's pod-cidr-v6 and the other nodes' IPv6 CIDRs only.
TEST(OverlayConfig, RemoteNodesTakeIpv6PodCidrs) {
  auto c = parseJson(R"({"pod-cidr": "10.244.0.0/24", "pod-cidr-v6": "fd00:10:244::/64",
      "uplink": {"devargs": "x", "vtep": "192.168.77.1"},
      "remote-nodes": [{"name": "w2", "vtep": "192.168.77.2", "pod-cidrs": ["10.244.2.0/24", "fd00:10:244:2::/64"]},
                       {"name": "w3", "vtep": "192.168.77.3", "pod-cidr": "fd00:10:244:3::/64"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->overlay.remote_nodes.size(), 2u);
  EXPECT_EQ(c->overlay.remote_nodes[0].pod_cidrs, (std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.2.0/24")}));
  EXPECT_EQ(c->overlay.remote_nodes[0].pod_cidrs_v6,
            (std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:10:244:2::/64")}));
  EXPECT_TRUE(c->overlay.remote_nodes[1].pod_cidrs.empty());
  EXPECT_EQ(c->overlay.remote_nodes[1].pod_cidrs_v6.size(), 1u);

  const std::string head = R"({"pod-cidr": "10.244.0.0/24", "pod-cidr-v6": "fd00:10:244::/64",
      "uplink": {"devargs": "x", "vtep": "192.168.77.1"}, "remote-nodes": )";
  auto mine = parseJson(head + R"([{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "fd00:10:244::/48"}]})");
  ASSERT_FALSE(mine.ok());
  EXPECT_EQ(mine.status().message(),
            "config: remote-nodes[a]: pod_cidrs: fd00:10:244::/48 overlaps this node's pod CIDR fd00:10:244::/64");
  auto theirs = parseJson(head + R"([{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "fd00:10:245::/48"},
                                     {"name": "b", "vtep": "1.2.3.6", "pod-cidr": "fd00:10:245:1::/64"}]})");
  ASSERT_FALSE(theirs.ok());
  EXPECT_EQ(theirs.status().message(),
            "config: remote-nodes[b]: pod_cidrs: fd00:10:245:1::/64 overlaps fd00:10:245::/48 of node a");
  auto garbage = parseJson(head + R"([{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "fd00:10:245::1/48"}]})");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(std::string(garbage.status().message()).find("remote-nodes[0].pod-cidr"), std::string::npos)
      << garbage.status();
}

// An IPv6 VTEP makes the underlay IPv6: remote VTEPs and the next hop of
// that family only, static neighbors (IPv4 ARP entries) refused, and an
// uplink MTU leaving IPv6's 1280 inside the 70 bytes of outer headers.
TEST(OverlayConfig, AnIpv6VtepMakesAnIpv6Underlay) {
  auto c = parseJson(R"({"pod-cidr": "10.244.0.0/24", "vni": 42,
      "uplink": {"devargs": "net_af_packet0,iface=vx0", "vtep": "fd00:77::1/64", "next-hop": "fd00:77::fe"},
      "remote-nodes": [{"name": "worker-2", "vtep": "fd00:77::2", "pod-cidr": "10.244.2.0/24"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->overlay.uplink->vtep6->toString(), "fd00:77::1");
  EXPECT_EQ(c->overlay.uplink->vtep6_prefix, 64);
  EXPECT_EQ(c->overlay.uplink->vtep, Ipv4Address{});
  EXPECT_EQ(c->overlay.uplink->next_hop6->toString(), "fd00:77::fe");
  EXPECT_EQ(vtepText(c->overlay.remote_nodes[0]), "fd00:77::2");
  auto refused = [](const std::string& json) {
    auto r = parseJson(json);
    return r.ok() ? std::string("accepted") : std::string(r.status().message());
  };
  const std::string uplink6 = R"("uplink": {"devargs": "net_af_packet0,iface=vx0", "vtep": "fd00:77::1/64")";
  EXPECT_EQ(refused(R"({"pod-cidr": "10.244.0.0/24", )" + uplink6 +
                    R"(}, "remote-nodes": [{"name": "w", "vtep": "192.168.77.2", "pod-cidr": "10.244.2.0/24"}]})"),
            "config: remote-nodes[w]: vtep: 192.168.77.2 is IPv4 but this node's underlay is IPv6 (vtep fd00:77::1); one "
            "family per underlay");
  EXPECT_EQ(refused(R"({"pod-cidr": "10.244.0.0/24", "uplink": {"devargs": "x", "vtep": "192.168.77.1"},
                       "remote-nodes": [{"name": "w", "vtep": "fd00:77::2", "pod-cidr": "10.244.2.0/24"}]})"),
            "config: remote-nodes[w]: vtep: fd00:77::2 is IPv6 but this node's underlay is IPv4 (vtep 192.168.77.1); one "
            "family per underlay");
  EXPECT_EQ(refused(R"({"pod-cidr": "10.244.0.0/24", )" + uplink6 + R"(, "next-hop": "192.168.77.254"}})"),
            "config: uplink.next-hop: must be IPv6 on an IPv6 underlay (vtep is IPv6)");
  EXPECT_EQ(refused(R"({"pod-cidr": "10.244.0.0/24", )" + uplink6 + R"(, "mtu": 1349}})"),
            "config: uplink.mtu: must be at least 1350 on an IPv6 underlay");
  EXPECT_EQ(refused(R"({"pod-cidr": "10.244.0.0/24", "uplink": {"devargs": "x", "vtep": "fe80::1"}})"),
            "config: uplink.vtep: must be a global or unique-local unicast address");
}

TEST(OverlayConfig, BadValuesNameTheirKey) {
  struct Case {
    const char* json;
    const char* mentions;
  };
  const Case cases[] = {
      {R"({"vni": 0})", "vni"},
      {R"({"vni": 16777216})", "vni"},
      {R"({"uplink": {"vtep": "192.168.77.1"}})", "uplink.devargs"},
      {R"({"uplink": {"devargs": "net_null0"}})", "uplink.vtep"},
      {R"({"uplink": {"devargs": "x", "vtep": "224.0.0.1"}})", "uplink.vtep"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4", "mtu": 100}})", "uplink.mtu"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4", "speed": 1}})", "uplink.speed"},
      {R"({"remote-nodes": [{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "10.9.0.0/24"}]})", "need an uplink"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4"},
           "remote-nodes": [{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "10.244.0.0/16"}]})", "overlaps this node"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4"},
           "remote-nodes": [{"name": "a", "vtep": "1.2.3.4", "pod-cidr": "10.9.0.0/24"}]})", "own VTEP"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4"},
           "remote-nodes": [{"name": "a", "vtep": "1.2.3.5", "pod-cidr": "10.9.0.0/24"},
                            {"name": "b", "vtep": "1.2.3.6", "pod-cidr": "10.9.0.128/25"}]})", "overlaps 10.9.0.0/24"},
      {R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4"},
           "remote-nodes": [{"name": "Bad_Name", "vtep": "1.2.3.5", "pod-cidr": "10.9.0.0/24"}]})", "name"},
  };
  for (const Case& c : cases) {
    auto r = parseJson(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(std::string(r.status().message()).find(c.mentions), std::string::npos) << r.status();
  }
}

TEST(OverlayConfig, NodeNamesAsLongAsAKubernetesNodesAreAccepted) {
  auto withName = [](const std::string& name) {
    return R"({"uplink": {"devargs": "x", "vtep": "1.2.3.4"}, "remote-nodes": [{"name": ")" + name +
           R"(", "vtep": "1.2.3.5", "pod-cidr": "10.9.0.0/24"}]})";
  };
  const std::string longest = std::string(200, 'n') + ".eu-west-1.compute.internal" + std::string(26, 'x');
  ASSERT_EQ(longest.size(), 253u);
  auto ok = parseJson(withName(longest));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->overlay.remote_nodes.at(0).name, longest);
  auto r = parseJson(withName(longest + "x"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(r.status().message()).find("1-253"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace sluice
