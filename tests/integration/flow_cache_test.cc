// Integration tests of the flow caches on real DPDK: sluiced as a
// child process, pods as net_virtio_user devices in this process. They check
// that packets resolve at exactly one tier each, that K source ports to one
// pod share one megaflow, that deleting a pod removes its cached flows before
// the call returns, and that idle megaflows expire. Every wait is on a
// condition read through the API, with a generous deadline.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace flow_cache_test {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.20");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.21");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv4(kIpB);
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);

// This file's pods' buffers (EAL is up: forwarding_test.cc's main starts it).
class FlowCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { startNode({}); }

  void startNode(const SluicedOptions& options) {
    ASSERT_NE(podPool(), nullptr);
    std::string error;
    node_ = SluicedProcess::start(options, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse a, b;
    ASSERT_TRUE(node_->addPort(portRequest("pod-fa", kIpA.toString()), &a).ok());
    ASSERT_TRUE(node_->addPort(portRequest("pod-fb", kIpB.toString()), &b).ok());
    port_a_ = a.port().port_no();
    port_b_ = b.port().port_no();
    auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(port_a_)) << node_->log();
    ASSERT_TRUE(node_->waitLinkUp(port_b_)) << node_->log();
  }

  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  // Frames first..first+n of A->B over k flows (source ports 3000..3000+k-1).
  static std::vector<Frame> flows(size_t first, size_t n, size_t k) {
    std::vector<Frame> frames;
    for (size_t i = first; i < first + n; ++i) {
      UdpFrameSpec s{kMacA, kGatewayMac, kIpA, kIpB};
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(3000 + i % k);
      frames.push_back(udpFrame(s));
    }
    return frames;
  }

  v1::ListFlowsResponse listFlows() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListFlowsResponse r;
    grpc::Status s = node_->api().ListFlows(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }

  // Sends `frames` from A and checks each arrives at B rewritten and in order.
  void sendAndCheck(const std::vector<Frame>& frames) {
    ASSERT_EQ(pod_a_->send(frames), frames.size());
    std::vector<Frame> got = pod_b_->receive(frames.size());
    ASSERT_EQ(got.size(), frames.size()) << node_->stats().DebugString();
    for (size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = got[i];
      ASSERT_EQ(f.size(), frames[i].size());
      EXPECT_EQ(udpSequence(f), udpSequence(frames[i])) << "order kept";
      EXPECT_EQ(ethDst(f), kMacB);
      EXPECT_EQ(ethSrc(f), kGatewayMac);
      EXPECT_EQ(ipv4Ttl(f), 63);
      EXPECT_TRUE(ipv4ChecksumValid(f));
      ASSERT_TRUE(std::equal(f.begin() + 26, f.end(), frames[i].begin() + 26)) << i;
    }
  }

  static uint64_t tierSum(const v1::PmdStats& p) {
    return p.run_hits() + p.emc_hits() + p.smc_hits() + p.megaflow_hits() + p.misses() + p.not_looked_up();
  }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0, port_b_ = 0;
};

TEST_F(FlowCacheTest, ManySourcePortsToOnePodShareOneMegaflowAndLaterPacketsHit) {
  constexpr size_t kFlows = 100, kRound = 500, kRounds = 4;
  // Round 1: the first packet of the flow misses; its megaflow gets installed.
  sendAndCheck(flows(0, kRound, kFlows));
  ASSERT_TRUE(waitFor([&] { return listFlows().flows_size() == 1; })) << listFlows().DebugString();
  v1::PmdStats first = node_->stats().pmds(0);
  EXPECT_GE(first.misses(), 1u);
  EXPECT_GE(first.upcalls(), 1u);
  // Rounds 2..4: the megaflow is cached, so every packet hits a tier.
  for (size_t r = 1; r < kRounds; ++r) sendAndCheck(flows(r * kRound, kRound, kFlows));

  v1::GetStatsResponse s = node_->stats();
  ASSERT_EQ(s.pmds_size(), 1);
  const v1::PmdStats& p = s.pmds(0);
  constexpr uint64_t kTotal = kRound * kRounds;
  EXPECT_EQ(p.packets(), kTotal);
  EXPECT_EQ(tierSum(p), kTotal) << "each packet is counted at exactly one tier";
  EXPECT_EQ(p.not_looked_up(), 0u);
  EXPECT_EQ(p.misses(), first.misses()) << "no miss once the megaflow is installed";
  EXPECT_EQ(p.misses(), p.upcalls() + p.upcalls_coalesced() + p.lost_upcalls());
  EXPECT_EQ(p.lost_upcalls(), 0u);
  EXPECT_GE(p.upcalls(), 1u);
  EXPECT_EQ(p.run_hits() + p.emc_hits() + p.smc_hits() + p.megaflow_hits(), kTotal - p.misses());
  EXPECT_EQ(p.megaflows(), 1u);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), kTotal);
  for (const v1::DropCounter& d : s.drops()) EXPECT_EQ(d.packets(), 0u) << d.reason();

  // One megaflow for all kFlows source ports: its mask holds only what the
  // decision read (in-port and A's own sources, which source validation
  // checked; EtherType, destination, TTL class), and it counted every hit.
  v1::ListFlowsResponse fl = listFlows();
  ASSERT_EQ(fl.flows_size(), 1);
  const v1::Flow& f = fl.flows(0);
  EXPECT_EQ(f.match(), "in_port=" + std::to_string(port_a_) + ",eth_type=0x0800,ttl=2+,eth_src=" + kMacA.toString() +
                          ",ipv4_src=" + kIpA.toString() + ",ipv4_dst=" + kIpB.toString());
  EXPECT_EQ(f.actions(), "output:" + std::to_string(port_b_) + "(l3_rewrite)");
  EXPECT_EQ(f.packets(), kTotal - p.misses());
  EXPECT_EQ(f.bytes(), f.packets() * 60);
  EXPECT_EQ(f.mask(),
            "in_port=0xffff,eth_type=0xffff,ttl=0xff,eth_src=ff:ff:ff:ff:ff:ff,ipv4_src=255.255.255.255,"
            "ipv4_dst=255.255.255.255");

  // The operator's view of the same call.
  auto [rc, text] = sluicectl(node_->apiSocket(), "flows");
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find(f.match() + " -> " + f.actions()), std::string::npos) << text;
  auto [jrc, json] = sluicectl(node_->apiSocket(), "--json flows");
  EXPECT_EQ(jrc, 0) << json;
  EXPECT_NE(json.find("\"match\": \"" + f.match() + "\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"packets\": \"" + std::to_string(f.packets()) + "\""), std::string::npos) << json;
  auto [src, stats_text] = sluicectl(node_->apiSocket(), "stats");
  EXPECT_NE(stats_text.find("megaflow hits"), std::string::npos) << stats_text;
}

TEST_F(FlowCacheTest, DeletingThePodRemovesItsMegaflowBeforeTheCallReturns) {
  sendAndCheck(flows(0, 100, 10));
  ASSERT_TRUE(waitFor([&] { return listFlows().flows_size() == 1; }));
  // Warm every tier for the flow: these hit the cache.
  sendAndCheck(flows(100, 100, 10));
  ASSERT_TRUE(node_->deletePort("pod-fb", "net1").ok());
  // The call has returned: no megaflow may still send to B.
  v1::ListFlowsResponse after = listFlows();
  for (const v1::Flow& f : after.flows()) EXPECT_EQ(f.actions().find("output:"), std::string::npos) << f.match();

  ASSERT_EQ(pod_a_->send(flows(200, 10, 10)), 10u);
  ASSERT_TRUE(waitFor([&] { return portStats(node_->stats(), port_a_)->rx_packets() == 210; }));
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "no_route"), 10u);
  EXPECT_EQ(dropCount(s, "port_gone"), 0u);
  EXPECT_EQ(tierSum(s.pmds(0)), 210u);
  EXPECT_EQ(pod_b_->drainCount(), 0u);
}

// The upcall budget is tiny (one per second, two at once), so a pod that
// sends to new destinations runs out at once. What it sends is still
// forwarded, decided inline by the PMD: only the caching waits. The other
// pod's new flow still gets its upcall, from its own share.
class FlowUpcallBudgetTest : public FlowCacheTest {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.extra_flags = {"--upcall-rate", "1", "--upcall-burst", "2"};
    startNode(o);
  }
};

TEST_F(FlowUpcallBudgetTest, MissesOverTheUpcallBudgetAreForwardedAndOtherPortsKeepTheirShare) {
  auto to = [](Ipv4Address dst, uint32_t seq) {
    UdpFrameSpec s{kMacA, kGatewayMac, kIpA, dst};
    s.sequence = seq;
    return udpFrame(s);
  };
  // One burst from A: two unrouted destinations in different /8s (two
  // megaflows), then B. A's share is one upcall; the PMD's other token is
  // kept for the other port.
  const std::vector<Frame> burst = {to(*Ipv4Address::parse("10.99.0.1"), 1),
                                    to(*Ipv4Address::parse("172.16.0.1"), 2), to(kIpB, 3)};
  ASSERT_EQ(pod_a_->send(burst), burst.size());
  std::vector<Frame> got = pod_b_->receive(1);
  ASSERT_EQ(got.size(), 1u) << "forwarded although its upcall was not sent\n" << node_->stats().DebugString();
  EXPECT_EQ(udpSequence(got[0]), 3u);
  EXPECT_EQ(ipv4Ttl(got[0]), 63);
  ASSERT_TRUE(waitFor([&] { return dropCount(node_->stats(), "no_route") == 2; })) << node_->stats().DebugString();
  v1::PmdStats p = node_->stats().pmds(0);
  EXPECT_EQ(p.misses(), 3u);
  EXPECT_EQ(p.upcalls(), 1u);
  EXPECT_EQ(p.lost_upcalls(), 2u);

  // B's first packet to A: a new megaflow, upcalled from B's own share.
  UdpFrameSpec back{kMacB, kGatewayMac, kIpB, kIpA};
  back.sequence = 4;
  ASSERT_EQ(pod_b_->send({udpFrame(back)}), 1u);
  got = pod_a_->receive(1);
  ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
  EXPECT_EQ(udpSequence(got[0]), 4u);
  p = node_->stats().pmds(0);
  EXPECT_EQ(p.upcalls(), 2u);
  EXPECT_EQ(p.lost_upcalls(), 2u);
  ASSERT_TRUE(waitFor([&] { return listFlows().flows_size() == 2; })) << listFlows().DebugString();
  const v1::GetStatsResponse s = node_->stats();
  for (const v1::DropCounter& d : s.drops()) {
    if (d.reason() != "no_route") {
      EXPECT_EQ(d.packets(), 0u) << d.reason();
    }
  }
}

class FlowExpiryTest : public FlowCacheTest {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.extra_flags = {"--flow-idle-timeout-ms", "200"};
    startNode(o);
  }
};

TEST_F(FlowExpiryTest, IdleMegaflowsExpire) {
  sendAndCheck(flows(0, 20, 5));
  ASSERT_TRUE(waitFor([&] { return listFlows().flows_size() == 1; }));
  // No more traffic: the megaflow goes once idle for the timeout.
  EXPECT_TRUE(waitFor([&] { return listFlows().flows_size() == 0; })) << listFlows().DebugString();
  EXPECT_EQ(node_->stats().pmds(0).megaflows(), 0u);
  // The flow comes back through an upcall when traffic resumes.
  sendAndCheck(flows(20, 20, 5));
  EXPECT_TRUE(waitFor([&] { return listFlows().flows_size() == 1; }));
}

}  // namespace flow_cache_test
}  // namespace sluice::test
