// The grace period without a snapshot (PmdMailbox's grace_request /
// grace_passed): a waiter returns once every running PMD passed its
// quiescent point after the wait began, and never waits for a stopped one.
#include "dataplane/core/pmd_grace_period.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace sluice {
namespace {

// What Pmd::run does at its quiescent point.
void passQuiescentPoint(PmdMailbox& m, uint64_t& seen) {
  if (const uint64_t g = m.grace_request.load(std::memory_order_seq_cst); g != seen) {
    seen = g;
    m.grace_passed.store(g, std::memory_order_release);
  }
}

TEST(PmdGracePeriodTest, AStoppedPmdIsNotWaitedFor) {
  PmdMailbox stopped;
  waitForPmdGracePeriod({&stopped});
  EXPECT_EQ(stopped.grace_request.load(), 1u);
  EXPECT_EQ(stopped.grace_passed.load(), 0u);
}

TEST(PmdGracePeriodTest, TheWaitEndsOnlyAfterEveryRunningPmdPassedItsQuiescentPointOnce) {
  PmdMailbox a, b;
  a.running = true;
  b.running = true;
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    waitForPmdGracePeriod({&a, &b});
    returned = true;
  });
  // Until both asked-for values are seen, the waiter waits; b first.
  while (b.grace_request.load() == 0 || a.grace_request.load() == 0) std::this_thread::yield();
  uint64_t seen_a = 0, seen_b = 0;
  passQuiescentPoint(b, seen_b);
  EXPECT_FALSE(returned.load());
  passQuiescentPoint(a, seen_a);
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(a.grace_passed.load(), 1u);
  EXPECT_EQ(b.grace_passed.load(), 1u);
}

TEST(PmdGracePeriodTest, APmdThatStopsWhileWaitedForEndsTheWait) {
  PmdMailbox m;
  m.running = true;
  std::thread waiter([&] { waitForPmdGracePeriod({&m}); });
  while (m.grace_request.load() == 0) std::this_thread::yield();
  m.running.store(false, std::memory_order_release);
  waiter.join();
  EXPECT_EQ(m.grace_passed.load(), 0u);
}

}  // namespace
}  // namespace sluice
