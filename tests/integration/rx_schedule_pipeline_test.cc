// Idle rx queues on the real PMD loop and control path (the ring node,
// tests/support/ring_node.h: ring ethdevs for pods): pods that send nothing
// turn idle and are polled in turn, and each one's packets, when it starts
// sending, all arrive at their destination byte for byte, the queue counted
// as woken once. A port added later leaves the other idle queues idle.
// Nothing here depends on timing: the tests wait on counters.
#include <gtest/gtest.h>

#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

constexpr unsigned kPods = 20;
constexpr unsigned kFirstHost = 10;  // pod i is 10.77.0.(10 + i)
constexpr uint32_t kBurst = 8;

// What pod `from`'s UDP frame to pod `to` becomes once routed: the gateway's
// MAC to the pod's, TTL one less.
Frame routed(unsigned from, unsigned to, uint32_t seq) {
  UdpFrameSpec s;
  s.src_mac = MacAddress::fromIpv4(kGateway);
  s.dst_mac = podMac(to);
  s.src_ip = podIp(from);
  s.dst_ip = podIp(to);
  s.ttl = 63;
  s.src_port = 2000;
  s.sequence = seq;
  return udpFrame(s);
}

class RxSchedulePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (unsigned i = 0; i < kPods; ++i) ports_.push_back(node_.addPod("rxidle-" + std::to_string(i), kFirstHost + i));
  }
  PmdCounters& counters() { return node_.counters(); }

  Node node_{nullptr};
  std::vector<uint16_t> ports_;  // pod i's port number
};

TEST_F(RxSchedulePipelineTest, EveryIdleQueueDeliversAllItsPacketsWhenItStartsSending) {
  // Nothing sent yet: every pod's queue turns idle, and is then polled in
  // turn (an iteration leaves most of them to later ones).
  ASSERT_TRUE(waitUntil([&] { return counters().rxq_idled.read() >= kPods; }));
  const uint64_t skipped = counters().rxq_idle_polls_skipped.read();
  ASSERT_TRUE(waitUntil([&] { return counters().rxq_idle_polls_skipped.read() > skipped + kPods; }));
  EXPECT_EQ(counters().rxq_idled.read(), kPods);
  EXPECT_EQ(counters().rxq_woken.read(), 0u);

  // Pods in an order unrelated to their turns: each sends a burst to the next.
  for (unsigned k = 0; k < kPods; ++k) {
    const unsigned i = (k * 7) % kPods;
    const unsigned from = kFirstHost + i, to = kFirstHost + (i + 1) % kPods;
    std::vector<Frame> burst;
    for (uint32_t s = 0; s < kBurst; ++s) burst.push_back(udpTo(from, podIp(to), 64, 2000, k * 100 + s));
    const uint64_t woken = counters().rxq_woken.read();
    const uint64_t rx = counters().ports[ports_[i]].rx_packets.read();
    node_.injectBurst(ports_[i], burst);
    const auto out = node_.collectAll();
    ASSERT_EQ(out.size(), kBurst) << "pod " << i;
    for (uint32_t s = 0; s < kBurst; ++s) {
      EXPECT_EQ(out[s].first, ports_[(i + 1) % kPods]) << "pod " << i << " frame " << s;
      EXPECT_EQ(out[s].second, routed(from, to, k * 100 + s)) << "pod " << i << " frame " << s;
    }
    EXPECT_EQ(counters().ports[ports_[i]].rx_packets.read() - rx, kBurst);
    EXPECT_EQ(counters().rxq_woken.read() - woken, 1u) << "pod " << i;
  }
}

TEST_F(RxSchedulePipelineTest, AQueueThatWokeTurnsIdleAgainAndStillDelivers) {
  ASSERT_TRUE(waitUntil([&] { return counters().rxq_idled.read() >= kPods; }));
  for (uint32_t round = 0; round < 3; ++round) {
    // Pod 0's queue is idle (it went idle, or idle again after its last
    // burst): its next packet wakes it.
    ASSERT_TRUE(waitUntil([&] { return counters().rxq_idled.read() == kPods + round; })) << "round " << round;
    const uint64_t woken = counters().rxq_woken.read();
    node_.inject(ports_[0], udpTo(kFirstHost, podIp(kFirstHost + 1), 64, 2000, round));
    const auto out = node_.collectAll();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].first, ports_[1]);
    EXPECT_EQ(out[0].second, routed(kFirstHost, kFirstHost + 1, round));
    EXPECT_EQ(counters().rxq_woken.read() - woken, 1u);
  }
}

TEST_F(RxSchedulePipelineTest, APortAddedLaterLeavesTheIdleQueuesIdle) {
  ASSERT_TRUE(waitUntil([&] { return counters().rxq_idled.read() >= kPods; }));
  const uint64_t idled = counters().rxq_idled.read();
  const uint16_t added = node_.addPod("rxidle-late", kFirstHost + kPods);
  // The new queue starts busy and turns idle; the others were idle all along.
  ASSERT_TRUE(waitUntil([&] { return counters().rxq_idled.read() >= idled + 1; }));
  // Long enough for any queue the new snapshot had made busy to turn idle
  // again: kRxIdleAfterEmptyPolls iterations, each leaving at least
  // kPods + 1 - kRxIdlePollsPerIteration idle polls.
  const uint64_t skipped = counters().rxq_idle_polls_skipped.read();
  ASSERT_TRUE(waitUntil([&] {
    return counters().rxq_idle_polls_skipped.read() >=
           skipped + uint64_t{kRxIdleAfterEmptyPolls} * (kPods + 1 - kRxIdlePollsPerIteration);
  }));
  EXPECT_EQ(counters().rxq_idled.read(), idled + 1);
  // And it delivers like the others.
  node_.inject(added, udpTo(kFirstHost + kPods, podIp(kFirstHost), 64, 2000, 7));
  const auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, routed(kFirstHost + kPods, kFirstHost, 7));
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "rx_schedule_pipeline_test"); }
