// RxSchedule (dataplane/datapath/rx_schedule.h) driven one iteration at a
// time with a fake poll and a clock the test sets: which queues each
// iteration polls, when a queue turns idle and busy again, how many idle
// polls an iteration makes and leaves, and what a new snapshot keeps.
#include "dataplane/datapath/rx_schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

namespace sluice {
namespace {

constexpr uint64_t kTscHz = 1'000'000'000;  // 1 GHz: 1 µs is 1000 cycles
constexpr uint64_t kRevisit = kTscHz / 1'000'000 * kRxIdleRevisitUs;

std::vector<RxQueueRef> queues(uint16_t first_port, uint16_t count) {
  std::vector<RxQueueRef> q;
  for (uint16_t i = 0; i < count; ++i)
    q.push_back({static_cast<uint16_t>(100 + first_port + i), 0, static_cast<uint16_t>(first_port + i)});
  return q;
}

class RxScheduleTest : public ::testing::Test {
 protected:
  // One iteration at `now`: each poll recorded by port number, answered
  // with ready_[port] packets (taken: a queue has them once).
  bool iterate(uint64_t now) {
    polled_.clear();
    return schedule_.pollOnce(now, [this](const RxQueueRef& q) -> uint16_t {
      ++polled_[q.port_no];
      const uint16_t n = ready_[q.port_no];
      ready_[q.port_no] = 0;
      return n;
    });
  }
  // Iterations at `now` until every queue of `qs` has turned idle (each
  // started busy with nothing to receive).
  void idleAll(uint64_t now) {
    for (unsigned i = 0; i < kRxIdleAfterEmptyPolls; ++i) iterate(now);
  }
  uint64_t idlePolls() const { return counters_->rxq_idle_polls.read(); }
  uint64_t skipped() const { return counters_->rxq_idle_polls_skipped.read(); }

  std::unique_ptr<PmdCounters> counters_ = std::make_unique<PmdCounters>();
  RxSchedule schedule_{*counters_, kTscHz};
  std::map<uint16_t, uint16_t> ready_;   // packets each port's queue has
  std::map<uint16_t, unsigned> polled_;  // polls by port number, last iteration
};

TEST_F(RxScheduleTest, BusyQueuesArePolledEveryIteration) {
  const auto qs = queues(0, 3);
  schedule_.assign({}, qs);
  for (unsigned i = 0; i < 3 * kRxIdleAfterEmptyPolls; ++i) {
    for (const RxQueueRef& q : qs) ready_[q.port_no] = 1;
    iterate(1000 + i);
    ASSERT_EQ(polled_.size(), 3u) << "iteration " << i;
    for (const RxQueueRef& q : qs) ASSERT_EQ(polled_[q.port_no], 1u) << "iteration " << i;
  }
  EXPECT_EQ(schedule_.busyCount(), 3u);
  EXPECT_EQ(counters_->rxq_idled.read(), 0u);
  EXPECT_EQ(idlePolls(), 0u);
  EXPECT_EQ(skipped(), 0u);
}

TEST_F(RxScheduleTest, AQueueTurnsIdleAfterItsEmptyPollsInARow) {
  const auto qs = queues(0, 2);
  schedule_.assign({}, qs);
  // Port 0 receives every iteration; port 1 every iteration but the last
  // kRxIdleAfterEmptyPolls - 1: not idle yet.
  for (unsigned i = 0; i < 100; ++i) {
    ready_[0] = ready_[1] = 1;
    iterate(5000);
  }
  for (unsigned i = 0; i + 1 < kRxIdleAfterEmptyPolls; ++i) {
    ready_[0] = 1;
    iterate(5000);
  }
  EXPECT_EQ(schedule_.idleCount(), 0u);
  EXPECT_EQ(counters_->rxq_idled.read(), 0u);
  ready_[0] = 1;
  iterate(5000);
  EXPECT_EQ(schedule_.idleCount(), 1u);
  EXPECT_EQ(counters_->rxq_idled.read(), 1u);
  EXPECT_EQ(schedule_.busyCount(), 1u);
}

TEST_F(RxScheduleTest, IdleQueuesArePolledAFewPerIterationEachOncePerRound) {
  constexpr uint16_t kQueues = 100;
  const auto qs = queues(0, kQueues);
  schedule_.assign({}, qs);
  idleAll(kRevisit * 10);
  ASSERT_EQ(schedule_.idleCount(), kQueues);
  EXPECT_EQ(counters_->rxq_idled.read(), kQueues);
  // The iteration that made them idle found the round (the first since
  // assign) late and polled all of them; the next round starts here.
  EXPECT_EQ(idlePolls(), kQueues);
  EXPECT_EQ(skipped(), 0u);
  std::map<uint16_t, unsigned> round;
  std::map<uint16_t, unsigned> first;  // the round's first iteration
  const unsigned iterations = (kQueues + kRxIdlePollsPerIteration - 1) / kRxIdlePollsPerIteration;  // 13
  for (unsigned i = 0; i < iterations; ++i) {
    const uint64_t polls = idlePolls(), left = skipped();
    iterate(kRevisit * 10 + i);  // within the round's revisit interval
    const uint64_t made = idlePolls() - polls;
    EXPECT_EQ(made, std::min<unsigned>(kRxIdlePollsPerIteration, kQueues - i * kRxIdlePollsPerIteration));
    EXPECT_EQ(skipped() - left, kQueues - made);
    EXPECT_LE(polled_.size(), kRxIdlePollsPerIteration);
    for (const auto& [port, n] : polled_) round[port] += n;
    if (i == 0) first = polled_;
  }
  ASSERT_EQ(round.size(), kQueues);
  for (const auto& [port, n] : round) EXPECT_EQ(n, 1u) << "port " << port;
  // The next round starts over.
  iterate(kRevisit * 10 + iterations);
  EXPECT_EQ(polled_, first);
}

TEST_F(RxScheduleTest, AnIdleQueueWithPacketsIsBusyAtOnce) {
  const auto qs = queues(0, 20);
  schedule_.assign({}, qs);
  idleAll(kRevisit * 10);
  ASSERT_EQ(schedule_.idleCount(), 20u);
  // Port 13's packets wait for its turn; the iteration that polls it takes
  // them, and from the next one on it is polled every iteration.
  ready_[13] = 5;
  unsigned waited = 0;
  while (ready_[13] != 0) {
    iterate(kRevisit * 10 + waited);
    ++waited;
  }
  EXPECT_LE(waited, (20 + kRxIdlePollsPerIteration - 1) / kRxIdlePollsPerIteration);
  EXPECT_EQ(counters_->rxq_woken.read(), 1u);
  EXPECT_EQ(schedule_.busyCount(), 1u);
  EXPECT_EQ(schedule_.idleCount(), 19u);
  for (unsigned i = 0; i < 10; ++i) {
    ready_[13] = 1;
    iterate(kRevisit * 10 + waited + i);
    EXPECT_EQ(polled_[13], 1u);
    EXPECT_EQ(ready_[13], 0u);
  }
  EXPECT_EQ(counters_->rxq_woken.read(), 1u);
}

TEST_F(RxScheduleTest, WakingKeepsEveryOtherIdleQueueInTheRound) {
  const auto qs = queues(0, 24);
  schedule_.assign({}, qs);
  idleAll(kRevisit * 10);
  // Every idle queue but one wakes in the round (the last idle one takes
  // each woken queue's place): still every queue polled once in it.
  for (uint16_t p = 0; p < 24; ++p)
    if (p != 7) ready_[p] = 1;
  std::map<uint16_t, unsigned> round;
  for (unsigned i = 0; i < 3 && schedule_.idleCount() != 0; ++i) {
    iterate(kRevisit * 10 + i);
    for (const auto& [port, n] : polled_) round[port] += n;
  }
  EXPECT_EQ(round.size(), 24u);
  EXPECT_EQ(counters_->rxq_woken.read(), 23u);
  EXPECT_EQ(schedule_.idleCount(), 1u);
}

TEST_F(RxScheduleTest, ALateRoundIsFinishedInOneIteration) {
  const auto qs = queues(0, 40);
  schedule_.assign({}, qs);
  const uint64_t t0 = kRevisit * 10;
  idleAll(t0);
  iterate(t0 + 1);  // 8 of the round's 40
  EXPECT_EQ(polled_.size(), kRxIdlePollsPerIteration);
  // The round began at t0; at t0 + kRevisit the other 32 are polled at once.
  const uint64_t polls = idlePolls();
  iterate(t0 + kRevisit);
  EXPECT_EQ(polled_.size(), 40u - kRxIdlePollsPerIteration);
  EXPECT_EQ(idlePolls() - polls, 40u - kRxIdlePollsPerIteration);
  // And the next round is paced again.
  iterate(t0 + kRevisit + 1);
  EXPECT_EQ(polled_.size(), kRxIdlePollsPerIteration);
}

TEST_F(RxScheduleTest, WithoutAClockEveryIdleQueueIsPolledEveryIteration) {
  std::unique_ptr<PmdCounters> counters = std::make_unique<PmdCounters>();
  RxSchedule schedule(*counters, 0);
  const auto qs = queues(0, 30);
  schedule.assign({}, qs);
  unsigned polls = 0;
  auto none = [&polls](const RxQueueRef&) -> uint16_t {
    ++polls;
    return 0;
  };
  for (unsigned i = 0; i < kRxIdleAfterEmptyPolls; ++i) schedule.pollOnce(0, none);
  ASSERT_EQ(schedule.idleCount(), 30u);
  polls = 0;
  schedule.pollOnce(0, none);
  EXPECT_EQ(polls, 30u);
  EXPECT_EQ(counters->rxq_idle_polls_skipped.read(), 0u);
}

TEST_F(RxScheduleTest, ANewSnapshotKeepsTheStateOfTheQueuesItShares) {
  // Ports 0..9 idle; the next snapshot drops port 3 and adds port 10.
  auto before = queues(0, 10);
  schedule_.assign({}, before);
  idleAll(kRevisit * 10);
  ASSERT_EQ(schedule_.idleCount(), 10u);
  std::vector<RxQueueRef> after;
  for (const RxQueueRef& q : before)
    if (q.port_no != 3) after.push_back(q);
  after.push_back(queues(10, 1)[0]);
  schedule_.assign(before, after);
  EXPECT_EQ(schedule_.idleCount(), 9u);
  EXPECT_EQ(schedule_.busyCount(), 1u);  // the new one
  iterate(kRevisit * 10 + 1);
  EXPECT_EQ(polled_[10], 1u);
  EXPECT_EQ(polled_.count(3), 0u);
  // A queue that moved (same port, another ethdev: re-made) starts busy.
  std::vector<RxQueueRef> remade = after;
  remade[0].dpdk_port = 999;
  schedule_.assign(after, remade);
  EXPECT_EQ(schedule_.busyCount(), 2u);
  EXPECT_EQ(schedule_.idleCount(), 8u);
  // No queues at all (the PMD lost its snapshot).
  schedule_.assign(remade, {});
  EXPECT_EQ(schedule_.busyCount() + schedule_.idleCount(), 0u);
  EXPECT_TRUE(iterate(1));
  EXPECT_TRUE(polled_.empty());
}

TEST_F(RxScheduleTest, LightUnlessAPolledQueueReturnedHalfABurst) {
  const auto qs = queues(0, 2);
  schedule_.assign({}, qs);
  ready_[0] = kBurstSize / 2 - 1;
  EXPECT_TRUE(iterate(1));
  ready_[1] = kBurstSize / 2;
  EXPECT_FALSE(iterate(2));
}

}  // namespace
}  // namespace sluice
