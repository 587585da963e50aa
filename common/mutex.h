// A mutex the compiler can reason about. libstdc++'s std::mutex carries no
// thread-safety attributes, so clang's -Wthread-safety cannot see it taken;
// this wrapper is the same std::mutex with Abseil's annotations, so members
// marked ABSL_GUARDED_BY(mu) and functions marked
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) are checked at every call site.
//
// Why not absl::Mutex: the control path's waits (a change waiting for PMD
// acknowledgements, the flow thread's commits) hand the lock back and take it
// again by hand, and its condition waits use the standard library's
// condition_variable_any; keeping std::mutex underneath keeps its behaviour
// (and ThreadSanitizer's view of it) exactly as before.
//
// Control-path threads only; never on a PMD.
#pragma once

#include <absl/base/thread_annotations.h>

#include <atomic>
#include <cassert>
#include <mutex>
#include <thread>

namespace sluice {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void unlock() ABSL_UNLOCK_FUNCTION() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
  }
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    if (!mu_.try_lock()) return false;
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }
  // For code the analysis cannot follow into (a virtual hook the holder
  // calls): tells the compiler the lock is held, and checks it in debug
  // builds. Only the owning thread ever reads its own id back, so relaxed
  // order is enough.
  void assertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    assert(owner_.load(std::memory_order_relaxed) == std::this_thread::get_id());
  }

 private:
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

// Holds `mu` for the guard's scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace sluice
