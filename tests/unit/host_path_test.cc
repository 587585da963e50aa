// The exception path to the node's kernel (host_path.h): the decision for
// the host addresses (out the host port, L3 rewrite, the port's MTU, the
// mask exactly the address), the host port's source validation (its
// kernel interface's MAC and the host addresses, the IPv6 link-local its
// MAC gives; anything else dropped by the existing reasons), what the
// module publishes, the kernel route requests to the byte, and the config
// keys' validation.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <rte_ether.h>
#include <sys/socket.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <utility>

#include "dataplane/config/config.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/modules/hostpath/host_path_module.h"
#include "dataplane/modules/hostpath/kernel_routes.h"
#include "tests/support/frames.h"
#include "tests/support/translate_checks.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace host_path_test {

using flow::FlowKey;
using flow::MegaflowActions;
using test::expectDrop;

const Ipv4Address kGateway = *Ipv4Address::parse("10.61.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);
const Ipv4Address kPodIp = *Ipv4Address::parse("10.61.0.10");
const MacAddress kPodMac = MacAddress::fromIpv4(kPodIp);
const Ipv6Cidr kCidr6 = *Ipv6Cidr::parse("fd00:61::/64");
const Ipv6Address kPodIp6 = *Ipv6Address::parse("fd00:61::a");
const Ipv4Address kHost4 = *Ipv4Address::parse("192.0.2.10");
const Ipv6Address kHost6 = *Ipv6Address::parse("2001:db8:5::10");
const MacAddress kKernelMac = *MacAddress::parse("3a:10:22:33:44:55");
constexpr uint16_t kPodPort = 1;
constexpr uint16_t kHostPort = hostpath::kHostPortNo;

class HostPathTranslateTest : public ::testing::Test {
 protected:
  HostPathTranslateTest() {
    fib_ = std::make_shared<ForwardingTable>(std::vector<ForwardingTable::Entry>{{kPodIp, kPodPort, kPodMac}});
    fib6_ = std::make_shared<Ipv6ForwardingTable>(
        std::vector<Ipv6ForwardingTable::Entry>{{kPodIp6, kPodPort, kPodMac}});
    net_.enabled = true;
    net_.prefix_len = 64;
    std::memcpy(net_.net, kCidr6.network.bytes.data(), 16);
    std::memcpy(net_.gateway, kCidr6.host(1).bytes.data(), 16);
    std::memcpy(net_.gateway_link_local, linkLocalFromMac(kGatewayMac).bytes.data(), 16);
    sources_.ports[kPodPort].checked = true;
    std::memcpy(sources_.ports[kPodPort].mac, kPodMac.bytes.data(), 6);
    sources_.ports[kPodPort].has_ipv4 = sources_.ports[kPodPort].has_ipv6 = true;
    sources_.ports[kPodPort].ipv4_be = kPodIp.networkOrder();
    std::memcpy(sources_.ports[kPodPort].ipv6, kPodIp6.bytes.data(), 16);
    std::memcpy(sources_.ports[kPodPort].link_local, linkLocalFromMac(kPodMac).bytes.data(), 16);
    addresses_.v4 = kHost4;
    addresses_.v6 = kHost6;
    sources_.ports[kHostPort] = hostpath::hostSourcesOf(addresses_, kKernelMac);
    host_ = hostpath::hostPathOf(addresses_, kHostPort, allPorts());
    mtus_[kPodPort] = 1400;
    mtus_[kHostPort] = 1500;
  }

  // host-path-allowed-ports "all": no filter (the tests of the decision's
  // shape); the filter's own tests set theirs.
  static HostPathPorts allPorts() {
    HostPathPorts p;
    p.all = true;
    return p;
  }
  // A pod's packet to `dst` of protocol `proto` to port `port`.
  static FlowKey toHost(const Ipv4Address& dst, uint8_t proto, uint16_t port) {
    FlowKey k = key4(kPodPort, kPodMac, kPodIp, dst);
    k.ip_proto = proto;
    k.tp_src = proto == kIcmp ? 0 : htons(40000);
    k.tp_dst = proto == kIcmp ? 0 : htons(port);
    if (proto == kIcmp) k.icmp_type = 8;
    return k;
  }
  static constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kSctp = 132, kIcmpv6 = 58;

  RouteTables tables() const {
    return RouteTables{.fib = fib_.get(), .gateway_ip_be = kGateway.networkOrder(), .fib6 = fib6_.get(),
                       .v6 = &net_, .port_mtus = mtus_.data(), .sources = &sources_, .host = &host_};
  }
  static FlowKey key4(uint16_t in_port, const MacAddress& src_mac, Ipv4Address src, Ipv4Address dst, uint8_t ttl = 64) {
    return test::udpKey4(in_port, src_mac, kGatewayMac, src, dst, ttl);
  }
  static FlowKey key6(uint16_t in_port, const MacAddress& src_mac, const Ipv6Address& src, const Ipv6Address& dst) {
    return test::udpKey6(in_port, src_mac, kGatewayMac, src, dst);
  }
  FlowTranslation decide(const FlowKey& k) const {
    FlowTranslation t;
    translateFlow(tables(), k, t);
    return t;
  }

  std::shared_ptr<ForwardingTable> fib_;
  std::shared_ptr<Ipv6ForwardingTable> fib6_;
  Ipv6PodNet net_;
  SourceTable sources_;
  HostAddresses addresses_;
  HostPath host_;
  std::vector<uint16_t> mtus_ = std::vector<uint16_t>(kDefaultPortTable);
};

TEST_F(HostPathTranslateTest, AHostAddressGoesOutTheHostPortMatchedExactly) {
  const FlowTranslation t = decide(key4(kPodPort, kPodMac, kPodIp, kHost4));
  ASSERT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t.actions.drop_reason];
  EXPECT_EQ(t.actions.out_port, kHostPort);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3);
  EXPECT_EQ(t.actions.max_frame, 1514) << "the kernel interface's MTU";
  EXPECT_EQ(t.mask.ipv4_dst, 0xffffffffU);
  EXPECT_EQ(t.mask.ttl_class, 0xff);
  EXPECT_EQ(t.mask.ip_proto, 0) << "any protocol: one megaflow per pod and host address";
  // Expired on the way: dropped (and answered) as for a pod.
  expectDrop(decide(key4(kPodPort, kPodMac, kPodIp, kHost4, 1)), DropReason::kTtlExceeded);

  const FlowTranslation t6 = decide(key6(kPodPort, kPodMac, kPodIp6, kHost6));
  ASSERT_EQ(t6.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t6.actions.drop_reason];
  EXPECT_EQ(t6.actions.out_port, kHostPort);
  EXPECT_EQ(t6.actions.rewrite_flags, kRewriteL3v6);
  EXPECT_EQ(t6.actions.max_frame, 1514);
  for (uint8_t b : t6.mask.ipv6_dst) EXPECT_EQ(b, 0xff);
}

// host-path-allowed-ports: ICMP, the listed TCP and UDP ports, and ports
// from 32768 up (answers to the node's own connections) reach the host; the
// rest is dropped by name. Only decisions for a host address read ip_proto
// and tp_dst, the port as the widest nibble prefix that decides alike.
TEST_F(HostPathTranslateTest, OnlyAllowedHostPortsAreReachable) {
  HostPathPorts ports;
  ports.tcp = {22};
  ports.udp = {53};
  host_ = hostpath::hostPathOf(addresses_, kHostPort, ports);
  struct Case {
    uint8_t proto;
    uint16_t port;
    bool reaches;
    uint16_t port_mask;  // host order
    const char* what;
  };
  for (const Case& c : {Case{kIcmp, 0, true, 0, "ping"},
                        Case{kTcp, 22, true, 0xffff, "a listed TCP port"},
                        Case{kUdp, 53, true, 0xffff, "a listed UDP port"},
                        Case{kTcp, 53, false, 0xfff0, "listed for UDP only"},
                        Case{kTcp, 10250, false, 0xf000, "kubelet"},
                        Case{kTcp, 10255, false, 0xf000, "kubelet's read-only port"},
                        Case{kTcp, 30080, false, 0xf000, "a NodePort"},
                        Case{kTcp, 9476, false, 0xf000, "sluiced's metrics"},
                        Case{kUdp, 54, false, 0xffff, "beside a listed port"},
                        Case{kTcp, 40000, true, 0xf000, "an answer to the node's own connection"},
                        Case{kUdp, 60999, true, 0xf000, "the top of Linux's ephemeral range"},
                        Case{kSctp, 22, false, 0, "neither ICMP, TCP nor UDP"}}) {
    const FlowTranslation t = decide(toHost(kHost4, c.proto, c.port));
    if (c.reaches) {
      EXPECT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << c.what;
      EXPECT_EQ(t.actions.out_port, kHostPort) << c.what;
    } else {
      expectDrop(t, DropReason::kHostPortNotAllowed);
    }
    EXPECT_EQ(t.mask.ip_proto, 0xff) << c.what;
    EXPECT_EQ(ntohs(t.mask.tp_dst), c.port_mask) << c.what;
    EXPECT_EQ(t.mask.tp_src, 0) << c.what;
  }
  // A later fragment carries no ports: it passes (the kernel drops it
  // without its first fragment, which was checked).
  FlowKey later = toHost(kHost4, kTcp, 10250);
  later.ip_frag = static_cast<uint8_t>(flow::IpFrag::kLater);
  later.tp_dst = 0;
  EXPECT_EQ(decide(later).actions.kind, MegaflowActions::Kind::kOutput);
  // IPv6 alike, with ICMPv6.
  FlowKey k6 = key6(kPodPort, kPodMac, kPodIp6, kHost6);
  k6.ip_proto = kIcmpv6;
  k6.tp_dst = 0;
  EXPECT_EQ(decide(k6).actions.kind, MegaflowActions::Kind::kOutput);
  k6.ip_proto = kTcp;
  k6.tp_dst = htons(10250);
  expectDrop(decide(k6), DropReason::kHostPortNotAllowed);
  k6.tp_dst = htons(22);
  EXPECT_EQ(decide(k6).actions.kind, MegaflowActions::Kind::kOutput);
  // Pod to pod: no port or protocol read.
  FlowKey to_pod = toHost(kPodIp, kTcp, 10250);
  const FlowTranslation p = decide(to_pod);
  EXPECT_EQ(p.mask.ip_proto, 0);
  EXPECT_EQ(p.mask.tp_dst, 0);
}

// A pod scanning every port makes a few dozen megaflows per listed port (at
// most 15 at each of the four nibble levels around it) and at most four
// port masks, not one megaflow per port; and every port decides as it must.
TEST_F(HostPathTranslateTest, APortScanOfTheHostMakesFewMegaflows) {
  HostPathPorts ports;
  ports.tcp = {22, 10250};
  host_ = hostpath::hostPathOf(addresses_, kHostPort, ports);
  std::set<std::pair<uint16_t, uint16_t>> megaflows;  // (masked port, mask)
  std::set<uint16_t> masks;
  for (uint32_t port = 1; port < 65536; ++port) {
    const FlowTranslation t = decide(toHost(kHost4, kTcp, static_cast<uint16_t>(port)));
    const bool reaches = t.actions.kind == MegaflowActions::Kind::kOutput;
    ASSERT_EQ(reaches, port == 22 || port == 10250 || port >= 32768) << port;
    megaflows.insert({static_cast<uint16_t>(htons(static_cast<uint16_t>(port)) & t.mask.tp_dst), t.mask.tp_dst});
    masks.insert(t.mask.tp_dst);
  }
  EXPECT_LE(megaflows.size(), 16u + 48u * ports.tcp.size());
  EXPECT_LE(masks.size(), 4u);
}

// The default (nothing listed): ICMP and answers to the node's own
// connections only.
TEST_F(HostPathTranslateTest, ByDefaultPodsReachTheHostWithIcmpAndAnswersOnly) {
  host_ = hostpath::hostPathOf(addresses_, kHostPort);
  EXPECT_EQ(decide(toHost(kHost4, kIcmp, 0)).actions.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(decide(toHost(kHost4, kTcp, 51000)).actions.kind, MegaflowActions::Kind::kOutput);
  expectDrop(decide(toHost(kHost4, kTcp, 10250)), DropReason::kHostPortNotAllowed);
  expectDrop(decide(toHost(kHost4, kUdp, 53)), DropReason::kHostPortNotAllowed);
  expectDrop(decide(toHost(kHost4, kTcp, 1)), DropReason::kHostPortNotAllowed);
}

TEST_F(HostPathTranslateTest, NoWidenedMegaflowHoldsAHostAddress) {
  // Unrouted neighbours of the host addresses: their prefixes stop short of them.
  for (const char* dst : {"192.0.2.11", "192.0.3.1", "192.1.2.10"}) {
    const FlowTranslation t = decide(key4(kPodPort, kPodMac, kPodIp, *Ipv4Address::parse(dst)));
    expectDrop(t, DropReason::kNoRoute);
    EXPECT_NE(kHost4.networkOrder() & t.mask.ipv4_dst, Ipv4Address::parse(dst)->networkOrder() & t.mask.ipv4_dst)
        << dst;
  }
  const Ipv6Address near6 = *Ipv6Address::parse("2001:db8:5::11");
  const FlowTranslation t6 = decide(key6(kPodPort, kPodMac, kPodIp6, near6));
  expectDrop(t6, DropReason::kNoRoute);
  bool differs = false;
  for (int i = 0; i < 16; ++i) differs |= ((kHost6.bytes[i] ^ near6.bytes[i]) & t6.mask.ipv6_dst[i]) != 0;
  EXPECT_TRUE(differs) << "the megaflow for " << near6.toString() << " would match the host address";
  // Without a host path the same destination is matched wider.
  HostPath off;
  RouteTables plain = tables();
  plain.host = &off;
  FlowTranslation wide;
  translateFlow(plain, key4(kPodPort, kPodMac, kPodIp, *Ipv4Address::parse("192.0.2.11")), wide);
  EXPECT_EQ(wide.mask.ipv4_dst, Ipv4Address{0xff000000}.networkOrder());
}

TEST_F(HostPathTranslateTest, TheNodeReachesPodsFromItsHostAddressesOnly) {
  // From the host address, with the kernel interface's MAC: routed to the pod.
  FlowTranslation t = decide(key4(kHostPort, kKernelMac, kHost4, kPodIp));
  ASSERT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t.actions.drop_reason];
  EXPECT_EQ(t.actions.out_port, kPodPort);
  EXPECT_EQ(t.actions.max_frame, 1414) << "the pod port's MTU: frag-needed goes back to the node";
  EXPECT_EQ(t.mask.in_port, 0xffff);
  EXPECT_EQ(t.mask.ipv4_src, 0xffffffffU);
  // Another address of the node, or another MAC: spoofed, whatever the destination.
  expectDrop(decide(key4(kHostPort, kKernelMac, *Ipv4Address::parse("198.51.100.7"), kPodIp)),
             DropReason::kSpoofedSourceIp);
  expectDrop(decide(key4(kHostPort, kKernelMac, kPodIp, kPodIp)), DropReason::kSpoofedSourceIp);
  expectDrop(decide(key4(kHostPort, kPodMac, kHost4, kPodIp)), DropReason::kSpoofedSourceMac);
  // A pod may not send from the node's address.
  expectDrop(decide(key4(kPodPort, kPodMac, kHost4, kPodIp)), DropReason::kSpoofedSourceIp);

  // IPv6: the host address and the kernel interface's link-local address.
  t = decide(key6(kHostPort, kKernelMac, kHost6, kPodIp6));
  ASSERT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t.actions.drop_reason];
  EXPECT_EQ(t.actions.out_port, kPodPort);
  t = decide(key6(kHostPort, kKernelMac, linkLocalFromMac(kKernelMac), kPodIp6));
  ASSERT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t.actions.drop_reason];
  expectDrop(decide(key6(kHostPort, kKernelMac, *Ipv6Address::parse("2001:db8:5::99"), kPodIp6)),
             DropReason::kSpoofedSourceIp);
  expectDrop(decide(key6(kHostPort, kKernelMac, linkLocalFromMac(kPodMac), kPodIp6)), DropReason::kSpoofedSourceIp);
}

TEST_F(HostPathTranslateTest, KernelArpAndNeighborDiscoveryAreCheckedAsAPodsAre) {
  const PortSources& s = sources_.ports[kHostPort];
  DropReason why{};
  EXPECT_TRUE(arpSourcesOk(s, kKernelMac.bytes.data(), kKernelMac.bytes.data(), kHost4.networkOrder(), &why));
  EXPECT_FALSE(arpSourcesOk(s, kKernelMac.bytes.data(), kKernelMac.bytes.data(),
                            Ipv4Address::parse("198.51.100.7")->networkOrder(), &why));
  EXPECT_EQ(why, DropReason::kSpoofedArp);
  EXPECT_TRUE(ndSourcesOk(s, kKernelMac.bytes.data(), linkLocalFromMac(kKernelMac).bytes.data(), &why));
  EXPECT_TRUE(ndSourcesOk(s, kKernelMac.bytes.data(), kHost6.bytes.data(), &why));
  EXPECT_FALSE(ndSourcesOk(s, kPodMac.bytes.data(), kHost6.bytes.data(), &why));
  EXPECT_EQ(why, DropReason::kSpoofedSourceMac);
}

TEST(HostPathModuleTest, PublishesOnlyTheFamiliesGiven) {
  HostAddresses v4_only;
  v4_only.v4 = kHost4;
  const HostPath h = hostpath::hostPathOf(v4_only, kHostPort);
  EXPECT_TRUE(h.enabled);
  EXPECT_TRUE(h.isHostIpv4(kHost4.networkOrder()));
  EXPECT_FALSE(h.isHostIpv6(kHost6.bytes.data()));
  const PortSources s = hostpath::hostSourcesOf(v4_only, kKernelMac);
  EXPECT_TRUE(s.checked);
  EXPECT_FALSE(s.has_ipv6);
  EXPECT_TRUE(s.ipv6Ok(linkLocalFromMac(kKernelMac).bytes.data())) << "neighbor discovery from its link-local";
  EXPECT_FALSE(HostPath{}.isHostIpv4(0)) << "disabled: nothing is a host address";
}

TEST(KernelRoutesTest, RouteRequestsToTheByte) {
  hostpath::KernelRoute r;
  r.v4 = *Ipv4Cidr::parse("10.61.0.0/24");
  r.source4 = kHost4;
  const std::vector<uint8_t> add = hostpath::buildRouteRequest(true, 7, 42, r);
  const std::vector<uint8_t> want = {
      // nlmsghdr: length 52, RTM_NEWROUTE, REQUEST|ACK|EXCL|CREATE, seq 7, pid 0
      52, 0, 0, 0, RTM_NEWROUTE, 0, 0x05, 0x06, 7, 0, 0, 0, 0, 0, 0, 0,
      // rtmsg: AF_INET, dst /24, src /0, tos 0, main table, boot, link scope, unicast, flags 0
      AF_INET, 24, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_LINK, RTN_UNICAST, 0, 0, 0, 0,
      8, 0, RTA_DST, 0, 10, 61, 0, 0,       // destination
      8, 0, RTA_PREFSRC, 0, 192, 0, 2, 10,  // preferred source
      8, 0, RTA_OIF, 0, 42, 0, 0, 0};       // out interface
  EXPECT_EQ(add, want);
  const std::vector<uint8_t> del = hostpath::buildRouteRequest(false, 8, 42, r);
  ASSERT_EQ(del.size(), want.size());
  EXPECT_EQ(del[4], RTM_DELROUTE);
  EXPECT_EQ(del[6], 0x05) << "request | ack, no create";
  EXPECT_EQ(del[7], 0x00);

  hostpath::KernelRoute r6;
  r6.v6 = kCidr6;
  r6.source6 = kHost6;
  const std::vector<uint8_t> add6 = hostpath::buildRouteRequest(true, 9, 42, r6);
  ASSERT_EQ(add6.size(), 16u + 12 + 20 + 20 + 8);
  EXPECT_EQ(add6[16], AF_INET6);
  EXPECT_EQ(add6[17], 64);
  EXPECT_EQ(add6[22], RT_SCOPE_UNIVERSE);
  EXPECT_EQ(add6[30], RTA_DST);
  EXPECT_EQ(std::memcmp(&add6[32], kCidr6.network.bytes.data(), 16), 0);
  EXPECT_EQ(add6[50], RTA_PREFSRC);
  EXPECT_EQ(std::memcmp(&add6[52], kHost6.bytes.data(), 16), 0);
  EXPECT_EQ(add6[70], RTA_OIF);
}

absl::StatusOr<SluicedConfig> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "sluiced");
  return parseSluicedConfig(static_cast<int>(args.size()), args.data());
}

TEST(HostPathConfigTest, KeysParseAndValidate) {
  auto off = parse({});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(off->host_interface.empty());
  EXPECT_TRUE(off->host_addresses.empty());

  auto c = parse({"--pod-cidr-v6", "fd00:61::/64", "--host-interface", "sluice-host", "--host-addresses",
                  "192.0.2.10, 2001:db8:5::10"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host_interface, "sluice-host");
  EXPECT_EQ(c->host_addresses.v4, kHost4);
  EXPECT_EQ(c->host_addresses.v6, kHost6);
  EXPECT_EQ(c->host_addresses.toString(), "192.0.2.10,2001:db8:5::10");

  // A JSON list in a file.
  const std::string path = ::testing::TempDir() + "/sluiced-host.json";
  std::ofstream(path) << R"({"host-interface": "sh0", "host-addresses": ["192.0.2.10"]})";
  auto file = parse({"--config", path.c_str()});
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->host_addresses.toString(), "192.0.2.10");

  auto refused = [](std::vector<const char*> args, const std::string& message) {
    auto r = parse(args);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), message);
  };
  refused({"--host-addresses", "192.0.2.10"},
          "config: host-addresses: needs host-interface (the TAP the node is reached through)");
  refused({"--host-interface", "sh0"},
          "config: host-interface: needs host-addresses (the node's addresses pods may reach)");
  refused({"--host-interface", "a/b", "--host-addresses", "192.0.2.10"},
          "config: host-interface: 'a/b' is not an interface name (1..15 characters, no '/', ':' or space)");
  refused({"--host-interface", "sh0", "--host-addresses", "192.0.2.10,192.0.2.11"},
          "config: host-addresses: more than one IPv4 address (192.0.2.10, 192.0.2.11)");
  refused({"--host-interface", "sh0", "--host-addresses", "node-a"},
          "config: host-addresses: 'node-a' is not an IPv4 or IPv6 address");
  refused({"--host-interface", "sh0", "--host-addresses", "224.0.0.1"},
          "config: host-addresses: 224.0.0.1 is not a unicast address of a node");
  refused({"--host-interface", "sh0", "--host-addresses", "fe80::1"},
          "config: host-addresses: fe80::1 is not a global unicast address of a node");
  refused({"--pod-cidr", "10.61.0.0/24", "--host-interface", "sh0", "--host-addresses", "10.61.0.200"},
          "config: host-addresses: 10.61.0.200 is inside pod-cidr 10.61.0.0/24");
  refused({"--host-interface", "sh0", "--host-addresses", "2001:db8:5::10"},
          "config: host-addresses: 2001:db8:5::10: IPv6 needs pod-cidr-v6");
}

TEST(HostPathConfigTest, AllowedPortsParseAndValidate) {
  auto off = parse({});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->host_path_allowed_ports, HostPathPorts{}) << "by default nothing is listed, and the filter is on";
  EXPECT_FALSE(off->host_path_allowed_ports.all);

  auto c = parse({"--host-interface", "sh0", "--host-addresses", "192.0.2.10", "--host-path-allowed-ports",
                  "10250/tcp, 53/udp,22/tcp"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host_path_allowed_ports.tcp, (std::vector<uint16_t>{22, 10250}));
  EXPECT_EQ(c->host_path_allowed_ports.udp, (std::vector<uint16_t>{53}));
  EXPECT_EQ(c->host_path_allowed_ports.toString(), "22/tcp,10250/tcp,53/udp");
  const HostPath h = hostpath::hostPathOf(c->host_addresses, kHostPort, c->host_path_allowed_ports);
  EXPECT_TRUE(h.filter_ports);
  EXPECT_EQ(h.tcp_count, 2);
  EXPECT_EQ(h.tcp_ports[1], 10250);
  EXPECT_EQ(h.udp_count, 1);

  auto all = parse({"--host-interface", "sh0", "--host-addresses", "192.0.2.10", "--host-path-allowed-ports", "all"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(all->host_path_allowed_ports.all);
  EXPECT_EQ(all->host_path_allowed_ports.toString(), "all");
  EXPECT_FALSE(hostpath::hostPathOf(all->host_addresses, kHostPort, all->host_path_allowed_ports).filter_ports);

  const std::string path = ::testing::TempDir() + "/sluiced-host-ports.json";
  std::ofstream(path) << R"({"host-interface": "sh0", "host-addresses": ["192.0.2.10"],
                             "host-path-allowed-ports": ["10250/tcp", "53/udp"]})";
  auto file = parse({"--config", path.c_str()});
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->host_path_allowed_ports.toString(), "10250/tcp,53/udp");

  auto refused = [](std::vector<const char*> args, const std::string& message) {
    std::vector<const char*> with = {"--host-interface", "sh0", "--host-addresses", "192.0.2.10"};
    with.insert(with.end(), args.begin(), args.end());
    auto r = parse(with);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), message);
  };
  refused({"--host-path-allowed-ports", "10250"},
          "config: host-path-allowed-ports: '10250' is not PORT/tcp or PORT/udp with a port in 1..65535 (or give all)");
  refused({"--host-path-allowed-ports", "0/udp"},
          "config: host-path-allowed-ports: '0/udp' is not PORT/tcp or PORT/udp with a port in 1..65535 (or give all)");
  refused({"--host-path-allowed-ports", "22/sctp"},
          "config: host-path-allowed-ports: '22/sctp' is not PORT/tcp or PORT/udp with a port in 1..65535 (or give all)");
  refused({"--host-path-allowed-ports", "40000/tcp"},
          "config: host-path-allowed-ports: '40000/tcp': ports from 32768 up are always open (the node's own "
          "connections get their answers there)");
  refused({"--host-path-allowed-ports", "22/tcp,22/tcp"}, "config: host-path-allowed-ports: '22/tcp' is listed twice");
  std::string many;
  for (int p = 1; p <= 33; ++p) many += (many.empty() ? "" : ",") + std::to_string(p) + "/udp";
  refused({"--host-path-allowed-ports", many.c_str()}, "config: host-path-allowed-ports: more than 32 udp ports");
  auto alone = parse({"--host-path-allowed-ports", "22/tcp"});
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().message(),
            "config: host-path-allowed-ports: needs host-interface (the TAP the node is reached through)");
}

}  // namespace host_path_test
}  // namespace sluice
