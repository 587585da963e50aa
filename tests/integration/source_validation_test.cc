// Source validation on real DPDK: sluiced (a child process with vhost-user
// ports and pod-cidr-v6) and three net_virtio_user pods in this process: A
// and B checked (the default), R a router made with validation off. Spoofed
// IPv4 and IPv6 sources, spoofed MACs and spoofed ARP from A are dropped and
// counted exactly by reason and on A's port while A's own traffic arrives;
// R's foreign sources are forwarded; the setting is listed (API and
// sluicectl) and survives a restart from the checkpoint.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dataplane/datapath/forwarding_table_v6.h"
#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace source_validation_test {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.11");
const Ipv4Address kIpR = *Ipv4Address::parse("10.250.0.12");
const Ipv4Address kIpStolen = *Ipv4Address::parse("10.250.0.99");
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00:250::a");
const Ipv6Address kIp6B = *Ipv6Address::parse("fd00:250::b");
const Ipv6Address kIp6R = *Ipv6Address::parse("fd00:250::c");
const Ipv6Address kIp6Stolen = *Ipv6Address::parse("fd00:250::99");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv4(kIpB);
const MacAddress kMacR = MacAddress::fromIpv4(kIpR);
const MacAddress kMacStolen = *MacAddress::parse("02:99:99:99:99:99");
const MacAddress kGatewayMac = MacAddress::fromIpv4(*Ipv4Address::parse("10.250.0.1"));
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");

class SourceValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.extra_flags = {"--pod-cidr-v6", "fd00:250::/64"};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    auto add = [&](const std::string& name, Ipv4Address ip, Ipv6Address ip6, bool checked, v1::Port& port) {
      v1::AddPortRequest r = portRequest(name, ip.toString());
      r.set_ipv6(ip6.toString());
      if (!checked) r.set_source_validation(false);
      v1::AddPortResponse resp;
      grpc::Status s = node_->addPort(r, &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      port = resp.port();
    };
    v1::Port a, b, r;
    add("srcval-pod-a", kIpA, kIp6A, true, a);
    add("srcval-pod-b", kIpB, kIp6B, true, b);
    add("srcval-pod-r", kIpR, kIp6R, false, r);
    EXPECT_TRUE(a.source_validation());
    EXPECT_FALSE(r.source_validation());
    port_a_ = a.port_no();
    port_b_ = b.port_no();
    port_r_ = r.port_no();
    for (auto [port, pod] : {std::pair{&a, &pod_a_}, {&b, &pod_b_}, {&r, &pod_r_}}) {
      auto p = VirtioPod::create(port->socket_path(), false, podPool());
      ASSERT_TRUE(p.ok()) << p.status();
      *pod = std::move(*p);
      ASSERT_TRUE(node_->waitLinkUp(port->port_no())) << node_->log();
    }
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    pod_r_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  static Frame udp4(const MacAddress& mac, Ipv4Address src, Ipv4Address dst, uint32_t seq) {
    UdpFrameSpec s{mac, kGatewayMac, src, dst};
    s.sequence = seq;
    return udpFrame(s);
  }
  static Frame udp6(const MacAddress& mac, const Ipv6Address& src, const Ipv6Address& dst, uint32_t seq) {
    Udp6FrameSpec s{mac, kGatewayMac, src, dst};
    s.sequence = seq;
    return udp6Frame(s);
  }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_, pod_r_;
  uint32_t port_a_ = 0, port_b_ = 0, port_r_ = 0;
};

TEST_F(SourceValidationTest, SpoofedIpv4AndArpAreDroppedAndCountedOwnTrafficArrives) {
  // Each round: spoofed frames, then A's own behind them (one queue, order
  // kept: once B has A's frame, the spoofed ones were processed). Twice, so
  // that the second round meets the megaflows the first one made.
  for (uint32_t round = 0; round < 2; ++round) {
    const std::vector<Frame> spoofed = {
        udp4(kMacA, kIpStolen, kIpB, 10 * round),      // another address
        udp4(kMacA, kIpB, kIpB, 10 * round + 1),       // the destination's own
        udp4(kMacStolen, kIpA, kIpB, 10 * round + 2),  // another MAC
        udp4(kMacB, kIpB, kIpB, 10 * round + 3),       // B altogether
        arpRequest(kMacA, kIpB, kGateway),             // ARP naming B as sender
    };
    ASSERT_EQ(pod_a_->send(spoofed), spoofed.size());
    const Frame own = udp4(kMacA, kIpA, kIpB, 10 * round + 9);
    ASSERT_EQ(pod_a_->send({own}), 1u);
    std::vector<Frame> got = pod_b_->receive(1);
    ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
    EXPECT_EQ(udpSequence(got[0]), 10 * round + 9);
  }
  // A's own ARP, and a probe from 0.0.0.0, are answered.
  ASSERT_EQ(pod_a_->send({arpRequest(kMacA, kIpA, kGateway), arpRequest(kMacA, Ipv4Address{0}, kGateway)}), 2u);
  EXPECT_EQ(pod_a_->receive(2).size(), 2u);
  EXPECT_EQ(pod_b_->drainCount(), 0u);
  EXPECT_EQ(pod_a_->drainCount(), 0u);
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "spoofed_source_ip"), 4u);
  EXPECT_EQ(dropCount(s, "spoofed_source_mac"), 4u);
  EXPECT_EQ(dropCount(s, "spoofed_arp"), 2u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 14u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 10u);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), 2u);
}

TEST_F(SourceValidationTest, SpoofedIpv6IsDroppedOwnAndLinkLocalArrive) {
  const std::vector<Frame> spoofed = {
      udp6(kMacA, kIp6Stolen, kIp6B, 1),
      udp6(kMacA, linkLocalFromMac(kMacB), kIp6B, 2),
      udp6(kMacStolen, kIp6A, kIp6B, 3),
      neighborSolicitation(kMacA, kIp6B, kIp6R),  // soliciting as B
  };
  ASSERT_EQ(pod_a_->send(spoofed), spoofed.size());
  ASSERT_EQ(pod_a_->send({udp6(kMacA, kIp6A, kIp6B, 7), udp6(kMacA, linkLocalFromMac(kMacA), kIp6B, 8)}), 2u);
  std::vector<Frame> got = pod_b_->receive(2);
  ASSERT_EQ(got.size(), 2u) << node_->stats().DebugString();
  EXPECT_EQ(udp6Sequence(got[0]), 7u);
  EXPECT_EQ(udp6Sequence(got[1]), 8u);
  // Duplicate address detection (from ::) is no spoofing: not answered, as ever.
  ASSERT_EQ(pod_a_->send({neighborSolicitation(kMacA, Ipv6Address{}, kIp6A)}), 1u);
  ASSERT_EQ(pod_a_->send({udp6(kMacA, kIp6A, kIp6B, 9)}), 1u);
  ASSERT_EQ(pod_b_->receive(1).size(), 1u);
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "spoofed_source_ip"), 3u);
  EXPECT_EQ(dropCount(s, "spoofed_source_mac"), 1u);
  EXPECT_EQ(dropCount(s, "nd_not_answered"), 1u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 5u);
}

TEST_F(SourceValidationTest, ARouterPodForwardsForeignSourcesAndKeepsItsSettingAcrossARestart) {
  const std::vector<Frame> routed = {udp4(kMacStolen, *Ipv4Address::parse("192.0.2.1"), kIpB, 1),
                                     udp6(kMacStolen, *Ipv6Address::parse("2001:db8::1"), kIp6B, 2)};
  ASSERT_EQ(pod_r_->send(routed), 2u);
  EXPECT_EQ(pod_b_->receive(2).size(), 2u) << node_->stats().DebugString();
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(portStats(s, port_r_)->rx_dropped(), 0u);
  EXPECT_EQ(dropCount(s, "spoofed_source_ip"), 0u);

  const CommandResult listed = sluicectl(node_->apiSocket(), "ports");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  size_t marks = 0;
  for (size_t at = listed.output.find("sources-unchecked"); at != std::string::npos;
       at = listed.output.find("sources-unchecked", at + 1))
    ++marks;
  EXPECT_EQ(marks, 1u) << listed.output;
  EXPECT_NE(listed.output.find("srcval-pod-r"), std::string::npos);

  pod_a_.reset();
  pod_b_.reset();
  pod_r_.reset();
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  std::map<std::string, bool> restored;
  const v1::ListPortsResponse listed_again = node_->ports();
  for (const v1::Port& p : listed_again.ports()) restored[p.attachment().container_id()] = p.source_validation();
  EXPECT_EQ(restored, (std::map<std::string, bool>{
                          {"srcval-pod-a", true}, {"srcval-pod-b", true}, {"srcval-pod-r", false}}));
}

}  // namespace source_validation_test
}  // namespace sluice::test
