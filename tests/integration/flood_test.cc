// Floods on the real fast path (the ring node: the real PMD loop and control
// path in one process, ring ethdevs for pods and the VXLAN uplink): one pod
// sends to random destinations and hosts that are no remote node send VXLAN
// from random sources, while another pod sets up new flows. The innocent
// pod's flows are forwarded from their first packet and cached (their
// upcalls are sent from its own share of the PMD's upcall budget); the
// flood is dropped and counted where it enters: the random VXLAN in the
// uplink stage (no lookup, no upcall, no megaflow), the random destinations
// as a few prefix megaflows that cannot fill the table.
//
// The upcall budget is a burst of 70 over 7 ports and one token an hour (the
// gate is told the TSC runs 3600 times slower), so nothing refills during
// the test and what each port may send is exact: a port's own share is 10,
// and the PMD keeps 35 back for the ports that have not spent their share.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kAttacker = 10, kInnocent = 11;
constexpr unsigned kDestinations[] = {20, 21, 22, 23};  // local pods the innocent pod talks to

uint64_t drops(Node& node, DropReason r) { return node.counters().drops[static_cast<size_t>(r)].read(); }

class FloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeOptions o;
    o.vxlan = true;
    o.flow_limit = 512;
    o.gate.rate_per_sec = 1;
    o.gate.burst = 70;
    o.gate.tsc_hz = rte_get_tsc_hz() * 3600;
    node_ = std::make_unique<Node>(nullptr, o);
    attacker_ = node_->addPod("flood-a", kAttacker);
    innocent_ = node_->addPod("flood-b", kInnocent);
    for (unsigned d : kDestinations) port_of_[d] = node_->addPod("flood-d" + std::to_string(d), d);
  }

  // 32 frames from the attacker to random addresses outside 10/8, where the
  // node's and the remote node's pod CIDRs are (so every one is a no_route
  // drop, matched as its /8).
  std::vector<Frame> randomDestinations() {
    std::vector<Frame> burst;
    while (burst.size() < 32) {
      const uint32_t dst = static_cast<uint32_t>(rng_());
      if ((dst >> 24) == 10) continue;
      burst.push_back(udpTo(kAttacker, Ipv4Address{dst}, 64, static_cast<uint16_t>(rng_()), seq_++));
    }
    return burst;
  }
  // 32 VXLAN frames to our VTEP and VNI from random VTEPs that are no remote
  // node, each carrying a packet to a local pod.
  std::vector<Frame> randomSources() {
    std::vector<Frame> burst;
    while (burst.size() < 32) {
      const Ipv4Address src{static_cast<uint32_t>(rng_())};
      if (src.value == kRemote2.value || src.value == kVtep.value) continue;
      burst.push_back(vxlanTo(src, podIp(kDestinations[rng_() % 4]), 64, static_cast<uint16_t>(rng_()), seq_++));
    }
    return burst;
  }
  void flood(int rounds) {
    for (int r = 0; r < rounds; ++r) {
      node_->injectBurst(attacker_, randomDestinations());
      node_->injectBurst(kUplinkPort, randomSources());
    }
  }
  // The innocent pod's packet to each of its destinations, each checked to
  // arrive where it should.
  void innocentRound(uint16_t sport) {
    for (unsigned d : kDestinations) node_->inject(innocent_, udpTo(kInnocent, podIp(d), 64, sport, seq_++));
    std::map<uint16_t, int> arrived;
    for (const auto& [port, frame] : node_->collectAll()) {
      ++arrived[port];
      EXPECT_EQ(ipv4Ttl(frame), 63);
      EXPECT_EQ(ethDst(frame), podMac(podOfPort(port)));
    }
    std::map<uint16_t, int> expected;
    for (unsigned d : kDestinations) expected[port_of_[d]] = 1;
    EXPECT_EQ(arrived, expected) << "every packet of the innocent pod is forwarded, from the first";
  }

  unsigned podOfPort(uint16_t port) {
    for (const auto& [host, p] : port_of_)
      if (p == port) return host;
    return 0;
  }

  std::unique_ptr<Node> node_;
  uint16_t attacker_ = 0, innocent_ = 0;
  std::map<unsigned, uint16_t> port_of_;
  std::mt19937 rng_{2026};
  uint32_t seq_ = 0;
};

TEST_F(FloodTest, TheFloodIsDroppedWhereItEntersAndAnotherPodsNewFlowsSetUp) {
  const uint64_t unknown0 = drops(*node_, DropReason::kVxlanUnknownSource);
  const uint64_t no_route0 = drops(*node_, DropReason::kNoRoute);
  constexpr int kRounds = 8;
  flood(kRounds);
  innocentRound(1000);
  flood(kRounds);

  // Cached: a megaflow for each of the innocent pod's destinations.
  for (unsigned d : kDestinations)
    EXPECT_TRUE(node_->waitForFlow("ipv4_dst=" + podIp(d).toString())) << podIp(d).toString();
  // Its next packets hit them: no more misses for it.
  const uint64_t misses = node_->counters().misses.read();
  innocentRound(2000);
  EXPECT_EQ(node_->counters().misses.read(), misses);

  // Where the flood entered: every random-source VXLAN frame in the uplink
  // stage, every random destination at the attacker's port.
  const uint64_t flood_frames = 2 * kRounds * 32;
  EXPECT_EQ(drops(*node_, DropReason::kVxlanUnknownSource) - unknown0, flood_frames);
  EXPECT_EQ(node_->counters().ports[kUplinkPort].rx_dropped.read(), flood_frames);
  EXPECT_EQ(drops(*node_, DropReason::kNoRoute) - no_route0, flood_frames);
  EXPECT_EQ(node_->counters().ports[attacker_].rx_dropped.read(), flood_frames);
  EXPECT_EQ(node_->tunnelRx().at("r2").first, 0u) << "strangers' frames are no tunnel's traffic";
  for (unsigned d : kDestinations)
    EXPECT_EQ(node_->counters().ports[port_of_[d]].tx_packets.read(), 2u) << "the flood reached no pod";

  // The attacker's upcalls: its own share plus what the PMD had above the
  // half it keeps back; none from the uplink. Its megaflows are prefixes.
  EXPECT_EQ(node_->counters().upcalls.read(), 10u + 25u + 4u) << "the attacker's 35, the innocent pod's 4";
  size_t attacker_flows = 0;
  for (const FlowView& f : node_->control().listFlows()) {
    if (f.actions != "drop:no_route") continue;
    ++attacker_flows;
    EXPECT_NE(f.mask.find("ipv4_dst=255.0.0.0"), std::string::npos) << f.match << " " << f.mask;
  }
  EXPECT_GT(attacker_flows, 0u);
  EXPECT_LE(attacker_flows, 35u);
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "flood_test"); }
