// SIGTERM and SIGINT, the signals that stop sluiced: blocked on the main
// thread before EAL and gRPC start their threads, so that every thread
// inherits the mask and only the main thread's wait receives them. Main
// thread only.
#pragma once

#include <signal.h>

namespace sluice {

class ShutdownSignals {
 public:
  // Blocks SIGTERM and SIGINT on the calling thread, and ignores SIGPIPE (a
  // peer that went away is an error on the write, not the end of sluiced).
  ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  // Waits for SIGTERM or SIGINT and logs which one came.
  void wait() const;

 private:
  sigset_t signals_;  // SIGTERM and SIGINT
};

}  // namespace sluice
