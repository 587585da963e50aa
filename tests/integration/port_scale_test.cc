// A node's port table at its largest: one sluiced with 1,000 vhost-user pod
// ports (max-ports 1024), every one of which forwards a packet to the right
// pod. This process plays the pods with net_virtio_user devices, which are
// ethdevs here: DPDK's 32 per process allow a group of them at a time, so the
// pods come in groups while all 1,000 ports stay in sluiced.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

constexpr size_t kPorts = 1000;
// Pods connected at once: each fills its 1024-entry rx ring from the pods'
// pool (16,384 mbufs), which bounds a group before this process's ethdevs do.
constexpr size_t kGroup = 12;
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);

// The i-th pod's address in 10.250.0.0/21, past the gateway.
Ipv4Address podIp(size_t i) {
  return Ipv4Address{static_cast<uint32_t>((10u << 24) | (250u << 16)) + 10 + static_cast<uint32_t>(i)};
}

std::string podName(size_t i) { return "scale-" + std::to_string(i); }

TEST(PortScaleTest, AThousandPortsEachForwardAPacketToTheRightPod) {
  SluicedOptions o;
  o.pod_cidr = "10.250.0.0/21";
  o.max_ports = 1024;
  std::string error;
  auto node = SluicedProcess::start(o, &error);
  ASSERT_NE(node, nullptr) << error;

  std::vector<uint32_t> port_no(kPorts);
  for (size_t first = 0; first < kPorts; first += kGroup) {
    const size_t count = std::min(kGroup, kPorts - first);
    std::vector<std::unique_ptr<VirtioPod>> pods(count);
    for (size_t k = 0; k < count; ++k) {
      const size_t i = first + k;
      // Client mode (sluiced connects, the default of sluice-cni): the pod
      // listens first, so sluiced's connect at AddPort finds it. Its
      // virtio_user waits in its probe for that connection, hence a thread.
      v1::AddPortRequest req = portRequest(podName(i), podIp(i).toString(), v1::VHOST_MODE_CLIENT);
      req.set_socket_subdir(podName(i));
      const std::string dir = node->socketDir() + "/" + podName(i);
      std::filesystem::create_directories(dir);
      const std::string socket = dir + "/net1.sock";
      absl::StatusOr<std::unique_ptr<VirtioPod>> pod = absl::UnknownError("not made");
      std::thread listener([&] { pod = VirtioPod::create(socket, /*server=*/true, podPool()); });
      const bool listening = waitFor([&] { return std::filesystem::exists(socket); });
      v1::AddPortResponse added;
      const grpc::Status s = listening ? node->addPort(req, &added) : grpc::Status::CANCELLED;
      if (!s.ok()) {
        // The listener waits for a connection that will not come: unblock it.
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket.c_str());
        (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
        listener.join();
        ::close(fd);
        FAIL() << "port " << i << ": " << (listening ? s.error_message() : "the pod never listened") << "\n"
               << node->log();
      }
      listener.join();
      ASSERT_TRUE(pod.ok()) << i << ": " << pod.status();
      pods[k] = std::move(*pod);
      port_no[i] = added.port().port_no();
      ASSERT_TRUE(node->waitLinkUp(port_no[i])) << i << "\n" << node->log();
    }
    // Each pod of the group sends one datagram to the next one's address.
    for (size_t k = 0; k < count; ++k) {
      const size_t i = first + k, to = first + (k + 1) % count;
      UdpFrameSpec spec{MacAddress::fromIpv4(podIp(i)), kGatewayMac, podIp(i), podIp(to)};
      spec.sequence = static_cast<uint32_t>(i);
      ASSERT_EQ(pods[k]->send({udpFrame(spec)}), 1u) << i;
    }
    for (size_t k = 0; k < count; ++k) {
      const size_t i = first + k, from = first + (k + count - 1) % count;
      std::vector<Frame> got = pods[k]->receive(1);
      ASSERT_EQ(got.size(), 1u) << "pod " << i << " got nothing\n" << node->stats().DebugString();
      EXPECT_EQ(udpSequence(got[0]), from) << "pod " << i;
      EXPECT_EQ(ethDst(got[0]), MacAddress::fromIpv4(podIp(i)));
      EXPECT_EQ(ethSrc(got[0]), kGatewayMac);
      EXPECT_EQ(ipv4Ttl(got[0]), 63);
      EXPECT_TRUE(ipv4ChecksumValid(got[0]));
    }
    // The group's pods go; their ports stay (sluiced keeps reconnecting).
    pods.clear();
  }

  EXPECT_EQ(node->ports().ports_size(), static_cast<int>(kPorts));
  EXPECT_EQ(node->health().ports(), kPorts);
  v1::GetStatsResponse s = node->stats();
  for (size_t i = 0; i < kPorts; ++i) {
    const v1::PortStats* p = portStats(s, port_no[i]);
    ASSERT_NE(p, nullptr) << i;
    EXPECT_EQ(p->rx_packets(), 1u) << "port " << port_no[i];
    EXPECT_EQ(p->tx_packets(), 1u) << "port " << port_no[i];
    EXPECT_EQ(p->tx_dropped(), 0u) << "port " << port_no[i];
  }
  for (const v1::DropCounter& d : s.drops()) EXPECT_EQ(d.packets(), 0u) << d.reason();
  EXPECT_EQ(node->stop(), 0) << node->log();
}

}  // namespace
}  // namespace sluice::test
