// The exception path to the node's kernel on real DPDK: sluiced (a child
// process) runs in a network namespace of its own, the node, whose lo holds
// the host address; its host interface is a real net_tap there. A
// net_virtio_user pod in this process pings the host address and the
// node's kernel answers through the TAP; the kernel pings the pod and gets
// the pod's reply; a source the node may not use is dropped and counted; of
// the node's ports the pod reaches only those host-path-allowed-ports lets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <string>

#include "common/thread_sanitizer.h"
#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

const Ipv4Address kPod = *Ipv4Address::parse("10.250.0.10");
const MacAddress kPodMac = MacAddress::fromIpv4(kPod);
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);
const Ipv4Address kHost = *Ipv4Address::parse("192.0.2.10");
const Ipv4Address kOtherNodeAddress = *Ipv4Address::parse("198.51.100.7");
constexpr uint32_t kHostPortNo = 30;  // below the uplink's 31
constexpr size_t kEth = 14, kIp = 20;

int run(const std::string& command) { return std::system(command.c_str()); }

uint16_t get16(const Frame& f, size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }
uint32_t get32(const Frame& f, size_t at) { return uint32_t{get16(f, at)} << 16 | get16(f, at + 2); }
uint16_t checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2 != 0) sum += static_cast<uint32_t>(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

class HostPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef SLUICE_TSAN_ACTIVE
    // The host port is polled and sent to as any port (the threads are those
    // the other tests here run under ThreadSanitizer): not worth the TSan
    // run's minutes.
    GTEST_SKIP() << "no new threading to check under ThreadSanitizer";
#endif
    netns_ = "hostpath-it-" + std::to_string(::getpid());
    ASSERT_EQ(run("ip netns add " + netns_), 0);
    ASSERT_EQ(run("ip -n " + netns_ + " link set lo up"), 0);
    ASSERT_EQ(run("ip -n " + netns_ + " addr add " + kHost.toString() + "/32 dev lo"), 0);
    ASSERT_EQ(run("ip -n " + netns_ + " addr add " + kOtherNodeAddress.toString() + "/32 dev lo"), 0);
    SluicedOptions o;
    o.netns = netns_;
    o.extra_flags = {"--host-interface", "hpit0", "--host-addresses", kHost.toString()};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse resp;
    grpc::Status s = node_->addPort(portRequest("hostpath-pod", kPod.toString()), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    auto p = VirtioPod::create(resp.port().socket_path(), false, podPool());
    ASSERT_TRUE(p.ok()) << p.status();
    pod_ = std::move(*p);
    ASSERT_TRUE(node_->waitLinkUp(resp.port().port_no())) << node_->log();
  }
  void TearDown() override {
    pod_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    if (!netns_.empty()) run("ip netns del " + netns_);
  }

  // An IPv4 frame as the pod receives it from the node: routed by sluiced
  // (gateway MAC to the pod's, TTL 64 - 1), header checksum right.
  static void expectFromNode(const Frame& f, uint8_t protocol) {
    ASSERT_GE(f.size(), kEth + kIp + 8);
    EXPECT_EQ(Frame(f.begin(), f.begin() + 6), Frame(kPodMac.bytes.begin(), kPodMac.bytes.end()));
    EXPECT_EQ(Frame(f.begin() + 6, f.begin() + 12), Frame(kGatewayMac.bytes.begin(), kGatewayMac.bytes.end()));
    EXPECT_EQ(get16(f, 12), 0x0800);
    EXPECT_EQ(f[kEth + 8], 63) << "the kernel's TTL 64, less sluiced's hop";
    EXPECT_EQ(f[kEth + 9], protocol);
    EXPECT_EQ(get32(f, kEth + 12), kHost.value);
    EXPECT_EQ(get32(f, kEth + 16), kPod.value);
    EXPECT_EQ(checksum(&f[kEth], kIp), 0) << "IPv4 header checksum";
  }

  // Both sides of the TAP when a packet between them went missing: the
  // node kernel's neighbors, routes and the TAP's counters, sluiced's
  // counters (its drops by reason) and log.
  std::string bothSides() const {
    return "node kernel:\n" +
           runShell("ip -n " + netns_ + " neigh; ip -n " + netns_ + " route; ip -n " + netns_ + " -s link show hpit0")
               .output +
           "sluiced stats:\n" + sluicectl(node_->apiSocket(), "stats").output + "sluiced log:\n" + node_->log();
  }

  std::string netns_;
  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_;
};

TEST_F(HostPathTest, PodAndNodeReachEachOtherAndTheNodeMaySendOnlyFromItsHostAddress) {
  const v1::GetStatsResponse before = node_->stats();
  // Pod -> node: the node's kernel answers the echo through the TAP (it
  // resolves the pod's address with ARP first, answered by sluiced).
  ASSERT_EQ(pod_->send({icmpEcho(kPodMac, kGatewayMac, kPod, kHost, 8, 0x4242, 1)}), 1u);
  std::vector<Frame> replies = pod_->receive(1);
  ASSERT_EQ(replies.size(), 1u) << bothSides();
  expectFromNode(replies[0], 1);
  const Frame want_icmp = icmpEcho(kGatewayMac, kPodMac, kHost, kPod, 0, 0x4242, 1);
  EXPECT_EQ(Frame(replies[0].begin() + kEth + kIp, replies[0].end()), Frame(want_icmp.begin() + kEth + kIp, want_icmp.end()))
      << "an echo reply with the request's id, sequence and data";

  // Node -> pod: the kernel's ping arrives routed; the pod's reply reaches it.
  auto ping = std::async(std::launch::async, [&] {
    return run("ip netns exec " + netns_ + " ping -n -c 1 -W 10 " + kPod.toString() + " >/dev/null");
  });
  std::vector<Frame> requests = pod_->receive(1);
  ASSERT_EQ(requests.size(), 1u) << bothSides();
  expectFromNode(requests[0], 1);
  ASSERT_EQ(requests[0][kEth + kIp], 8) << "an echo request";
  Frame answer = requests[0];
  std::copy(kGatewayMac.bytes.begin(), kGatewayMac.bytes.end(), answer.begin());
  std::copy(kPodMac.bytes.begin(), kPodMac.bytes.end(), answer.begin() + 6);
  for (size_t i = 0; i < 4; ++i) std::swap(answer[kEth + 12 + i], answer[kEth + 16 + i]);
  answer[kEth + 8] = 64;
  answer[kEth + 10] = answer[kEth + 11] = 0;
  const uint16_t ip_sum = checksum(&answer[kEth], kIp);
  answer[kEth + 10] = static_cast<uint8_t>(ip_sum >> 8);
  answer[kEth + 11] = static_cast<uint8_t>(ip_sum);
  const size_t icmp = kEth + kIp;
  answer[icmp] = 0;
  answer[icmp + 2] = answer[icmp + 3] = 0;
  const uint16_t icmp_sum = checksum(&answer[icmp], get16(answer, kEth + 2) - kIp);
  answer[icmp + 2] = static_cast<uint8_t>(icmp_sum >> 8);
  answer[icmp + 3] = static_cast<uint8_t>(icmp_sum);
  ASSERT_EQ(pod_->send({answer}), 1u);
  EXPECT_EQ(ping.get(), 0) << "the node's ping got the pod's reply\n" << bothSides();

  // The TAP carried both directions: the pod's request and reply in, the
  // node's reply and request out (plus the kernel's ARP and sluiced's answers).
  const v1::GetStatsResponse mid = node_->stats();
  const v1::PortStats* host = portStats(mid, kHostPortNo);
  ASSERT_NE(host, nullptr) << "the host port is in stats";
  EXPECT_EQ(host->attachment().container_id(), "host");
  EXPECT_GE(host->rx_packets(), 2u);
  EXPECT_GE(host->tx_packets(), 2u);
  EXPECT_EQ(node_->ports().ports_size(), 1) << "the host port is no pod";

  // A node address that is not a host address: every echo dropped as spoofed
  // (the pod's neighbor entry is resolved already: only the echoes go).
  EXPECT_NE(run("ip netns exec " + netns_ + " ping -n -c 2 -i 0.2 -W 1 -I " + kOtherNodeAddress.toString() + " " +
                kPod.toString() + " >/dev/null"),
            0);
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(dropCount(after, "spoofed_source_ip") - dropCount(before, "spoofed_source_ip"), 2u);
  EXPECT_EQ(pod_->drainCount(), 0u) << "nothing spoofed reached the pod";
}

// host-path-allowed-ports left as it is: the pod reaches the node by ICMP
// (above) and TCP/UDP from 32768 up, nothing else. UDP to kubelet's port is
// dropped and counted, never sent to the TAP; UDP to a port from 32768 up
// reaches the node's kernel, which answers it with port unreachable.
TEST_F(HostPathTest, PodsReachOnlyTheAllowedPortsOfTheNode) {
  const v1::GetStatsResponse before = node_->stats();
  UdpFrameSpec kubelet{kPodMac, kGatewayMac, kPod, kHost};
  kubelet.dst_port = 10250;
  ASSERT_EQ(pod_->send({udpFrame(kubelet), udpFrame(kubelet)}), 2u);
  ASSERT_TRUE(waitFor([&] {
    return dropCount(node_->stats(), "host_port_not_allowed") - dropCount(before, "host_port_not_allowed") >= 2;
  })) << bothSides();
  const v1::GetStatsResponse mid = node_->stats();
  EXPECT_EQ(dropCount(mid, "host_port_not_allowed") - dropCount(before, "host_port_not_allowed"), 2u);
  EXPECT_EQ(portStats(mid, kHostPortNo)->tx_packets(), portStats(before, kHostPortNo)->tx_packets())
      << "nothing went to the node's kernel";

  // From 32768 up: to the node, whose kernel has no socket there and says so.
  UdpFrameSpec high{kPodMac, kGatewayMac, kPod, kHost};
  high.dst_port = 40000;
  ASSERT_EQ(pod_->send({udpFrame(high)}), 1u);
  std::vector<Frame> answer = pod_->receive(1);
  ASSERT_EQ(answer.size(), 1u) << bothSides();
  expectFromNode(answer[0], 1);
  EXPECT_EQ(answer[0][kEth + kIp], 3) << "destination unreachable";
  EXPECT_EQ(answer[0][kEth + kIp + 1], 3) << "port unreachable";
  EXPECT_EQ(dropCount(node_->stats(), "host_port_not_allowed") - dropCount(before, "host_port_not_allowed"), 2u);
}

}  // namespace
}  // namespace sluice::test
