// The external network on the uplink: the decision (pod to outside, outside
// to pods), the receive classification of tagged and untagged frames, the
// tag's push and pop, the gateway's ARP, and the config keys' checks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <vector>

#include "dataplane/config/config.h"
#include "dataplane/datapath/external_decision.h"
#include "dataplane/datapath/external_network.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/overlay/overlay_tables.h"
#include "dataplane/modules/overlay/arp_frames.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "tests/unit/vxlan/fake_uplink.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace external_test {

using namespace std::chrono_literals;

uint32_t be(const char* ip) { return Ipv4Address::parse(ip)->networkOrder(); }

constexpr uint16_t kUplink = 31;
constexpr uint16_t kPodPort = 1;

// Local pod 10.244.0.5 on port 1 (its CIDR 10.244.0.0/24), a remote node's
// 10.245.0.0/16 behind tunnel 0, the uplink on port 31 with MTU 1500.
struct Fixture {
  ForwardingTable fib{{{*Ipv4Address::parse("10.244.0.5"), kPodPort, *MacAddress::parse("02:00:00:00:00:05")}}};
  vxlan::OverlayTables overlay{{{be("192.168.77.2"), {}}}, {{be("10.245.0.0"), be("255.255.0.0"), 0}}};
  RouteTables tables = [this] {
    RouteTables t{&fib, be("10.244.0.1"), &overlay, kUplink};
    t.pod_net_be = be("10.244.0.0");
    t.pod_mask_be = be("255.255.255.0");
    t.external = true;
    t.external_max_frame = 1514;
    return t;
  }();
};

flow::FlowKey key(const char* src, const char* dst, uint16_t in_port) {
  flow::FlowKey k = flow::zeroKey();
  k.eth_type = 0x0008;
  k.in_port = in_port;
  k.ipv4_src = be(src);
  k.ipv4_dst = be(dst);
  k.ttl_class = static_cast<uint8_t>(flow::TtlClass::kMany);
  return k;
}

TEST(ExternalTranslate, APodsPacketOutsideTheClusterGoesToTheExternalGateway) {
  Fixture f;
  FlowTranslation t;
  translateFlow(f.tables, key("10.244.0.5", "203.0.113.9", kPodPort), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kExternal);
  EXPECT_EQ(t.actions.out_port, kUplink);
  EXPECT_EQ(t.actions.max_frame, 1514);
  EXPECT_EQ(t.mask.ipv4_dst, be("255.0.0.0")) << "203/8 holds nothing of the cluster: one megaflow for it";
  EXPECT_EQ(t.mask.ipv4_src, 0u) << "no source check on this port: the source is not read";
  EXPECT_EQ(t.mask.in_port, 0xffff) << "from a pod or from the uplink decides apart";
  EXPECT_EQ(t.mask.ttl_class, 0xff);

  // Near a cluster range the prefix narrows, never into it.
  translateFlow(f.tables, key("10.244.0.5", "10.247.3.3", kPodPort), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kExternal);
  EXPECT_EQ(t.mask.ipv4_dst, be("255.255.0.0"));

  flow::FlowKey expired = key("10.244.0.5", "203.0.113.9", kPodPort);
  expired.ttl_class = static_cast<uint8_t>(flow::TtlClass::kOne);
  translateFlow(f.tables, expired, t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
}

TEST(ExternalTranslate, WithoutTheExternalNetworkNothingChanges) {
  Fixture f;
  f.tables.external = false;
  FlowTranslation t;
  translateFlow(f.tables, key("10.244.0.5", "203.0.113.9", kPodPort), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(t.mask.in_port, 0) << "no in_port read without the external network";
  EXPECT_EQ(t.mask.ipv4_dst, be("255.0.0.0"));
}

TEST(ExternalTranslate, InsideTheClusterOrUnroutableStaysWhereItWas) {
  Fixture f;
  FlowTranslation t;
  struct Case {
    const char* dst;
    flow::MegaflowActions::Kind kind;
    DropReason reason;
  };
  for (const Case& c : {Case{"10.244.0.5", flow::MegaflowActions::Kind::kOutput, DropReason::kNoRoute},
                        Case{"10.245.9.9", flow::MegaflowActions::Kind::kEncap, DropReason::kNoRoute},
                        Case{"10.244.0.77", flow::MegaflowActions::Kind::kDrop, DropReason::kNoRoute},
                        Case{"224.0.0.251", flow::MegaflowActions::Kind::kDrop, DropReason::kNoRoute},
                        Case{"255.255.255.255", flow::MegaflowActions::Kind::kDrop, DropReason::kNoRoute},
                        Case{"127.0.0.1", flow::MegaflowActions::Kind::kDrop, DropReason::kNoRoute},
                        Case{"169.254.169.254", flow::MegaflowActions::Kind::kDrop, DropReason::kNoRoute}}) {
    translateFlow(f.tables, key("10.244.0.5", c.dst, kPodPort), t);
    EXPECT_EQ(t.actions.kind, c.kind) << c.dst;
    if (c.kind == flow::MegaflowActions::Kind::kDrop) {
      EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(c.reason)) << c.dst;
    }
  }
  // 169.254/16 is told from the rest of 169/8 by 16 bits.
  translateFlow(f.tables, key("10.244.0.5", "169.1.2.3", kPodPort), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kExternal);
  EXPECT_EQ(t.mask.ipv4_dst, be("255.255.0.0"));
  // A tunnelled packet from a remote node is relayed nowhere.
  flow::FlowKey tunnelled = key("10.245.0.9", "203.0.113.9", kUplink);
  tunnelled.tun_vni = 1;
  tunnelled.tun_src = be("192.168.77.2");
  translateFlow(f.tables, tunnelled, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute));
}

TEST(ExternalTranslate, SourceValidationComesFirst) {
  Fixture f;
  SourceTable sources;
  PortSources& s = sources.ports[kPodPort];
  s.checked = true;
  s.has_ipv4 = true;
  s.ipv4_be = be("10.244.0.5");
  const uint8_t mac[6] = {2, 0, 0, 0, 0, 5};
  std::memcpy(s.mac, mac, 6);
  f.tables.sources = &sources;
  flow::FlowKey k = key("10.244.0.99", "203.0.113.9", kPodPort);
  std::memcpy(k.eth_src, mac, 6);
  FlowTranslation t;
  translateFlow(f.tables, k, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kSpoofedSourceIp));
  k.ipv4_src = be("10.244.0.5");
  translateFlow(f.tables, k, t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kExternal);
}

TEST(ExternalTranslate, FromOutsideOnlyLocalPodsAreReached) {
  Fixture f;
  FlowTranslation t;
  translateFlow(f.tables, key("203.0.113.9", "10.244.0.5", kUplink), t);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, kPodPort);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3);
  EXPECT_EQ(t.mask.ipv4_src, be("255.0.0.0")) << "the source as the widest prefix holding nothing of the cluster";
  EXPECT_EQ(t.mask.in_port, 0xffff);

  struct Case {
    const char* src;
    const char* dst;
    DropReason reason;
    uint32_t src_mask_be;
  };
  for (const Case& c : {
           Case{"10.244.0.200", "10.244.0.5", DropReason::kExternalSpoofedSource, be("255.255.255.0")},
           Case{"10.244.0.1", "10.244.0.5", DropReason::kExternalSpoofedSource, be("255.255.255.255")},
           Case{"10.245.3.3", "10.244.0.5", DropReason::kExternalSpoofedSource, be("255.255.0.0")},
           Case{"203.0.113.9", "10.245.3.3", DropReason::kExternalNotLocal, be("255.0.0.0")},
           Case{"203.0.113.9", "10.244.0.1", DropReason::kExternalNotLocal, be("255.0.0.0")},
           Case{"203.0.113.9", "10.244.0.77", DropReason::kExternalNotLocal, be("255.0.0.0")},
           Case{"203.0.113.9", "198.51.100.1", DropReason::kExternalNotLocal, be("255.0.0.0")},
       }) {
    translateFlow(f.tables, key(c.src, c.dst, kUplink), t);
    EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop) << c.src << " -> " << c.dst;
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(c.reason)) << c.src << " -> " << c.dst;
    EXPECT_EQ(t.mask.ipv4_src, c.src_mask_be) << c.src << " -> " << c.dst;
  }
  // Transit refused as a prefix: random outside destinations share megaflows.
  translateFlow(f.tables, key("203.0.113.9", "198.51.100.1", kUplink), t);
  EXPECT_EQ(t.mask.ipv4_dst, be("255.0.0.0"));
}

// The frames the uplink's cold side sees: untagged or tagged, IPv4 or ARP.
std::vector<uint8_t> frame(uint16_t eth_type, int vlan = -1, uint16_t tpid = 0x8100) {
  std::vector<uint8_t> f(12, 0x02);
  if (vlan >= 0) {
    f.push_back(static_cast<uint8_t>(tpid >> 8));
    f.push_back(static_cast<uint8_t>(tpid));
    f.push_back(static_cast<uint8_t>(0x20 | (vlan >> 8)));  // priority 1: ignored
    f.push_back(static_cast<uint8_t>(vlan));
  }
  f.push_back(static_cast<uint8_t>(eth_type >> 8));
  f.push_back(static_cast<uint8_t>(eth_type));
  f.resize(f.size() + 46, 0);
  return f;
}

TEST(ExternalRxClassify, UntaggedOrExactlyItsVlan) {
  using vxlan::ExternalRx;
  const DropReason was = DropReason::kUplinkNotVxlan;
  auto classify = [&](const std::vector<uint8_t>& f, uint16_t vlan, uint32_t len = 0) {
    return vxlan::classifyExternalFrame(f.data(), len != 0 ? len : static_cast<uint32_t>(f.size()), vlan, was);
  };
  EXPECT_EQ(classify(frame(0x0800), 0).cls, ExternalRx::kIpv4);
  EXPECT_FALSE(classify(frame(0x0800), 0).tagged);
  EXPECT_EQ(classify(frame(0x0800, 100), 0).reason, DropReason::kExternalWrongVlan) << "tagged, untagged network";
  EXPECT_EQ(classify(frame(0x86dd), 0).reason, was) << "IPv6: not the external network's, as before";
  EXPECT_EQ(classify(frame(0x0800), 100).reason, DropReason::kExternalWrongVlan) << "untagged, tagged network";
  EXPECT_EQ(classify(frame(0x0806), 100).reason, DropReason::kExternalWrongVlan);
  const vxlan::ExternalRxInfo ok = classify(frame(0x0800, 100), 100);
  EXPECT_EQ(ok.cls, ExternalRx::kIpv4);
  EXPECT_TRUE(ok.tagged);
  EXPECT_EQ(classify(frame(0x0806, 100), 100).cls, ExternalRx::kArp);
  EXPECT_EQ(classify(frame(0x0800, 101), 100).reason, DropReason::kExternalWrongVlan);
  EXPECT_EQ(classify(frame(0x86dd, 100), 100).reason, DropReason::kExternalWrongVlan);
  EXPECT_EQ(classify(frame(0x0800, 100, 0x88a8), 100).reason, was) << "802.1ad outer tag: not ours";
  EXPECT_EQ(classify(frame(0x0800, 100), 100, 17).cls, ExternalRx::kDrop) << "tag cut short";
  EXPECT_EQ(classify(frame(0x0800), 0, 13).cls, ExternalRx::kDrop);
}

TEST(ExternalArp, RequestsForTheGatewayAreTaggedInItsVlan) {
  const MacAddress mac = *MacAddress::parse("02:00:00:00:77:01");
  const std::vector<uint8_t> plain =
      buildArpRequest(mac, *Ipv4Address::parse("192.168.77.1"), *Ipv4Address::parse("192.168.77.254"));
  const std::vector<uint8_t> tagged = tagFrame(plain, 100);
  ASSERT_EQ(tagged.size(), plain.size() + 4);
  EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + 12, tagged.begin()));
  EXPECT_EQ(std::vector<uint8_t>(tagged.begin() + 12, tagged.begin() + 16), (std::vector<uint8_t>{0x81, 0, 0, 100}));
  EXPECT_TRUE(std::equal(plain.begin() + 12, plain.end(), tagged.begin() + 16));
}

using test::FakeUplink;

TEST(ExternalControl, TheGatewayIsResolvedInItsVlanAndPublished) {
  OverlayConfig config;
  config.uplink = UplinkConfig{};
  config.uplink->devargs = "fake";
  config.uplink->vtep = *Ipv4Address::parse("192.168.77.1");
  config.uplink->vtep_prefix = 24;
  config.external = ExternalNetworkConfig{*Ipv4Address::parse("192.168.77.254"), 100};
  FakeUplink uplink;
  OverlayControl o(config, *Ipv4Cidr::parse("10.244.0.0/24"), uplink, kUplink, 1);
  ASSERT_EQ(o.externalGateway(), Ipv4Address::parse("192.168.77.254"));

  vxlan::OverlaySnapshot s;
  o.fillSnapshot(s, 0);
  EXPECT_TRUE(s.external.enabled);
  EXPECT_FALSE(s.external.resolved) << "not asked yet: packets drop as external_gateway_unresolved";
  EXPECT_EQ(s.external.vlan, 100);
  EXPECT_EQ(s.external.max_frame, 1514);
  EXPECT_EQ(o.view().external_gateway_state, "incomplete");

  const auto t0 = NeighborTable::Clock::time_point{} + 1h;
  EXPECT_FALSE(o.poll(t0));
  ASSERT_EQ(uplink.sent.size(), 1u);
  const std::vector<uint8_t>& req = uplink.sent[0];
  ASSERT_EQ(req.size(), 64u);
  EXPECT_EQ(std::vector<uint8_t>(req.begin() + 12, req.begin() + 16), (std::vector<uint8_t>{0x81, 0, 0, 100}));
  std::vector<uint8_t> untagged(req);
  untagged.erase(untagged.begin() + 12, untagged.begin() + 16);
  auto arp = parseArp(untagged.data(), untagged.size());
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->target.toString(), "192.168.77.254");
  EXPECT_EQ(arp->ip.toString(), "192.168.77.1") << "asked from our VTEP address";

  // Its reply (the PMD pops the tag before punting it).
  const MacAddress gw_mac = *MacAddress::parse("02:00:00:00:77:fe");
  std::vector<uint8_t> reply = buildArpRequest(gw_mac, *Ipv4Address::parse("192.168.77.254"),
                                               *Ipv4Address::parse("192.168.77.1"));
  const MacAddress ours = uplink.mac();
  std::memcpy(reply.data(), ours.bytes.data(), 6);
  reply[14 + 7] = 2;
  std::memcpy(reply.data() + 14 + 18, ours.bytes.data(), 6);
  uplink.punted.push_back(reply);
  EXPECT_TRUE(o.poll(t0 + 10ms)) << "learned: republish";
  o.fillSnapshot(s, 0);
  EXPECT_TRUE(s.external.resolved);
  EXPECT_EQ(std::memcmp(s.external.gateway_mac.addr_bytes, gw_mac.bytes.data(), 6), 0);
  EXPECT_EQ(std::memcmp(s.external.uplink_mac.addr_bytes, ours.bytes.data(), 6), 0);
  const OverlayView v = o.view();
  EXPECT_EQ(v.external_gateway_mac, gw_mac);
  EXPECT_EQ(v.external_vlan, 100);
}

TEST(ExternalControl, WithoutTheKeyNothingIsAskedOrPublished) {
  OverlayConfig config;
  config.uplink = UplinkConfig{};
  config.uplink->devargs = "fake";
  config.uplink->vtep = *Ipv4Address::parse("192.168.77.1");
  FakeUplink uplink;
  OverlayControl o(config, *Ipv4Cidr::parse("10.244.0.0/24"), uplink, kUplink, 1);
  EXPECT_FALSE(o.poll(NeighborTable::Clock::time_point{} + 1h));
  EXPECT_TRUE(uplink.sent.empty());
  vxlan::OverlaySnapshot s;
  o.fillSnapshot(s, 0);
  EXPECT_FALSE(s.external.enabled);
  EXPECT_FALSE(o.view().external_gateway.has_value());
}

absl::StatusOr<SluicedConfig> parseFile(const std::string& json) {
  const std::string path = ::testing::TempDir() + "/sluiced-external.json";
  std::ofstream(path) << json;
  const char* args[] = {"sluiced", "--config", path.c_str()};
  return parseSluicedConfig(3, args);
}

TEST(ExternalConfig, KeysAreCheckedAgainstTheUplinkAndThePodCidrs) {
  const std::string uplink = R"("pod-cidr": "10.244.0.0/24", "uplink": {"devargs": "x", "vtep": "192.168.77.1/24"},
      "remote-nodes": [{"name": "b", "vtep": "192.168.77.2", "pod-cidr": "10.245.0.0/16"}])";
  auto ok = parseFile("{" + uplink + R"(, "external-gateway": "192.168.77.254", "external-vlan": 100})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->external_gateway, Ipv4Address::parse("192.168.77.254"));
  EXPECT_EQ(ok->external_vlan, 100);
  auto off = parseFile("{" + uplink + "}");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->external_gateway.has_value());

  struct Case {
    std::string json;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {uplink + R"(, "external-gateway": "fd00::1")",
            "config: external-gateway: 'fd00::1' is not an IPv4 address (the external network is IPv4 only)"},
           {uplink + R"(, "external-gateway": "192.168.77.254", "external-vlan": 4095)",
            "config: external-vlan: '4095' is not an integer in 0..4094"},
           {uplink + R"(, "external-vlan": 7)", "config: external-vlan: needs external-gateway"},
           {uplink + R"(, "external-gateway": "10.244.0.200")",
            "config: external-gateway: 10.244.0.200 is not a host address on the uplink's subnet 192.168.77.0/24"},
           {R"("pod-cidr": "10.244.0.0/24", "uplink": {"devargs": "x", "vtep": "10.244.0.100"},
               "external-gateway": "10.244.0.200")",
            "config: external-gateway: 10.244.0.200 lies inside pod-cidr 10.244.0.0/24"},
           {R"("pod-cidr": "10.244.0.0/24", "uplink": {"devargs": "x", "vtep": "192.168.77.1"},
               "remote-nodes": [{"name": "b", "vtep": "192.168.77.2", "pod-cidr": "10.245.0.0/16"}],
               "external-gateway": "10.245.0.1")",
            "config: external-gateway: 10.245.0.1 lies inside 10.245.0.0/16 of remote node b"},
           {uplink + R"(, "external-gateway": "192.168.77.1")",
            "config: external-gateway: 192.168.77.1 is this node's VTEP address"},
           {R"("external-gateway": "192.168.77.254")",
            "config: external-gateway: needs an uplink (the external network is reached through it)"},
       }) {
    auto r = parseFile("{" + c.json + "}");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    // A value's own error names the file it came from first.
    const std::string m(r.status().message());
    EXPECT_EQ(m.substr(m.size() - std::min(m.size(), c.message.size())), c.message) << m;
  }
}

}  // namespace external_test
}  // namespace sluice
