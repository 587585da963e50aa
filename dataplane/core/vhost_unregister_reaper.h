// Unregisters vhost-user sockets from DPDK's vhost library on a thread of
// its own, so that the control path never waits on the library.
//
// rte_vhost_driver_unregister (DPDK 22.11, lib/vhost/socket.c) spins until
// no callback of the library's event thread runs on the socket's
// connections; a peer that stalls that thread (a message header whose
// payload never comes, until the socket's read timeout drops it) would make
// the caller wait as long. Control, which holds its locks while it removes a
// port, hands the socket here instead and replies at once; this thread
// waits for the library, then runs the job's `done` (which frees what the
// library's callbacks may still reach until then).
//
// Threads: reap() and pending() from any thread (control's); the jobs'
// unregister and `done` on the reaper's thread, in the order they came.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "dataplane/core/vhost_socket_timeouts.h"

namespace sluice {

class VhostUnregisterReaper {
 public:
  // How the socket at a path is unregistered (rte_vhost_driver_unregister in
  // sluiced; a stand-in in tests): 0 or a negative errno.
  using Unregister = std::function<int(const std::string& path)>;
  // An unregister that takes longer than this is logged and counted: twice
  // the vhost-user sockets' timeout, which bounds how long one stalled
  // message holds the library.
  static constexpr std::chrono::milliseconds kSlowUnregister = 2 * kVhostUserSocketTimeout;

  explicit VhostUnregisterReaper(Unregister unregister, std::chrono::milliseconds slow_after = kSlowUnregister);
  // Finishes every queued job first (the library's callbacks may reach what
  // their `done` frees), logging every few seconds while one takes long.
  ~VhostUnregisterReaper();
  VhostUnregisterReaper(const VhostUnregisterReaper&) = delete;
  VhostUnregisterReaper& operator=(const VhostUnregisterReaper&) = delete;

  // Queues the socket at `path`; `done` runs once it is unregistered.
  void reap(std::string path, std::function<void()> done);
  // Whether `path` is queued or being unregistered now.
  bool pending(const std::string& path) const;
  // Waits until `path` is not pending, at most `limit`; whether so.
  bool waitReleased(const std::string& path, std::chrono::steady_clock::duration limit);
  // How long the job being unregistered now has taken (zero: none runs).
  std::chrono::steady_clock::duration busyFor() const;
  // Waits until no job is queued or running, at most `limit`; whether so.
  bool waitIdle(std::chrono::steady_clock::duration limit);
  // Unregisters that took longer than `slow_after` so far.
  uint64_t slowUnregisters() const;

 private:
  struct Job {
    std::string path;
    std::function<void()> done;
  };
  void run();
  bool pendingLocked(const std::string& path) const;

  const Unregister unregister_;
  const std::chrono::milliseconds slow_after_;
  mutable std::mutex mu_;  // everything below but the thread
  std::condition_variable cv_;  // a job queued, a job finished, or stop
  std::deque<Job> queue_;
  std::string running_;  // the path being unregistered now (empty: none)
  std::chrono::steady_clock::time_point running_since_;
  uint64_t slow_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace sluice
