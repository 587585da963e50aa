// main() of the test programs that play pods (net_virtio_user devices in
// the test process): EAL once per process, and the pods' pool before any test.
#include <gtest/gtest.h>

#include <csignal>

#include "tests/integration/virtio_pod.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // A vhost-user peer that goes away must not kill the test with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  if (!sluice::test::initPodEal(argv[0])) return 1;
  if (sluice::test::podPool() == nullptr) return 1;
  return RUN_ALL_TESTS();
}
