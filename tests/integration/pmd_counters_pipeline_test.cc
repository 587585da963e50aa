// The PMD's counters of tx queue sharing and rx queues on the real PMD loop
// and control path (the ring node, tests/support/ring_node.h: ring ethdevs
// for pods and a VXLAN uplink): a batch sent under a shared tx queue's lock
// counts as locked, any other does not; each rx queue's packets add up to
// its port's. Exact deltas per burst.
#include <gtest/gtest.h>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kA = 10, kB = 11;
const Ipv4Address kRemotePod = *Ipv4Address::parse("10.78.0.5");  // behind remote node r2

class PmdCountersPipelineTest : public ::testing::Test {
 protected:
  static NodeOptions options() {
    NodeOptions o;
    o.vxlan = true;
    o.edit_config = [](SluicedConfig& c) {
      // Remote node r2's VTEP resolved from the start: its tunnel can send.
      c.overlay.uplink->static_neighbors.push_back({kRemote2, *MacAddress::parse("02:77:77:00:00:02")});
    };
    return o;
  }
  void SetUp() override {
    a_ = node_.addPod("cnt-a", kA);
    b_ = node_.addPod("cnt-b", kB);
  }
  std::vector<Frame> fromA(Ipv4Address dst, uint32_t n, uint32_t first_sequence) {
    std::vector<Frame> out;
    for (uint32_t i = 0; i < n; ++i) {
      UdpFrameSpec s{podMac(kA), MacAddress::fromIpv4(kGateway), podIp(kA), dst};
      s.sequence = first_sequence + i;
      out.push_back(udpFrame(s));
    }
    return out;
  }

  Node node_{nullptr, options()};
  uint16_t a_ = 0, b_ = 0;
};

// One PMD has a tx queue of its own on every pod port: batches to pods take
// no lock. The uplink's queue is shared with control (its ARP requests):
// every batch to it does.
TEST_F(PmdCountersPipelineTest, OnlyBatchesToASharedTxQueueCountAsLocked) {
  PmdCounters& c = node_.counters();
  const uint64_t batches = c.tx_batches.read(), locked = c.tx_locked_batches.read();
  node_.injectBurst(a_, fromA(podIp(kB), 5, 0));
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 5u);
  for (const auto& [port_no, frame] : out) EXPECT_EQ(port_no, b_);
  EXPECT_EQ(c.tx_batches.read(), batches + 1);
  EXPECT_EQ(c.tx_locked_batches.read(), locked);

  node_.injectBurst(a_, fromA(kRemotePod, 5, 5));
  out = node_.collectAll();
  ASSERT_EQ(out.size(), 5u);
  for (const auto& [port_no, frame] : out) EXPECT_EQ(port_no, kUplinkPort);
  EXPECT_EQ(c.tx_batches.read(), batches + 2);
  EXPECT_EQ(c.tx_locked_batches.read(), locked + 1);
}

// Rx queue 0 of each port (ring ports have one) counts what the port
// received, burst by burst.
TEST_F(PmdCountersPipelineTest, EachRxQueueCountsWhatItsPortReceived) {
  PmdCounters& c = node_.counters();
  const uint64_t queue_a = c.rx_queue_packets[a_][0].read(), port_a = c.ports[a_].rx_packets.read();
  const uint64_t queue_b = c.rx_queue_packets[b_][0].read();
  node_.injectBurst(a_, fromA(podIp(kB), 7, 0));
  node_.injectBurst(a_, fromA(podIp(kB), 3, 7));
  node_.collectAll();
  EXPECT_EQ(c.rx_queue_packets[a_][0].read(), queue_a + 10);
  EXPECT_EQ(c.ports[a_].rx_packets.read(), port_a + 10);
  EXPECT_EQ(c.rx_queue_packets[a_][1].read(), 0u);
  EXPECT_EQ(c.rx_queue_packets[b_][0].read(), queue_b);
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "pmd_counters_pipeline_test"); }
