// What one remote node may claim, and all of them together: the request's
// decoding (AddNode, ApplyNodes) refuses more pod CIDRs or routed prefixes
// than a node may have before parsing them, the table refuses the same from
// any source and bounds the total, and a local port's prefix may not cover
// the underlay's subnet. On a fake uplink, no EAL.
#include <gtest/gtest.h>

#include <absl/strings/str_cat.h>

#include "common/remote_node_limits.h"
#include "dataplane/modules/overlay/api/remote_node_decode.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "tests/unit/vxlan/fake_uplink.h"

namespace sluice {
namespace {

v1::RemoteNode request(const std::string& name, const std::string& vtep, std::vector<std::string> cidrs,
                       size_t prefixes, uint32_t first_prefix = 0) {
  v1::RemoteNode in;
  in.set_name(name);
  in.set_vtep(vtep);
  for (const std::string& c : cidrs) in.add_pod_cidrs(c);
  // /24s from 10.100.0.0 upward (10.100.0.0/24, 10.100.1.0/24, ...).
  for (size_t i = 0; i < prefixes; ++i)
    in.add_routed_prefixes(
        Ipv4Cidr{Ipv4Address{(10u << 24) + (100u << 16) + ((first_prefix + static_cast<uint32_t>(i)) << 8)}, 24}
            .toString());
  return in;
}

grpc::Status decode(const v1::RemoteNode& in, RemoteNodeConfig& node) {
  NodeSource source{};
  return decodeNode(in, node, source);
}

TEST(RemoteNodeLimits, ARequestWithMoreThanANodeMayClaimIsRefusedNamingTheField) {
  RemoteNodeConfig node;
  ASSERT_TRUE(decode(request("a", "192.168.77.2", {"10.244.2.0/24", "fd00:2::/64"}, 64), node).ok());
  EXPECT_EQ(node.routed_prefixes.size(), 64u);

  RemoteNodeConfig refused;
  grpc::Status many = decode(request("a", "192.168.77.2", {"10.244.2.0/24"}, 65), refused);
  EXPECT_EQ(many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(many.error_message(), "routed_prefixes: 65 given; at most 64 per node");
  grpc::Status huge = decode(request("a", "192.168.77.2", {"10.244.2.0/24"}, 2000), refused);
  EXPECT_EQ(huge.error_message(), "routed_prefixes: 2000 given; at most 64 per node");
  grpc::Status cidrs =
      decode(request("a", "192.168.77.2", {"10.244.2.0/24", "10.244.3.0/24", "10.244.4.0/24"}, 0), refused);
  EXPECT_EQ(cidrs.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(cidrs.error_message(), "pod_cidrs: 3 IPv4 and 0 IPv6; at most 2 per family");
  grpc::Status five = decode(request("a", "192.168.77.2", std::vector<std::string>(5, "10.244.2.0/24"), 0), refused);
  EXPECT_EQ(five.error_message(), "pod_cidrs: 5 given; at most 2 per family");
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
  test::FakeUplink uplink;
  Ipv4Cidr pod_cidr = *Ipv4Cidr::parse("10.244.0.0/24");
};

// n-th node: VTEP 10.1.x.y, pod CIDR 10.128.x.y/28, `prefixes` /24s in 11/8
// that no other n-th node's overlap.
RemoteNodeConfig nth(uint32_t i, size_t prefixes) {
  RemoteNodeConfig n;
  n.name = absl::StrCat("n", i);
  n.vtep = Ipv4Address{(10u << 24) | (1u << 16) | (i + 1)};
  n.pod_cidrs = {Ipv4Cidr{Ipv4Address{(10u << 24) | (128u << 16) | (i << 4)}, 28}};
  for (size_t k = 0; k < prefixes; ++k)
    n.routed_prefixes.push_back(
        Ipv4Cidr{Ipv4Address{(11u << 24) + ((i * static_cast<uint32_t>(kMaxRoutedPrefixesPerNode) +
                                             static_cast<uint32_t>(k)) << 8)},
                 24});
  return n;
}

TEST(RemoteNodeLimits, TheTableRefusesAnOversizedNodeFromAnySourceAndBoundsTheTotal) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  RemoteNodeConfig big = nth(0, kMaxRoutedPrefixesPerNode + 1);
  absl::StatusOr<NodeChange> r = o.putNode(big, NodeSource::kApi, false);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "routed_prefixes: 65; at most 64 per node");
  RemoteNodeConfig cidrs = nth(0, 0);
  cidrs.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:1::/64"), *Ipv6Cidr::parse("fd00:2::/64"),
                        *Ipv6Cidr::parse("fd00:3::/64")};
  r = o.putNode(cidrs, NodeSource::kApi, false);
  EXPECT_EQ(r.status().message(), "pod_cidrs: 1 IPv4 and 3 IPv6; at most 2 per family");
  RemoteNodeConfig metadata = nth(0, 0);
  metadata.routed_prefixes = {*Ipv4Cidr::parse("128.0.0.0/1")};
  r = o.putNode(metadata, NodeSource::kKubernetes, false);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "routed_prefixes: 128.0.0.0/1 overlaps 169.254.0.0/16 (link-local, cloud metadata)");

  // 128 nodes of 64 prefixes fill the total; the next prefix anywhere is refused.
  const uint32_t full = kMaxRemoteRoutedPrefixes / kMaxRoutedPrefixesPerNode;
  for (uint32_t i = 0; i < full; ++i) ASSERT_TRUE(o.putNode(nth(i, kMaxRoutedPrefixesPerNode), NodeSource::kApi, false).ok()) << i;
  RemoteNodeConfig one_more = nth(full, 1);
  r = o.putNode(one_more, NodeSource::kApi, false);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "routed_prefixes: the remote nodes would route 8193 prefixes; at most 8192 in all");
  EXPECT_TRUE(o.putNode(nth(full, 0), NodeSource::kApi, false).ok()) << "a node without prefixes still fits";
  // Replacing a node counts its new prefixes instead of its old ones.
  RemoteNodeConfig fewer = nth(0, kMaxRoutedPrefixesPerNode);
  fewer.routed_prefixes.pop_back();
  ASSERT_TRUE(o.putNode(fewer, NodeSource::kApi, true).ok());
  EXPECT_TRUE(o.putNode(one_more, NodeSource::kApi, true).ok()) << "the freed one is available";
}

TEST(RemoteNodeLimits, ALocalPrefixOverTheUnderlaySubnetIsRefused) {
  Fixture f;
  OverlayControl o(f.config, f.pod_cidr, f.uplink, 31, 1);
  const absl::Status s = o.checkLocalPrefixes({*Ipv4Cidr::parse("192.168.0.0/16")}, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "routed_prefixes: 192.168.0.0/16 overlaps the underlay subnet 192.168.77.0/24 of this node's VTEP "
            "192.168.77.1");
  EXPECT_TRUE(o.checkLocalPrefixes({*Ipv4Cidr::parse("10.100.0.0/16")}, {}).ok());
}

}  // namespace
}  // namespace sluice
