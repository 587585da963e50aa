// Prefixes routed to a local pod's port: the request's checks, the control
// core's refusals and routing (through the uncached decision it serves to
// `sluicectl trace`), the decision's masks and source validation inside a
// port's prefixes, and the checkpoint keeping them.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "dataplane/core/checkpoint.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/routed_prefix_policy.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "tests/support/fake_control.h"
#include "tests/support/frames.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace routed_prefixes_test {

using flow::FlowKey;
using flow::MegaflowActions;

const Ipv4Cidr kPodCidr = *Ipv4Cidr::parse("10.244.1.0/24");
const Ipv4Address kGateway = *Ipv4Address::parse("10.244.1.1");
const Ipv6PodCidr kV6{*Ipv6Cidr::parse("fd00:244:1::/64"), *Ipv6Address::parse("fd00:244:1::1")};

RawPortRequest request(const std::string& id, const std::string& ip, std::vector<std::string> prefixes) {
  RawPortRequest r;
  r.container_id = id;
  r.ifname = "net1";
  r.ip = ip;
  r.routed_prefixes = std::move(prefixes);
  return r;
}

TEST(RoutedPrefixRequestTest, ParsesBothFamiliesAndRefusesBadOnesWithTheirCodes) {
  auto ok = parsePortRequest(request("aaaa", "10.244.1.10", {"10.100.0.0/16", "fd00:100::/48", "10.101.0.0/24"}),
                             kPodCidr, kGateway, {}, kV6);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->routed_prefixes.size(), 2u);
  EXPECT_EQ(ok->routed_prefixes[0].toString(), "10.100.0.0/16");
  ASSERT_EQ(ok->routed_prefixes_v6.size(), 1u);
  EXPECT_EQ(ok->routed_prefixes_v6[0].toString(), "fd00:100::/48");

  auto code = [](std::vector<std::string> prefixes) {
    return parsePortRequest(request("aaaa", "10.244.1.10", std::move(prefixes)), kPodCidr, kGateway, {}, kV6)
        .status();
  };
  // Not a CIDR, host bits set, overlapping each other: the request is wrong.
  EXPECT_EQ(code({"10.100.0.0"}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({"10.100.0.1/16"}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({"fd00:100::1/48"}).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status twice = code({"10.100.0.0/16", "10.100.7.0/24"});
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(twice.message(), "routed_prefixes: 10.100.7.0/24 overlaps 10.100.0.0/16");
  EXPECT_EQ(code(std::vector<std::string>(kMaxRoutedPrefixes + 1, "10.100.0.0/16")).code(),
            absl::StatusCode::kInvalidArgument);
  // The node's pod CIDRs (and so the gateways in them): this node's state.
  const absl::Status pod = code({"10.244.0.0/16"});
  EXPECT_EQ(pod.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(pod.message(), "routed_prefixes: 10.244.0.0/16 overlaps this node's pod CIDR 10.244.1.0/24");
  EXPECT_EQ(code({"10.244.1.1/32"}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code({"fd00:244:1::1/128"}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code({"fd00:244::/32"}).code(), absl::StatusCode::kFailedPrecondition);
}

FlowKey udpKey(uint16_t in_port, const MacAddress& src_mac, const std::string& src, const std::string& dst) {
  test::Frame f;
  if (auto s4 = Ipv4Address::parse(src)) {
    test::UdpFrameSpec s{src_mac, MacAddress::fromIpv4(kGateway), *s4, *Ipv4Address::parse(dst)};
    f = test::udpFrame(s);
  } else {
    test::Udp6FrameSpec s{src_mac, MacAddress::fromIpv4(kGateway), *Ipv6Address::parse(src),
                          *Ipv6Address::parse(dst)};
    f = test::udp6Frame(s);
  }
  FlowKey key{};
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), in_port, std::nullopt, key),
            flow::ParseResult::kOk);
  return key;
}

class RoutedPrefixControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/prefixes-control-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = kPodCidr;
    config_.gateway = kGateway;
    config_.pod_cidr_v6 = kV6.cidr;
    config_.gateway_v6 = kV6.gateway;
    config_.max_ports = 4;
    // The administrator's allow-list and the cluster's services (a /16:
    // kubeadm's default 10.96.0.0/12 would hold the UE pool 10.100.0.0/16).
    config_.routed_prefix_ranges = *parsePrefixRanges("10.100.0.0/16,fd00:100::/32");
    config_.service_cidrs = *parsePrefixRanges("10.96.0.0/16");
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_.context},
                                                  2'600'000'000);
    control_->start();
    pmd_.start();
  }
  void TearDown() override {
    control_->removeAllPorts();
    pmd_.stop();
    std::filesystem::remove_all(dir_);
  }

  // The uncached decision for a UDP packet from the port of the pod at
  // `pod_ip` (its MAC is the one derived from that address).
  MegaflowActions decide(uint16_t in_port, const std::string& pod_ip, const std::string& src, const std::string& dst) {
    const MacAddress mac = MacAddress::fromIpv4(*Ipv4Address::parse(pod_ip));
    return control_->translate(udpKey(in_port, mac, src, dst)).actions;
  }

  std::string dir_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  test::AckingPmd pmd_;
  std::unique_ptr<DataplaneControl> control_;
};

TEST_F(RoutedPrefixControlTest, APortsPrefixesAreRoutedToItUntilItGoes) {
  auto upf = control_->addPort(request("upf", "10.244.1.10", {"10.100.0.0/16", "fd00:100::/48"}));
  auto client = control_->addPort(request("client", "10.244.1.11", {}));
  ASSERT_TRUE(upf.ok() && client.ok()) << upf.status() << client.status();
  EXPECT_EQ(control_->listPorts()[0].request.routed_prefixes, std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.100.0.0/16")});

  const uint16_t upf_port = upf->port.port_no, client_port = client->port.port_no;
  const MegaflowActions to_ue = decide(client_port, "10.244.1.11", "10.244.1.11", "10.100.42.7");
  EXPECT_EQ(to_ue.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(to_ue.out_port, upf_port);
  EXPECT_EQ(to_ue.rewrite_flags, kRewriteL3);
  const MegaflowActions to_ue6 = decide(client_port, "10.244.1.11", "fd00:244:1::b", "fd00:100:0:9::1");
  EXPECT_EQ(to_ue6.kind, MegaflowActions::Kind::kDrop) << "the client has no IPv6 address of its own";
  EXPECT_EQ(to_ue6.drop_reason, static_cast<uint16_t>(DropReason::kSpoofedSourceIp));
  // The UPF may send from its UE pool (source validation is on), not from beside it.
  EXPECT_EQ(decide(upf_port, "10.244.1.10", "10.100.42.7", "10.244.1.11").kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(decide(upf_port, "10.244.1.10", "10.101.0.1", "10.244.1.11").drop_reason,
            static_cast<uint16_t>(DropReason::kSpoofedSourceIp));

  ASSERT_TRUE(*control_->deletePort({"upf", "net1"}));
  const MegaflowActions gone = decide(client_port, "10.244.1.11", "10.244.1.11", "10.100.42.7");
  EXPECT_EQ(gone.kind, MegaflowActions::Kind::kDrop);
  EXPECT_EQ(gone.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
}

TEST_F(RoutedPrefixControlTest, PrefixesOverlappingAnotherPortsAreRefusedUntilItGoes) {
  ASSERT_TRUE(control_->addPort(request("upf", "10.244.1.10", {"10.100.0.0/16", "fd00:100::/48"})).ok());
  const absl::Status inside = control_->addPort(request("other", "10.244.1.12", {"10.100.128.0/17"})).status();
  EXPECT_EQ(inside.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(inside.message(), "routed_prefixes: 10.100.128.0/17 overlaps 10.100.0.0/16, routed to port 0");
  EXPECT_EQ(control_->addPort(request("other", "10.244.1.12", {"fd00:100:0:1::/64"})).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(control_->listPorts().size(), 1u);
  EXPECT_EQ(backend_.created.size(), 1u) << "nothing was made for a refused request";
  // The same attachment asking for other prefixes is another request.
  EXPECT_EQ(control_->addPort(request("upf", "10.244.1.10", {"10.100.0.0/16"})).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(*control_->deletePort({"upf", "net1"}));
  EXPECT_TRUE(control_->addPort(request("other", "10.244.1.12", {"10.100.128.0/17"})).ok());
}

// A pod's prefix is routed only inside the administrator's ranges, and never
// over special ranges or the services, whatever the ranges say; the packet
// to it goes to the claimant only once the claim was accepted.
TEST_F(RoutedPrefixControlTest, OnlyPrefixesInsideTheAllowedRangesAreRoutedAndSpecialOnesNever) {
  auto client = control_->addPort(request("client", "10.244.1.11", {}));
  ASSERT_TRUE(client.ok()) << client.status();
  const uint16_t client_port = client->port.port_no;
  auto refused = [&](std::vector<std::string> prefixes) {
    return control_->addPort(request("upf", "10.244.1.10", std::move(prefixes))).status();
  };
  const absl::Status half = refused({"128.0.0.0/1"});
  EXPECT_EQ(half.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(half.message(), "routed_prefixes: 128.0.0.0/1 overlaps 169.254.0.0/16 (link-local, cloud metadata)");
  const absl::Status services = refused({"10.96.0.0/12"});
  EXPECT_EQ(services.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(services.message(), "routed_prefixes: 10.96.0.0/12 overlaps the service CIDR 10.96.0.0/16 (service-cidr)");
  const absl::Status metadata = refused({"10.100.0.0/24", "169.254.0.0/16"});
  EXPECT_EQ(metadata.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(metadata.message(), "routed_prefixes: 169.254.0.0/16 overlaps 169.254.0.0/16 (link-local, cloud metadata)");
  const absl::Status outside = refused({"10.101.0.0/24"});
  EXPECT_EQ(outside.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(outside.message(),
            "routed_prefixes: 10.101.0.0/24 is outside routed-prefix-ranges (10.100.0.0/16,fd00:100::/32)");
  EXPECT_EQ(refused({"fe80::/64"}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused({"fd00:200::/48"}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(control_->listPorts().size(), 1u);
  EXPECT_EQ(backend_.created.size(), 1u) << "nothing was made for a refused request";
  for (const char* dst : {"169.254.169.254", "10.96.0.10", "203.0.113.5", "10.100.42.7"})
    EXPECT_EQ(decide(client_port, "10.244.1.11", "10.244.1.11", dst).drop_reason,
              static_cast<uint16_t>(DropReason::kNoRoute))
        << dst << " is routed to no one";

  auto upf = control_->addPort(request("upf", "10.244.1.10", {"10.100.0.0/16", "fd00:100::/48"}));
  ASSERT_TRUE(upf.ok()) << upf.status();
  const MegaflowActions to_ue = decide(client_port, "10.244.1.11", "10.244.1.11", "10.100.42.7");
  EXPECT_EQ(to_ue.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(to_ue.out_port, upf->port.port_no);
  EXPECT_EQ(decide(client_port, "10.244.1.11", "10.244.1.11", "169.254.169.254").drop_reason,
            static_cast<uint16_t>(DropReason::kNoRoute));
}

// A checkpoint written under a wider policy does not outlive a narrower
// one: the port whose prefix is no longer allowed is not restored.
TEST_F(RoutedPrefixControlTest, ARestoredPortsPrefixesAreCheckedAgain) {
  CheckpointState state;
  auto record = [&](uint16_t no, const std::string& id, const std::string& ip, std::vector<std::string> prefixes) {
    CheckpointPort p;
    p.port_no = no;
    p.request = request(id, ip, std::move(prefixes));
    p.socket_path = *vhostSocketPath(dir_, *parsePortRequest(p.request, kPodCidr, kGateway, {}, kV6));
    return p;
  };
  state.ports.push_back(record(0, "wide", "10.244.1.10", {"10.200.0.0/16"}));
  state.ports.push_back(record(1, "narrow", "10.244.1.11", {"10.100.0.0/16"}));
  RestoreSummary r = control_->restore(state);
  EXPECT_EQ(r.restored, 1u);
  EXPECT_EQ(r.dropped, 1u);
  ASSERT_EQ(control_->listPorts().size(), 1u);
  EXPECT_EQ(control_->listPorts()[0].request.attachment.container_id, "narrow");
}

// Every reason sluiced refuses a prefix, checked alone.
TEST(RoutedPrefixPolicyTest, EachRefusalNamesItsReason) {
  SluicedConfig c;
  c.routed_prefix_ranges = *parsePrefixRanges("0.0.0.0/0,::/0");
  c.service_cidrs = *parsePrefixRanges("10.96.0.0/12,fd00:96::/108");
  c.host_addresses.v4 = *Ipv4Address::parse("192.0.2.10");
  c.host_addresses.v6 = *Ipv6Address::parse("2001:db8:5::10");
  c.external_gateway = *Ipv4Address::parse("198.51.100.1");
  auto why = [&](const std::string& text) {
    std::vector<Ipv4Cidr> v4;
    std::vector<Ipv6Cidr> v6;
    if (auto a = Ipv4Cidr::parse(text)) v4.push_back(*a);
    else v6.push_back(*Ipv6Cidr::parse(text));
    const absl::Status s = checkRoutedPrefixPolicy(c, v4, v6);
    EXPECT_TRUE(s.ok() || s.code() == absl::StatusCode::kFailedPrecondition) << s;
    return std::string(s.message());
  };
  EXPECT_EQ(why("0.0.0.0/0"), "routed_prefixes: 0.0.0.0/0 overlaps 0.0.0.0/8 (this network)");
  EXPECT_EQ(why("127.0.0.1/32"), "routed_prefixes: 127.0.0.1/32 overlaps 127.0.0.0/8 (loopback)");
  EXPECT_EQ(why("239.1.0.0/16"), "routed_prefixes: 239.1.0.0/16 overlaps 224.0.0.0/4 (multicast)");
  EXPECT_EQ(why("255.255.255.255/32"),
            "routed_prefixes: 255.255.255.255/32 overlaps 240.0.0.0/4 (reserved, holds the broadcast address "
            "255.255.255.255)");
  EXPECT_EQ(why("::/0"), "routed_prefixes: ::/0 overlaps ::/128 (unspecified)");
  EXPECT_EQ(why("::1/128"), "routed_prefixes: ::1/128 overlaps ::1/128 (loopback)");
  EXPECT_EQ(why("::ffff:10.0.0.0/120"), "routed_prefixes: ::ffff:10.0.0.0/120 overlaps ::ffff:0:0/96 (IPv4-mapped)");
  EXPECT_EQ(why("fe80::/10"), "routed_prefixes: fe80::/10 overlaps fe80::/10 (link-local)");
  EXPECT_EQ(why("ff02::/16"), "routed_prefixes: ff02::/16 overlaps ff00::/8 (multicast)");
  EXPECT_EQ(why("10.64.0.0/10"), "routed_prefixes: 10.64.0.0/10 overlaps the service CIDR 10.96.0.0/12 (service-cidr)");
  EXPECT_EQ(why("fd00:96::/112"),
            "routed_prefixes: fd00:96::/112 overlaps the service CIDR fd00:96::/108 (service-cidr)");
  EXPECT_EQ(why("192.0.2.0/24"), "routed_prefixes: 192.0.2.0/24 holds the node's host address 192.0.2.10");
  EXPECT_EQ(why("2001:db8:5::/64"), "routed_prefixes: 2001:db8:5::/64 holds the node's host address 2001:db8:5::10");
  EXPECT_EQ(why("198.51.100.0/30"), "routed_prefixes: 198.51.100.0/30 holds the external gateway 198.51.100.1");
  EXPECT_EQ(why("172.20.0.0/16"), "");
  EXPECT_EQ(why("fd00:100::/48"), "");
  // The secure default: no ranges, no routed prefixes.
  c.routed_prefix_ranges = {};
  EXPECT_EQ(why("172.20.0.0/16"), "routed_prefixes: 172.20.0.0/16 is not allowed: routed-prefix-ranges is empty, "
                                  "so this node accepts no routed prefixes");
}

// The keys as sluiced reads them: comma lists or JSON arrays of CIDRs.
TEST(RoutedPrefixPolicyTest, TheRangeKeysTakeCidrListsAndRefuseAnythingElse) {
  SluicedConfig c;
  EXPECT_TRUE(c.routed_prefix_ranges.empty()) << "none allowed unless the administrator says so";
  ASSERT_TRUE(applySetting(c, "routed-prefix-ranges", "10.100.0.0/16, fd00:100::/32").ok());
  EXPECT_EQ(c.routed_prefix_ranges.toString(), "10.100.0.0/16,fd00:100::/32");
  ASSERT_TRUE(applySetting(c, "service-cidr", "10.96.0.0/12").ok());
  EXPECT_EQ(c.service_cidrs.toString(), "10.96.0.0/12");
  EXPECT_EQ(applySetting(c, "routed-prefix-ranges", "10.100.0.1/16").message(),
            "config: routed-prefix-ranges: '10.100.0.1/16' is not an IPv4 or IPv6 CIDR with host bits zero (like "
            "10.100.0.0/16 or fd00:100::/48)");
  EXPECT_EQ(applySetting(c, "service-cidr", "10.96.0.0/12,10.96.0.0/12").message(),
            "config: service-cidr: 10.96.0.0/12 is listed twice");
  auto file = applyConfigJson(R"({"routed-prefix-ranges": ["10.100.0.0/16", "fd00:100::/32"]})", SluicedConfig{});
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->routed_prefix_ranges.toString(), "10.100.0.0/16,fd00:100::/32");
}

// The decision's masks: a tunnelled packet to a routed prefix is delivered
// (not relayed), its megaflow spans the prefix but no address decided
// otherwise, and a source inside the port's prefix is matched as that prefix.
TEST(RoutedPrefixTranslateTest, MasksSpanThePrefixAndNoAddressDecidedOtherwise) {
  const Ipv4Address pod = *Ipv4Address::parse("10.244.1.10");
  const MacAddress pod_mac = MacAddress::fromIpv4(pod);
  ForwardingTable fib({{pod, 3, pod_mac}});
  RoutedPrefixTable prefixes(
      {{Ipv4Address::parse("10.100.0.0")->networkOrder(), Ipv4Address{0xffff0000}.networkOrder(), 3},
       {Ipv4Address::parse("10.101.4.0")->networkOrder(), Ipv4Address{0xfffffc00}.networkOrder(), 4}},
      {});
  SourceTable sources;
  sources.ports[3].checked = true;
  std::memcpy(sources.ports[3].mac, pod_mac.bytes.data(), 6);
  sources.ports[3].has_ipv4 = true;
  sources.ports[3].ipv4_be = pod.networkOrder();
  std::vector<vxlan::OverlayTables::Tunnel> tunnels(1);
  tunnels[0].vtep_be = Ipv4Address::parse("192.168.77.2")->networkOrder();
  // The remote node's pod CIDR, which its pods send from.
  vxlan::OverlayTables overlay(
      std::move(tunnels),
      {{Ipv4Address::parse("10.244.2.0")->networkOrder(), Ipv4Address{0xffffff00}.networkOrder(), 0}}, {});
  const RouteTables tables{.fib = &fib, .gateway_ip_be = kGateway.networkOrder(), .overlay = &overlay,
                           .uplink_port = 9, .sources = &sources, .prefixes = &prefixes};

  // From a pod behind the remote VTEP, to the UPF's pool: output to its port, /16.
  FlowKey key = udpKey(9, MacAddress::fromIpv4(kGateway), "10.244.2.5", "10.100.3.4");
  key.tun_vni = 42;
  key.tun_src = Ipv4Address::parse("192.168.77.2")->networkOrder();
  FlowTranslation t;
  translateFlow(tables, key, t);
  EXPECT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, 3);
  EXPECT_EQ(t.mask.ipv4_dst, Ipv4Address{0xffff0000}.networkOrder());
  // Just beside 10.101.4.0/22 (unrouted): the mask tells it from the prefix.
  key.ipv4_dst = Ipv4Address::parse("10.101.3.9")->networkOrder();
  translateFlow(tables, key, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kOverlayNoRoute));
  EXPECT_EQ(t.mask.ipv4_dst, Ipv4Address{0xffffff00}.networkOrder());

  // The UPF sending from its pool: allowed, matched as the /16.
  translateFlow(tables, udpKey(3, pod_mac, "10.100.200.1", "10.244.1.10"), t);
  EXPECT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.mask.ipv4_src, Ipv4Address{0xffff0000}.networkOrder());
  // From another port's prefix: spoofed, matched far enough to tell it from
  // its own address and its own prefix (10.101.x differs from 10.100.x in the
  // second octet).
  translateFlow(tables, udpKey(3, pod_mac, "10.101.4.1", "10.244.1.10"), t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kSpoofedSourceIp));
  EXPECT_EQ(t.mask.ipv4_src, Ipv4Address{0xffff0000}.networkOrder());
}

// (The migration from version 4 is in checkpoint_test.)
TEST(RoutedPrefixCheckpointTest, PrefixesSurviveARoundTripAndABadValueIsRefused) {
  CheckpointState state;
  CheckpointPort port;
  port.port_no = 2;
  port.request = request("upf", "10.244.1.10", {"10.100.0.0/16", "fd00:100::/48"});
  port.socket_path = "/run/sluice/upf.sock";
  state.ports.push_back(port);
  auto parsed = parseCheckpoint(serializeCheckpoint(state));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->ports.size(), 1u);
  EXPECT_EQ(parsed->ports[0].request.routed_prefixes, (std::vector<std::string>{"10.100.0.0/16", "fd00:100::/48"}));
  nlohmann::json doc = nlohmann::json::parse(serializeCheckpoint(state));
  doc["ports"][0]["routed_prefixes"] = "10.100.0.0/16";
  auto bad = parseCheckpoint(doc.dump());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("routed_prefixes"), std::string::npos) << bad.status();
}

}  // namespace routed_prefixes_test
}  // namespace sluice
