// A thread that runs one piece of work every interval until stopped: the
// control core's garbage collector (gc-interval-ms, live, 0: off) and its
// flow thread (every millisecond). The interval may change while it runs; a
// new one takes effect at once, and stop() wakes it from any wait.
//
// The work runs without the helper's lock, so it may take any lock of its
// own (a DataplaneControl::Change); the helper's lock guards only the stop
// flag and the interval.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <thread>

#include "common/mutex.h"

namespace sluice {

class PeriodicThread {
 public:
  explicit PeriodicThread(std::function<void()> work) : work_(std::move(work)) {}
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread, running the work every `interval` (0: not until a
  // non-zero interval is set). No-op while it runs.
  void start(std::chrono::milliseconds interval) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(mu_);
    if (thread_.joinable()) return;
    interval_ = interval;
    stop_ = false;
    stopping_.store(false, std::memory_order_relaxed);
    thread_ = std::thread([this] { run(); });
  }
  // The interval from now on (before start: until start names one).
  void setInterval(std::chrono::milliseconds interval) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      MutexLock lock(mu_);
      if (interval_ == interval) return;
      interval_ = interval;
      ++interval_changes_;
    }
    cv_.notify_all();
  }
  // Stops and joins the thread (a run of the work in progress finishes first).
  void stop() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      MutexLock lock(mu_);
      stop_ = true;
      stopping_.store(true, std::memory_order_relaxed);
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Whether stop() was called: work that waited for other locks checks it
  // before doing anything the stopping caller no longer expects.
  bool stopRequested() const { return stopping_.load(std::memory_order_relaxed); }

 private:
  void run() ABSL_LOCKS_EXCLUDED(mu_) {
    mu_.lock();
    while (!stop_) {
      const uint64_t seen = interval_changes_;
      // Reads the guarded members with mu_ held: the wait takes it back
      // before it calls this.
      auto woken = [this, seen]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stop_ || interval_changes_ != seen; };
      if (interval_.count() == 0) {
        cv_.wait(mu_, woken);
        continue;
      }
      if (cv_.wait_for(mu_, interval_, woken)) continue;
      mu_.unlock();
      work_();
      mu_.lock();
    }
    mu_.unlock();
  }

  const std::function<void()> work_;
  Mutex mu_;
  std::condition_variable_any cv_;
  std::thread thread_;  // touched only by start and stop (one controlling thread)
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_{false};  // stop_, readable without the lock
  std::chrono::milliseconds interval_ ABSL_GUARDED_BY(mu_){0};
  uint64_t interval_changes_ ABSL_GUARDED_BY(mu_) = 0;  // wakes a wait to take a new interval
};

}  // namespace sluice
