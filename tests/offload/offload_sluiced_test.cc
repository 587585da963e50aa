// Partial offload through the real sluiced (child process) with pods as
// net_virtio_user devices in this process, configured by flags as an
// operator would (--offload-provider, --offload-port), observed through the
// API and sluicectl:
//  - rte_flow on a vhost-user port: the probe says no and why (in stats and
//    `sluicectl stats`), nothing is offloaded (`sluicectl flows`: "no"),
//    every packet is delivered;
//  - the software engine: once the flow's megaflow is offloaded, every packet
//    of it takes the mark branch (exact counter delta) and arrives rewritten;
//  - the software engine on a VXLAN uplink (net_pcap replaying VXLAN frames
//    from a remote node's VTEP to a pod here): the decap megaflow is
//    offloaded (`sluicectl flows`: offloaded: yes), its packets take the mark
//    branch (counters), are decapsulated and arrive rewritten, and the
//    tunnel's rx counters count them.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::test {
namespace {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.30");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.31");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");

rte_mempool* pool() {
  static rte_mempool* p = rte_pktmbuf_pool_create("offl_pods", 8192, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  return p;
}

class OffloadSluicedTest : public ::testing::Test {
 protected:
  void start(const std::string& provider) {
    ASSERT_NE(pool(), nullptr);
    SluicedOptions o;
    o.extra_flags = {"--offload-provider", provider, "--offload-port", "offl-a/net1"};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse a, b;
    ASSERT_TRUE(node_->addPort(portRequest("offl-a", kIpA.toString()), &a).ok());
    ASSERT_TRUE(node_->addPort(portRequest("offl-b", kIpB.toString()), &b).ok());
    port_a_ = a.port().port_no();
    auto pa = VirtioPod::create(a.port().socket_path(), false, pool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, pool());
    ASSERT_TRUE(pa.ok() && pb.ok());
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(port_a_)) << node_->log();
    ASSERT_TRUE(node_->waitLinkUp(b.port().port_no())) << node_->log();
  }
  std::vector<Frame> frames(uint32_t n, uint32_t first_seq) {
    std::vector<Frame> out;
    for (uint32_t i = 0; i < n; ++i) {
      UdpFrameSpec s;
      s.src_mac = MacAddress::fromIpv4(kIpA);
      s.dst_mac = MacAddress::fromIpv4(kGateway);
      s.src_ip = kIpA;
      s.dst_ip = kIpB;
      s.src_port = static_cast<uint16_t>(2000 + i % 7);  // several flows, one megaflow
      s.sequence = first_seq + i;
      out.push_back(udpFrame(s));
    }
    return out;
  }
  // Sends n frames A -> B and checks all arrive, rewritten, in order.
  void sendAndReceive(uint32_t n, uint32_t first_seq) {
    ASSERT_EQ(pod_a_->send(frames(n, first_seq)), n);
    std::vector<Frame> got = pod_b_->receive(n);
    ASSERT_EQ(got.size(), n);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(udpSequence(got[i]), first_seq + i);
      EXPECT_EQ(ipv4Ttl(got[i]), 63);
      EXPECT_TRUE(ipv4ChecksumValid(got[i]));
      EXPECT_EQ(ethDst(got[i]), MacAddress::fromIpv4(kIpB));
    }
  }
  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0;
};

TEST_F(OffloadSluicedTest, RteFlowOnAVhostPortSaysNoAndTrafficFlows) {
  start("rte_flow");
  sendAndReceive(64, 0);
  ASSERT_TRUE(waitFor([&] {
    v1::GetStatsResponse s = node_->stats();
    for (const auto& r : s.offload().refused())
      if (r.reason() == "port_not_capable" && r.packets() == 1) return true;
    return false;
  })) << node_->log();
  sendAndReceive(64, 64);
  v1::GetStatsResponse s = node_->stats();
  ASSERT_TRUE(s.has_offload());
  EXPECT_EQ(s.offload().provider(), "rte_flow");
  EXPECT_TRUE(s.offload().port_attached());
  EXPECT_EQ(s.offload().port_no(), port_a_);
  EXPECT_FALSE(s.offload().capable());
  EXPECT_NE(s.offload().capability_reason().find("rte_flow_validate"), std::string::npos)
      << s.offload().capability_reason();
  EXPECT_EQ(s.offload().offloaded(), 0u);
  EXPECT_EQ(s.pmds(0).mark_hits(), 0u);
  CommandResult stats = sluicectl(node_->apiSocket(), "stats");
  EXPECT_EQ(stats.exit_code, 0);
  EXPECT_NE(stats.output.find("Partial offload (provider rte_flow)"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("CANNOT mark"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("refused port_not_capable"), std::string::npos) << stats.output;
  CommandResult flows = sluicectl(node_->apiSocket(), "flows");
  EXPECT_NE(flows.output.find("offloaded: no (port_not_capable)"), std::string::npos) << flows.output;
}

TEST_F(OffloadSluicedTest, SoftwareEngineSendsMarkedPacketsThroughTheMarkBranch) {
  start("software");
  sendAndReceive(32, 0);
  // The megaflow is offloaded once the offload thread has installed its rule.
  ASSERT_TRUE(waitFor([&] { return sluicectl(node_->apiSocket(), "flows").output.find("offloaded: yes") !=
                                   std::string::npos; }))
      << sluicectl(node_->apiSocket(), "flows").output << node_->log();
  const v1::GetStatsResponse before = node_->stats();
  sendAndReceive(256, 32);
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(after.pmds(0).mark_hits() - before.pmds(0).mark_hits(), 256u);
  EXPECT_EQ(after.pmds(0).mark_misses() - before.pmds(0).mark_misses(), 0u);
  EXPECT_EQ(after.pmds(0).run_hits() + after.pmds(0).emc_hits() + after.pmds(0).smc_hits() + after.pmds(0).megaflow_hits(),
            before.pmds(0).run_hits() + before.pmds(0).emc_hits() + before.pmds(0).smc_hits() + before.pmds(0).megaflow_hits());
  EXPECT_EQ(after.offload().provider(), "software");
  EXPECT_TRUE(after.offload().capable());
  EXPECT_EQ(after.offload().offloaded(), 1u);
  CommandResult stats = sluicectl(node_->apiSocket(), "stats");
  EXPECT_NE(stats.output.find("SOFTWARE ENGINE, not hardware"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("mark hits (offload)"), std::string::npos) << stats.output;
  EXPECT_NE(node_->log().find("SOFTWARE flow engine"), std::string::npos);
  // Deleting the destination pod removes the rule (revalidation).
  v1::DeletePortResponse d;
  ASSERT_TRUE(node_->deletePort("offl-b", "net1", &d).ok());
  ASSERT_TRUE(waitFor([&] { return node_->stats().offload().removed() == 1; })) << node_->log();
}


// A classic pcap file (microsecond timestamps, Ethernet link type) of frames.
void writePcap(const std::string& path, const std::vector<Frame>& frames) {
  std::ofstream out(path, std::ios::binary);
  auto put32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);  // magic, host order (little-endian readers accept it)
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(1);  // LINKTYPE_ETHERNET
  for (const Frame& f : frames) {
    put32(0);
    put32(0);
    put32(static_cast<uint32_t>(f.size()));
    put32(static_cast<uint32_t>(f.size()));
    out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }
}

TEST(OffloadSluicedVxlanTest, SoftwareEngineOnAVxlanUplinkMarksDecapFlows) {
  ASSERT_NE(pool(), nullptr);
  const std::string dir = "/tmp/offl-vx-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  // 32 frames from remote VTEP 192.168.77.2 (VNI 42): pod 10.245.0.2 there ->
  // pod A here, 8 source ports (one megaflow), replayed forever.
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 32; ++i) {
    UdpFrameSpec s;
    s.src_mac = *MacAddress::parse("02:45:00:00:00:02");
    s.dst_mac = MacAddress::fromIpv4(kGateway);
    s.src_ip = *Ipv4Address::parse("10.245.0.2");
    s.dst_ip = kIpA;
    s.src_port = static_cast<uint16_t>(3000 + i % 8);
    s.sequence = i;
    OuterSpec o;
    o.vni = 42;
    frames.push_back(vxlanFrame(udpFrame(s), o));
  }
  writePcap(dir + "/uplink.pcap", frames);
  {
    std::ofstream cfg(dir + "/sluiced.json");
    cfg << R"({"vni": 42,
      "uplink": {"devargs": "net_pcap_offlup,rx_pcap=)" << dir << R"(/uplink.pcap,infinite_rx=1",
                 "vtep": "192.168.77.1/24", "mtu": 1500},
      "remote-nodes": [{"name": "r2", "vtep": "192.168.77.2", "pod-cidrs": ["10.245.0.0/24"]}]})";
  }
  SluicedOptions o;
  o.extra_flags = {"--config", dir + "/sluiced.json", "--offload-provider", "software"};
  std::string error;
  auto node = SluicedProcess::start(o, &error);
  ASSERT_NE(node, nullptr) << error;
  v1::AddPortResponse a;
  const grpc::Status added = node->addPort(portRequest("offl-a", kIpA.toString()), &a);
  ASSERT_TRUE(added.ok()) << added.error_message() << node->log();
  auto pod = VirtioPod::create(a.port().socket_path(), false, pool());
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(node->waitLinkUp(a.port().port_no())) << node->log();

  // The decap megaflow is offloaded as a tunnel rule.
  ASSERT_TRUE(waitFor([&] { return sluicectl(node->apiSocket(), "flows").output.find("offloaded: yes") !=
                                   std::string::npos; }))
      << sluicectl(node->apiSocket(), "flows").output << node->log();
  CommandResult flows = sluicectl(node->apiSocket(), "flows");
  EXPECT_NE(flows.output.find("tun_vni=42"), std::string::npos) << flows.output;
  EXPECT_NE(flows.output.find("ipv4_dst=10.250.0.30"), std::string::npos) << flows.output;
  const v1::GetStatsResponse before = node->stats();
  // Marked packets keep arriving at the pod, decapsulated and rewritten.
  std::vector<Frame> got = (*pod)->receive(64);
  ASSERT_EQ(got.size(), 64u);
  for (const Frame& f : got) {
    ASSERT_EQ(f.size(), 60u);
    EXPECT_EQ(ipv4Ttl(f), 63);
    EXPECT_TRUE(ipv4ChecksumValid(f));
    EXPECT_EQ(ethDst(f), MacAddress::fromIpv4(kIpA));
  }
  ASSERT_TRUE(waitFor([&] { return node->stats().pmds(0).mark_hits() > before.pmds(0).mark_hits() + 1000; }))
      << node->log();
  const v1::GetStatsResponse after = node->stats();
  EXPECT_TRUE(after.offload().capable());
  EXPECT_EQ(after.offload().offloaded(), 1u);
  EXPECT_EQ(after.offload().port_no(), 31u);  // the uplink's port number
  // Once offloaded (the state says so only after the engine's sync: every
  // later burst is marked), the flow's packets take the mark branch, not the caches.
  const uint64_t cached = after.pmds(0).run_hits() + after.pmds(0).emc_hits() + after.pmds(0).smc_hits() + after.pmds(0).megaflow_hits() -
                          (before.pmds(0).run_hits() + before.pmds(0).emc_hits() + before.pmds(0).smc_hits() + before.pmds(0).megaflow_hits());
  EXPECT_EQ(cached, 0u);
  EXPECT_EQ(after.pmds(0).mark_misses(), before.pmds(0).mark_misses());
  // The tunnel's rx counters count what the mark branch decapsulated.
  ASSERT_EQ(after.tunnels_size(), 1);
  EXPECT_GT(after.tunnels(0).rx_packets(), before.tunnels(0).rx_packets());
  CommandResult stats = sluicectl(node->apiSocket(), "stats");
  EXPECT_NE(stats.output.find("mark hits (offload)"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("software engine:"), std::string::npos) << stats.output;
  pod->reset();
  EXPECT_EQ(node->stop(), 0) << node->log();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // A pod's vhost-user socket closed by sluiced (pod deleted) must not kill
  // the test process on its next write.
  std::signal(SIGPIPE, SIG_IGN);
  if (!sluice::test::initPodEal("offload_sluiced_test")) return 1;
  return RUN_ALL_TESTS();
}
