// sluice-cni's SR-IOV parts in isolation: the netconf fields, the rtnetlink
// requests byte for byte (numbers written out from the uapi), and which IPAM
// addresses and routes the VF netdev gets.
#include <gtest/gtest.h>

#include "common/device_names.h"

#include "cni-plugin/cni_result.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/rtnetlink.h"
#include "cni-plugin/sriov_netdev.h"

namespace sluice::cni {
namespace {

using Bytes = std::vector<uint8_t>;

std::string sriovConf(const std::string& extra) {
  return R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","interfaceType":"sriov")" + extra + "}";
}

TEST(SriovNetConf, ModeTrustSpoofchk) {
  auto c = parseNetConf(sriovConf(R"(,"sriovMode":"dpdk","trust":"on","spoofchk":false,"deviceID":"0000:3b:02.1")"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sriov_mode, SriovMode::kDpdk);
  EXPECT_TRUE(c->trust);
  EXPECT_FALSE(c->spoof_check);
  EXPECT_EQ(c->device_id, "0000:3b:02.1");
  auto d = parseNetConf(sriovConf(""));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sriov_mode, SriovMode::kKernel);
  EXPECT_FALSE(d->trust);
  EXPECT_TRUE(d->spoof_check);
  EXPECT_TRUE(d->unknown_fields.empty());
}

TEST(SriovNetConf, BadFieldsAreCode7NamingTheField) {
  for (const auto& [extra, field] : std::vector<std::pair<std::string, std::string>>{
           {R"(,"sriovMode":"vfio")", "sriovMode"},
           {R"(,"trust":"yes")", "trust"},
           {R"(,"spoofchk":1)", "spoofchk"},
           {R"(,"deviceID":"eth0")", "deviceID"},
           {R"(,"runtimeConfig":{"deviceID":"0000:3b:02.8"})", "deviceID"}}) {
    auto c = parseNetConf(sriovConf(extra));
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_NE(c.status().message().find(field), std::string_view::npos) << c.status();
  }
  // SR-IOV-only keys with vhost-user are errors; a deviceID is not checked
  // there (Multus passes one for any device-plugin resource).
  auto v = parseNetConf(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","trust":"on"})");
  EXPECT_FALSE(v.ok());
  EXPECT_TRUE(parseNetConf(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","deviceID":"x"})").ok());
}

TEST(SriovNetConf, SriovCniVfSettings) {
  auto c = parseNetConf(sriovConf(R"(,"vlan":7,"vlanQoS":3,"vlanProto":"802.1AD","link_state":"enable",)"
                                  R"("min_tx_rate":100,"max_tx_rate":1000)"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->vlan_qos, 3);
  EXPECT_EQ(c->vlan_proto, VlanProto::k8021AD);
  EXPECT_EQ(c->link_state, VfLinkState::kEnable);
  EXPECT_EQ(c->min_tx_rate, 100u);
  EXPECT_EQ(c->max_tx_rate, 1000u);
  EXPECT_TRUE(c->unknown_fields.empty());
  auto d = parseNetConf(sriovConf(R"(,"max_tx_rate":50)"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->vlan_proto, VlanProto::k8021Q);
  EXPECT_FALSE(d->link_state.has_value());
  EXPECT_EQ(d->min_tx_rate, 0u);
}

TEST(SriovNetConf, BadVfSettingsAreCode7NamingTheField) {
  for (const auto& [extra, field] : std::vector<std::pair<std::string, std::string>>{
           {R"(,"vlan":7,"vlanQoS":8)", "vlanQoS"},
           {R"(,"vlanQoS":1)", "vlanQoS"},
           {R"(,"vlanProto":"802.1ad")", "vlanProto"},
           {R"(,"vlan":7,"vlanProto":"qinq")", "vlanProto"},
           {R"(,"link_state":"up")", "link_state"},
           {R"(,"min_tx_rate":-1)", "min_tx_rate"},
           {R"(,"max_tx_rate":4294967296)", "max_tx_rate"},
           {R"(,"min_tx_rate":200,"max_tx_rate":100)", "min_tx_rate"},
           {R"(,"runtimeConfig":{"mac":"ff:ff:ff:ff:ff:ff"})", "runtimeConfig.mac"},
           {R"(,"runtimeConfig":{"ips":["10.0.0.1/24",1]})", "runtimeConfig.ips"}}) {
    auto c = parseNetConf(sriovConf(extra));
    ASSERT_FALSE(c.ok()) << extra;
    EXPECT_NE(c.status().message().find(field), std::string_view::npos) << c.status();
  }
  auto v = parseNetConf(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","link_state":"auto"})");
  EXPECT_FALSE(v.ok());
}

TEST(SriovNetConf, PciAddressForm) {
  EXPECT_TRUE(sluice::isPciAddress("0000:3b:02.1"));
  EXPECT_TRUE(sluice::isPciAddress("0000:3b:1f.7"));
  EXPECT_FALSE(sluice::isPciAddress("0000:3b:20.0"));
  EXPECT_FALSE(sluice::isPciAddress("0000:3B:02.1"));
  EXPECT_FALSE(sluice::isPciAddress("3b:02.1"));
}

TEST(RtNetlinkRequest, SetLinkNameMacMtuUp) {
  LinkChange c;
  c.name = "net1";
  c.mac = *MacAddress::parse("02:11:22:33:44:55");
  c.mtu = 1400;
  c.up = true;
  Bytes want = {64, 0, 0, 0, 19, 0, 5, 0, 3, 0, 0, 0, 0, 0, 0, 0,  // RTM_SETLINK, REQUEST|ACK, seq 3
                0, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,    // ifindex 7, flags/change IFF_UP
                9, 0, 3, 0, 'n', 'e', 't', '1', 0, 0, 0, 0,        // IFLA_IFNAME (3), NUL, padded
                10, 0, 1, 0, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0,  // IFLA_ADDRESS (1)
                8, 0, 4, 0, 0x78, 0x05, 0, 0};                     // IFLA_MTU (4) 1400
  EXPECT_EQ(buildSetLinkRequest(3, 7, c), want);
}

TEST(RtNetlinkRequest, MoveToNetnsAndDown) {
  LinkChange c;
  c.netns_fd = 9;
  c.up = false;
  Bytes want = {40, 0, 0, 0, 19, 0, 5, 0, 3, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,  // flags 0, change IFF_UP: down
                8, 0, 28, 0, 9, 0, 0, 0};                        // IFLA_NET_NS_FD (28)
  EXPECT_EQ(buildSetLinkRequest(3, 7, c), want);
}

TEST(RtNetlinkRequest, AddressAndRoute) {
  Bytes addr = {40, 0, 0, 0, 20, 0, 0x05, 0x06, 4, 0, 0, 0, 0, 0, 0, 0,  // RTM_NEWADDR, +CREATE|EXCL
                2, 24, 0, 0, 7, 0, 0, 0,                                 // AF_INET /24 ifindex 7
                8, 0, 2, 0, 10, 252, 0, 20,                              // IFA_LOCAL
                8, 0, 1, 0, 10, 252, 0, 20};                             // IFA_ADDRESS
  EXPECT_EQ(buildAddAddressRequest(4, 7, *Ipv4Address::parse("10.252.0.20"), 24), addr);
  Bytes route = {52, 0, 0, 0, 24, 0, 0x05, 0x06, 4, 0, 0, 0, 0, 0, 0, 0,  // RTM_NEWROUTE
                 2, 16, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0,  // /16, main table, boot proto, universe, unicast
                 8, 0, 1, 0, 10, 253, 0, 0,              // RTA_DST
                 8, 0, 5, 0, 10, 252, 0, 1,              // RTA_GATEWAY
                 8, 0, 4, 0, 7, 0, 0, 0};                // RTA_OIF
  EXPECT_EQ(buildAddRouteRequest(4, 7, *Ipv4Address::parse("10.253.0.0"), 16, Ipv4Address::parse("10.252.0.1")),
            route);
  // No gateway: link scope, no RTA_GATEWAY; a default route has no RTA_DST.
  Bytes onlink = buildAddRouteRequest(4, 7, Ipv4Address{0}, 0, std::nullopt);
  ASSERT_EQ(onlink.size(), 36u);
  EXPECT_EQ(onlink[17], 0);    // dst_len
  EXPECT_EQ(onlink[22], 253);  // RT_SCOPE_LINK
  EXPECT_EQ(onlink[30], 4);    // the only attribute: RTA_OIF
}

TEST(RtNetlinkRequest, Ipv6AddressWithoutDadAndRoutes) {
  const Ipv6Address addr = *Ipv6Address::parse("fd00:10:244:1::7");
  const Bytes addr_bytes(addr.bytes.begin(), addr.bytes.end());
  Bytes want = {64, 0, 0, 0, 20, 0, 0x05, 0x06, 4, 0, 0, 0, 0, 0, 0, 0,  // RTM_NEWADDR, +CREATE|EXCL
                10, 64, 0x02, 0, 7, 0, 0, 0,                             // AF_INET6 /64 IFA_F_NODAD ifindex 7
                20, 0, 2, 0};                                            // IFA_LOCAL
  want.insert(want.end(), addr_bytes.begin(), addr_bytes.end());
  want.insert(want.end(), {20, 0, 1, 0});  // IFA_ADDRESS
  want.insert(want.end(), addr_bytes.begin(), addr_bytes.end());
  EXPECT_EQ(buildAddAddressRequest(4, 7, addr, 64), want);

  // The default route via the IPv6 gateway: universe scope, no RTA_DST.
  const Ipv6Address gw = *Ipv6Address::parse("fd00:10:244:1::1");
  Bytes route = {56, 0, 0, 0, 24, 0, 0x05, 0x06, 4, 0, 0, 0, 0, 0, 0, 0,  // RTM_NEWROUTE
                 10, 0, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0,                   // AF_INET6 /0, main, boot, universe
                 20, 0, 5, 0};                                            // RTA_GATEWAY
  route.insert(route.end(), gw.bytes.begin(), gw.bytes.end());
  route.insert(route.end(), {8, 0, 4, 0, 7, 0, 0, 0});  // RTA_OIF
  EXPECT_EQ(buildAddRouteRequest(4, 7, Ipv6Address{}, 0, std::optional<Ipv6Address>(gw)), route);

  // On the link: RTA_DST, no gateway, still universe scope.
  Bytes onlink = buildAddRouteRequest(4, 7, *Ipv6Address::parse("fd00:99::"), 32, std::optional<Ipv6Address>());
  ASSERT_EQ(onlink.size(), 56u);
  EXPECT_EQ(onlink[17], 32);  // dst_len
  EXPECT_EQ(onlink[22], 0);   // RT_SCOPE_UNIVERSE
  EXPECT_EQ(onlink[30], 1);   // RTA_DST
  EXPECT_EQ(onlink[50], 4);   // then RTA_OIF
}

TEST(PodNetdevConfig, AddressesAndRoutesWithGatewayFallbackPerFamily) {
  auto ipam = parseResult(nlohmann::json::parse(R"({
      "ips": [{"address": "10.252.0.20/24", "gateway": "10.252.0.1"}, {"address": "fd00::5/64"}],
      "routes": [{"dst": "10.253.0.0/16"}, {"dst": "0.0.0.0/0", "gw": "10.252.0.9"}, {"dst": "fd00::/8"}]})"),
                          "test");
  ASSERT_TRUE(ipam.ok()) << ipam.status();
  std::vector<std::string> skipped;
  PodNetdevConfig c = podNetdevConfig(*ipam, "net1", *MacAddress::parse("02:00:00:00:00:01"), 1400, &skipped);
  EXPECT_EQ(c.ifname, "net1");
  EXPECT_EQ(c.mtu, 1400u);
  ASSERT_EQ(c.addresses.size(), 1u);
  EXPECT_EQ(c.addresses[0].address.toString(), "10.252.0.20");
  EXPECT_EQ(c.addresses[0].prefix_len, 24);
  ASSERT_EQ(c.routes.size(), 2u);
  EXPECT_EQ(c.routes[0].dst_len, 16);
  EXPECT_EQ(c.routes[0].gateway->toString(), "10.252.0.1");  // the IPAM gateway
  EXPECT_EQ(c.routes[1].dst_len, 0);
  EXPECT_EQ(c.routes[1].gateway->toString(), "10.252.0.9");  // its own
  // The IPv6 address too; its route goes on the link (no IPv6 gateway).
  ASSERT_EQ(c.addresses6.size(), 1u);
  EXPECT_EQ(c.addresses6[0].address.toString(), "fd00::5");
  EXPECT_EQ(c.addresses6[0].prefix_len, 64);
  ASSERT_EQ(c.routes6.size(), 1u);
  EXPECT_EQ(c.routes6[0].dst.toString(), "fd00::");
  EXPECT_EQ(c.routes6[0].dst_len, 8);
  EXPECT_FALSE(c.routes6[0].gateway.has_value());
  EXPECT_TRUE(skipped.empty());
}

TEST(PodNetdevConfig, DualStackDefaultRoutesGoViaTheirOwnFamilysGateway) {
  auto ipam = parseResult(nlohmann::json::parse(R"({
      "ips": [{"address": "fd00:10:244:1::7/64", "gateway": "fd00:10:244:1::1"},
              {"address": "10.244.1.7/24", "gateway": "10.244.1.1"}],
      "routes": [{"dst": "::/0"}, {"dst": "0.0.0.0/0"}, {"dst": "fd00:99::/32", "gw": "fd00:10:244:1::9"}]})"),
                          "test");
  ASSERT_TRUE(ipam.ok()) << ipam.status();
  std::vector<std::string> skipped;
  PodNetdevConfig c = podNetdevConfig(*ipam, "net1", *MacAddress::parse("02:00:00:00:00:01"), std::nullopt, &skipped);
  ASSERT_EQ(c.routes.size(), 1u);
  EXPECT_EQ(c.routes[0].dst_len, 0);
  EXPECT_EQ(c.routes[0].gateway->toString(), "10.244.1.1");
  ASSERT_EQ(c.routes6.size(), 2u);
  EXPECT_EQ(c.routes6[0].dst_len, 0);
  EXPECT_EQ(c.routes6[0].gateway->toString(), "fd00:10:244:1::1");
  EXPECT_EQ(c.routes6[1].dst.toString(), "fd00:99::");
  EXPECT_EQ(c.routes6[1].gateway->toString(), "fd00:10:244:1::9");
  EXPECT_TRUE(skipped.empty());
}

TEST(PodNetdevConfig, ARouteOfAFamilyWithoutAnAddressIsSkipped) {
  auto ipam = parseResult(nlohmann::json::parse(R"({
      "ips": [{"address": "fd00::5/64", "gateway": "fd00::1"}],
      "routes": [{"dst": "0.0.0.0/0"}, {"dst": "::/0"}]})"),
                          "test");
  ASSERT_TRUE(ipam.ok()) << ipam.status();
  std::vector<std::string> skipped;
  PodNetdevConfig c = podNetdevConfig(*ipam, "net1", *MacAddress::parse("02:00:00:00:00:01"), std::nullopt, &skipped);
  EXPECT_TRUE(c.addresses.empty());
  EXPECT_TRUE(c.routes.empty());
  ASSERT_EQ(c.routes6.size(), 1u);
  EXPECT_EQ(skipped, (std::vector<std::string>{"0.0.0.0/0"}));
}

TEST(SriovNetdev, MissingNetnsOrNetdevIsAnErrorForAddAndSuccessForDel) {
  std::ostringstream err;
  Logger log(err);
  PodNetdevConfig cfg;
  cfg.ifname = "net1";
  EXPECT_FALSE(moveIntoPod("nosuchvf0", "/var/run/netns/sluice-no-such-ns", cfg).ok());
  EXPECT_EQ(lookUpHostNetdev("nosuchvf0").status().code(), absl::StatusCode::kNotFound);
  HostNetdev original{"nosuchvf0", MacAddress{}, 0};
  EXPECT_TRUE(returnToHost("/var/run/netns/sluice-no-such-ns", "net1", original, log).ok());
  EXPECT_TRUE(returnToHost("", "net1", original, log).ok());
  EXPECT_NE(err.str().find("neither in the pod's netns nor the host's"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace sluice::cni
