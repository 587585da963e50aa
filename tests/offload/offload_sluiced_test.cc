// Partial offload through the real sluiced (child process) with pods as
// net_virtio_user devices in this process, configured by flags as an
// operator would (--offload-provider, --offload-port), observed through the
// API and sluicectl:
//  - rte_flow on a vhost-user port: the probe says no and why (in stats and
//    `sluicectl stats`), nothing is offloaded (`sluicectl flows`: "no"),
//    every packet is delivered;
//  - the software engine: once the flow's megaflow is offloaded, every packet
//    of it takes the mark branch (exact counter delta) and arrives rewritten.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <csignal>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

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
  EXPECT_EQ(after.pmds(0).emc_hits() + after.pmds(0).smc_hits() + after.pmds(0).megaflow_hits(),
            before.pmds(0).emc_hits() + before.pmds(0).smc_hits() + before.pmds(0).megaflow_hits());
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
