#include "dataplane/sluiced/shutdown_signals.h"

#include <pthread.h>

#include <csignal>

#include "common/log.h"

namespace sluice {

ShutdownSignals::ShutdownSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

void ShutdownSignals::wait() const {
  int sig = 0;
  sigwait(&signals_, &sig);
  logInfo("signal ", sig, " received, shutting down");
}

}  // namespace sluice
