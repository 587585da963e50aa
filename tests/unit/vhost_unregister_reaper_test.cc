// The vhost-user reaper: a deleted port's socket is unregistered on the
// reaper's thread while the caller goes on, its path counts as pending until
// the library let go, and nothing queued is left behind at destruction.
#include "dataplane/core/vhost_unregister_reaper.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace sluice {
namespace {

// An unregister that waits until the test lets it finish (as the vhost
// library does while a connection's message is being read), recording
// which paths it was given.
struct HeldUnregister {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::mutex mu;
  std::vector<std::string> calls;

  VhostUnregisterReaper::Unregister fn() {
    return [this](const std::string& path) {
      {
        std::lock_guard lock(mu);
        calls.push_back(path);
      }
      released.wait();
      return 0;
    };
  }
};

TEST(VhostUnregisterReaperTest, ReapReturnsAtOnceAndThePathIsPendingUntilTheLibraryLetsGo) {
  HeldUnregister library;
  VhostUnregisterReaper reaper(library.fn());
  bool done = false;  // written by the reaper's thread, read after waitIdle
  reaper.reap("/run/a.sock", [&] { done = true; });
  EXPECT_TRUE(reaper.pending("/run/a.sock"));
  EXPECT_FALSE(reaper.pending("/run/b.sock"));
  EXPECT_FALSE(reaper.waitIdle(std::chrono::milliseconds(0)));
  EXPECT_FALSE(reaper.waitReleased("/run/a.sock", std::chrono::milliseconds(0)));
  EXPECT_TRUE(reaper.waitReleased("/run/b.sock", std::chrono::milliseconds(0)));

  library.release.set_value();
  ASSERT_TRUE(reaper.waitReleased("/run/a.sock", std::chrono::seconds(10)));
  ASSERT_TRUE(reaper.waitIdle(std::chrono::seconds(10)));
  EXPECT_TRUE(done);
  EXPECT_FALSE(reaper.pending("/run/a.sock"));
  EXPECT_EQ(reaper.busyFor(), std::chrono::steady_clock::duration::zero());
  EXPECT_EQ(library.calls, std::vector<std::string>{"/run/a.sock"});
}

TEST(VhostUnregisterReaperTest, JobsRunInOrderAndTheDestructorFinishesEveryQueuedOne) {
  HeldUnregister library;
  std::vector<std::string> finished;  // only the reaper's thread appends
  {
    VhostUnregisterReaper reaper(library.fn());
    for (const char* p : {"/run/a.sock", "/run/b.sock", "/run/c.sock"})
      reaper.reap(p, [&finished, p] { finished.push_back(p); });
    EXPECT_TRUE(reaper.pending("/run/c.sock"));
    library.release.set_value();
  }
  EXPECT_EQ(finished, (std::vector<std::string>{"/run/a.sock", "/run/b.sock", "/run/c.sock"}));
  EXPECT_EQ(library.calls, finished);
}

TEST(VhostUnregisterReaperTest, AnUnregisterLongerThanTheBoundIsCounted) {
  HeldUnregister library;
  library.release.set_value();
  // A bound of zero: every unregister reaches it.
  VhostUnregisterReaper strict(library.fn(), std::chrono::milliseconds(0));
  strict.reap("/run/a.sock", [] {});
  ASSERT_TRUE(strict.waitIdle(std::chrono::seconds(10)));
  EXPECT_EQ(strict.slowUnregisters(), 1u);
  // A bound no unregister here reaches.
  VhostUnregisterReaper lenient(library.fn(), std::chrono::hours(1));
  lenient.reap("/run/a.sock", [] {});
  ASSERT_TRUE(lenient.waitIdle(std::chrono::seconds(10)));
  EXPECT_EQ(lenient.slowUnregisters(), 0u);
}

TEST(VhostUnregisterReaperTest, AFailedUnregisterStillFinishesTheJob) {
  VhostUnregisterReaper reaper([](const std::string&) { return -1; });
  bool done = false;
  reaper.reap("/run/a.sock", [&] { done = true; });
  ASSERT_TRUE(reaper.waitIdle(std::chrono::seconds(10)));
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace sluice
