// The sandbox ("pause") process of the e2e pod sandboxes: containerd's CRI
// plugin needs an image to run as each pod sandbox's first process, and no
// registry is reachable here, so the e2e test builds its own image around
// this static binary (tests/e2e/cri/oci_image.sh). It holds the sandbox's
// namespaces open until it is told to stop, and exits cleanly on SIGTERM or
// SIGINT (as PID 1 it gets no default handlers, so it must install them).
#include <signal.h>
#include <unistd.h>

namespace {
volatile sig_atomic_t g_stop = 0;
void onSignal(int) { g_stop = 1; }
}  // namespace

int main() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  // PID 1 reaps orphans; SIGCHLD's default disposition (ignore) suffices, no
  // children are ever started here.
  while (g_stop == 0) pause();
  return 0;
}
